"""google-adk's ``google.adk.artifacts.artifact_util`` checks of the ids an artifact's
place is built from."""

from __future__ import annotations

import re

from ..errors.input_validation_error import InputValidationError

__all__ = ["validate_path_segment", "validate_session_id"]

_DRIVE = re.compile(r"[A-Za-z]:")
_RESERVED = frozenset({"apps", "users", "sessions", "artifacts", "versions"})


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
