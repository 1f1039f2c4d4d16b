"""google-adk's ``a2a.converters.event_converter``: its first converters between A2A
and events (google-adk's legacy executor still runs on them).

Ours to A2A (an ``invocation_context`` with ``app_name``, ``user_id``, ``session``,
required): :func:`convert_event_to_a2a_message`, the event's parts (a function call
the event names long-running marked ``adk_is_long_running``) as a message of
``role`` (None without parts); :func:`convert_event_to_a2a_events`, in order, a
failed status update when the event has an error code (its error message, or
:data:`DEFAULT_ERROR_MESSAGE`), then a status update of the message: working,
input-required when it has a long-running call, auth-required when that call asks
for a credential (``adk_request_credential``). Each update's metadata is the
context's (``adk_app_name``, ``adk_user_id``, ``adk_session_id``,
``adk_invocation_id``, ``adk_author``, ``adk_event_id``, then those of
``adk_branch``, ``adk_grounding_metadata``, ``adk_custom_metadata``,
``adk_usage_metadata``, ``adk_error_code``, ``adk_actions`` that are set; models as
their camelCase fields, lists and dicts as JSON text, anything else as text).

A2A to ours: :func:`convert_a2a_message_to_event` (the message's parts, long-running
calls as in :mod:`.to_adk_event`; an event of empty content for a message of no
parts) and :func:`convert_a2a_task_to_event` (its artifacts' parts, else its status
message, else its history's last agent message; an ended task's event with parts
skips summarization; an event of no content when there is no message).
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from a2a.types import Message, Part, Role, Task, TaskState

from ..._types import Content, Event
from ._common import (
    REQUEST_CREDENTIAL,
    agent_text,
    call_name,
    is_call,
    is_long_running_call,
    mark_long_running,
    public,
    status_update,
)
from .from_adk_event import DEFAULT_ERROR_MESSAGE
from .part_converter import (
    A2APartToGenAIPartConverter,
    GenAIPartToA2APartConverter,
    convert_a2a_part_to_genai_part,
    convert_genai_part_to_a2a_part,
)
from .to_adk_event import _parts
from .utils import _get_adk_metadata_key

__all__ = ["ARTIFACT_ID_SEPARATOR", "DEFAULT_ERROR_MESSAGE", "convert_a2a_message_to_event",
           "convert_a2a_task_to_event", "convert_event_to_a2a_events", "convert_event_to_a2a_message"]

logger = logging.getLogger(__name__)

ARTIFACT_ID_SEPARATOR = "-"


def _as_metadata(value: Any) -> Any:
    """A metadata value: a model's camelCase fields, a list or dict as JSON text,
    anything else as its text."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True, by_alias=True)
    if isinstance(value, (dict, list)):
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


def _context_metadata(event: Any, invocation_context: Any) -> dict[str, Any]:
    """The context's and the event's metadata (see the module)."""
    if event is None:
        raise ValueError("an event is needed, not None")
    if invocation_context is None:
        raise ValueError("an invocation context is needed, not None")
    metadata: dict[str, Any] = {_get_adk_metadata_key(k): v for k, v in (
        ("app_name", invocation_context.app_name), ("user_id", invocation_context.user_id),
        ("session_id", invocation_context.session.id), ("invocation_id", event.invocation_id),
        ("author", event.author), ("event_id", event.id))}
    for name, value in (("branch", event.branch), ("grounding_metadata", event.grounding_metadata),
                        ("custom_metadata", public(event.custom_metadata)), ("usage_metadata", event.usage_metadata),
                        ("error_code", event.error_code), ("actions", event.actions)):
        if value is not None:
            metadata[_get_adk_metadata_key(name)] = _as_metadata(value)
    return metadata


def convert_event_to_a2a_message(event: Any, invocation_context: Any = None, role: Any = Role.ROLE_AGENT,
                                 part_converter: GenAIPartToA2APartConverter = convert_genai_part_to_a2a_part,
                                 ) -> Message | None:
    """The message of an event's parts (see the module); ValueError for no event."""
    if event is None:
        raise ValueError("an event is needed, not None")
    if event.content is None or not event.content.parts:
        return None
    parts: list[Part] = []
    for part in event.content.parts:
        got = part_converter(part)
        for a2a_part in got if isinstance(got, list) else [got] if got else []:
            if is_call(a2a_part) and event.long_running_tool_ids and (
                    _call_id(a2a_part) in event.long_running_tool_ids):
                mark_long_running(a2a_part)
            parts.append(a2a_part)
    return Message(message_id=str(uuid.uuid4()), role=role, parts=parts) if parts else None


