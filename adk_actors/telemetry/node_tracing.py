"""google-adk's per-node spans (``google.adk.telemetry.node_tracing``).

:func:`start_as_current_node_span` runs a graph node inside its span, for code that
drives nodes itself: an agent opens its own ``invoke_agent`` span, so it only runs
under its caller's OpenTelemetry context; a workflow gets ``invoke_workflow
<name>`` (``gen_ai.workflow.name``, and ``gen_ai.workflow.nested`` when it runs
inside another workflow's span; failed when its node context recorded an error);
any other node ``invoke_node <name>``. Each names the session as
``gen_ai.conversation.id`` and, at its end, the ids of the events added to its
:class:`TelemetryContext` (``gcp.vertex.agent.associated_event_ids``).

The engine's own workflow and node spans are :mod:`adk_actors.otel`'s (from the
telemetry events); google-adk's workflow duration metric is not recorded here.
A node is told apart by its classes' names (google-adk's ``BaseAgent``, this
project's ``AgentBase``; ``Workflow``), so google-adk's nodes and this project's both do.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import context as context_api
from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from . import tracing

__all__ = ["TelemetryContext", "start_as_current_node_span"]

#: the OpenTelemetry context key that marks "inside a workflow's span"
_IN_WORKFLOW = context_api.create_key("adk_actors.in_workflow")


@dataclass(frozen=True)
class TelemetryContext:
    """The OpenTelemetry context a node runs under, and the ids of the events it made."""

    otel_context: context_api.Context
    _associated_event_ids: list[str] = field(default_factory=list)

    def add_event(self, event: Any) -> None:
        """Count ``event`` (its ``id``) as one the node made."""
        self._associated_event_ids.append(event.id)


def _kind(node: Any) -> str:
    names = {cls.__name__ for cls in type(node).__mro__}
    return "agent" if names & {"BaseAgent", "AgentBase"} else "workflow" if "Workflow" in names else "node"


def _parent_context(context: Any) -> context_api.Context:
    """The context's own OpenTelemetry context (its ``telemetry_context``), else the current one."""
    own = getattr(getattr(context, "telemetry_context", None), "otel_context", None)
    return own if own is not None else context_api.get_current()


def _stamp_events(span: Span, telemetry: TelemetryContext) -> None:
    if span.is_recording() and telemetry._associated_event_ids:
        span.set_attribute("gcp.vertex.agent.associated_event_ids", telemetry._associated_event_ids)


@contextmanager
def _attached(otel_context: context_api.Context) -> Iterator[None]:
    token = context_api.attach(otel_context)
    try:
        yield
    finally:
        context_api.detach(token)


@asynccontextmanager
async def start_as_current_node_span(context: Any, node: Any,
                                     node_context: Any = None) -> AsyncIterator[TelemetryContext]:
    """Run the block inside ``node``'s span (see the module), that span current; the
    block's events go into the yielded :class:`TelemetryContext`. An exception from the
    block is recorded on the span and raised on. Only await inside the block: the
    span is attached to this task's context from enter to exit."""
    parent = _parent_context(context)
    kind = _kind(node)
    if kind == "agent":
        with _attached(parent):
            yield TelemetryContext(otel_context=parent)
        return
    session = str(context.session.id)
    attributes: dict[str, Any] = {"gen_ai.operation.name": f"invoke_{kind}", "gen_ai.conversation.id": session}
    name = str(getattr(node, "name", "") or "")
    if kind == "workflow":
        if context_api.get_value(_IN_WORKFLOW, parent):
            attributes["gen_ai.workflow.nested"] = True
        if name:
            attributes["gen_ai.workflow.name"] = name
    span = tracing.tracer.start_span(f"invoke_{kind} {name}".strip(), context=parent, attributes=attributes)
    inside = trace.set_span_in_context(span, parent)
    if kind == "workflow":
        inside = context_api.set_value(_IN_WORKFLOW, True, inside)
    telemetry = TelemetryContext(otel_context=inside)
    with trace.use_span(span, end_on_exit=True), _attached(inside):
        yield telemetry
        recorded = getattr(node_context, "error", None) if node_context is not None else None
        if isinstance(recorded, BaseException):
            span.record_exception(recorded)
            span.set_status(Status(StatusCode.ERROR, str(recorded)))
        _stamp_events(span, telemetry)
