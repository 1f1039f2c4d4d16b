"""Names that become places: the app, user and session ids that key sessions, and
artifact names (the one grammar of every name a caller gives).

A name is a string of 1 to 255 bytes in UTF-8 (so that it fits one file name), with

* no lone UTF-16 surrogate (it could not be encoded, stored or answered),
* no control character (U+0000-U+001F, U+007F-U+009F: NUL, newlines, escapes),
* no path separator (``/`` or ``\\``),
* and it is not ``.``, nor does it start with ``..`` (a dot-segment).

An artifact name may carry a ``user:`` prefix (the artifact is then shared by all
that user's sessions); the rules apply to the rest. The host checks every name where
it is created and wherever a request uses it: the HTTP front door (a 422), every
actor of the message API (``invalid_request``) and every artifact service, before
anything is written.
"""

from __future__ import annotations

import re
from typing import Any

from ._exceptions import AdkError

__all__ = ["EVAL_SESSION_PREFIX", "MAX_NAME_BYTES", "ArtifactError", "InvalidArtifactName", "InvalidName", "escaped",
           "name_problem", "validate_name"]

MAX_NAME_BYTES = 255
#: The sessions an eval run makes start with this (google-adk's prefix); session lists
#: leave them out (``adk_actors.evals``, the HTTP API).
EVAL_SESSION_PREFIX = "___eval___session___"
_FORBIDDEN = re.compile(r"[/\\\x00-\x1f\x7f-\x9f]")


class ArtifactError(AdkError, ValueError):
    """An artifact request was refused (the reason says why)."""


class InvalidName(AdkError, ValueError):
    """An app, user or session id, or an artifact name, outside the grammar."""


class InvalidArtifactName(ArtifactError, InvalidName):
    """An artifact name (or app, user, session id) that could escape its place."""


def escaped(text: str) -> str:
    """``text`` with what cannot be shown as it is (lone surrogates, control
    characters) written as escapes, for an error message: ``repr`` without quotes."""
    return repr(text)[1:-1]


def name_problem(name: Any, what: str = "artifact name") -> str | None:
    """Why ``name`` breaks the grammar (the message names ``what`` and shows the name
    escaped, shortened), or None when it is a good name."""
    if not isinstance(name, str):
        return f"{what} must be a string, got {type(name).__name__}"
    bare = name.removeprefix("user:") if what == "artifact name" else name
    shown = escaped(name[:60]) + ("..." if len(name) > 60 else "")
    try:
        size = len(bare.encode("utf-8"))
    except UnicodeEncodeError:
        return f"{what} is not valid Unicode text (it holds a lone surrogate): '{shown}'"
    if not 0 < size <= MAX_NAME_BYTES:
        return f"{what} must be 1 to {MAX_NAME_BYTES} bytes in UTF-8, got {size}: '{shown}'"
    if _FORBIDDEN.search(bare):
        return f"{what} may not contain path separators or control characters: '{shown}'"
    if bare == "." or bare.startswith(".."):
        return f"{what} may not be '.' or start with '..': '{shown}'"
    return None


def validate_name(name: Any, what: str = "artifact name") -> str:
    """``name`` itself, or :class:`InvalidArtifactName` saying which rule it breaks."""
    problem = name_problem(name, what)
    if problem is not None:
        raise InvalidArtifactName(problem)
    return name  # type: ignore[no-any-return]
