"""google-adk's wire shapes, shared by every route (REST, SSE, WebSocket)."""

from __future__ import annotations

import json
from typing import Any

from .._types import Event, Part
from ..messages import SessionInfo

__all__ = [
    "compact_json", "event_json", "is_user_echo", "live_frame", "part_json", "session_json", "sse_events"]


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


def live_frame(event: Event) -> str:
    """An event as google-adk's ``/run_live`` sends it: compact JSON, where a chunk of
    the agent's audio carries no ``partial`` key (google-adk stores no audio, so it
    marks none; ours is partial inside, hence never stored)."""
    content = event.content
    if event.partial and content is not None and content.parts and all(
            p.inline_data is not None and p.inline_data.mime_type.startswith("audio/") for p in content.parts):
        event = event.model_copy(update={"partial": None})
    return compact_json(event)


def sse_events(event: Event) -> list[Event]:
    """An event as google-adk's ``/run_sse`` sends it: one with both content and an
    ``artifactDelta`` goes twice with the same id, first with its content and an empty
    ``artifactDelta``, then without content, carrying the ``artifactDelta`` (the
    session stores it once; ``/run`` does not split it)."""
    delta = event.actions.artifact_delta
    if event.content is None or not delta:
        return [event]
    with_content = event.model_copy(update={"actions": event.actions.model_copy(update={"artifact_delta": {}})})
    return [with_content, event.model_copy(update={"content": None})]


def is_user_echo(position: int, event: Event) -> bool:
    """A run's first event is the user's message, unless an input policy refused it
    (then the refusal is the first event, and an answer)."""
    return position == 0 and event.author == "user"
