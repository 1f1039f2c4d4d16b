"""Where a :class:`~.remote_a2a_agent.RemoteA2aAgent` finds its remote agent: its card, given as
google-adk takes it (an ``AgentCard``, the URL of one, or the path of a JSON file).

In order, when the card is needed (an ``AgentCard`` given is used as it is):

1. a source starting ``http://`` or ``https://`` is a URL: plain ``http`` only to a
   loopback host (``localhost``, ``127.0.0.1``, ``::1``), else the card is refused before
   anything is sent; the card is fetched with the agent's HTTP client (its
   ``headers`` sent), and each URL it offers for RPC must be ``https`` (or loopback
   ``http``) on the origin the card came from: a card off the network cannot send the
   agent's requests elsewhere;
2. any other source is a file path, read as the card's JSON;
3. the card must name a URL for RPC.

Any failure is an :class:`AgentCardResolutionError` saying what and where (google-adk's
type); nothing is kept of a card that failed, so the next run tries again.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from urllib.parse import urlparse

import httpx
from a2a.client.card_resolver import parse_agent_card
from a2a.types import AgentCard
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from google.protobuf.json_format import ParseError

from .._exceptions import AdkError

__all__ = ["AGENT_CARD_WELL_KNOWN_PATH", "A2AClientError", "AgentCardResolutionError", "card_from_source",
           "check_card", "is_url", "rpc_urls"]

_PORTS = {"http": 80, "https": 443}


class AgentCardResolutionError(AdkError):
    """A remote agent's card could not be had: fetched, read, parsed or trusted
    (google-adk's name)."""


class A2AClientError(AdkError):
    """An A2A client operation failed (google-adk's name)."""


def is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def _loopback(host: str | None) -> bool:
    if not host:
        return False
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _origin(url: str) -> tuple[str, str, int | None]:
    parsed = urlparse(url)
    scheme = parsed.scheme.lower()
    try:
        port = parsed.port or _PORTS.get(scheme)
    except ValueError as error:
        raise AgentCardResolutionError(f"bad port in URL {url}: {error}") from None
    return scheme, (parsed.hostname or "").lower(), port


def _check_transport(url: str, what: str) -> None:
    parsed = urlparse(url)
    if parsed.scheme.lower() != "https" and not _loopback(parsed.hostname):
        raise AgentCardResolutionError(f"{what} must be https (plain http only to a loopback host): {url}")


def rpc_urls(card: AgentCard) -> list[str]:
    """Every URL the card offers for RPC, in its order, once each."""
    found: list[str] = []
    for interface in card.supported_interfaces:
        if interface.url and interface.url not in found:
            found.append(interface.url)
    return found


async def card_from_source(source: str, http: httpx.AsyncClient,
                           headers: dict[str, str] | None = None) -> AgentCard:
    """The card at ``source`` (see the module), checked; AgentCardResolutionError else.
    ``headers`` go with its fetch from a URL (besides ``http``'s own)."""
    if is_url(source):
        _check_transport(source, "an agent card URL")
        try:
            answer = await http.get(source, headers=headers)
            answer.raise_for_status()
            card = parse_agent_card(answer.json())
        except (httpx.HTTPError, ValueError, TypeError, KeyError, ParseError) as error:
            raise AgentCardResolutionError(
                f"cannot fetch the agent card at {source}: {type(error).__name__}: {error}") from None
        for url in rpc_urls(card):
            _check_transport(url, "an agent card's RPC URL")
            if _origin(url) != _origin(source):
                raise AgentCardResolutionError(
                    f"the agent card at {source} names an RPC URL on another origin: {url}")
    else:
        path = Path(source)
        if not path.is_file():
            raise AgentCardResolutionError(f"no agent card file at {source}"
                                           + (" (a folder)" if path.is_dir() else ""))
        try:
            card = parse_agent_card(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError, KeyError, ParseError) as error:
            raise AgentCardResolutionError(
                f"cannot read the agent card file {source}: {type(error).__name__}: {error}") from None
    check_card(card)
    return card


def check_card(card: AgentCard) -> None:
    """A card must name a well-formed URL for RPC."""
    urls = rpc_urls(card)
    if not urls:
        raise AgentCardResolutionError(f"the agent card of {card.name or 'the remote agent'!r} names no RPC URL")
    for url in urls:
        parsed = urlparse(url)
        if not parsed.scheme or not parsed.netloc:
            raise AgentCardResolutionError(f"the agent card names a malformed RPC URL: {url}")
