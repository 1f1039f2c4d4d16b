"""The Runner's Thespian endpoints: one per call or run, kept for the next ones.

A Thespian endpoint serves one thread at a time, and a Runner may be used from many
threads at once, so every call and every run leases an endpoint of its own from an
:class:`EndpointPool`. In order: :meth:`EndpointPool.lease` gives an idle endpoint of
the host's current actor system (preferring one that talked to the same partition
before: its connection is open), or a new one; the work runs on it; then
:meth:`EndpointPool.give_back` keeps it for later only if nothing more can arrive for
what it did (``clean``: its answer or its run's terminal message came, or the request
was refused). An endpoint given up (an abandoned or timed-out run may still send to
it) is closed when collected. Late messages of an earlier run that still arrive on a
kept endpoint are told apart by run id and dropped by the next run.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from supervision import CallTimeout

from .._exceptions import HostError
from ._caller_line import RunnerLine

__all__ = ["MAX_IDLE_ENDPOINTS", "EndpointPool", "PrivateEndpoint"]

#: How many idle endpoints a Runner keeps for its next runs (one per concurrent run).
MAX_IDLE_ENDPOINTS = 256

_T = TypeVar("_T")


class PrivateEndpoint:
    """A private endpoint of ``system`` that closes when this object is collected (or
    by ``close``, with its sockets)."""

    def __init__(self, system: Any) -> None:
        self.system = system
        self.clean = False  # its last run is over: nothing more will arrive for it
        #: The partitions it has talked to (each keeps a socket open), by index.
        self.peers: set[int] = set()
        #: its direct lines to partitions (see _caller_line), by partition address, kept
        #: from run to run: one line per endpoint made consecutive runs on sessions of
        #: different partitions connect a new one each time
        self.lines: dict[str, RunnerLine] = {}
        manager = system.private()
        self.context = manager.__enter__()
        self.close = weakref.finalize(self, _close_endpoint, manager)


def _close_endpoint(manager: Any) -> None:
    try:
        manager.__exit__(None, None, None)
    except Exception:  # the actor system may be gone already
        pass


class EndpointPool:
    """Idle endpoints of ``system()`` (the host's actor system as it is now: one of an
    earlier system is never leased), at most ``keep`` of them."""

    def __init__(self, system: Callable[[], Any], keep: int = MAX_IDLE_ENDPOINTS) -> None:
        self._system = system
        self._keep = keep
        self._idle: list[PrivateEndpoint] = []
        self._lock = threading.Lock()

    def new(self) -> PrivateEndpoint:
        """An endpoint of the current system that was never used."""
        return PrivateEndpoint(self._system())

    def lease(self, peer: int | None = None) -> PrivateEndpoint:
        """An endpoint used by nobody else until it is given back: an idle one that
        talked to partition ``peer`` before if there is one, else the latest idle one,
        else a new one; it is marked as talking to ``peer``."""
        system = self._system()
        with self._lock:
            endpoint = None
            if peer is not None:
                for position in range(len(self._idle) - 1, -1, -1):
                    candidate = self._idle[position]
                    if peer in candidate.peers and candidate.system is system:
                        endpoint = self._idle.pop(position)
                        break
            while endpoint is None and self._idle:
                endpoint = self._idle.pop()
                if endpoint.system is not system:
                    endpoint = None
        if endpoint is None:
            endpoint = PrivateEndpoint(system)
        if peer is not None:
            endpoint.peers.add(peer)
        return endpoint

    def give_back(self, endpoint: PrivateEndpoint) -> None:
        """Keep the endpoint for another run only if it is ``clean`` (see the module),
        and while fewer than ``keep`` are idle; it is unclean again once kept."""
        if not endpoint.clean:
            return  # closed when collected
        endpoint.clean = False
        with self._lock:
            if len(self._idle) < self._keep:
                self._idle.append(endpoint)

    def idle(self) -> int:
        """How many endpoints are kept idle now."""
        with self._lock:
            return len(self._idle)

    def on_endpoint(self, work: Callable[[Any], _T], peer: int | None = None) -> _T:
        """``work(context)`` on a leased endpoint, kept for reuse only if it got an
        answer (a value or a typed error): after a ``HostError`` or a timeout a late
        reply may still come."""
        endpoint = self.lease(peer)
        try:
            result = work(endpoint.context)
            endpoint.clean = True
            return result
        except (HostError, CallTimeout):
            raise
        except Exception:
            endpoint.clean = True
            raise
        finally:
            self.give_back(endpoint)