def _call_id(part: Part) -> Any:
    value = part.data.struct_value.fields.get("id")
    return value.string_value if value is not None else None


def convert_event_to_a2a_events(event: Any, invocation_context: Any, task_id: str | None = None,
                                context_id: str | None = None,
                                part_converter: GenAIPartToA2APartConverter = convert_genai_part_to_a2a_part,
                                ) -> list[Any]:
    """The A2A status updates of an event (see the module); ValueError without an
    event or an invocation context."""
    if event is None:
        raise ValueError("an event is needed, not None")
    if invocation_context is None:
        raise ValueError("an invocation context is needed, not None")
    found: list[Any] = []
    if event.error_code:
        metadata = _context_metadata(event, invocation_context)
        metadata[_get_adk_metadata_key("error_code")] = str(event.error_code)
        text = agent_text(getattr(event, "error_message", None) or DEFAULT_ERROR_MESSAGE,
                          {_get_adk_metadata_key("error_code"): str(event.error_code)})
        found.append(status_update(task_id, context_id, TaskState.TASK_STATE_FAILED, text, metadata))
    role = Role.ROLE_USER if event.author == "user" else Role.ROLE_AGENT
    message = convert_event_to_a2a_message(event, invocation_context, role=role, part_converter=part_converter)
    if message is not None:
        asking = [part for part in message.parts if is_long_running_call(part)]
        state = (TaskState.TASK_STATE_AUTH_REQUIRED if any(call_name(p) == REQUEST_CREDENTIAL for p in asking)
                 else TaskState.TASK_STATE_INPUT_REQUIRED if asking else TaskState.TASK_STATE_WORKING)
        found.append(status_update(task_id, context_id, state, message, _context_metadata(event, invocation_context)))
    return found


def _empty_event(author: str | None, invocation_context: Any, content: Content | None = None) -> Event:
    return Event(invocation_id=invocation_context.invocation_id if invocation_context else str(uuid.uuid4()),
                 author=author or "a2a agent", branch=invocation_context.branch if invocation_context else None,
                 content=content)


def convert_a2a_message_to_event(a2a_message: Message, author: str | None = None, invocation_context: Any = None,
                                 part_converter: A2APartToGenAIPartConverter = convert_a2a_part_to_genai_part,
                                 ) -> Event:
    """The event of a message (see the module); ValueError for None, RuntimeError
    when it cannot be made."""
    if a2a_message is None:
        raise ValueError("an A2A message is needed, not None")
    role = "user" if a2a_message.role == Role.ROLE_USER else "model"
    if not a2a_message.parts:
        return _empty_event(author, invocation_context, Content(role=role, parts=[]))
    try:
        parts, long_running = _parts(a2a_message.parts, part_converter)
        event = _empty_event(author, invocation_context, Content(role=role, parts=parts))
        event.long_running_tool_ids = tuple(sorted(long_running)) if long_running else None
        return event
    except Exception as error:
        raise RuntimeError(f"the A2A message could not become an event: {error}") from error


def convert_a2a_task_to_event(a2a_task: Task, author: str | None = None, invocation_context: Any = None,
                              part_converter: A2APartToGenAIPartConverter = convert_a2a_part_to_genai_part,
                              ) -> Event:
    """The event of a task (see the module); ValueError for None, RuntimeError when
    its message cannot become one."""
    if a2a_task is None:
        raise ValueError("an A2A task is needed, not None")
    message: Message | None = None
    if a2a_task.artifacts:
        message = Message(message_id="", role=Role.ROLE_AGENT,
                          parts=[part for artifact in a2a_task.artifacts for part in artifact.parts])
    elif a2a_task.status.message.parts:
        message = a2a_task.status.message
    else:
        agents = [m for m in a2a_task.history if m.role == Role.ROLE_AGENT]
        message = agents[-1] if agents else None
    if message is None:
        return _empty_event(author, invocation_context)
    try:
        event = convert_a2a_message_to_event(message, author, invocation_context, part_converter=part_converter)
    except Exception as error:
        raise RuntimeError(f"the A2A task's message could not become an event: {error}") from error
    ended = (TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED)
    if a2a_task.status.state in ended and event.content is not None and event.content.parts:
        event.actions.skip_summarization = True
    return event


