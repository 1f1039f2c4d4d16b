"""The one rule for where a tool may send a request a model chose: the public internet.

Three tools open a URL a model picked (``load_web_page``, an OpenAPI tool's request,
a computer's ``navigate``); each asks here, so a host refused by one is refused by all:

- :func:`refused_name`: a name that means this machine or an internal service
  (``localhost`` and its aliases, ``metadata`` / ``metadata.goog`` (cloud metadata),
  ``*.localhost``, ``*.local``, ``*.internal``, ``*.metadata.goog``), compared without
  case or a trailing dot;
- :func:`not_public`: an address that is not global (loopback, private, link-local
  with the cloud metadata service, reserved, ...), or an IPv6 address that carries an
  IPv4 one that is not (IPv4-mapped, 6to4, Teredo, NAT64 ``64:ff9b::/96`` and the
  deprecated IPv4-compatible ``::a.b.c.d``);
- :func:`address_literal` and :func:`resolve`: a host as an address, or the addresses
  its name resolves to (IPv4 and IPv6 only, a zone index dropped, in the resolver's
  order without repeats). :func:`resolve` raises :class:`UnresolvableHost` (a
  ``ValueError``) when there are none; each tool words that error as its own.
"""

from __future__ import annotations

import ipaddress
import socket

__all__ = ["Address", "UnresolvableHost", "address_literal", "not_public", "refused_name", "resolve"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_REFUSED_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback",
                            "metadata", "metadata.goog"})
_REFUSED_SUFFIXES = (".localhost", ".local", ".internal", ".metadata.goog")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class UnresolvableHost(ValueError):
    """A host name that resolves to no IPv4 or IPv6 address."""


def refused_name(host: str) -> bool:
    """Whether ``host`` names this machine or an internal service (see the module)."""
    name = host.rstrip(".").lower()
    return name in _REFUSED_NAMES or name.endswith(_REFUSED_SUFFIXES)


def _carried_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one leads to (mapped, 6to4, Teredo's client, NAT64,
    IPv4-compatible), if any."""
    carried = address.ipv4_mapped or address.sixtofour
    if carried is None and address.teredo is not None:
        carried = address.teredo[1]
    number = int(address)
    if carried is None and (address in _NAT64 or (number >> 32 == 0 and (number & 0xFFFFFFFF) not in (0, 1))):
        carried = ipaddress.IPv4Address(number & 0xFFFFFFFF)
    return carried


def not_public(address: Address) -> bool:
    """Whether ``address`` is off the public internet: not global itself, or an IPv6
    address carrying an IPv4 address that is not global."""
    if not address.is_global:
        return True
    if isinstance(address, ipaddress.IPv6Address):
        carried = _carried_ipv4(address)
        return carried is not None and not carried.is_global
    return False


def address_literal(host: str) -> Address | None:
    """``host`` as an address (brackets and a zone index dropped), or None for a name."""
    try:
        return ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        return None


def resolve(host: str, port: int | None = None) -> list[Address]:
    """The IPv4 and IPv6 addresses ``host`` resolves to, in the resolver's order without
    repeats (blocks: call it off an event loop). Raises :class:`UnresolvableHost` when the
    name does not resolve or resolves to no such address."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as exc:
        raise UnresolvableHost(host) from exc
    addresses = list(dict.fromkeys(ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in found
                                   if info[0] in (socket.AF_INET, socket.AF_INET6)))
    if not addresses:
        raise UnresolvableHost(host)
    return addresses
