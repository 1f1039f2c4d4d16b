"""Service interfaces the engine uses, with in-memory implementations.

The actor runtime plugs in its supervised service actors behind the same
interfaces; these in-memory ones serve tests and embedded use.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .._names import validate_name
from .._rewind import is_tombstone
from .._types import Event, MemoryEntry, Part

__all__ = [
    "ApprovalService",
    "ArtifactService",
    "Decision",
    "InMemoryApprovals",
    "InMemoryArtifactService",
    "InMemoryMemoryService",
    "MemoryEntry",
    "MemoryService",
    "rank_memories",
]


@dataclass(frozen=True)
class Decision:
    approved: bool
    reason: str = ""
    approval_id: str = ""


@runtime_checkable
class ApprovalService(Protocol):
    """Asks a human before a tool call. ``call_id`` names the call: asked again for the
    same call (a resumed run), a service answers the approval it had (a decision made
    meanwhile stands). ``call_status`` says how a call's approval stands (None: never
    asked): a resumed run reruns a call whose approval was never given, since its
    tool cannot have run."""

    async def request(self, ctx: Any, tool: str, args: dict[str, Any], hint: str, timeout: float,
                      call_id: str = "") -> Decision: ...

    async def call_status(self, ctx: Any, call_id: str) -> str | None: ...


class InMemoryApprovals:
    """Approvals decided in this process (tests, embedded use): ``pending()``,
    ``approve(id)``, ``deny(id, reason)``; a decision made early is kept."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: dict[str, dict[str, Any]] = {}
        self.decisions: dict[str, Decision] = {}

    def pending(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r for i, r in self.requests.items() if i not in self.decisions]

    def approve(self, approval_id: str) -> None:
        with self._lock:
            self.decisions.setdefault(approval_id, Decision(True, "", approval_id))

    def deny(self, approval_id: str, reason: str = "denied by a human") -> None:
        with self._lock:
            self.decisions.setdefault(approval_id, Decision(False, reason, approval_id))

    async def call_status(self, ctx: Any, call_id: str) -> str | None:
        with self._lock:
            approval_id = next((i for i, r in self.requests.items() if call_id and r["call_id"] == call_id), None)
            if approval_id is None:
                return None
            decision = self.decisions.get(approval_id)
        return "pending" if decision is None else "approved" if decision.approved else "denied"

    async def request(self, ctx: Any, tool: str, args: dict[str, Any], hint: str, timeout: float,
                      call_id: str = "") -> Decision:
        with self._lock:
            approval_id = next((i for i, r in self.requests.items() if call_id and r["call_id"] == call_id),
                               f"approval-{uuid.uuid4().hex[:12]}")
            self.requests[approval_id] = {"id": approval_id, "tool": tool, "args": dict(args), "hint": hint,
                                          "call_id": call_id}
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                decision = self.decisions.get(approval_id)
            if decision is not None:
                return decision
            if time.monotonic() >= deadline:
                self.deny(approval_id, f"no decision within {timeout:g} s")
                with self._lock:
                    return self.decisions[approval_id]
            ctx.check_cancelled()
            await asyncio.sleep(0.01)


@runtime_checkable
class ArtifactService(Protocol):
    def save(self, app: str, user: str, session: str, name: str, part: Part) -> int: ...
    def load(self, app: str, user: str, session: str, name: str, version: int | None = None) -> Part | None: ...
    def list(self, app: str, user: str, session: str) -> list[str]: ...


@runtime_checkable
class MemoryService(Protocol):
    def add_session(self, app: str, user: str, session: str, events: list[Event]) -> None: ...
    def search(self, app: str, user: str, query: str, limit: int = 10) -> list[MemoryEntry]: ...


class InMemoryArtifactService:
    """Versions 0, 1, 2 ...; ``user:``-prefixed names are shared by a user's sessions. A
    version that is a rewind's tombstone (``Runner.rewind_async``) loads as absent."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str, str, str], list[Part]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(app: str, user: str, session: str, name: str) -> tuple[str, str, str, str]:
        return (app, user, "" if name.startswith("user:") else session, name)

    def save(self, app: str, user: str, session: str, name: str, part: Part) -> int:
        validate_name(name)
        with self._lock:
            versions = self._data.setdefault(self._key(app, user, session, name), [])
            versions.append(part)
            return len(versions) - 1

    def load(self, app: str, user: str, session: str, name: str, version: int | None = None) -> Part | None:
        with self._lock:
            versions = self._data.get(self._key(app, user, session, name), [])
            if not versions:
                return None
            part: Part | None = versions[-1]
            if version is not None:
                part = versions[version] if 0 <= version < len(versions) else None
        return None if is_tombstone(part) else part  # a version a session rewind removed

    def list(self, app: str, user: str, session: str) -> list[str]:
        with self._lock:
            return sorted(k[3] for k in self._data if k[0] == app and k[1] == user and k[2] in ("", session))


_WORD = re.compile(r"[a-z0-9]+")


def rank_memories(entries: list[MemoryEntry], query: str, limit: int) -> list[MemoryEntry]:
    """The entries that match ``query``, best first (at most ``limit``): the whole
    phrase found scores 5, plus the share of the query's words found; ties go to the
    newest. The one rule of every memory store."""
    phrase = query.lower().strip()
    words = set(_WORD.findall(phrase))
    scored: list[tuple[float, float, MemoryEntry]] = []
    for entry in entries:
        text = entry.text.lower()
        score = (5.0 if phrase and phrase in text else 0.0) + (
            len(words & set(_WORD.findall(text))) / len(words) if words else 0.0)
        if score > 0:
            scored.append((score, entry.timestamp, entry))
    scored.sort(key=lambda item: (-item[0], -item[1]))
    return [entry for _, _, entry in scored[:limit]]


class InMemoryMemoryService:
    """Memories per (app, user), a session's replaced when it is added again; searched
    by :func:`rank_memories`."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], dict[str, list[MemoryEntry]]] = {}
        self._lock = threading.Lock()

    def add_session(self, app: str, user: str, session: str, events: list[Event]) -> None:
        entries = [
            MemoryEntry(text=e.content.text, author=e.author, timestamp=e.timestamp, id=e.id)
            for e in events
            if e.content is not None and e.content.text and not e.partial
        ]
        with self._lock:
            self._entries.setdefault((app, user), {})[session] = entries

    def search(self, app: str, user: str, query: str, limit: int = 10) -> list[MemoryEntry]:
        with self._lock:
            entries = [entry for found in self._entries.get((app, user), {}).values() for entry in found]
        return rank_memories(entries, query, limit)

