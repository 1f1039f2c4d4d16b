"""google-adk's ``A2aAgentExecutor``: a2a-sdk's ``AgentExecutor`` of an agent's A2A
tasks, for a custom A2A server: ``A2aAgentExecutor(runner=..., config=A2aAgentExecutorConfig(...))``
given to a2a-sdk's request handler. It is :class:`adk_actors.a2a.RunnerExecutor`
(what our host's and ``to_a2a``'s A2A servers run tasks with) with google-adk's
signature and interceptors.

``runner``: an in-process :class:`adk_actors.runners.Runner` (the agent runs in this
process), a host's :class:`adk_actors.runtime.Runner` (it runs on the host), or a
callable giving one of them (awaited if it gives an awaitable), called on the first
task and kept.

In order, a task's ``execute``: a request with no message is a ``ValueError``; the
runner is resolved; the interceptors' ``before_agent`` hooks take the request context
in turn; the task runs as RunnerExecutor runs it (its context id is the session, the
user is the authenticated caller's name or else ``A2A_USER_<context id>``, its last
text answer is its artifact; a failure ends it failed, saying why), each working
update made of a run's event going through the ``after_event`` hooks and the task's
last status update through the ``after_agent`` hooks (see
:mod:`~adk_actors.a2a.executor.config`) before they are published; the task's
artifact is then its last text answer as the hooks left it (as google-adk's).

``use_legacy`` and ``force_new_version`` are taken and have no effect: google-adk
picks between its two implementations by them; there is one here.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from a2a.server.agent_execution import RequestContext
from a2a.server.events import Event as A2AEvent
from a2a.server.events import EventQueue
from a2a.types import Part, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent

from ..._types import Event
from ...runners import Runner
from .._executor import RunnerExecutor
from ._in_process import as_task_runner
from .config import A2aAgentExecutorConfig, ExecuteInterceptor
from .executor_context import ExecutorContext
from .utils import (
    execute_after_agent_interceptors,
    execute_after_event_interceptors,
    execute_before_agent_interceptors,
)

__all__ = ["A2aAgentExecutor", "user_of_request"]

#: the states that end a run's part of a task (its last status update, for ``after_agent``)
_LAST = {TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED,
         TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED, TaskState.TASK_STATE_REJECTED}

_adk_event: contextvars.ContextVar[Event | None] = contextvars.ContextVar("a2a_adk_event", default=None)


def user_of_request(context: RequestContext) -> str:
    """The user a task runs as: the caller's name when the server authenticated it,
    else google-adk's ``A2A_USER_<context id>``."""
    user = context.call_context.user if context.call_context is not None else None
    if user is not None and user.is_authenticated and user.user_name:
        return str(user.user_name)
    return f"A2A_USER_{context.context_id}"


class A2aAgentExecutor(RunnerExecutor):
    """See the module."""

    def __init__(self, *, runner: Any | Callable[..., Any | Awaitable[Any]],
                 config: A2aAgentExecutorConfig | None = None, use_legacy: bool = False,
                 force_new_version: bool = False) -> None:
        resolved = runner if _is_runner(runner) else None
        super().__init__(as_task_runner(resolved) if resolved is not None else None, user_of_request)
        self._given = resolved if resolved is not None else runner
        self._resolved = resolved is not None
        self._resolving = asyncio.Lock()
        self._config = config or A2aAgentExecutorConfig()

    async def _resolve_runner(self) -> Any:
        """The runner (a factory's is made once, on the first task)."""
        async with self._resolving:
            if not self._resolved:
                if not callable(self._given):
                    raise TypeError(f"Runner must be a Runner instance or a callable that returns a Runner, "
                                    f"got {type(self._given)}")
                made = self._given()
                self._given = await made if inspect.isawaitable(made) else made
                self._runner = as_task_runner(self._given)
                self._resolved = True
            return self._given

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.message is None:
            raise ValueError("A2A request must have a message")
        runner = await self._resolve_runner()
        interceptors = self._config.execute_interceptors or []
        context = await execute_before_agent_interceptors(context, interceptors)
        if not any(i.after_event or i.after_agent for i in interceptors):
            await super().execute(context, event_queue)
            return
        told = ExecutorContext(self._runner.app_name, self._user_of(context), context.context_id or "", runner)
        await super().execute(context, _Intercepted(event_queue, interceptors, told))

    def _publishing(self, event: Any) -> None:
        _adk_event.set(event)


class _Intercepted(EventQueue):
    """The task's queue, its events passed through the interceptors' hooks first."""

    def __init__(self, queue: EventQueue, interceptors: list[ExecuteInterceptor], told: ExecutorContext) -> None:
        self._queue = queue
        self._interceptors = interceptors
        self._told = told
        self._answer: list[Part] | None = None

    async def enqueue_event(self, event: A2AEvent) -> None:
        if isinstance(event, TaskArtifactUpdateEvent) and self._answer is not None:
            del event.artifact.parts[:]  # the answer as the hooks left it
            event.artifact.parts.extend(self._answer)
        if isinstance(event, TaskStatusUpdateEvent) and event.status.state in _LAST:
            await self._queue.enqueue_event(await execute_after_agent_interceptors(self._told, event,
                                                                                   self._interceptors))
            return
        adk_event = _adk_event.get()
        if not (isinstance(event, TaskStatusUpdateEvent) and event.status.HasField("message")
                and adk_event is not None):
            await self._queue.enqueue_event(event)
            return
        _adk_event.set(None)  # one A2A event per run's event goes through after_event
        events = await execute_after_event_interceptors(event, self._told, adk_event, self._interceptors)
        for each in events:
            if isinstance(each, TaskStatusUpdateEvent) and each.status.message.parts and all(
                    part.WhichOneof("content") == "text" for part in each.status.message.parts):
                self._answer = list(each.status.message.parts)
            await self._queue.enqueue_event(each)


def _is_runner(runner: Any) -> bool:
    """A runner itself (in-process, or a host's), not a factory of one."""
    return isinstance(runner, Runner) or (hasattr(runner, "run_async") and hasattr(runner, "app_name"))
