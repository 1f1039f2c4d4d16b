"""google-adk's ``a2a.converters.from_adk_event``: an event of a run as the A2A
events of its task.

:func:`convert_event_to_a2a_events`, in order: the event's parts go through the part
converter; when there are any, they are one artifact update, its artifact the
author's: a partial event opens (or appends to) the author's streamed artifact, whose
id ``agents_artifacts`` keeps until the author's next whole event closes it (``last_chunk``);
an event of no parts but with actions is a working status update with an empty
agent message; every A2A event made gets the event's metadata (``adk_invocation_id``,
``adk_author``, ``adk_event_id``, ``adk_branch``, ``adk_grounding_metadata``,
``adk_custom_metadata`` without internal keys, ``adk_usage_metadata``,
``adk_error_code``, ``adk_actions``: only those with something in them; the
actions always, as google-adk's, their ``stateDelta`` even when empty) on its
artifact or status message. So an event of no parts always makes that working
update, as google-adk's does. :func:`create_error_status_event`: a failed status update
saying the event's error message.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from a2a.types import (
    Artifact,
    Message,
    Role,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)

from ..._types import EventActions
from ._common import agent_text, converted, message_or_none, public, set_metadata, status_update
from .part_converter import GenAIPartToA2APartConverter, convert_genai_part_to_a2a_part
from .utils import _get_adk_metadata_key

__all__ = ["DEFAULT_ERROR_MESSAGE", "A2AUpdateEvent", "convert_event_to_a2a_events", "create_error_status_event"]

logger = logging.getLogger(__name__)

#: what a failed status says when the event has no error message
DEFAULT_ERROR_MESSAGE = "The agent failed while handling this request"

A2AUpdateEvent = TaskStatusUpdateEvent | TaskArtifactUpdateEvent
AdkEventToA2AEventsConverter = Callable[..., list[A2AUpdateEvent]]


def _meaningful(value: Any) -> Any:
    """``value`` as metadata, None when there is nothing in it: a model by its set,
    non-default fields (camelCase), containers element by element (keys as text),
    JSON scalars as they are, anything else as its text."""
    if value is None:
        return None
    if isinstance(value, EventActions):  # google-adk's actions keep their state delta, empty or not
        return {**value.model_dump(exclude_none=True, exclude_defaults=True, by_alias=True),
                "stateDelta": value.model_dump(by_alias=True, include={"state_delta"})["stateDelta"]}
    if hasattr(value, "model_dump"):
        dumped = value.model_dump(exclude_none=True, exclude_defaults=True, by_alias=True)
        return dumped or None
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): _meaningful(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_meaningful(item) for item in value]
    if isinstance(value, (int, float, bool, str)):
        return value
    return str(value)


def _add_event_metadata(event: Any, a2a_events: Sequence[Any]) -> None:
    """Put the event's metadata (see the module) on each A2A event's status message
    or artifact."""
    if event is None:
        raise ValueError("an event is needed, not None")
    fields = {"invocation_id": event.invocation_id, "author": event.author, "event_id": event.id,
              "branch": event.branch, "citation_metadata": getattr(event, "citation_metadata", None),
              "grounding_metadata": event.grounding_metadata, "custom_metadata": public(event.custom_metadata),
              "usage_metadata": event.usage_metadata, "error_code": event.error_code, "actions": event.actions}
    metadata = {_get_adk_metadata_key(name): v for name, value in fields.items()
                if (v := _meaningful(value)) is not None}
    for a2a_event in a2a_events:
        if isinstance(a2a_event, TaskStatusUpdateEvent):
            message = message_or_none(a2a_event.status.message)
            if message is not None:
                set_metadata(message, metadata)
        elif isinstance(a2a_event, TaskArtifactUpdateEvent):
            set_metadata(a2a_event.artifact, metadata)


def create_error_status_event(event: Any, task_id: str | None = None,
                              context_id: str | None = None) -> TaskStatusUpdateEvent:
    """A failed status update of the task: an agent message of the event's error
    message (or :data:`DEFAULT_ERROR_MESSAGE`), with the event's metadata."""
    failed = status_update(task_id, context_id, TaskState.TASK_STATE_FAILED,
                           agent_text(getattr(event, "error_message", None) or DEFAULT_ERROR_MESSAGE))
    _add_event_metadata(event, [failed])
    return failed


def convert_event_to_a2a_events(event: Any, agents_artifacts: dict[str, str] | None, task_id: str | None = None,
                                context_id: str | None = None,
                                part_converter: GenAIPartToA2APartConverter = convert_genai_part_to_a2a_part,
                                ) -> list[A2AUpdateEvent]:
    """The A2A events of one event (see the module). A ValueError when ``event`` or
    ``agents_artifacts`` is None; a part converter's error is logged and raised."""
    if event is None:
        raise ValueError("an event is needed, not None")
    if agents_artifacts is None:
        raise ValueError("agents_artifacts is needed (a dict, empty at first), not None")
    try:
        parts = converted(event.content.parts if event.content is not None else [], part_converter)
    except Exception as error:
        logger.error("an event's parts could not be converted to A2A: %s", error)
        raise
    found: list[A2AUpdateEvent] = []
    if parts:
        partial = bool(event.partial)
        artifact_id = agents_artifacts.get(event.author)
        append = bool(artifact_id) and partial
        if artifact_id and not partial:
            del agents_artifacts[event.author]
        elif not artifact_id:
            artifact_id = str(uuid.uuid4())
            if partial:
                agents_artifacts[event.author] = artifact_id
        found.append(TaskArtifactUpdateEvent(task_id=task_id, context_id=context_id, last_chunk=not partial,
                                             append=append, artifact=Artifact(artifact_id=artifact_id, parts=parts)))
    elif _meaningful(event.actions) is not None:
        empty = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_AGENT, parts=[])
        found.append(status_update(task_id, context_id, TaskState.TASK_STATE_WORKING, empty))
    _add_event_metadata(event, found)
    return found
