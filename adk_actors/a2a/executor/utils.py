"""google-adk's ``a2a.executor.utils``: the interceptors' hooks of
:class:`~.config.ExecuteInterceptor` run in google-adk's order, as
:class:`~.a2a_agent_executor.A2aAgentExecutor` runs them.

* :func:`execute_before_agent_interceptors`: each ``before_agent`` in order, each
  given the request context the one before returned; the last one's is returned;
* :func:`execute_after_event_interceptors`: the A2A event made of one of a run's
  events through each ``after_event`` in order; a hook's list replaces the event
  with its events (each given to the next hook), None drops it; the events left are
  returned (an empty list once a hook dropped them all: the later hooks are not called);
* :func:`execute_after_agent_interceptors`: the task's last status update through
  each ``after_agent`` in reverse order; the last one's is returned.

A hook's error is raised as it is.
"""

from __future__ import annotations

from a2a.server.agent_execution import RequestContext
from a2a.server.events import Event as A2AEvent
from a2a.types import TaskStatusUpdateEvent

from ..._types import Event
from .config import ExecuteInterceptor
from .executor_context import ExecutorContext

__all__ = ["execute_after_agent_interceptors", "execute_after_event_interceptors",
           "execute_before_agent_interceptors"]


async def execute_before_agent_interceptors(context: RequestContext,
                                            execute_interceptors: list[ExecuteInterceptor] | None) -> RequestContext:
    """See the module."""
    for interceptor in execute_interceptors or []:
        if interceptor.before_agent is not None:
            context = await interceptor.before_agent(context)
    return context


async def execute_after_event_interceptors(a2a_event: A2AEvent, executor_context: ExecutorContext, adk_event: Event,
                                           execute_interceptors: list[ExecuteInterceptor] | None) -> list[A2AEvent]:
    """See the module."""
    events: list[A2AEvent] = [a2a_event]
    for interceptor in execute_interceptors or []:
        if interceptor.after_event is None:
            continue
        after: list[A2AEvent] = []
        for each in events:
            got = await interceptor.after_event(executor_context, each, adk_event)
            after.extend(got if isinstance(got, list) else [] if got is None else [got])
        events = after
        if not events:
            return []
    return events


async def execute_after_agent_interceptors(executor_context: ExecutorContext, final_event: TaskStatusUpdateEvent,
                                           execute_interceptors: list[ExecuteInterceptor] | None,
                                           ) -> TaskStatusUpdateEvent:
    """See the module."""
    for interceptor in reversed(execute_interceptors or []):
        if interceptor.after_agent is not None:
            final_event = await interceptor.after_agent(executor_context, final_event)
    return final_event
