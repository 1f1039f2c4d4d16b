"""What every built-in agent shares: name, description, sub-agents, agent callbacks.

Agents are structural (seed 001 row 4): the engine needs only ``name``,
``description``, ``sub_agents`` and ``run(ctx)`` (an async iterator of events), so a
custom agent needs no base class. This base validates a definition when it is
built (identifier names, unique in the tree, one parent, no cycles); the engine
runs the before/after-agent callbacks (the agent's own first, then plugins) around
its ``_run_impl`` (:mod:`adk_actors.engine._agents`).

An agent file (google-adk's Agent Config YAML) may name any subclass of this base by
its dotted name (``agent_class: my_pkg.agents.MyAgent``); the class's
``config_type`` (a :class:`BaseAgentConfig` subclass, by default that class) is the
schema of its file and its deprecated hooks ``from_config`` / ``_parse_config`` run as
google-adk runs them. The agent-file loader (:mod:`adk_actors.agents._config_loader`,
above this module) does the work: it installs itself here when it is imported
(:func:`install_config_builder`).

google-adk's custom agents subclass this base (``BaseAgent``) and override
``_run_async_impl(ctx)``, which the default ``_run_impl`` runs; they call their
sub-agents with ``run_async(ctx)`` (and ``run_live(ctx)``), which runs them on the
same engine, hooks and commits included.
"""

from __future__ import annotations

import typing
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, ClassVar, Protocol, TypeVar, runtime_checkable

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from typing_extensions import deprecated

from .._exceptions import AgentDefinitionError
from .._node_settings import RetryConfig, as_retry_config
from .._tree import check_agent_name, find_agent, validate_tree
from .._types import Event
from .base_agent_config import BaseAgentConfig

__all__ = ["AgentBase", "AgentLike", "ConfigBuilder", "install_config_builder"]

_Agent = TypeVar("_Agent", bound="AgentBase")
#: what :meth:`AgentBase.from_config` runs: (the agent class, its config as given, the
#: config file's absolute path) -> the agent
ConfigBuilder = Callable[[type[Any], Any, str], Any]
_config_builders: list[ConfigBuilder] = []

#: google-adk 2.13 deprecates the class hooks of its YAML loader; these say so
FROM_CONFIG_DEPRECATION = ("BaseAgent.from_config is deprecated (google-adk 2.13) and will be removed: load an "
                           "agent file with adk_actors.agents.config_agent_utils.from_config")
PARSE_CONFIG_DEPRECATION = ("BaseAgent._parse_config is deprecated (google-adk 2.13) and will be removed: declare "
                            "the agent's fields on its class, the loader maps a file's keys onto them")


def install_config_builder(builder: ConfigBuilder) -> None:
    """Make ``builder`` what :meth:`AgentBase.from_config` runs, replacing any other.
    The agent-file loader calls it when it is imported: it builds agents of the classes
    defined above this module, so this module cannot import it."""
    _config_builders[:] = [builder]


@runtime_checkable
class AgentLike(Protocol):
    """What the engine asks of any agent."""

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


