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
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable, Mapping
from types import MappingProxyType
from typing import Any

from .._types import Event, EventActions
from ..agents import AgentBase
from ._builders import Builder, built
from ._state import StateDelta, StateStep, STransform, step_name

__all__ = ["MapOverAgent", "TapAgent", "expect", "map_over", "tap"]

_expects = itertools.count(1)
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


class _Primitive(Builder):
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
    return _Primitive(name, "tap", lambda: TapAgent(name=name, fn=fn))


def expect(predicate: Callable[[Mapping[str, Any]], Any], message: str = "State assertion failed") -> Builder:
    name = f"expect_{next(_expects)}"

    def check(state: Mapping[str, Any]) -> StateDelta:
        if not predicate(state):
            raise ValueError(message)
        return StateDelta()

    return _Primitive(name, "tap", lambda: StateStep(name=name, transform=STransform(name, check)))


def map_over(key: str, agent: Any, *, item_key: str = "_item", output_key: str = "summaries") -> Builder:
    name = f"map_over_{key}_{next(_maps)}"
    primitive = _Primitive(name, "map_over", lambda: MapOverAgent(name=name, sub_agents=[built(agent)], list_key=key,
                                                                  item_key=item_key, output_key=output_key),
                           [agent])
    primitive.list_key, primitive.item_key, primitive.output_key = key, item_key, output_key  # type: ignore[attr-defined]
    return primitive
