"""Where a session lives when hosts form a cluster: rendezvous hashing over the members.

A cluster is Thespian's multi-system convention (``adk-actors serve --join LEADER``):
the leader's ``cluster`` actor knows the members and sends every host the same
:class:`ClusterView`. A session's *home* is the member that scores highest for its key
(:func:`ranked`, "highest random weight" hashing): every host computes the same home
from the same view without asking anyone; when a member leaves, only the sessions at
home there move (each to its next-ranked member), and when it comes back, only those
return. A host skips a member whose actor system does not take a connection (dead, or
cut off) and takes the next one.

The home is where a session is *activated*; who may *write* it is still the lease
(``store.Lease``): a request that reaches a home while another host's partition holds
the session is forwarded to that holder, as on hosts outside a cluster.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ClusterView", "Homed", "Member", "Reachability", "ranked"]


@dataclass(frozen=True)
class Member:
    """A host of the cluster: its name (its actor system's ``<address>:<port>``, the
    prefix of its partitions' lease holder names), where its session requests go (its
    ``sessions`` supervisor, which routes a key to its partition), its root
    supervisor (for ``status`` and the console) and its ``cluster`` actor."""

    name: str
    sessions: Any = None
    root: Any = None
    cluster: Any = None


@dataclass(frozen=True)
class ClusterView:
    """The members as the leader sees them (sorted by name), and which is the leader.
    ``ranked`` orders them for a session key."""

    leader: str
    members: tuple[Member, ...]

    def names(self) -> tuple[str, ...]:
        return tuple(member.name for member in self.members)

    def member(self, name: str) -> Member | None:
        return next((member for member in self.members if member.name == name), None)

    def ranked(self, key: str) -> list[Member]:
        return ranked(key, self.members)


def _weight(name: str, key: str) -> int:
    digest = hashlib.blake2b(f"{name}\x00{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def ranked(key: str, members: tuple[Member, ...] | list[Member]) -> list[Member]:
    """``members`` from the session ``key``'s home down: highest weight first (ties,
    which need a 64-bit collision, by name)."""
    return sorted(members, key=lambda member: (-_weight(member.name, key), member.name))


@dataclass(frozen=True)
class Homed:
    """A session request one host's partition sent to the session's home (another
    host's ``sessions`` supervisor): the home serves it (or forwards it to the lease's
    holder) and never sends it on by rendezvous again, so hosts whose views differ for
    a moment cannot pass a request back and forth."""

    request: Any

    @property
    def partition_key(self) -> str:
        return str(self.request.partition_key)


@dataclass
class Reachability:
    """Whether other hosts took a TCP connection when last asked, by name: a refusal is
    believed for ``fresh`` seconds, and so is a success with ``keep_success`` (else a
    success is asked again each time: a host killed since refuses at once). The one
    rule for the caller's view of members (``Host``) and a partition's of lease holders."""

    fresh: float
    keep_success: bool
    seen: dict[str, tuple[float, bool]] = field(default_factory=dict)  # name -> (when asked, took it)

    def answers(self, name: str, now: float, ask: Callable[[], bool]) -> bool:
        """What ``name`` answered lately, or ``ask()`` now (and kept)."""
        known = self.seen.get(name)
        if known is not None and now - known[0] < self.fresh and (self.keep_success or not known[1]):
            return known[1]
        took = ask()
        self.seen[name] = (now, took)
        return took

    def refused(self, name: str, now: float) -> None:
        """``name`` was found not answering another way (a request to it was refused)."""
        self.seen[name] = (now, False)

    def forget(self, name: str) -> None:
        """Ask ``name`` again next time."""
        self.seen.pop(name, None)
