"""Sending a tool's request, and refusing to send it where it must not go.

A spec's server URL and a model's path arguments decide where a tool's request goes,
so by default (as google-adk's) a request is refused when it would reach a private
place (the rule every tool here that opens a model's URL shares, ``_public_address``):
a scheme other than http/https; a name such as ``localhost``, ``metadata``,
``*.local``, ``*.internal``; an address that is not global (loopback, private,
link-local (cloud metadata), reserved, or an IPv6 address carrying such an IPv4 one);
a name any of whose addresses is one of those. The request then goes to the address
that was checked (its ``Host`` header and TLS name kept), so a name that resolves
elsewhere a moment later (DNS rebinding) cannot move it; redirects are not followed.
Through an HTTP proxy (from the environment) the proxy resolves the name: only the
name, and the local resolver's addresses for it when it has any, are checked.
``allow_private_network_access=True`` sends the request as it is.

A refusal is a ``ValueError`` naming the host only (never the URL: it may carry
credentials), which the tool returns as its error.
"""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import Callable
from typing import Any

import httpx

from .._public_address import (
    Address,
    UnresolvableHost,
    address_literal,
    not_public,
    refused_name,
    resolve,
)

__all__ = ["DEFAULT_TIMEOUT", "HttpxClientFactory", "send"]

#: A zero-argument callable giving a fresh ``httpx.AsyncClient`` for one call.
HttpxClientFactory = Callable[[], httpx.AsyncClient]

#: Connecting fails fast; a slow API may take its time to answer (google-adk's budget).
DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=600.0, write=600.0, pool=10.0)

def _addresses(host: str) -> tuple[Address, ...]:
    """The addresses ``host`` resolves to (a ValueError when it does not)."""
    try:
        return tuple(resolve(host))
    except UnresolvableHost as exc:
        raise ValueError(f"Unable to resolve host: {host}") from exc


def _proxied(client: httpx.AsyncClient, url: httpx.URL) -> bool:
    if not client.trust_env:
        return False
    proxies = urllib.request.getproxies_environment()
    if url.scheme not in proxies and "all" not in proxies:
        return False
    return not urllib.request.proxy_bypass_environment(url.host, proxies)  # type: ignore[attr-defined]


async def _checked(client: httpx.AsyncClient, url: httpx.URL) -> tuple[Address, ...] | None:
    """The addresses to send to, or None to send through the proxy (see the module)."""
    if url.scheme not in ("http", "https"):
        raise ValueError(f"Unsupported url scheme: {url.scheme or '(none)'}")
    host = url.host
    if not host:
        raise ValueError("URL is missing a hostname")
    if refused_name(host):
        raise ValueError(f"Blocked host: {host}")
    literal = address_literal(host)
    if literal is not None and not_public(literal):
        raise ValueError(f"Blocked host: {host}")
    if _proxied(client, url):
        if literal is None:
            try:
                advisory = await asyncio.to_thread(_addresses, host)
            except ValueError:
                advisory = ()  # the proxy may know names this resolver does not
            if any(not_public(address) for address in advisory):
                raise ValueError(f"Blocked host: {host}")
        return None
    resolved = (literal,) if literal is not None else await asyncio.to_thread(_addresses, host)
    if any(not_public(address) for address in resolved):
        raise ValueError(f"Blocked host: {host}")
    return resolved


async def _pinned(client: httpx.AsyncClient, url: httpx.URL, addresses: tuple[Address, ...],
                  params: dict[str, Any]) -> httpx.Response:
    """Send to each checked address in turn until one connects."""
    headers = httpx.Headers(params.pop("headers", None) or {})
    headers["Host"] = url.netloc.decode("ascii")
    error: Exception | None = None
    for address in addresses:
        try:
            return await client.request(url=url.copy_with(host=str(address)), headers=headers,
                                        extensions={"sni_hostname": url.host}, follow_redirects=False, **params)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            error = exc
    if error is None:
        raise ValueError(f"No address to connect to for {url.host}")
    raise error


async def send(params: dict[str, Any], *, verify: Any = None, client_factory: HttpxClientFactory | None = None,
               allow_private_network_access: bool = False) -> httpx.Response:
    """Send one request (``httpx.AsyncClient.request``'s keyword arguments) with a
    fresh client (``client_factory()``, else one with :data:`DEFAULT_TIMEOUT` and
    ``verify``), closed after it. Raises ValueError for a refused target (see the
    module) and httpx's errors as they come."""
    params = dict(params)
    client = client_factory() if client_factory is not None else httpx.AsyncClient(
        timeout=DEFAULT_TIMEOUT, verify=True if verify is None else verify)
    async with client:
        if allow_private_network_access:
            return await client.request(**params)
        try:
            url = httpx.URL(params.pop("url"))
        except httpx.InvalidURL as exc:
            raise ValueError(f"Invalid url: {exc}") from None
        params.pop("follow_redirects", None)
        addresses = await _checked(client, url)
        if addresses is None:
            return await client.request(url=url, follow_redirects=False, **params)
        return await _pinned(client, url, addresses, params)
