"""The contract checks a pipeline passes when it is built.

Walking the builder tree in run order, with the state keys written so far:

* an agent that reads a key (``.reads``, ``C.from_state``, ``C.template``, a
  ``{key}`` of its instruction text or ``P`` template) that no step before it
  writes; a state step that reads a key nothing before it writes;
* two branches of a ``FanOut`` writing the same key (the last writer would win at
  random);
* an agent that ``.consumes(Model)`` whose fields the nearest ``.produces(...)``
  before it does not have, or with no producer before it;
* a ``Route`` on a key that no step before it writes (after a route, the keys every
  branch writes are known).

Each is a line naming the agents and the key (:func:`contract_problems`);
:func:`check_contracts` raises them as one :class:`ContractError`. Keys with a scope
(``app:``, ``user:``, ``temp:``) and artifacts are set outside the pipeline and not
checked; after a step whose effect on the state cannot be known (a plain function)
missing keys are not reported. What ``build()`` does with the problems is the
builder's check mode (see ``Builder.build``): logged by default, raised after
``.checked()`` / ``.strict()``, not looked for after ``.unchecked()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._exceptions import AgentDefinitionError
from ..agents import LlmAgent
from ._prompt import PTransform, template_keys
from ._state import STransform, step_name

__all__ = ["ContractError", "check_contracts", "contract_problems"]


class ContractError(AgentDefinitionError):
    """A pipeline whose steps do not fit together (see :mod:`adk_actors.fluent._contracts`)."""


@dataclass(frozen=True)
class _Flow:
    keys: frozenset[str] | None  # None: unknown (after an opaque step)
    producer: tuple[str, Any] | None = None  # (agent, model) of the nearest .produces


def _needs(agent: Any) -> set[str]:
    keys = set(agent.reads_keys)
    if agent._context is not None:
        keys |= agent._context.reads
    instruction = agent._instruction
    if isinstance(instruction, str):
        keys |= template_keys(instruction)[0]
    elif isinstance(instruction, PTransform):
        keys |= instruction.reads()
    return {k for k in keys if ":" not in k and not k.startswith("artifact.")}


def contract_problems(root: Any) -> list[str]:
    """Every problem of ``root``'s tree, in run order, one line each (none: it fits)."""
    problems: list[str] = []
    _walk(root, _Flow(frozenset()), problems)
    return problems


def check_contracts(root: Any) -> None:
    """Raise :class:`ContractError` listing every problem of ``root``'s tree."""
    problems = contract_problems(root)
    if problems:
        raise ContractError(f"contract errors in {root.name}: " + "; ".join(problems))


def _missing(flow: _Flow, keys: set[str] | frozenset[str]) -> list[str]:
    return [] if flow.keys is None else sorted(k for k in keys if k not in flow.keys)


