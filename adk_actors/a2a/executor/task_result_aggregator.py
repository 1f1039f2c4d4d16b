"""google-adk's ``TaskResultAggregator``: the state a task ends in, read from the
status updates of its run as they pass.

``process_event``: a status update's state counts by precedence, failed over
auth-required over input-required over working: an update of a state at least as
high as the task's sets it and the status message (so the latest failure's message
wins); while the task is still working, every update's message is kept as its
status message. The update itself is then made a working one (the aggregated state
is published at the end instead). Any other event is left alone.
"""

from __future__ import annotations

from typing import Any

from a2a.server.events import Event as A2AEvent
from a2a.types import Message, TaskState, TaskStatusUpdateEvent

from ..converters._common import message_or_none

__all__ = ["TaskResultAggregator"]

_RANK = {TaskState.TASK_STATE_WORKING: 0, TaskState.TASK_STATE_INPUT_REQUIRED: 1,
         TaskState.TASK_STATE_AUTH_REQUIRED: 2, TaskState.TASK_STATE_FAILED: 3}


class TaskResultAggregator:
    """See the module."""

    def __init__(self) -> None:
        self._task_state: Any = TaskState.TASK_STATE_WORKING
        self._task_status_message: Message | None = None

    def process_event(self, event: A2AEvent) -> None:
        """Count a status update (see the module)."""
        if not isinstance(event, TaskStatusUpdateEvent):
            return
        state = event.status.state
        rank = _RANK.get(state)
        if rank is not None and rank > 0 and rank >= _RANK.get(self._task_state, 0):
            self._task_state = state
            self._task_status_message = message_or_none(event.status.message)
        elif self._task_state == TaskState.TASK_STATE_WORKING:
            self._task_status_message = message_or_none(event.status.message)
        event.status.state = TaskState.TASK_STATE_WORKING

    @property
    def task_state(self) -> Any:
        """The task's state so far (working until an update says otherwise)."""
        return self._task_state

    @property
    def task_status_message(self) -> Message | None:
        """The message of the update that set the state (the last one while working)."""
        return self._task_status_message
