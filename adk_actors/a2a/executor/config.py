"""google-adk's ``A2aAgentExecutorConfig`` and ``ExecuteInterceptor``: hooks around
the A2A tasks an :class:`~adk_actors.a2a.executor.a2a_agent_executor.A2aAgentExecutor`
runs.

An interceptor's hooks, each optional and async:

* ``before_agent(request_context)``: before the run starts; returns the request
  context the run goes on with (the interceptors in order);
* ``after_event(executor_context, a2a_event, adk_event)``: each A2A event made of one
  of the run's events (a working update with the agent's message), before it is
  published; returns it (changed or not), a list of events to publish instead, or
  None to publish nothing (the later interceptors then see nothing of it);
* ``after_agent(executor_context, final_event)``: the task's last status update of
  this run (completed, failed, canceled, input-required or auth-required) before it is
  published; returns the one to publish (the interceptors in reverse order).

Not here (google-adk's config has them): the part, request and event converters;
our executor's conversions are :mod:`adk_actors.a2a` 's own. Giving one is a
``ValidationError``, not a silent no-op.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable

from a2a.server.agent_execution import RequestContext
from a2a.server.events import Event as A2AEvent
from a2a.types import TaskStatusUpdateEvent
from pydantic import BaseModel, ConfigDict

from ..._types import Event
from .executor_context import ExecutorContext

__all__ = ["A2aAgentExecutorConfig", "ExecuteInterceptor"]


@dataclasses.dataclass
class ExecuteInterceptor:
    """See the module."""

    before_agent: Callable[[RequestContext], Awaitable[RequestContext]] | None = None
    after_event: Callable[[ExecutorContext, A2AEvent, Event],
                          Awaitable[A2AEvent | list[A2AEvent] | None]] | None = None
    after_agent: Callable[[ExecutorContext, TaskStatusUpdateEvent], Awaitable[TaskStatusUpdateEvent]] | None = None


class A2aAgentExecutorConfig(BaseModel):
    """The executor's interceptors (see the module)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    execute_interceptors: list[ExecuteInterceptor] | None = None