def _walk(node: Any, flow: _Flow, problems: list[str]) -> _Flow:
    kind = getattr(node, "kind", None)  # the builders' kinds (this module does not import them)
    if kind == "agent":
        for key in _missing(flow, _needs(node)):
            problems.append(f"agent {node.name!r} reads state key {key!r}, which no step before it writes")
        if node.consumes_schema is not None:
            _check_consumes(node, flow, problems)
        keys = None if flow.keys is None else flow.keys | ({node.writes_key} if node.writes_key else set())
        producer = (node.name, node.produces_schema) if node.produces_schema is not None else flow.producer
        return _Flow(keys, producer)
    if isinstance(node, STransform):
        if node.reads is not None:
            for key in _missing(flow, node.reads):
                problems.append(f"state step {node.name!r} reads state key {key!r}, which no step before it writes")
        return _Flow(None if flow.keys is None else node.keys_after(flow.keys), flow.producer)
    if kind in ("sequence", "loop", "timeout"):
        for step in node.steps:
            flow = _walk(step, flow, problems)
        return flow
    if kind == "tap":  # looks at the state (or stops the run): changes nothing
        return flow
    if kind == "artifact":  # reads and writes named state keys
        for key in _missing(flow, node.reads_keys):
            problems.append(f"artifact step {node.name!r} reads state key {key!r}, which no step before it writes")
        return _Flow(None if flow.keys is None else flow.keys | node.writes_keys, flow.producer)
    if kind == "gate":  # its flag is its channel to the steps after it
        return _Flow(None if flow.keys is None else flow.keys | {node.gate_key}, flow.producer)
    if kind == "map_over":
        for key in _missing(flow, {node.list_key}):
            problems.append(f"map_over {node.name!r} reads state key {key!r}, which no step before it writes")
        inner = _walk(node.steps[0], _Flow(None if flow.keys is None else flow.keys | {node.item_key},
                                           flow.producer), problems)
        keys = None if flow.keys is None or inner.keys is None else inner.keys | {node.output_key}
        return _Flow(keys, flow.producer)
    if kind == "dispatch":  # its tasks' reads are checked; what they write arrives at a join
        for step in node.steps:
            _walk(step, flow, problems)
        return _Flow(None if flow.keys is None else flow.keys | node.writes_keys, flow.producer)
    if kind == "join":  # what the joined tasks wrote is not followed: unknown after it
        return _Flow(None, flow.producer)
    if kind == "race":  # one branch's events stay: after it, what every branch writes
        return _one_of(flow, [_walk(step, flow, problems) for step in node.steps])
    if kind == "route":  # one branch runs (or none): after it, what every branch writes
        if node.key is not None and ":" not in node.key:
            for key in _missing(flow, {node.key}):
                problems.append(f"route {node.name!r} reads state key {key!r}, which no step before it writes")
        branches = [_walk(step, flow, problems) for step in node.steps]
        return _one_of(flow, branches if node.otherwise_step is not None else [*branches, flow])
    if kind in ("parallel", "fallback"):
        outcomes = [(step_name(step), _walk(step, flow, problems)) for step in node.steps]
        if kind == "parallel" and flow.keys is not None:
            _check_branches(node, flow, outcomes, problems)
        if any(outcome.keys is None for _, outcome in outcomes) or flow.keys is None:
            return _Flow(None, flow.producer)
        keys = frozenset().union(*(outcome.keys for _, outcome in outcomes if outcome.keys is not None))
        return _Flow(flow.keys | keys, flow.producer)
    if isinstance(node, LlmAgent):  # an agent built by hand: what it writes is known
        return _Flow(None if flow.keys is None else flow.keys | ({node.output_key} if node.output_key else set()),
                     flow.producer)
    return _Flow(None, flow.producer)  # a function or another agent: its effect on the state is unknown


def _one_of(before: _Flow, branches: list[_Flow]) -> _Flow:
    """After one of ``branches`` ran: the keys every one of them leaves."""
    if before.keys is None or any(branch.keys is None for branch in branches):
        return _Flow(None, before.producer)
    return _Flow(frozenset.intersection(*(branch.keys for branch in branches if branch.keys is not None)),
                 before.producer)


def _check_branches(node: Any, before: _Flow, outcomes: list[tuple[str, _Flow]], problems: list[str]) -> None:
    writers: dict[str, str] = {}
    for branch, outcome in outcomes:
        assert before.keys is not None
        for key in sorted((outcome.keys or frozenset()) - before.keys):
            if key in writers:
                problems.append(f"branches {writers[key]!r} and {branch!r} of {node.name!r} both write state "
                                f"key {key!r} (the last to finish would win)")
            else:
                writers[key] = branch


def _check_consumes(agent: Any, flow: _Flow, problems: list[str]) -> None:
    wanted = agent.consumes_schema
    if flow.producer is None:
        problems.append(f"agent {agent.name!r} consumes {wanted.__name__}, but no agent before it produces one")
        return
    producer, made = flow.producer
    missing = sorted(set(wanted.model_fields) - set(made.model_fields))
    if missing:
        problems.append(f"agent {agent.name!r} consumes {wanted.__name__} but {producer!r} produces "
                        f"{made.__name__}, without {', '.join(repr(f) for f in missing)}")
