"""Messages between A2A and our events: an A2A message's parts become our Content,
and an event's content becomes A2A parts. The conversions (and their rules) live with
the agents that speak A2A, :mod:`adk_actors.agents._a2a_parts`; they are named here
for the server."""

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
