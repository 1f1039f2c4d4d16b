"""The ``adk_`` metadata keys and the ``ADK/<app>/<user>/<session>`` context ids of
google-adk's A2A converters (its ``a2a.converters.utils``, all private there too)."""

from __future__ import annotations

from urllib.parse import quote, unquote

__all__ = ["ADK_CONTEXT_ID_PREFIX", "ADK_CONTEXT_ID_SEPARATOR", "ADK_METADATA_KEY_PREFIX"]

ADK_METADATA_KEY_PREFIX = "adk_"
ADK_CONTEXT_ID_PREFIX = "ADK"
ADK_CONTEXT_ID_SEPARATOR = "/"


def _get_adk_metadata_key(key: str) -> str:
    """``adk_<key>``; an empty key is a ValueError."""
    if not key:
        raise ValueError("an A2A metadata key needs a name (got an empty one)")
    return ADK_METADATA_KEY_PREFIX + key


def _to_a2a_context_id(app_name: str, user_id: str, session_id: str) -> str:
    """``ADK/<app>/<user>/<session>``, each percent-encoded (a ``/`` in one survives);
    any of them empty is a ValueError."""
    if not (app_name and user_id and session_id):
        raise ValueError("an A2A context id needs an app name, a user id and a session id, all non-empty")
    return ADK_CONTEXT_ID_SEPARATOR.join(
        [ADK_CONTEXT_ID_PREFIX, *(quote(x, safe="") for x in (app_name, user_id, session_id))])


def _from_a2a_context_id(context_id: str | None) -> tuple[str, str, str] | tuple[None, None, None]:
    """The app, user and session of a context id made by :func:`_to_a2a_context_id`;
    (None, None, None) for anything else (None, another shape, an empty field)."""
    pieces = (context_id or "").split(ADK_CONTEXT_ID_SEPARATOR)
    if len(pieces) != 4 or pieces[0] != ADK_CONTEXT_ID_PREFIX:
        return None, None, None
    app_name, user_id, session_id = (unquote(x) for x in pieces[1:])
    if app_name and user_id and session_id:
        return app_name, user_id, session_id
    return None, None, None
