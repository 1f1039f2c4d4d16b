"""Messages between A2A and our events: an A2A message's parts become our Content,
and an event's content becomes A2A parts (the conversions live with the agents that
speak A2A, :mod:`adk_actors.agents._a2a_parts`; named here for the server).

A2A to ours: text stays text; raw bytes become inline data (their media type and
file name kept); structured data becomes its JSON text; a file by URL becomes a
line naming the URL (a run never fetches a URL a caller gave it). Ours to A2A: text
(thoughts left out) stays text, inline data becomes raw bytes, and a tool's call or
response becomes structured data tagged ``adk_type`` (``function_call`` or
``function_response``), as google-adk tags them.
"""

from __future__ import annotations

from typing import Any

from a2a.types import Message, Part, Role
from google.protobuf.json_format import MessageToDict

from ..agents._a2a_parts import a2a_parts, content_of, data_part

__all__ = ["a2a_parts", "agent_message", "content_of", "data_of", "data_part"]


def agent_message(parts: list[Part], task_id: str, context_id: str, message_id: str) -> Message:
    """An agent's message of a task."""
    return Message(message_id=message_id, role=Role.ROLE_AGENT, parts=parts, task_id=task_id,
                   context_id=context_id)


def data_of(message: Message) -> dict[str, Any]:
    """The message's structured data, merged (later parts win); {} when it has none."""
    found: dict[str, Any] = {}
    for part in message.parts:
        if part.WhichOneof("content") == "data":
            value = MessageToDict(part.data)
            if isinstance(value, dict):
                found.update(value)
    return found
