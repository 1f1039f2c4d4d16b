"""google-adk's ``a2a.converters.to_adk_event``: what a remote A2A agent sent (a
message, a task, a status or artifact update) as one of our events, authored by
``author`` (else ``a2a agent``), in the invocation and branch of
``invocation_context`` when one is given.

Each converter, in order: the A2A parts go through the part converter (a part that
fails or gives nothing is left out, logged); a function call whose part is marked
``adk_is_long_running`` becomes one of the event's long-running calls; the role is
the user's for a user message, else the model's; the metadata a peer may set is
read back: ``adk_grounding_metadata``, ``adk_custom_metadata`` (without internal
keys), ``adk_usage_metadata``, ``adk_error_code`` and, of ``adk_actions``, only
``escalate`` and ``skip_summarization`` (a peer never changes the caller's state,
artifacts or control flow; a state delta is logged and dropped); metadata that does
not validate is left out, logged. Nothing to say (no part, no action) gives None,
except a task or status update that reached a state where the remote agent stops
(input or auth required, completed, failed, canceled, rejected): an event of no
content then.

A task: its artifacts' parts, then its status message's when it asks for input or a
credential (or has no artifact and stopped). A status update: its message's parts.
Input or auth required with no long-running call of its own: the last part with a
prompt (text, or the ``data`` of a tagged data part) becomes a call to
``mock_function_call_for_required_user_input`` (``{"input_required": prompt}``) or
``..._auth`` (``{"auth_required": prompt}``), long-running. A task that ended
(completed, failed, canceled) with parts skips summarization. An artifact update is
partial until its last chunk; with an invocation context, its event id is the same
for every chunk of one artifact in one invocation.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from typing import Any

from a2a.types import Message, Role, Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent
from pydantic import ValidationError

from ..._grounding import GroundingMetadata
from ..._types import Content, Event, EventActions, FunctionCall, UsageMetadata
from ..._types import Part as OurPart
from ._common import LONG_RUNNING_KEY, as_dict, message_or_none, without_internal
from .part_converter import (
    A2A_DATA_PART_END_TAG,
    A2A_DATA_PART_START_TAG,
    A2A_DATA_PART_TEXT_MIME_TYPE,
    A2APartToGenAIPartConverter,
    convert_a2a_part_to_genai_part,
    part_metadata,
)
from .utils import _get_adk_metadata_key

__all__ = [
    "MOCK_FUNCTION_CALL_FOR_REQUIRED_USER_AUTH",
    "MOCK_FUNCTION_CALL_FOR_REQUIRED_USER_INPUT",
    "convert_a2a_artifact_update_to_event",
    "convert_a2a_message_to_event",
    "convert_a2a_status_update_to_event",
    "convert_a2a_task_to_event",
]

logger = logging.getLogger(__name__)

MOCK_FUNCTION_CALL_FOR_REQUIRED_USER_INPUT = "mock_function_call_for_required_user_input"
MOCK_FUNCTION_CALL_FOR_REQUIRED_USER_AUTH = "mock_function_call_for_required_user_auth"

#: where a remote agent stops and waits, or ends
_STOPPED = frozenset({TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED,
                      TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED,
                      TaskState.TASK_STATE_REJECTED})
_ASKING = (TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED)
_ENDED = (TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED)
#: the actions a peer may set (both spellings)
_PEER_ACTIONS = frozenset({"escalate", "skip_summarization", "skipSummarization"})

A2AMessageToEventConverter = Callable[..., "Event | None"]
A2ATaskToEventConverter = Callable[..., "Event | None"]
A2AStatusUpdateToEventConverter = Callable[..., "Event | None"]
A2AArtifactUpdateToEventConverter = Callable[..., "Event | None"]


def _parts(a2a_parts: Any, part_converter: A2APartToGenAIPartConverter) -> tuple[list[OurPart], set[str]]:
    """Our parts of the A2A parts, and the ids of the long-running calls among them."""
    found: list[OurPart] = []
    long_running: set[str] = set()
    for a2a_part in a2a_parts:
        try:
            got = part_converter(a2a_part)
            parts = got if isinstance(got, list) else [got] if got else []
            if not parts:
                logger.warning("an A2A part that gave nothing was left out: %r", a2a_part)
                continue
            if part_metadata(a2a_part).get(LONG_RUNNING_KEY) is True:
                long_running.update(p.function_call.id for p in parts
                                    if p.function_call is not None and p.function_call.id is not None)
            found.extend(parts)
        except Exception as error:
            logger.error("an A2A part could not be converted, left out: %s", error)
    return found, long_running


def _event(parts: list[OurPart], invocation_context: Any, author: str | None, actions: EventActions | None = None,
           long_running: set[str] | None = None, *, partial: bool = False, role: str = "model",
           allow_empty: bool = False, **metadata: Any) -> Event | None:
    """The event of ``parts`` (None when there is nothing to say, unless ``allow_empty``)."""
    actions = actions or EventActions()
    if not allow_empty and not parts and actions == EventActions():
        return None
    return Event(invocation_id=invocation_context.invocation_id if invocation_context else str(uuid.uuid4()),
                 author=author or "a2a agent", branch=invocation_context.branch if invocation_context else None,
                 actions=actions, long_running_tool_ids=tuple(sorted(long_running)) if long_running else None,
                 content=Content(role=role, parts=parts) if parts else None, partial=partial, **metadata)


def _parsed(value: Any) -> Any:
    """A metadata value; text that is JSON as what it says."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def _metadata_field(metadata: dict[str, Any], key: str, model: Any) -> Any:
    """``adk_<key>`` of the metadata: validated as ``model`` (dict: a dict; None: as it is)."""
    raw = metadata.get(_get_adk_metadata_key(key))
    if raw is None:
        return None
    parsed = _parsed(raw)
    if model is None:
        return parsed
    if not isinstance(parsed, dict):
        return None
    if model is dict:
        return parsed
    try:
        return model.model_validate(parsed)
    except ValidationError as error:
        logger.warning("the A2A %s metadata does not validate, left out: %d errors", key, error.error_count())
        return None


