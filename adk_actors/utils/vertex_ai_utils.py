"""google-adk's ``google.adk.utils.vertex_ai_utils``: Vertex AI express mode's API key."""

from __future__ import annotations

import os

from .env_utils import is_enterprise_mode_enabled

__all__ = ["get_express_mode_api_key"]


def get_express_mode_api_key(project: str | None, location: str | None,
                             express_mode_api_key: str | None) -> str | None:
    """The API key of Vertex AI express mode, checked in order: a ValueError when a key
    is given together with a project or a location (one or the other, not both);
    with enterprise (Vertex AI) mode on, the key given, else ``GOOGLE_API_KEY``
    (None when unset); with it off, None."""
    if express_mode_api_key and (project or location):
        raise ValueError("express_mode_api_key replaces project and location: pass either the key alone, "
                         "or a project and location without it")
    if not is_enterprise_mode_enabled():
        return None
    return express_mode_api_key or os.environ.get("GOOGLE_API_KEY")
