"""Service interfaces the engine uses, with in-memory implementations.

The actor runtime plugs in its supervised service actors behind the same
interfaces; these in-memory ones serve tests and embedded use.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .._types import Event, Part

__all__ = ["ArtifactService", "InMemoryArtifactService", "InMemoryMemoryService", "MemoryEntry", "MemoryService"]


@runtime_checkable
class ArtifactService(Protocol):
    def save(self, app: str, user: str, session: str, name: str, part: Part) -> int: ...
    def load(self, app: str, user: str, session: str, name: str, version: int | None = None) -> Part | None: ...
    def list(self, app: str, user: str, session: str) -> list[str]: ...


@dataclass(frozen=True)
class MemoryEntry:
    text: str
    author: str
    timestamp: float


@runtime_checkable
class MemoryService(Protocol):
    def add_session(self, app: str, user: str, session: str, events: list[Event]) -> None: ...
    def search(self, app: str, user: str, query: str, limit: int = 10) -> list[MemoryEntry]: ...


class InMemoryArtifactService:
    """Versions 0, 1, 2 ...; ``user:``-prefixed names are shared by a user's sessions."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str, str, str], list[Part]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(app: str, user: str, session: str, name: str) -> tuple[str, str, str, str]:
        return (app, user, "" if name.startswith("user:") else session, name)

    def save(self, app: str, user: str, session: str, name: str, part: Part) -> int:
        from ..store._artifacts import validate_name

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
            if version is None:
                return versions[-1]
            return versions[version] if 0 <= version < len(versions) else None

    def list(self, app: str, user: str, session: str) -> list[str]:
        with self._lock:
            return sorted(k[3] for k in self._data if k[0] == app and k[1] == user and k[2] in ("", session))


_WORD = re.compile(r"[a-z0-9]+")


class InMemoryMemoryService:
    """Ranks by whole-phrase match first, then word overlap; isolated per (app, user)."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], list[MemoryEntry]] = {}
        self._lock = threading.Lock()

    def add_session(self, app: str, user: str, session: str, events: list[Event]) -> None:
        entries = [
            MemoryEntry(text=e.content.text, author=e.author, timestamp=e.timestamp)
            for e in events
            if e.content is not None and e.content.text and not e.partial
        ]
        with self._lock:
            self._entries.setdefault((app, user), []).extend(entries)

    def search(self, app: str, user: str, query: str, limit: int = 10) -> list[MemoryEntry]:
        phrase = query.lower().strip()
        words = set(_WORD.findall(phrase))
        scored: list[tuple[float, float, MemoryEntry]] = []
        with self._lock:
            entries = list(self._entries.get((app, user), []))
        for entry in entries:
            text = entry.text.lower()
            score = (5.0 if phrase and phrase in text else 0.0) + (
                len(words & set(_WORD.findall(text))) / len(words) if words else 0.0
            )
            if score > 0:
                scored.append((score, entry.timestamp, entry))
        scored.sort(key=lambda item: (-item[0], -item[1]))
        return [entry for _, _, entry in scored[:limit]]


def part_text(part: Any) -> str | None:
    return getattr(part, "text", None)
