"""adk-fluent's primitive steps: ``tap`` (look at the state), ``expect`` (stop unless
the state holds) and ``map_over`` (an agent for each item of a list). Each is a
builder, so it joins pipelines with ``>>``.

* ``tap(fn)`` calls ``fn`` with a read-only copy of the state; no event, no change.
* ``expect(pred, message)`` stops the run with ``ValueError(message)`` unless
  ``pred(state)`` holds.
* ``map_over(key, agent, item_key="_item", output_key="summaries")``: for each item of
  the list at ``key``, sets ``item_key`` to it and runs ``agent``; then ``output_key``
  holds, in order, what ``item_key`` held after each run (adk-fluent's rule). Each
  change is an event, so it is committed.
* ``gate(pred, message=..., gate_key=None)``: a human's approval as state flags
  (adk-fluent's gate). While ``pred(state)`` holds and ``<gate_key>_approved`` is not
  set, it says ``message`` (an event that escalates) and sets ``gate_key`` and
  ``<gate_key>_message``; once ``<gate_key>_approved`` is set it clears both flags and
  the run goes on. The question ends a loop (it escalates) and a ``>>`` pipeline
  stops after it (a ``GatedSequence``: adk-fluent's documented meaning), so the steps
  after the gate wait for the approval; the next turn, approved, runs them.
* ``race(*agents)``: the agents at once, each on a copy of the session; the first to
  finish wins: its events (but partial ones) are then the race's, the others are
  cancelled and leave nothing in the session. A winner that raised raises.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import itertools
from collections.abc import AsyncIterator, Callable, Mapping
from types import MappingProxyType
from typing import Any

from .._types import Content, Event, EventActions, Part
from ..agents import AgentBase
from ._builders import GATE_ASKED, Builder, built
from ._state import StateDelta, StateStep, STransform, step_name

__all__ = ["GateAgent", "MapOverAgent", "Primitive", "RaceAgent", "TapAgent", "expect", "gate", "map_over", "race", "tap"]

_expects = itertools.count(1)
_gates = itertools.count(1)
_maps = itertools.count(1)
_taps = itertools.count(1)


class TapAgent(AgentBase):
    """Calls ``fn`` with a read-only copy of the state."""

    fn: Any

    async def _run_impl(self, ctx: Any) -> AsyncIterator[Event]:
        self.fn(MappingProxyType(dict(ctx.session.state)))
        return
        yield  # an async generator that yields nothing


class MapOverAgent(AgentBase):
    """See the module (``map_over``)."""

    list_key: str
    item_key: str = "_item"
    output_key: str = "summaries"

    async def _run_impl(self, ctx: Any) -> AsyncIterator[Event]:
        results: list[Any] = []
        body = self.sub_agents[0]
        for item in list(ctx.session.state.get(self.list_key) or []):
            ctx.check_cancelled()
            yield ctx.event(actions=EventActions(state_delta={self.item_key: item}))
            async for event in body.run(ctx.for_agent(body)):
                yield event
            results.append(ctx.session.state.get(self.item_key))
        yield ctx.event(actions=EventActions(state_delta={self.output_key: results}))


class GateAgent(AgentBase):
    """See the module (``gate``)."""

    predicate: Any
    message: str
    gate_key: str

    async def _run_impl(self, ctx: Any) -> AsyncIterator[Event]:
        state = ctx.session.state
        try:
            needed = self.predicate(MappingProxyType(dict(state)))
        except (KeyError, TypeError, ValueError):
            needed = False
        if not needed:
            return
        approved = f"{self.gate_key}_approved"
        if state.get(approved):
            yield ctx.event(actions=EventActions(state_delta={approved: False, self.gate_key: False}))
            return
        yield ctx.event(content=Content(role="model", parts=(Part(text=self.message),)),
                        actions=EventActions(escalate=True, state_delta={
                            self.gate_key: True, f"{self.gate_key}_message": self.message}),
                        custom_metadata={GATE_ASKED: self.gate_key})


class RaceAgent(AgentBase):
    """See the module (``race``)."""

    async def _run_impl(self, ctx: Any) -> AsyncIterator[Event]:
        async def run_alone(child: Any) -> list[Event]:
            """The child's events, run on a copy of the session that takes them as
            they come (so its later steps see its earlier ones)."""
            view = dataclasses.replace(ctx.session, state=copy.deepcopy(ctx.session.state),
                                       events=list(ctx.session.events))
            kept: list[Event] = []
            async for event in child.run(dataclasses.replace(ctx.for_agent(child), session=view)):
                view.commit(event)
                if not event.partial:
                    kept.append(event)
            return kept

        runs = [asyncio.ensure_future(run_alone(child)) for child in self.sub_agents]
        try:
            await asyncio.wait(runs, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for run in runs:
                if not run.done():
                    run.cancel()
            await asyncio.gather(*runs, return_exceptions=True)
        winner = next(run for run in runs if run.done() and not run.cancelled())
        for event in winner.result():  # a winner that raised raises here
            yield event


class Primitive(Builder):
    """A builder whose agent ``make()`` builds."""

    def __init__(self, name: str, kind: str, make: Callable[[], Any], steps: list[Any] | None = None) -> None:
        super().__init__(name)
        self.kind = kind
        self._make = make
        self._steps = steps or []

    @property
    def steps(self) -> list[Any]:
        return list(self._steps)

    def _build(self) -> Any:
        return self._make()


def tap(fn: Callable[[Mapping[str, Any]], Any]) -> Builder:
    name = step_name(fn)
    name = f"tap_{next(_taps)}" if name == "fn" else name
    return Primitive(name, "tap", lambda: TapAgent(name=name, fn=fn))


def expect(predicate: Callable[[Mapping[str, Any]], Any], message: str = "State assertion failed") -> Builder:
    name = f"expect_{next(_expects)}"

    def check(state: Mapping[str, Any]) -> StateDelta:
        if not predicate(state):
            raise ValueError(message)
        return StateDelta()

    return Primitive(name, "tap", lambda: StateStep(name=name, transform=STransform(name, check)))


def map_over(key: str, agent: Any, *, item_key: str = "_item", output_key: str = "summaries") -> Builder:
    name = f"map_over_{key}_{next(_maps)}"
    primitive = Primitive(name, "map_over", lambda: MapOverAgent(name=name, sub_agents=[built(agent)], list_key=key,
                                                                  item_key=item_key, output_key=output_key),
                           [agent])
    primitive.list_key, primitive.item_key, primitive.output_key = key, item_key, output_key  # type: ignore[attr-defined]
    return primitive


def gate(predicate: Callable[[Mapping[str, Any]], Any], *, message: str = "Approval required",
         gate_key: str | None = None) -> Builder:
    name = f"gate_{next(_gates)}"
    key = gate_key if gate_key is not None else f"_{name}"
    primitive = Primitive(name, "gate", lambda: GateAgent(name=name, predicate=predicate, message=message,
                                                           gate_key=key))
    primitive.gate_key = key  # type: ignore[attr-defined]
    return primitive


def race(*agents: Any) -> Builder:
    if len(agents) < 2:
        raise ValueError(f"a race needs at least two agents, got {len(agents)}")
    name = "race_" + "_".join(step_name(agent) for agent in agents)
    operands = [agent._operand() if isinstance(agent, Builder) else agent for agent in agents]
    return Primitive(name, "race", lambda: RaceAgent(name=name, sub_agents=[built(a) for a in operands]),
                      operands)
