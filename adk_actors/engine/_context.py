"""The context of one invocation, and the views callbacks and tools get of it."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from .._exceptions import AdkError
from .._secrets import redact_event
from .._types import Content, Event, RunConfig, State, apply_state_delta
from ..agents import invocation_context as _public
from ..agents.callback_context import CallbackContext
from ._background import Background
from ._services import (
    ArtifactService,
    InMemoryArtifactService,
    InMemoryMemoryService,
    MemoryService,
)

__all__ = [
    "CallbackContext",
    "CancelToken",
    "InvocationContext",
    "RunCancelled",
    "SessionView",
    "State",
]


class RunCancelled(AdkError):
    """The run was cancelled; raised at the next step boundary."""


class CancelToken:
    """Set from any thread; the engine checks it between steps."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = "cancelled"

    def cancel(self, reason: str = "cancelled") -> None:
        self.reason = reason
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


@dataclass
class SessionView:
    """The run's copy of its session: state (scopes merged, with prefixes) and events;
    what ``tool_context.session`` / ``callback_context.session`` is, with google-adk's
    ``Session`` names (``id``, ``app_name``, ``user_id``, ``state``, ``events``).

    ``commit`` appends a non-partial event and applies its ``state_delta``, so later
    steps and agents of the same run see what earlier ones wrote.
    """

    app_name: str = "app"
    user_id: str = "user"
    session_id: str = "session"
    state: dict[str, Any] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)

    @property
    def id(self) -> str:
        """google-adk's name for ``session_id`` (``tool_context.session.id``)."""
        return self.session_id

    def commit(self, event: Event) -> None:
        if event.partial:
            return
        self.events.append(event)
        apply_state_delta(self.state, event.actions.state_delta)


@dataclass
class InvocationContext(_public.InvocationContext):
    """Everything one agent run needs; children get a copy with another agent/branch
    (google-adk's names: :class:`adk_actors.agents.invocation_context.InvocationContext`)."""

    session: SessionView
    root_agent: Any
    agent: Any = None
    invocation_id: str = ""
    branch: str | None = None
    run_config: RunConfig = field(default_factory=RunConfig)
    artifacts: ArtifactService = field(default_factory=InMemoryArtifactService)
    memory: MemoryService = field(default_factory=InMemoryMemoryService)
    plugins: Any = None  # PluginManager
    policies: Any = None  # PolicySet
    cancel: CancelToken = field(default_factory=CancelToken)
    counters: dict[str, int] = field(default_factory=lambda: {"llm_calls": 0})
    resolve_model: Callable[[str], Any] | None = None
    breakers: dict[str, Any] | None = None  # model name -> CircuitBreaker, shared by the runs given it
    breaker_client: Any = None  # or a remote one: async acquire(model) / record(...)
    approvals: Any = None  # an ApprovalService, for tool calls that need a human's approval
    credentials: Any = None  # get(app, user, key) / put(app, user, key, credential)
    mcp: Any = None  # the host's MCP toolsets (adk_actors.mcp.McpService); None: each toolset connects itself
    run_id: str = ""
    engine: Any = None  # runs agents and sub-invocations (engine._invocation.ENGINE)
    replay: Any = None  # a resumed invocation's committed events (engine._resume.Replay)
    #: Returns once every event yielded so far is in the session's store (a host's run
    #: worker asks its partition); awaited before a tool that must not run twice runs, so
    #: a resumed run finds its call on record, and again after its result, so a crash
    #: later never leaves that side effect off the record. None: events are committed as they are
    #: yielded (an embedded run), nothing to wait for.
    committed: Callable[[], Awaitable[None]] | None = None
    context_cache_config: Any = None  # the App's ContextCacheConfig (None: no context caching)
    events_compaction_config: Any = None  # the App's EventsCompactionConfig (None: no google-adk compaction)
    #: the App's ``tool_errors``: "to_model" (a failing tool's error is its result for the
    #: model) or "raise" (the tool's exception ends the run; ``_flow_tools._guarded_run``)
    tool_errors: str = "to_model"
    #: work started beside the invocation (``dispatch``), one for all its contexts
    background: Background = field(default_factory=Background)
    #: the user's message that began the invocation (google-adk's ``ctx.user_content``)
    user_content: Content | None = None
    #: set by an agent's own code: that agent ends there, its after-agent hooks not run
    end_invocation: bool = False
    #: a live conversation's (``run_live``): its agents' spans name no root to wrap them in
    live: bool = False

    @property
    def plugin_manager(self) -> Any:
        """google-adk's name for this invocation's plugins (``plugins``): its
        ``get_plugin(name)`` and ``plugins``; google-adk's ``run_*_callback`` methods
        too when the runner gave an ``adk_actors.plugins.PluginManager``."""
        return self.plugins

    def run_agent(self, agent: Any, *, live: bool = False) -> AsyncIterator[Event]:
        """Run ``agent`` in this invocation, with its hooks (what ``agent.run(ctx)`` does;
        ``live``: its ``_run_live_impl``, what ``agent.run_live(ctx)`` does)."""
        return self._engine().run_agent(agent, self, live=live)  # type: ignore[no-any-return]

    def run_llm_flow(self, agent: Any) -> AsyncIterator[Event]:
        """Run an LlmAgent's model loop in this context (its ``_run_impl``)."""
        return self._engine().run_llm_flow(agent, self)  # type: ignore[no-any-return]

    def run_isolated(self, agent: Any, session: SessionView, message: Content, *,
                     plugins: Any = ()) -> AsyncIterator[Event]:
        """Run ``agent`` as an invocation of its own over ``session`` (an AgentTool's
        child session), with this invocation's run config, services and cancel token,
        and ``plugins`` (none unless given; ``self.plugins`` gives the caller's)."""
        return self._engine().run_isolated(agent, session, message, self,  # type: ignore[no-any-return]
                                           plugins=plugins)

    def _engine(self) -> Any:
        if self.engine is None:
            raise AdkError("this context has no engine: contexts come from adk_actors.engine.run_invocation")
        return self.engine

    def for_agent(self, agent: Any, *, branch: str | None = None) -> InvocationContext:
        """A copy for ``agent``; the branch stays unless one is given; ``end_invocation``
        is the new copy's own."""
        return replace(self, agent=agent, branch=self.branch if branch is None else branch, end_invocation=False)

    async def topology(self, hook: str, *args: Any) -> Any:
        """Tell the plugins of a step of the tree's shape (``hook`` is one of
        :class:`~adk_actors.engine.Plugin`'s ``on_loop_iteration`` ... ``on_timeout``,
        ``args`` what follows its ``ctx``): the first plugin's result, or None."""
        if self.plugins is None:
            return None
        return await self.plugins.first(hook, self, *args)

    def check_cancelled(self) -> None:
        if self.cancel.cancelled:
            raise RunCancelled(self.cancel.reason)

    def event(self, **fields: Any) -> Event:
        """A new event of the current agent in this invocation and branch, with every
        known secret blanked out (:mod:`adk_actors._secrets`)."""
        fields.setdefault("author", self.agent.name)
        fields.setdefault("invocation_id", self.invocation_id)
        fields.setdefault("branch", self.branch)
        return redact_event(Event(**fields))
