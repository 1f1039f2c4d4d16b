"""google-adk's import path of ``App`` (``from google.adk.apps.app import App``) and of
``validate_app_name``."""

from __future__ import annotations

import re

from ..engine._app import App

__all__ = ["App", "validate_app_name"]

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")


def validate_app_name(name: str) -> None:
    """Return when ``name`` is a letter then letters, digits, ``_`` or ``-`` and is not
    ``user`` (google-adk's rule, the one ``App(name=...)`` applies); else raise a
    ValueError naming it. Unlike google-adk's, a name ending in a newline is refused."""
    if not _NAME.match(name):
        raise ValueError(f"invalid app name {name!r}: a letter, then letters, digits, '_' or '-'")
    if name == "user":
        raise ValueError("invalid app name 'user': the name of the end user's messages")
