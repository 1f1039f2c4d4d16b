"""adk-fluent's ``dispatch`` and ``join``: agents run in the background of a pipeline.

``writer >> dispatch(emailer, auditor) >> formatter >> join()``:

* ``dispatch(*agents, names=None, on_complete=None, on_error=None, stream_to=None,
  max_tasks=None)`` starts each agent as a background task of the run (its name:
  ``names[i]``, else the agent's) and the pipeline goes on at once. For each, in
  order: the ``on_dispatch`` hooks (middleware: a ``DispatchDirective`` with
  ``cancel`` skips it, one with ``inject_state`` sets keys for it); the task runs on
  its own copy of the session (so its later steps see its earlier ones, and the
  pipeline does not see them yet); ``stream_to`` (a state key) holds its last text
  as it comes, for the steps after the dispatch; when it ends,
  ``on_complete(name, text)`` or ``on_error(name, error)`` and the
  ``on_task_complete`` / ``on_task_error`` hooks. ``_dispatch_status`` says of each
  task ``running`` (an event of the dispatch), then at the join ``completed``,
  ``error`` (with ``error``), ``cancelled`` or ``timed_out``. At most ``max_tasks``
  (50) run at once in a run.
* ``join(*names, timeout=None)`` waits for those tasks (every one when no name is
  given), at most ``timeout`` seconds (the late ones are cancelled). Then the
  finished tasks' events (not partial ones) join the run, in the order the tasks
  were dispatched, followed by one event of the join: ``_dispatch_status`` and
  ``_dispatch_results`` (task name -> its last text) and each ``stream_to`` key in its
  state delta; then the
  ``on_join(joined, timed_out)`` hooks.
* Tasks never joined are joined when the run's agents are done (the same events,
  by the dispatch), so their work reaches the session; a run that fails or is
  cancelled cancels them.

Where adk-fluent differs: its tasks share the pipeline's session object, and the ones
never joined are left running when the run ends.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from .._types import Event, EventActions
from ..agents import AgentBase
from ._builders import Builder, built
from ._middleware import mark_dispatched
from ._primitives import Primitive
from ._state import step_name

__all__ = ["DispatchAgent", "JoinAgent", "dispatch", "join"]

_dispatches = itertools.count(1)
_joins = itertools.count(1)
_log = logging.getLogger("adk_actors.fluent")
STATUS, RESULTS = "_dispatch_status", "_dispatch_results"


@dataclasses.dataclass
class _Outcome:
    """What a dispatched task leaves for its join."""

    events: list[Event]
    text: str
    stream_to: str | None


class DispatchAgent(AgentBase):
    """See the module (``dispatch``)."""

    task_names: tuple[str, ...] = ()
    on_complete: Any = None
    on_error: Any = None
    stream_to: str | None = None
    max_tasks: int | None = None

    async def _run_impl(self, ctx: Any) -> AsyncIterator[Event]:
        started: dict[str, dict[str, str]] = {}
        for index, child in enumerate(self.sub_agents):
            name = self.task_names[index] if index < len(self.task_names) else child.name
            directive = await ctx.topology("on_dispatch", name, child.name)
            if getattr(directive, "cancel", False):
                continue
            view = dataclasses.replace(ctx.session, state=copy.deepcopy(ctx.session.state),
                                       events=list(ctx.session.events))
            view.state.update(getattr(directive, "inject_state", None) or {})
            ctx.background.start(name, self._work(ctx, child, name, view), limit=self.max_tasks)
            started[name] = {"status": "running", "agent": child.name}
        if ctx.background.at_end is None:
            ctx.background.at_end = lambda: joined_events(ctx, self.name, None, None)
        if started:
            status = {**ctx.session.state.get(STATUS, {}), **started}
            yield ctx.event(actions=EventActions(state_delta={STATUS: status}))

    def _work(self, ctx: Any, child: Any, name: str, view: Any) -> Callable[[], Any]:
        async def work() -> _Outcome:
            mark_dispatched()  # this task's own context
            kept: list[Event] = []
            text = ""
            try:
                async for event in child.run(dataclasses.replace(ctx.for_agent(child), session=view)):
                    view.commit(event)
                    if event.partial:
                        continue
                    kept.append(event)
                    latest = event.content.text if event.content is not None else ""
                    if latest:
                        text = latest
                        if self.stream_to:
                            ctx.session.state[self.stream_to] = text
            except Exception as error:
                if self.on_error is not None:
                    self.on_error(name, error)
                await ctx.topology("on_task_error", name, error)
                raise
            if self.on_complete is not None:
                self.on_complete(name, text)
            await ctx.topology("on_task_complete", name, text)
            return _Outcome(kept, text, self.stream_to)

        return work


class JoinAgent(AgentBase):
    """See the module (``join``)."""

    target_names: tuple[str, ...] | None = None
    timeout: float | None = None

    async def _run_impl(self, ctx: Any) -> AsyncIterator[Event]:
        async for event in joined_events(ctx, self.name, self.target_names, self.timeout):
            yield event


async def joined_events(ctx: Any, author: str, names: tuple[str, ...] | None,
                        timeout: float | None) -> AsyncIterator[Event]:
    """Join the tasks ``names`` (all when None) of ``ctx``'s run: their events, then one
    event of ``author`` with the tasks' status and results (see the module)."""
    if not ctx.background.names:
        return
    ended, late = await ctx.background.join(names, timeout)
    status = dict(ctx.session.state.get(STATUS, {}))
    results = dict(ctx.session.state.get(RESULTS, {}))
    streamed: dict[str, str] = {}
    joined: list[str] = []
    for name, task in ended.items():
        entry = dict(status.get(name, {}))
        if task.cancelled():
            entry["status"] = "cancelled"
        elif task.exception() is not None:
            error = task.exception()
            entry.update(status="error", error=f"{type(error).__name__}: {error}")
            _log.warning("dispatched task %s failed: %s: %s", name, type(error).__name__, error)
        else:
            outcome: _Outcome = task.result()
            for event in outcome.events:
                yield event
            entry["status"] = "completed"
            if outcome.text:
                results[name] = outcome.text
                if outcome.stream_to:
                    streamed[outcome.stream_to] = outcome.text
            joined.append(name)
        status[name] = entry
    for name in late:
        status[name] = {**status.get(name, {}), "status": "timed_out"}
    yield ctx.event(author=author, actions=EventActions(state_delta={**streamed, STATUS: status, RESULTS: results}))
    await ctx.topology("on_join", joined, late)


def dispatch(*agents: Any, names: list[str] | None = None, on_complete: Callable[[str, str], Any] | None = None,
             on_error: Callable[[str, BaseException], Any] | None = None, stream_to: str | None = None,
             max_tasks: int | None = None) -> Builder:
    """See the module."""
    if not agents:
        raise ValueError("dispatch needs at least one agent")
    operands = [agent._operand() if isinstance(agent, Builder) else agent for agent in agents]
    task_names = tuple(names[i] if names and i < len(names) else step_name(agent) for i, agent in enumerate(agents))
    name = f"dispatch_{next(_dispatches)}"
    step = Primitive(name, "dispatch", lambda: DispatchAgent(
        name=name, sub_agents=[built(a) for a in operands], task_names=task_names, on_complete=on_complete,
        on_error=on_error, stream_to=stream_to, max_tasks=max_tasks), operands)
    step.writes_keys = frozenset({STATUS, *([stream_to] if stream_to else [])})  # type: ignore[attr-defined]
    return step


def join(*names: str, timeout: float | None = None) -> Builder:
    """See the module."""
    name = f"join_{next(_joins)}"
    return Primitive(name, "join", lambda: JoinAgent(name=name, target_names=names or None, timeout=timeout), [])

