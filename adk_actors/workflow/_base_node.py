"""The node every workflow graph node builds on (google-adk 2.x's names): ``BaseNode``
(a name, the per-node settings, and :meth:`BaseNode.run`), ``START`` (the entry of
every graph) and ``JoinNode`` (waits for all its predecessors), with ``node_event``,
the event a node makes. ``_nodes`` adds ``FunctionNode`` and ``Context`` and
re-exports these.

A node's :meth:`BaseNode.run` yields events: in order, its input is checked against
its ``input_schema``, then each item its ``_run_impl`` yields is checked against its
``output_schema`` and normalized (None is skipped, an Event passes, any other value
becomes an event whose ``output`` is that value; a :class:`RequestInput` becomes its
interrupt event, see ``_input``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .._node_settings import RetryConfig, as_retry_config
from .._types import Content, Event, EventActions
from ._errors import WorkflowConfigurationError
from ._input import RequestInput, request_input_event
from ._node_data import schema_setting, validate_node_data

__all__ = ["START", "BaseNode", "JoinNode", "node_event"]


def node_event(*, output: Any = None, content: Content | None = None, state: dict[str, Any] | None = None,
               route: Any = None) -> Event:
    """A node's event (its author, invocation and node info filled in when committed)."""
    return Event(output=output, content=content,
                 actions=EventActions(state_delta=dict(state or {}), route=route))


def _output_event(value: Any) -> Event | None:
    """A node's yielded item as an event (None: nothing to emit)."""
    if value is None:
        return None
    if isinstance(value, Event):
        return value
    if isinstance(value, RequestInput):
        return request_input_event(value)
    if isinstance(value, BaseModel) and not isinstance(value, Content):
        value = value.model_dump()
    return Event(output=value)


class BaseNode(BaseModel):
    """A node of a workflow graph: a name (a Python identifier, unique in its graph),
    and google-adk's per-node settings: ``retry_config``, ``timeout`` (seconds),
    ``description``, ``rerun_on_resume``, ``wait_for_output`` (it finishes only with an
    output or a route, see ``_run``), ``state_schema`` (a pydantic model its state writes
    must fit, see :class:`Context`; None: its workflow's), ``input_schema`` and
    ``output_schema`` (what its input and each output are checked and coerced against,
    see ``_node_data``; None: not checked). A subclass overrides
    ``_run_impl(*, ctx, node_input)``, an async generator of outputs or events."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    description: str = ""
    rerun_on_resume: bool = False
    wait_for_output: bool = False
    retry_config: RetryConfig | None = None
    timeout: float | None = Field(default=None, gt=0)
    state_schema: type[BaseModel] | None = None
    input_schema: Any = None
    output_schema: Any = None

    @field_validator("retry_config", mode="before")
    @classmethod
    def _one_retry_config(cls, value: Any) -> Any:
        """Another module's RetryConfig (google-adk's) as ours; the rest as pydantic checks it."""
        return as_retry_config(value, RetryConfig)

    @field_validator("input_schema", "output_schema")
    @classmethod
    def _a_schema(cls, value: Any) -> Any:
        """A schema is None, a type, a generic alias or union of types, or a JSON schema
        (a dict, a genai Schema); anything else is refused (a ValueError)."""
        return schema_setting(value)

    @field_validator("name")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not value.isidentifier():
            raise WorkflowConfigurationError(f"node name {value!r} must be a valid Python identifier")
        return value

    def _validate_input_data(self, data: Any) -> Any:
        """``data`` checked against ``input_schema`` (see ``_node_data``)."""
        return validate_node_data(self.input_schema, data)

    def _validate_output_data(self, data: Any) -> Any:
        """An output checked against ``output_schema`` (see ``_node_data``)."""
        return validate_node_data(self.output_schema, data)

    async def run(self, *, ctx: Any, node_input: Any) -> AsyncIterator[Event]:
        """The node's ``_run_impl`` items as events, in order (see the module): first
        its input is checked against ``input_schema``, then each output it gives
        (an event's ``output``, or a value) against ``output_schema``; a value either
        refuses raises pydantic's ValidationError (the node run fails)."""
        node_input = self._validate_input_data(node_input)
        async for item in self._run_impl(ctx=ctx, node_input=node_input):
            if isinstance(item, Event):
                if item.output is not None and self.output_schema is not None:
                    item = item.model_copy(update={"output": self._validate_output_data(item.output)})
            elif item is not None and not isinstance(item, RequestInput) and self.output_schema is not None:
                item = self._validate_output_data(item)
            event = _output_event(item)
            if event is not None:
                yield event

    async def _run_impl(self, *, ctx: Any, node_input: Any) -> AsyncIterator[Any]:
        raise NotImplementedError(f"_run_impl for {type(self).__name__} is not implemented")
        yield  # pragma: no cover

    @property
    def _requires_all_predecessors(self) -> bool:
        """Whether the node runs only once every predecessor has finished (a join)."""
        return False


#: The entry of every graph: edges from START lead to the first nodes; START never runs.
START = BaseNode(name="__START__")


class JoinNode(BaseNode):
    """Runs once all its predecessors have finished; its output is a dict of their
    outputs by node name (a predecessor that gave none: None). Its ``input_schema``
    checks each predecessor's output in that dict."""

    @property
    def _requires_all_predecessors(self) -> bool:
        return True

    def _validate_input_data(self, data: Any) -> Any:
        if self.input_schema is not None and isinstance(data, dict):
            return {name: validate_node_data(self.input_schema, value) for name, value in data.items()}
        return super()._validate_input_data(data)

    async def _run_impl(self, *, ctx: Any, node_input: Any) -> AsyncIterator[Any]:
        yield node_input
