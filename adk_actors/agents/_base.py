"""What every built-in agent shares: name, description, sub-agents, agent callbacks.

Agents are structural (seed 001 row 4): the engine needs only ``name``,
``description``, ``sub_agents`` and ``run(ctx)`` (an async iterator of events), so a
custom agent needs no base class. This base validates a definition when it is
built (identifier names, unique in the tree, one parent, no cycles) and runs the
before/after-agent callbacks (the agent's own first, then plugins) around
``_run_impl``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol, runtime_checkable

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from .._exceptions import AgentDefinitionError
from .._tree import check_agent_name, find_agent, validate_tree
from .._types import Content, Event, Part

__all__ = ["Agent", "AgentBase"]


@runtime_checkable
class Agent(Protocol):
    name: str
    description: str
    sub_agents: Any

    def run(self, ctx: Any) -> AsyncIterator[Event]: ...


def _definition_error(exc: ValidationError, name: Any) -> AgentDefinitionError:
    for error in exc.errors():
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, AgentDefinitionError):
            return cause
    problems = "; ".join(
        f"{'.'.join(str(p) for p in error['loc']) or 'agent'}: {error['msg']}" for error in exc.errors()
    )
    return AgentDefinitionError(f"invalid agent {name!r}: {problems}")


def _as_content(value: Any) -> Content:
    if isinstance(value, Content):
        return value
    if isinstance(value, str):
        return Content(role="model", parts=(Part(text=value),))
    raise AgentDefinitionError(f"an agent callback must return Content, a string or None, got {value!r}")


class AgentBase(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    name: str
    description: str = ""
    sub_agents: list[Any] = Field(default_factory=list)
    before_agent_callback: Any = None
    after_agent_callback: Any = None

    _parent: Any = PrivateAttr(default=None)

    def __init__(self, **data: Any) -> None:
        """Validate the definition; any problem raises :class:`AgentDefinitionError`."""
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _definition_error(exc, data.get("name")) from None

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        return check_agent_name(value)

    @model_validator(mode="after")
    def _check_tree(self) -> AgentBase:
        validate_tree(self)
        for child in self.sub_agents:
            current = getattr(child, "_parent", None)
            if current is not None and current is not self:
                raise AgentDefinitionError(
                    f"agent {child.name!r} already has parent {current.name!r}; an agent has at most one parent"
                )
        for child in self.sub_agents:
            try:
                child._parent = self
            except (AttributeError, TypeError, ValueError):
                pass  # a custom agent that refuses attributes: walking the tree still finds its parent
        return self

    @property
    def parent_agent(self) -> Any:
        return self._parent

    def find_agent(self, name: str) -> Any | None:
        return find_agent(self, name)

    async def run(self, ctx: Any) -> AsyncIterator[Event]:
        """Run this agent: before-agent hooks, the agent's own work, after-agent hooks.

        A before-agent hook that returns content ends the agent with that reply; an
        after-agent hook's content is added as one more reply.
        """

        from .. import telemetry

        ctx = ctx.for_agent(self)
        ctx.check_cancelled()
        session = ctx.session
        with telemetry.span(("adk", "agent"), {"agent": self.name, "invocation_id": ctx.invocation_id,
                                               "branch": ctx.branch, "app": session.app_name,
                                               "user": session.user_id, "session": session.session_id}):
            async for event in self._run_with_callbacks(ctx):
                yield event

    async def _run_with_callbacks(self, ctx: Any) -> AsyncIterator[Event]:
        from ..engine._callbacks import call_chain
        from ..engine._context import CallbackContext

        async def hook(slot: Any, plugin_hook: str) -> tuple[Event | None, bool]:
            """Agent callbacks first, then plugins: (the event to emit, whether they replied)."""
            callback_ctx = CallbackContext(ctx)
            reply = await call_chain(slot, callback_ctx)
            if reply is None and ctx.plugins is not None:
                reply = await ctx.plugins.first(plugin_hook, callback_ctx)
            if reply is not None:
                return ctx.event(content=_as_content(reply), actions=callback_ctx.actions()), True
            if callback_ctx.actions_delta:
                return ctx.event(actions=callback_ctx.actions()), False
            return None, False

        event, replied = await hook(self.before_agent_callback, "before_agent")
        if event is not None:
            yield event
        if replied:
            return
        async for event in self._run_impl(ctx):
            yield event
        event, _ = await hook(self.after_agent_callback, "after_agent")
        if event is not None:
            yield event

    async def _run_impl(self, ctx: Any) -> AsyncIterator[Event]:
        raise NotImplementedError
        yield  # pragma: no cover
