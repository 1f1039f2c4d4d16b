"""Deterministic routing on the state (adk-fluent's ``Route``): no model call.

``Route("intent").eq("booking", booker).eq("info", info).otherwise(fallback)`` builds a
:class:`RouteAgent`: when it runs, the first rule whose predicate holds on the
session's state picks the agent that runs (a predicate that raises a KeyError,
TypeError or ValueError does not hold, adk-fluent's rule), else the ``otherwise``
agent, else none. ``agent.writes("intent") >> {"booking": booker, "info": info}`` is
the same ``Route`` on the key the agent writes. Rules: ``eq``, ``ne``, ``contains``
(in the value's text), ``gt``, ``lt``, ``gte``, ``lte`` (the value as a number),
``when(predicate)`` (a function of the whole state; no key needed).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from .._types import Event
from ..agents import AgentBase
from ._prompt import holds

__all__ = ["Route", "RouteAgent"]

Predicate = Callable[[Mapping[str, Any]], Any]


class RouteAgent(AgentBase):
    """Runs the sub-agent its rules pick (see the module); ``rules`` are (predicate,
    index of a sub-agent); ``default`` the index of the ``otherwise`` agent, or None."""

    rules: Any = ()
    default: int | None = None

    async def _run_impl(self, ctx: Any) -> AsyncIterator[Event]:
        state = ctx.session.state
        chosen = next((index for predicate, index in self.rules if holds(predicate, state)), self.default)
        if chosen is None:
            return
        target = self.sub_agents[chosen]
        await ctx.topology("on_route_selected", self.name, target.name)
        async for event in target.run(ctx.for_agent(target)):
            yield event


class Route:
    """See the module. Used as a step of a pipeline (``a >> Route(...)``) or built alone."""

    kind = "route"

    def __init__(self, key: str | None = None) -> None:
        self.key = key
        self.rules: list[tuple[Predicate, Any]] = []
        self.otherwise_step: Any = None

    @property
    def name(self) -> str:
        return f"route_{self.key}" if self.key else "route"

    def _keyed(self, method: str) -> str:
        if self.key is None:
            raise ValueError(f"Route.{method}() requires a key. Use Route('key_name').{method}(...) "
                             "or Route().when(lambda s: ...) for keyless predicates.")
        return self.key

    def _rule(self, predicate: Predicate, agent: Any) -> Route:
        self.rules.append((predicate, agent))
        return self

    def eq(self, value: Any, agent: Any) -> Route:
        key = self._keyed("eq")
        return self._rule(lambda s: s.get(key) == value, agent)

    def ne(self, value: Any, agent: Any) -> Route:
        key = self._keyed("ne")
        return self._rule(lambda s: s.get(key) != value, agent)

    def contains(self, substring: str, agent: Any) -> Route:
        key = self._keyed("contains")
        return self._rule(lambda s: substring in str(s.get(key, "")), agent)

    def gt(self, threshold: float, agent: Any) -> Route:
        key = self._keyed("gt")
        return self._rule(lambda s: float(s.get(key, 0)) > threshold, agent)

    def lt(self, threshold: float, agent: Any) -> Route:
        key = self._keyed("lt")
        return self._rule(lambda s: float(s.get(key, 0)) < threshold, agent)

    def gte(self, threshold: float, agent: Any) -> Route:
        key = self._keyed("gte")
        return self._rule(lambda s: float(s.get(key, 0)) >= threshold, agent)

    def lte(self, threshold: float, agent: Any) -> Route:
        key = self._keyed("lte")
        return self._rule(lambda s: float(s.get(key, 0)) <= threshold, agent)

    def when(self, predicate: Predicate, agent: Any) -> Route:
        return self._rule(predicate, agent)

    def otherwise(self, agent: Any) -> Route:
        self.otherwise_step = agent
        return self

    @property
    def steps(self) -> list[Any]:
        """Every agent it may run: the rules', then the ``otherwise`` one."""
        return [agent for _, agent in self.rules] + ([self.otherwise_step] if self.otherwise_step is not None else [])

    def build(self, built: Callable[[Any], Any] | None = None) -> RouteAgent:
        """The :class:`RouteAgent`, each step made an agent by ``built`` (alone: a
        builder's own ``build()``, an agent as it is); a step that is the same object in
        two rules is one sub-agent."""
        if built is None:
            built = _built_alone
        agents: list[Any] = []
        index_of: dict[int, int] = {}
        for step in self.steps:
            if id(step) not in index_of:
                index_of[id(step)] = len(agents)
                agents.append(built(step))
        rules = tuple((predicate, index_of[id(agent)]) for predicate, agent in self.rules)
        default = index_of[id(self.otherwise_step)] if self.otherwise_step is not None else None
        return RouteAgent(name=self.name, sub_agents=agents, rules=rules, default=default)

    def __repr__(self) -> str:
        key = f"'{self.key}'" if self.key else "multi-key"
        return f"Route({key}, {len(self.rules)} rules{' + otherwise' if self.otherwise_step is not None else ''})"


def _built_alone(step: Any) -> Any:
    return step if isinstance(step, AgentBase) else step.build()
