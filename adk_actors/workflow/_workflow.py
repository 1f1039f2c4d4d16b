"""``Workflow``: a graph of nodes run as one agent (google-adk 2.x's ``Workflow``).

``Workflow(name=, edges=[...])`` builds and checks its graph at once (see ``_graph``;
a bad graph is a :class:`GraphValidationError`); its agent nodes become its
``sub_agents`` (so the agent tree, ``find_agent`` and the engine know them). It is an
agent: the engine runs its hooks around it, and a Runner, an App or a host runs it as
the root agent. It is a node too: a workflow in another's edges runs as a nested graph
(its events' paths under its node's, its output its terminal node's). Each run, root
or nested, is a telemetry span of its own (``[adk, workflow, ...]``: google-adk's
``invoke_workflow`` span; see :meth:`Workflow.run`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
from collections.abc import AsyncIterator
from typing import Any

from pydantic import Field, PrivateAttr, field_validator

from .. import telemetry
from .._node_settings import RetryConfig, StateSchemaError
from .._types import Event
from ..agents import AgentBase
from ._graph import Graph, build_graph
from ._input import Record, find_continuation
from ._node_data import schema_setting
from ._nodes import START, BaseNode, FunctionNode
from ._run import CONTINUATION, run_graph, take_frame

__all__ = ["Workflow"]


class Workflow(AgentBase):
    """A graph workflow: ``edges`` (see ``_graph`` for the forms they take),
    ``max_concurrency`` (nodes running at once; None or <= 0: no limit), and as a node
    in another workflow ``retry_config`` and ``timeout``. Its ``input_schema`` and
    ``output_schema`` (google-adk's, as a node's: a type, a generic alias, or a JSON
    schema kept and never enforced; None: not checked) check and coerce its input when
    its graph starts and its output (its terminal node's) when its graph ends (see
    ``_run``); the graph checks them against its neighbours' on its edges, as a
    node's."""

    edges: list[Any] = Field(default_factory=list)
    max_concurrency: int | None = None
    retry_config: RetryConfig | None = None
    timeout: float | None = Field(default=None, gt=0)
    rerun_on_resume: bool = True
    input_schema: Any = None
    output_schema: Any = None

    _graph: Graph | None = PrivateAttr(default=None)

    @field_validator("input_schema", "output_schema")
    @classmethod
    def _a_schema(cls, value: Any) -> Any:
        """A schema setting, as a node's (see ``_node_data.schema_setting``)."""
        return schema_setting(value)

    def __init__(self, **data: Any) -> None:
        """In order: the edges are built into a graph and checked (a bad graph:
        :class:`GraphValidationError`, naming the workflow); the agents among its nodes
        become ``sub_agents``; the definition is validated as every agent's; with a
        ``state_schema``, its function nodes' state parameters are checked against it
        (see ``_check_state_schema``)."""
        name = data.get("name", "")
        graph = build_graph(data.get("edges") or [], workflow=str(name)) if data.get("edges") else None
        if graph is not None and "sub_agents" not in data:
            data["sub_agents"] = [node for node in graph.nodes.values()
                                  if node is not START and not isinstance(node, BaseNode)]
        super().__init__(**data)
        self._graph = graph
        self._check_state_schema()

    def _check_state_schema(self) -> None:
        """With a ``state_schema``: each function node's parameter bound from the state
        (all but ``ctx`` and ``node_input``) must be a field of it; else
        :class:`StateSchemaError` (a TypeError) naming the node, the parameter and the
        fields, as google-adk refuses it."""
        schema = self.state_schema
        if schema is None or self._graph is None:
            return
        fields = set(schema.model_fields)
        for node in self._graph.nodes.values():
            if not isinstance(node, FunctionNode):
                continue
            for parameter in inspect.signature(node.func).parameters:
                if parameter not in ("ctx", "node_input", "self") and parameter not in fields:
                    raise StateSchemaError(
                        f"FunctionNode {node.name!r} parameter {parameter!r} is not declared in state_schema "
                        f"{schema.__name__!r}. Declared fields: {sorted(fields)}")

    @property
    def _is_workflow(self) -> bool:
        return True

    @property
    def graph(self) -> Graph | None:
        """The checked graph (None for a workflow without edges)."""
        return self._graph

    async def run(self, ctx: Any) -> AsyncIterator[Event]:
        """Run this workflow in ``ctx`` as every agent runs (its hooks around
        :meth:`_run_async_impl`), inside a telemetry span ``[adk, workflow]`` that opens
        first: its metadata names the workflow (``workflow`` and ``agent``), the
        invocation, the branch and the session. The engine's agent span for this run
        opens inside it; the trace handlers (``adk_actors.tracing``, ``adk_actors.otel``)
        take that one as this span, so the run is one ``invoke_workflow <name>`` span, as
        google-adk's. The span ends when the run does: with an exception span when the
        run raises or is closed before its end (the run is closed with it)."""
        session = ctx.session
        with telemetry.span(("adk", "workflow"), {
                "workflow": self.name, "agent": self.name, "invocation_id": ctx.invocation_id,
                "branch": getattr(ctx, "branch", None), "app": getattr(session, "app_name", ""),
                "user": getattr(session, "user_id", ""), "session": getattr(session, "session_id", "")}):
            async with contextlib.aclosing(super().run(ctx)) as events:  # type: ignore[type-var]
                async for event in events:
                    yield event

    def _outermost(self) -> Workflow:
        """The root workflow of the graphs this one is nested in (itself when none)."""
        outer: Workflow = self
        while isinstance(outer.parent_agent, Workflow):
            outer = outer.parent_agent
        return outer

    async def _run_async_impl(self, ctx: Any) -> AsyncIterator[Event]:
        """Run the graph (see ``_run``): a root workflow's input is the user's message;
        a nested one's, its predecessor's output. In a resumed invocation the graph
        resumes at the node runs it was in (see ``_run``).

        A root workflow whose message answers requests for input (see ``_input``; a
        message it cannot take: :class:`WorkflowDataError`, before anything runs)
        continues the run that asked: in order, the run's committed node events (of
        all its invocations) become the graph's replay and its first message its
        input; the graph is resumed from them (the nodes that finished are not run
        again; the answered nodes finish or run again); the events taken from the
        record are not yielded again, only those made now. A nested workflow the engine
        chose to answer such a message (the question's event is its) runs the graph of
        its root workflow instead, when that is the invocation's root agent."""
        frame = take_frame(self, ctx)
        if self._graph is None:
            return
        outer = self._outermost()
        if frame.root and outer is not self and outer is getattr(ctx, "root_agent", None):
            # chosen alone (a message answering a question of a node inside it): the
            # graph it is part of is run, from its root workflow
            async for event in outer._run_async_impl(ctx):
                yield event
            return
        continuation = None
        if frame.root:
            continuation = find_continuation(frame.path, ctx.session.events, ctx.invocation_id, ctx.user_content,
                                             resumed=getattr(ctx, "replay", None) is not None)
        if continuation is None:
            async for event in run_graph(self, self._graph, ctx, frame):
                yield event
            return
        replay = (type(ctx.replay)(continuation.events, ctx.replay.decisions) if ctx.replay is not None
                  else Record(continuation.events))
        frame.node_input = continuation.node_input
        token = CONTINUATION.set(continuation)
        try:
            async for event in run_graph(self, self._graph, dataclasses.replace(ctx, replay=replay), frame):
                if not replay.was_replayed(event):
                    yield event
        finally:
            CONTINUATION.reset(token)