def _metadata_fields(metadata: Any) -> dict[str, Any]:
    """The event fields a peer's metadata sets (see the module)."""
    found = as_dict(metadata)
    if not found:
        return {}
    fields = {"grounding_metadata": _metadata_field(found, "grounding_metadata", GroundingMetadata),
              "custom_metadata": without_internal(_metadata_field(found, "custom_metadata", dict)),
              "usage_metadata": _metadata_field(found, "usage_metadata", UsageMetadata),
              "error_code": _metadata_field(found, "error_code", None)}
    if _metadata_field(found, "citation_metadata", dict):
        logger.debug("the A2A citation metadata was left out: our events have none")
    return {k: v for k, v in fields.items() if v is not None}


def _actions(metadata: Any) -> EventActions:
    """The actions a peer may set, from ``adk_actions`` (see the module)."""
    raw = as_dict(metadata).get(_get_adk_metadata_key("actions"))
    if raw is None:
        return EventActions()
    parsed = _parsed(raw)
    if not isinstance(parsed, dict):
        logger.warning("A2A actions metadata that is not an object was left out")
        return EventActions()
    if parsed.get("state_delta") or parsed.get("stateDelta"):
        logger.warning("a remote A2A agent's state delta was left out: the session's state is the caller's own")
    try:
        return EventActions.model_validate({k: v for k, v in parsed.items() if k in _PEER_ACTIONS})
    except ValidationError as error:
        logger.warning("A2A actions metadata that does not validate was left out: %s", error)
        return EventActions()


def _merged(existing: EventActions, new: EventActions) -> EventActions:
    """Two actions merged, the later's fields winning (dicts merged key by key)."""
    merged = existing.model_dump(exclude_none=True, by_alias=True)
    for key, value in new.model_dump(exclude_none=True, by_alias=True).items():
        both = isinstance(merged.get(key), dict) and isinstance(value, dict)
        merged[key] = {**merged[key], **value} if both else value
    return EventActions.model_validate(merged)


def _prompt(part: OurPart) -> Any:
    """What a part asks the user: its text, or the ``data`` of a tagged data part."""
    if part.text:
        return part.text
    blob = part.inline_data
    if (blob is None or blob.mime_type != A2A_DATA_PART_TEXT_MIME_TYPE or not blob.data.startswith(A2A_DATA_PART_START_TAG)
            or not blob.data.endswith(A2A_DATA_PART_END_TAG)):
        return None
    try:
        value = json.loads(blob.data[len(A2A_DATA_PART_START_TAG):-len(A2A_DATA_PART_END_TAG)])
    except (ValueError, TypeError) as error:
        logger.warning("a tagged data part that is not JSON asks nothing: %s", error)
        return None
    return value.get("data") if isinstance(value, dict) else None


def _asking(state: Any, parts: list[OurPart], long_running: set[str]) -> tuple[list[OurPart], set[str]]:
    """Input or auth required with no long-running call: the last part with a prompt
    becomes the mock call that asks it (see the module)."""
    if long_running or state not in _ASKING:
        return parts, long_running
    name, key = ((MOCK_FUNCTION_CALL_FOR_REQUIRED_USER_INPUT, "input_required")
                 if state == TaskState.TASK_STATE_INPUT_REQUIRED else (MOCK_FUNCTION_CALL_FOR_REQUIRED_USER_AUTH,
                                                                        "auth_required"))
    for i in range(len(parts) - 1, -1, -1):
        prompt = _prompt(parts[i])
        if prompt:
            call = FunctionCall(id=str(uuid.uuid4()), name=name, args={key: prompt})
            parts[i] = OurPart(function_call=call)
            return parts, {call.id or ""}
    return parts, long_running


