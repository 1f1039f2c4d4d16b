"""google-adk's wire shapes, shared by every route (REST, SSE, WebSocket)."""

from __future__ import annotations

import json
from typing import Any

from .._types import Event, Part
from ..messages import SessionInfo

__all__ = ["compact_json", "event_json", "is_user_echo", "part_json", "session_json"]


def event_json(event: Event) -> dict[str, Any]:
    """An event as google-adk sends it: camelCase, None fields omitted."""
    data: dict[str, Any] = event.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data


def session_json(info: SessionInfo) -> dict[str, Any]:
    return {"id": info.id, "appName": info.app_name, "userId": info.user_id, "state": info.state,
            "events": [event_json(e) for e in info.events], "lastUpdateTime": info.last_update_time}


def part_json(part: Part) -> dict[str, Any]:
    data: dict[str, Any] = part.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data


def compact_json(event: Event) -> str:
    """An event as one line of compact JSON (an SSE ``data:`` line, a WebSocket frame)."""
    return json.dumps(event_json(event), separators=(",", ":"))


def is_user_echo(position: int, event: Event) -> bool:
    """A run's first event is the user's message, unless an input policy refused it
    (then the refusal is the first event, and an answer)."""
    return position == 0 and event.author == "user"
