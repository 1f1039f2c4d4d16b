"""What keeps a computer's actions safe: one action at a time per computer, and no
``navigate`` to a host that is not on the public internet unless allowed.

:func:`action_lock` is the lock a computer's actions take, one per computer and
event loop, shared by every toolset over that computer (several calls of one model
answer, several sessions on one computer): an action's ``prepare`` and the action
itself are never interleaved with another's. The lock table is keyed by the
computer's id (a computer need not be hashable) and forgets a computer when it is
collected.

:func:`refusal` says why a URL the model chose must not be opened: a scheme other
than http(s), no host, a bad port, a backslash in the authority (a browser ends the
host there, Python's parser does not), a name that means this machine or a cloud
metadata service (``localhost``, ``*.local``, ``*.internal``, ``metadata.goog`` ...),
or a host that is or resolves to an address that is not global (loopback, private,
link-local; an IPv6 address carrying such an IPv4 address too): the rule every tool
here that opens a model's URL shares (``_public_address``).
"""

from __future__ import annotations

import asyncio
import functools
import threading
import weakref
from typing import Any
from urllib.parse import urlsplit

from .._public_address import (
    Address,
    UnresolvableHost,
    address_literal,
    not_public,
    refused_name,
    resolve,
)

__all__ = ["action_lock", "refusal"]

_Entry = tuple["weakref.ref[Any] | None", "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock]"]

_locks: dict[int, _Entry] = {}
_locks_guard = threading.RLock()


def _forget(key: int, ref: weakref.ref[Any]) -> None:
    with _locks_guard:
        entry = _locks.get(key)
        if entry is not None and entry[0] is ref:
            del _locks[key]


def action_lock(computer: Any) -> asyncio.Lock:
    """The lock ``computer``'s actions take on the running loop (made on first use;
    an entry of a collected computer whose id was reused is replaced)."""
    loop = asyncio.get_running_loop()
    key = id(computer)
    with _locks_guard:
        entry = _locks.get(key)
        if entry is None or (entry[0] is not None and entry[0]() is not computer):
            try:
                ref: weakref.ref[Any] | None = weakref.ref(computer, functools.partial(_forget, key))
            except TypeError:  # a computer that takes no weak reference is kept for good
                ref = None
            entry = (ref, weakref.WeakKeyDictionary())
            _locks[key] = entry
        per_loop = entry[1]
        lock = per_loop.get(loop)
        if lock is None:
            lock = per_loop[loop] = asyncio.Lock()
        return lock


def _addresses(host: str) -> list[Address]:
    """``host`` itself when it is an address, else what it resolves to (blocks). A
    ValueError when it resolves to nothing."""
    literal = address_literal(host)
    if literal is not None:
        return [literal]
    try:
        return resolve(host)
    except UnresolvableHost as exc:
        raise ValueError(f"cannot resolve {host}") from exc


async def refusal(url: Any, *, private_allowed: bool) -> str | None:
    """Why ``url`` must not be opened (see the module), or None. With
    ``private_allowed`` only its form is checked (scheme, host, port, backslash); the
    name is resolved on a worker thread, never on the loop."""
    if not isinstance(url, str):
        return "not a string"
    parts = urlsplit(url)
    host = parts.hostname
    if parts.scheme.lower() not in ("http", "https") or not host:
        return "not an http(s) url with a host"
    try:
        parts.port  # noqa: B018 (raises for a bad port)
    except ValueError:
        return "bad port"
    if "\\" in parts.netloc:
        return "backslash in the host"
    if private_allowed:
        return None
    if refused_name(host):
        return "host names this machine or an internal service"
    try:
        addresses = await asyncio.to_thread(_addresses, host)
    except ValueError as exc:
        return str(exc)
    if any(not_public(a) for a in addresses):
        return "host is not on the public internet"
    return None