def _checked(value: Any, kind: type, what: str) -> None:
    if value is None:
        raise ValueError(f"an A2A {what} is needed, not None")
    if not isinstance(value, kind):
        raise TypeError(f"expected an a2a.types.{kind.__name__}, got {type(value).__name__}")


def convert_a2a_task_to_event(a2a_task: Task, author: str | None = None, invocation_context: Any = None,
                              part_converter: A2APartToGenAIPartConverter = convert_a2a_part_to_genai_part,
                              ) -> Event | None:
    """The event of a task (see the module); ValueError for None, TypeError for not a Task."""
    _checked(a2a_task, Task, "task")
    actions, parts, long_running, fields = EventActions(), [], set(), {}  # type: ignore[var-annotated]
    state = a2a_task.status.state
    message = message_or_none(a2a_task.status.message)
    from_artifacts = [part for artifact in a2a_task.artifacts for part in artifact.parts]
    had_parts = bool(from_artifacts)
    if a2a_task.artifacts:
        for artifact in a2a_task.artifacts:
            actions = _merged(actions, _actions(artifact.metadata))
            fields = fields or _metadata_fields(artifact.metadata)
        parts, long_running = _parts(from_artifacts, part_converter)
    if message is not None and (state in _ASKING or (not from_artifacts and state in _STOPPED)):
        had_parts = had_parts or bool(message.parts)
        actions = _merged(actions, _actions(message.metadata))
        fields = fields or _metadata_fields(message.metadata)
        more, ids = _parts(message.parts, part_converter)
        parts.extend(more)
        long_running |= ids
    elif message is not None and not fields:
        fields = _metadata_fields(message.metadata)
    parts, long_running = _asking(state, parts, long_running)
    if state in _ENDED and parts:
        actions.skip_summarization = True
    return _event(parts, invocation_context, author, actions, long_running,
                  allow_empty=not had_parts and state in _STOPPED, **fields)


def convert_a2a_message_to_event(a2a_message: Message, author: str | None = None, invocation_context: Any = None,
                                 part_converter: A2APartToGenAIPartConverter = convert_a2a_part_to_genai_part,
                                 ) -> Event | None:
    """The event of a message (see the module); ValueError for None, TypeError for
    not a Message, RuntimeError when the event cannot be made."""
    _checked(a2a_message, Message, "message")
    try:
        parts, long_running = _parts(a2a_message.parts, part_converter)
        role = "user" if a2a_message.role == Role.ROLE_USER else "model"
        return _event(parts, invocation_context, author, _actions(a2a_message.metadata), long_running, role=role,
                      **_metadata_fields(a2a_message.metadata))
    except Exception as error:
        raise RuntimeError(f"the A2A message could not become an event: {error}") from error


def convert_a2a_status_update_to_event(a2a_status_update: TaskStatusUpdateEvent, author: str | None = None,
                                       invocation_context: Any = None,
                                       part_converter: A2APartToGenAIPartConverter = convert_a2a_part_to_genai_part,
                                       ) -> Event | None:
    """The event of a status update (see the module); ValueError for None, TypeError
    for not one, RuntimeError when the event cannot be made."""
    _checked(a2a_status_update, TaskStatusUpdateEvent, "status update")
    try:
        parts: list[OurPart] = []
        long_running: set[str] = set()
        actions, fields = EventActions(), {}
        state = a2a_status_update.status.state
        message = message_or_none(a2a_status_update.status.message)
        if message is not None:
            actions, fields = _actions(message.metadata), _metadata_fields(message.metadata)
            parts, long_running = _parts(message.parts, part_converter)
        parts, long_running = _asking(state, parts, long_running)
        return _event(parts, invocation_context, author, actions, long_running,
                      allow_empty=(message is None or not message.parts) and state in _STOPPED, **fields)
    except Exception as error:
        raise RuntimeError(f"the A2A status update could not become an event: {error}") from error


def convert_a2a_artifact_update_to_event(a2a_artifact_update: TaskArtifactUpdateEvent, author: str | None = None,
                                         invocation_context: Any = None,
                                         part_converter: A2APartToGenAIPartConverter = convert_a2a_part_to_genai_part,
                                         ) -> Event | None:
    """The event of an artifact update (see the module); ValueError for None,
    TypeError for not one, RuntimeError when the event cannot be made."""
    _checked(a2a_artifact_update, TaskArtifactUpdateEvent, "artifact update")
    try:
        artifact = a2a_artifact_update.artifact
        parts, long_running = _parts(artifact.parts, part_converter)
        event = _event(parts, invocation_context, author, _actions(artifact.metadata), long_running,
                       partial=not a2a_artifact_update.last_chunk, **_metadata_fields(artifact.metadata))
        if event is not None and artifact.artifact_id and invocation_context is not None:
            event.id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{invocation_context.invocation_id}:{artifact.artifact_id}"))
        return event
    except Exception as error:
        raise RuntimeError(f"the A2A artifact update could not become an event: {error}") from error
