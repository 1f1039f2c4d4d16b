"""Artifact stores: versioned files per (app, user, session), validated names.

Names follow :mod:`adk_actors._names` (a ``user:`` prefix makes an artifact
user-scoped; no path separators, control characters or ``..``). A bad name raises :class:`InvalidArtifactName` before anything is written;
an artifact over ``max_bytes`` raises :class:`ArtifactTooLarge`.

:class:`FileArtifactStore` (the default, under the host's data dir) writes each
version as ``<root>/<app>/<user>/<session or _user>/<name>/<version>.bin`` plus a
``.json`` with its MIME type, size, SHA-256 and time: written to a temporary file,
flushed, fsynced and renamed, so a crash leaves either the whole version or none.
Versions count 0, 1, 2 ...; ``load`` gives the latest or a given one and checks the
hash. One user's paths never meet another's.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from .._exceptions import AdkError
from .._files import private_dir, write_private
from .._names import ArtifactError, InvalidArtifactName, validate_name
from .._types import Blob, Part

__all__ = [
    "ArtifactError",
    "ArtifactTooLarge",
    "FileArtifactStore",
    "InvalidArtifactName",
    "validate_name",
]

class ArtifactTooLarge(ArtifactError):
    pass


def _content(part: Part) -> tuple[bytes, str, str]:
    """(bytes, MIME type, kind) of an artifact part; kind is "text" or "inline_data",
    so that loading gives back the part exactly as it was saved."""
    if part.inline_data is not None:
        return part.inline_data.data, part.inline_data.mime_type, "inline_data"
    if part.text is not None:
        return part.text.encode(), "text/plain", "text"
    raise ArtifactError("an artifact is a Part with text or inline_data")


def _part(data: bytes, mime_type: str, kind: str | None) -> Part:
    """The part saved as ``kind`` (a version saved before kinds were kept: text/plain
    was text)."""
    if kind == "text" or (kind is None and mime_type == "text/plain"):
        return Part(text=data.decode())
    return Part(inline_data=Blob(mime_type=mime_type, data=data))


class FileArtifactStore:
    def __init__(self, root: str | Path, *, max_bytes: int = 50 * 1024 * 1024) -> None:
        self.root = private_dir(root)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()

    def _dir(self, app: str, user: str, session: str, name: str) -> Path:
        validate_name(app, "app name")
        validate_name(user, "user id")
        validate_name(name)
        scope = "_user" if name.startswith("user:") else validate_name(session, "session id")
        path = self.root / app / user / scope / name.removeprefix("user:")
        if self.root.resolve() not in path.resolve().parents:  # belt and braces
            raise InvalidArtifactName(f"artifact path escapes the store: {name!r}")
        return path

    def _versions(self, folder: Path) -> list[int]:
        if not folder.is_dir():
            return []
        return sorted(int(p.stem) for p in folder.glob("*.json") if p.stem.isdigit())

    def save(self, app: str, user: str, session: str, name: str, part: Part,
             custom_metadata: dict[str, Any] | None = None) -> int:
        """Store a new version (with ``custom_metadata``, JSON, kept beside it); returns
        its number (0 for the first)."""
        folder = self._dir(app, user, session, name)
        data, mime_type, kind = _content(part)
        if len(data) > self.max_bytes:
            raise ArtifactTooLarge(f"artifact {name!r} has {len(data)} bytes; the limit is {self.max_bytes}")
        with self._lock:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            versions = self._versions(folder)
            version = versions[-1] + 1 if versions else 0
            meta = {"version": version, "mime_type": mime_type, "kind": kind, "size": len(data),
                    "sha256": hashlib.sha256(data).hexdigest(), "created": time.time(),
                    "custom_metadata": dict(custom_metadata or {})}
            write_private(folder / f"{version}.bin", data)
            write_private(folder / f"{version}.json", json.dumps(meta).encode())  # written last: the commit
        return version

    def load(self, app: str, user: str, session: str, name: str, version: int | None = None) -> Part | None:
        folder = self._dir(app, user, session, name)
        versions = self._versions(folder)
        if not versions:
            return None
        chosen = versions[-1] if version is None else version
        if chosen not in versions:
            return None
        meta = json.loads((folder / f"{chosen}.json").read_text())
        data = (folder / f"{chosen}.bin").read_bytes()
        if hashlib.sha256(data).hexdigest() != meta["sha256"]:
            raise AdkError(f"artifact {name!r} version {chosen} is corrupt (hash mismatch)")
        return _part(data, meta["mime_type"], meta.get("kind"))

    def metadata(self, app: str, user: str, session: str, name: str,
                 version: int | None = None) -> dict[str, Any] | None:
        """What was recorded with a version (the latest when None): ``version``,
        ``mime_type``, ``size``, ``sha256``, ``created``, ``custom_metadata``; None when
        there is none."""
        folder = self._dir(app, user, session, name)
        versions = self._versions(folder)
        chosen = (versions[-1] if versions else None) if version is None else version
        if chosen is None or chosen not in versions:
            return None
        meta: dict[str, Any] = json.loads((folder / f"{chosen}.json").read_text())
        return meta

    def list(self, app: str, user: str, session: str) -> list[str]:
        validate_name(app, "app name")
        validate_name(user, "user id")
        validate_name(session, "session id")
        base = self.root / app / user
        names = [p.name for p in (base / session).iterdir() if self._versions(p)] if (base / session).is_dir() else []
        names += [f"user:{p.name}" for p in (base / "_user").iterdir() if self._versions(p)] \
            if (base / "_user").is_dir() else []
        return sorted(names)

    def versions(self, app: str, user: str, session: str, name: str) -> builtins.list[int]:
        return self._versions(self._dir(app, user, session, name))

    def delete(self, app: str, user: str, session: str, name: str) -> bool:
        folder = self._dir(app, user, session, name)
        with self._lock:
            if not folder.is_dir():
                return False
            shutil.rmtree(folder)
            return True
