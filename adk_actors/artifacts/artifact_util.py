"""google-adk's ``google.adk.artifacts.artifact_util``: artifact references
(``artifact://`` URIs) and the checks of the ids an artifact's place is built from.

An artifact reference is a part whose ``file_data.file_uri`` is an ``artifact://``
URI naming another artifact's version, in one of two shapes (google-adk's):

* ``artifact://apps/<app>/users/<user>/sessions/<session>/artifacts/<filename>/versions/<n>``
  (a session's artifact);
* ``artifact://apps/<app>/users/<user>/artifacts/<filename>/versions/<n>`` (the user's).

:func:`get_artifact_uri` builds one, :func:`parse_artifact_uri` reads one (None when
the text is not one), :func:`is_artifact_ref` tells a reference part from a payload.
An artifact service that stores a reference checks it with
:func:`validate_artifact_reference_scope` (it may not leave its app and user, nor a
session for another); one that loads it follows it with
:func:`resolve_artifact_reference`, at most :data:`_MAX_ARTIFACT_REFERENCE_DEPTH`
hops (a chain that loops back is an error, not a recursion without end).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from .._artifact_version import ARTIFACT_SCHEME, get_artifact_uri
from ..errors.input_validation_error import InputValidationError

__all__ = ["ParsedArtifactUri", "get_artifact_uri", "is_artifact_ref", "parse_artifact_uri",
           "resolve_artifact_reference", "validate_artifact_reference_scope", "validate_path_segment",
           "validate_session_id"]

_SCHEME = ARTIFACT_SCHEME
#: how many references a load follows before it gives up (google-adk's bound)
_MAX_ARTIFACT_REFERENCE_DEPTH = 5

_DRIVE = re.compile(r"[A-Za-z]:")
_RESERVED = frozenset({"apps", "users", "sessions", "artifacts", "versions"})

# An id in a URI: the shortest run of characters not followed by "/<reserved word>/",
# so the words of the layout end it (an id may hold a slash otherwise).
_ID = r"((?:(?!/(?:" + "|".join(sorted(_RESERVED)) + r")/).)+?)"
_SESSION_URI = re.compile(rf"artifact://apps/{_ID}/users/{_ID}/sessions/{_ID}/artifacts/(.+)/versions/(\d+)")
_USER_URI = re.compile(rf"artifact://apps/{_ID}/users/{_ID}/artifacts/(.+)/versions/(\d+)")


class ParsedArtifactUri(NamedTuple):
    """What an ``artifact://`` URI names (``session_id`` None: a user-scoped artifact)."""

    app_name: str
    user_id: str
    session_id: str | None
    filename: str
    version: int


def parse_artifact_uri(uri: str) -> ParsedArtifactUri | None:
    """What ``uri`` names, or None when it is empty, not ``artifact://`` or not one of
    the two shapes (the session's shape is tried first)."""
    if not uri or not uri.startswith(_SCHEME):
        return None
    found = _SESSION_URI.fullmatch(uri)
    if found:
        app, user, session, filename, version = found.groups()
        return ParsedArtifactUri(app, user, session, filename, int(version))
    found = _USER_URI.fullmatch(uri)
    if found:
        app, user, filename, version = found.groups()
        return ParsedArtifactUri(app, user, None, filename, int(version))
    return None


def is_artifact_ref(artifact: Any) -> bool:
    """Whether ``artifact`` (a Part, ours or google.genai's) is a reference: its
    ``file_data.file_uri`` starts with ``artifact://``."""
    file_data = getattr(artifact, "file_data", None)
    uri = getattr(file_data, "file_uri", None) if file_data is not None else None
    return bool(uri and uri.startswith(_SCHEME))


def validate_artifact_reference_scope(*, app_name: str, user_id: str, session_id: str | None,
                                      parsed_uri: ParsedArtifactUri) -> None:
    """Nothing when the reference stays where its holder is; else InputValidationError:
    another app or user, or a session-scoped target in another session than
    ``session_id`` (a user-scoped target is open to each of the user's sessions)."""
    if parsed_uri.app_name != app_name or parsed_uri.user_id != user_id:
        raise InputValidationError("Artifact references must stay within the same app and user scope.")
    if parsed_uri.session_id is not None and parsed_uri.session_id != session_id:
        raise InputValidationError("Session-scoped artifact references must stay within the same session scope.")


def resolve_artifact_reference(*, file_uri: str, app_name: str, user_id: str, session_id: str | None,
                               remaining_depth: int) -> ParsedArtifactUri:
    """The target of a reference about to be followed, in order: InputValidationError
    when no hop is left (``remaining_depth`` 0 or less: a loader starts at
    :data:`_MAX_ARTIFACT_REFERENCE_DEPTH` and passes one less at each hop), when
    ``file_uri`` is not an artifact URI, or when its target is out of the holder's
    scope (:func:`validate_artifact_reference_scope`)."""
    if remaining_depth <= 0:
        raise InputValidationError(f"Exceeded maximum recursion depth resolving artifact reference: {file_uri}")
    parsed = parse_artifact_uri(file_uri)
    if parsed is None:
        raise InputValidationError(f"Invalid artifact reference URI: {file_uri}")
    validate_artifact_reference_scope(app_name=app_name, user_id=user_id, session_id=session_id, parsed_uri=parsed)
    return parsed


def validate_path_segment(value: str, field_name: str) -> None:
    """Nothing when ``value`` is a safe id; else InputValidationError naming
    ``field_name``: empty or blank, a null byte, a leading slash, a drive letter, a
    ``..`` segment, or a slash beside a segment the storage layout reserves."""
    if not isinstance(value, str) or not value.strip():
        raise InputValidationError(f"{field_name} must not be empty.")
    if "\x00" in value:
        raise InputValidationError(f"{field_name} must not contain null bytes.")
    if value.startswith(("/", "\\")):
        raise InputValidationError(f"{field_name} {value!r} must not be an absolute path or start with a slash.")
    if _DRIVE.match(value):
        raise InputValidationError(f"{field_name} {value!r} must not be drive-qualified.")
    segments = value.replace("\\", "/").split("/")
    if value in (".", "..") or ".." in segments:
        raise InputValidationError(f"{field_name} {value!r} must not contain traversal segments.")
    if len(segments) > 1 and not _RESERVED.isdisjoint(s.casefold() for s in segments):
        raise InputValidationError(f"{field_name} {value!r} must not contain reserved path segments.")


def validate_session_id(session_id: str) -> None:
    """:func:`validate_path_segment`, and ``user`` (the user scope's place) refused as
    the first segment."""
    validate_path_segment(session_id, "session_id")
    if session_id.replace("\\", "/").split("/")[0] == "user":
        raise InputValidationError("session_id must not be or start with the reserved value 'user'.")
