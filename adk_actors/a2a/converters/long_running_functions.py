"""google-adk's ``a2a.converters.long_running_functions``: a run's long-running calls
held back from its stream and put to the A2A client at the end, as the question the
task stops on.

:class:`LongRunningFunctions` ``process_event`` gives a copy of each event without
its long-running calls (those the event names) nor the responses to them; a whole
(not partial) event's are kept. ``create_long_running_function_call_event`` then
gives one status update of them all (None when there were none): their parts, each
call marked ``adk_is_long_running``, in an agent message; auth-required when the
last marked call asks for a credential (``adk_request_credential``), else
input-required.

:func:`handle_user_input`: a message to a task waiting for input or a credential that
holds no function response gets the task's state again, saying a function response
was expected (None otherwise: the message goes on to the run).
"""

from __future__ import annotations

import uuid
from typing import Any

from a2a.server.agent_execution import RequestContext
from a2a.types import Message, Part, Role, TaskState, TaskStatusUpdateEvent

from ..._types import Event
from ..._types import Part as OurPart
from ._common import (
    REQUEST_CREDENTIAL,
    TYPE_KEY,
    agent_text,
    call_name,
    is_call,
    mark_long_running,
    status_update,
)
from .part_converter import (
    A2A_DATA_PART_METADATA_TYPE_FUNCTION_RESPONSE,
    GenAIPartToA2APartConverter,
    convert_genai_part_to_a2a_part,
    part_metadata,
)

__all__ = ["LongRunningFunctions", "handle_user_input"]

#: what a task waiting on a call says to a message with no function response
NO_FUNCTION_RESPONSE = "This task waits for a function response, and the message has none."


class LongRunningFunctions:
    """See the module."""

    def __init__(self, part_converter: GenAIPartToA2APartConverter | None = None) -> None:
        self._parts: list[OurPart] = []
        self._long_running_tool_ids: set[str] = set()
        self._part_converter = part_converter or convert_genai_part_to_a2a_part
        self._task_state = TaskState.TASK_STATE_INPUT_REQUIRED

    def has_long_running_function_calls(self) -> bool:
        """Whether a long-running call was held back."""
        return bool(self._long_running_tool_ids)

    def process_event(self, event: Event) -> Event:
        """A copy of the event without its long-running calls and their responses
        (kept when the event is not partial)."""
        event = event.model_copy(deep=True)
        if event.content is None or not event.content.parts:
            return event
        kept: list[OurPart] = []
        for part in event.content.parts:
            if part.function_call is not None:
                held = bool(event.long_running_tool_ids) and part.function_call.id in (event.long_running_tool_ids or ())
                if held and not event.partial:
                    self._parts.append(part)
                    self._long_running_tool_ids.add(part.function_call.id or "")
            elif part.function_response is not None:
                held = part.function_response.id in self._long_running_tool_ids
                if held and not event.partial:
                    self._parts.append(part)
            else:
                held = False
            if not held:
                kept.append(part)
        event.content.parts = kept
        return event

    def create_long_running_function_call_event(self, task_id: str, context_id: str) -> TaskStatusUpdateEvent | None:
        """The status update asking the held calls (see the module), or None."""
        if not self._long_running_tool_ids:
            return None
        parts = self._return_long_running_parts()
        if not parts:
            return None
        message = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_AGENT, parts=parts)
        return status_update(task_id, context_id, self._task_state, message)

    def _return_long_running_parts(self) -> list[Part]:
        found: list[Part] = []
        for part in self._parts:
            got: Any = self._part_converter(part)
            for a2a_part in got if isinstance(got, list) else [got] if got else []:
                self._mark_long_running_function_call(a2a_part)
                found.append(a2a_part)
        return found

    def _mark_long_running_function_call(self, a2a_part: Part) -> None:
        if is_call(a2a_part):
            mark_long_running(a2a_part)
            self._task_state = (TaskState.TASK_STATE_AUTH_REQUIRED if call_name(a2a_part) == REQUEST_CREDENTIAL
                                else TaskState.TASK_STATE_INPUT_REQUIRED)


def handle_user_input(context: RequestContext) -> TaskStatusUpdateEvent | None:
    """See the module."""
    task = context.current_task
    waiting = (TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED)
    if task is None or not task.HasField("status") or task.status.state not in waiting:
        return None
    for part in context.message.parts if context.message is not None else []:
        if part.WhichOneof("content") == "data" and (
                part_metadata(part).get(TYPE_KEY) == A2A_DATA_PART_METADATA_TYPE_FUNCTION_RESPONSE):
            return None
    return status_update(context.task_id, context.context_id, task.status.state, agent_text(NO_FUNCTION_RESPONSE))
