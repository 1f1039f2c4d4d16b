"""Names that become places: artifact names and the app, user and session ids that
key them.

A ``user:`` prefix makes an artifact user-scoped (shared by all that user's
sessions); the rest must be 1-255 characters with no path separator, no NUL or
control character, and not ``.`` or start with ``..``. App, user and session ids obey
the same rules. Every artifact service (in memory, on disk, behind an actor) checks
names with :func:`validate_name` before it writes anything.
"""

from __future__ import annotations

import re
from typing import Any

from ._exceptions import AdkError

__all__ = ["MAX_NAME", "ArtifactError", "InvalidArtifactName", "validate_name"]

MAX_NAME = 255
_FORBIDDEN = re.compile(r"[/\\\x00-\x1f\x7f]")


class ArtifactError(AdkError, ValueError):
    """An artifact request was refused (the reason says why)."""


class InvalidArtifactName(ArtifactError):
    """An artifact name (or app, user, session id) that could escape its place."""


def validate_name(name: Any, what: str = "artifact name") -> str:
    """``name`` itself, or :class:`InvalidArtifactName` saying which rule it breaks."""
    if not isinstance(name, str):
        raise InvalidArtifactName(f"{what} must be a string, got {type(name).__name__}")
    bare = name.removeprefix("user:") if what == "artifact name" else name
    if not bare or len(bare) > MAX_NAME:
        raise InvalidArtifactName(f"{what} must be 1 to {MAX_NAME} characters: {name!r}")
    if _FORBIDDEN.search(bare):
        raise InvalidArtifactName(f"{what} may not contain path separators or control characters: {name!r}")
    if bare in (".", "..") or bare.startswith(".."):
        raise InvalidArtifactName(f"{what} may not be or start with '..': {name!r}")
    return name
