"""Workflow agents: SequentialAgent, ParallelAgent, LoopAgent.

* Sequential: children in order, on the same branch; ``escalate`` does not stop it
  (as google-adk).
* Parallel (the plugins told before and after: ``on_fanout_start`` /
  ``on_fanout_complete``): children really concurrent (asyncio tasks), each on branch
  ``<parent>.<child>`` so they don't see each other's events. Each child waits
  until its event is committed before it goes on, so it always sees its own
  history. A child that raises or exceeds ``child_timeout`` yields an error event;
  its siblings and the caller go on; one that stops the whole run (``RunStopped``: a
  resumed run's pending call needs a decision) stops its siblings and is raised.
* Loop: children in sequence, repeated ``max_iterations`` times (0 = unbounded);
  the plugins are told of each iteration first (``on_loop_iteration``: a plugin may
  end the loop there);
  an event with ``escalate`` (e.g. from the ``exit_loop`` tool) stops it when the
  child that escalated has finished its turn (as google-adk: the model still answers
  the escalating tool's result unless the tool also skips summarization).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from pydantic import Field

from .._exceptions import RunStopped
from .._types import Event
from ._base import AgentBase

__all__ = ["LoopAgent", "ParallelAgent", "SequentialAgent"]


class SequentialAgent(AgentBase):
    async def _run_async_impl(self, ctx: Any) -> AsyncIterator[Event]:
        for child in self.sub_agents:
            ctx.check_cancelled()
            async for event in child.run(ctx.for_agent(child)):
                yield event


class LoopAgent(AgentBase):
    max_iterations: int = Field(default=0, ge=0)

    async def _run_async_impl(self, ctx: Any) -> AsyncIterator[Event]:
        iteration = 0
        while self.max_iterations == 0 or iteration < self.max_iterations:
            directive = await ctx.topology("on_loop_iteration", self.name, iteration)
            if getattr(directive, "break_loop", False):
                return
            for child in self.sub_agents:
                ctx.check_cancelled()
                escalated = False
                async for event in child.run(ctx.for_agent(child)):
                    yield event
                    escalated = escalated or bool(event.actions.escalate)
                if escalated:
                    return
            iteration += 1


class ParallelAgent(AgentBase):
    child_timeout: float | None = Field(default=None, gt=0)

    async def _run_async_impl(self, ctx: Any) -> AsyncIterator[Event]:
        queue: asyncio.Queue[tuple[Event | None, asyncio.Future[None] | None]] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        async def run_child(child: Any) -> None:
            branch = f"{ctx.branch}.{child.name}" if ctx.branch else f"{self.name}.{child.name}"
            child_ctx = ctx.for_agent(child, branch=branch)

            async def produce() -> None:
                async for event in child.run(child_ctx):
                    committed: asyncio.Future[None] = loop.create_future()
                    await queue.put((event, committed))
                    await committed

            try:
                if self.child_timeout is not None:
                    async with asyncio.timeout(self.child_timeout):
                        await produce()
                else:
                    await produce()
            except TimeoutError:
                await queue.put((child_ctx.for_agent(child).event(
                    error_code="timeout", error_message=f"{child.name} did not finish within {self.child_timeout} s"),
                    None))
            except asyncio.CancelledError:
                raise
            except RunStopped as exc:
                stopped.append(exc)  # the whole run stops: raised below, in the parent
            except Exception as exc:
                await queue.put((child_ctx.for_agent(child).event(
                    error_code="agent_error", error_message=f"{child.name} failed: {type(exc).__name__}: {exc}"), None))
            finally:
                await queue.put((None, None))

        stopped: list[RunStopped] = []
        branches = [child.name for child in self.sub_agents]
        await ctx.topology("on_fanout_start", self.name, branches)
        tasks = [asyncio.create_task(run_child(child)) for child in self.sub_agents]
        running = len(tasks)
        try:
            while running:
                event, committed = await queue.get()
                if stopped:
                    raise stopped[0]
                if event is None:
                    running -= 1
                    continue
                yield event
                if committed is not None and not committed.done():
                    committed.set_result(None)
            await ctx.topology("on_fanout_complete", self.name, branches)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