class AgentBase(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    name: str
    description: str = ""
    sub_agents: list[Any] = Field(default_factory=list)
    before_agent_callback: Any = None
    after_agent_callback: Any = None
    # google-adk 2.x's node settings, on every agent (its BaseAgent is a BaseNode):
    # run as the invocation's agent or as a workflow node, see adk_actors.engine._node_run
    wait_for_output: bool = False
    retry_config: Any = None  # a RetryConfig (a Workflow's field narrows the type)
    timeout: float | None = None
    state_schema: type[BaseModel] | None = None

    #: the schema of this class's agent file (google-adk's deprecated ``config_type``):
    #: a subclass names its own :class:`BaseAgentConfig` subclass for its own keys
    config_type: ClassVar[type[BaseModel]] = BaseAgentConfig

    _parent: Any = PrivateAttr(default=None)

    def __init__(self, **data: Any) -> None:
        """Validate the definition; any problem raises :class:`AgentDefinitionError`."""
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _definition_error(exc, data.get("name")) from None

    @classmethod
    @deprecated(FROM_CONFIG_DEPRECATION)
    def from_config(cls: type[_Agent], config: BaseModel | dict[str, Any], config_abs_path: str) -> _Agent:
        """google-adk's deprecated class hook (it warns ``DeprecationWarning``): an agent
        of this class from ``config`` (its config model, whose unset fields are left
        out and extra keys kept, or the mapping a file holds), as the agent-file loader
        builds one: ``config``'s keys are validated (a built-in kind's as its file's
        are, another class's against :attr:`config_type`) and mapped onto the class's
        fields (sub-agents loaded relative to
        ``config_abs_path``, the file's absolute path; code references imported), then
        :meth:`_parse_config`, if the class overrides it, gets ``config`` as given and
        the mapped keyword arguments and returns the ones the agent is made with.
        AgentDefinitionError naming the file for a config that is neither, a key the
        schema refuses, a reference that cannot be resolved or an agent that cannot be
        made. (The loader installs this; if nothing imported it, AgentDefinitionError.)"""
        if not _config_builders:
            raise AgentDefinitionError(f"{config_abs_path}: the agent-file loader is not loaded; import "
                                       "adk_actors.agents.config_agent_utils first")
        agent = _config_builders[0](cls, config, config_abs_path)
        if not isinstance(agent, cls):
            raise AgentDefinitionError(f"{config_abs_path}: from_config of {cls.__name__} made a "
                                       f"{type(agent).__name__}")
        return agent

    @classmethod
    @deprecated(PARSE_CONFIG_DEPRECATION)
    def _parse_config(cls, config: Any, config_abs_path: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        """google-adk's deprecated hook (it warns ``DeprecationWarning``): the keyword
        arguments an agent of this class is made with, given its file's config model,
        the file's absolute path and the arguments the loader mapped from the file. A
        subclass overrides it to turn its own config keys into fields; this one returns
        ``kwargs`` unchanged."""
        return kwargs

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        return check_agent_name(value)

    @field_validator("retry_config", mode="before")
    @classmethod
    def _any_retry_config(cls, value: Any) -> Any:
        """None, or a RetryConfig as the class this agent class's field names
        (:class:`adk_actors._node_settings.RetryConfig` unless a subclass narrows
        it): one of another module (the workflow's, google-adk's) or a dict is
        converted; anything else is :class:`AgentDefinitionError`."""
        if value is None:
            return None
        annotation = cls.model_fields["retry_config"].annotation
        targets = [t for t in typing.get_args(annotation) if isinstance(t, type) and issubclass(t, BaseModel)]
        target = targets[0] if targets else RetryConfig
        if isinstance(value, dict):
            return target.model_validate(value)
        value = as_retry_config(value, target)
        if not isinstance(value, target):
            raise AgentDefinitionError(f"retry_config must be a RetryConfig, got {value!r}")
        return value

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

    @property
    def root_agent(self) -> Any:
        """The root of the tree this agent is in (itself when it has no parent)."""
        agent: Any = self
        while getattr(agent, "parent_agent", None) is not None:
            agent = agent.parent_agent
        return agent

    def find_sub_agent(self, name: str) -> Any | None:
        """The agent named ``name`` below this one (not this one itself), or None."""
        for child in self.sub_agents:
            found = find_agent(child, name)
            if found is not None:
                return found
        return None

    def run(self, ctx: Any) -> AsyncIterator[Event]:
        """Run this agent in ``ctx``: the engine that made ``ctx`` runs the before-agent
        hooks, then :meth:`_run_impl`, then the after-agent hooks."""
        return ctx.run_agent(self)  # type: ignore[no-any-return]

    async def run_async(self, parent_context: Any) -> AsyncGenerator[Event, None]:
        """google-adk's entry point: run this agent in its parent's context, on the engine
        that made that context (what :meth:`run` does). A custom agent calls it on its
        sub-agents (``async for event in self.child.run_async(ctx): yield event``); each
        event it yields goes on to the invocation, which commits it (its state_delta
        applied) before the agent resumes."""
        async for event in self.run(parent_context):
            yield event

    async def run_live(self, parent_context: Any) -> AsyncGenerator[Event, None]:
        """google-adk's live entry point: this agent's hooks around :meth:`_run_live_impl`,
        on the engine that made ``parent_context``."""
        async for event in parent_context.run_agent(self, live=True):
            yield event

    def _run_impl(self, ctx: Any) -> AsyncIterator[Event]:
        """This agent's own work, between its hooks: google-adk's
        :meth:`_run_async_impl`, which a custom agent overrides."""
        return self._run_async_impl(ctx)

    async def _run_async_impl(self, ctx: Any) -> AsyncIterator[Event]:
        """A custom agent's logic (google-adk's hook): yields its events and its
        sub-agents'. Not overridden: NotImplementedError."""
        raise NotImplementedError(f"_run_async_impl for {type(self).__name__} is not implemented")
        yield  # pragma: no cover

    async def _run_live_impl(self, ctx: Any) -> AsyncIterator[Event]:
        """A custom agent's logic in a live run (google-adk's hook). Not overridden:
        NotImplementedError."""
        raise NotImplementedError(f"_run_live_impl for {type(self).__name__} is not implemented")
        yield  # pragma: no cover
