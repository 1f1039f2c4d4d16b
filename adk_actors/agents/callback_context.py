"""``CallbackContext``: what agent and model callbacks see (google-adk's path and names).

A callback reads and writes ``state`` (its writes are recorded in ``actions.state_delta``
and become the event's state_delta), and saves, loads and lists the session's
artifacts and searches the user's memories through the invocation's services.

The artifact and memory methods are awaitable, as google-adk's are, when called on
the run's event loop (from an ``async def`` callback or tool): ``await
ctx.save_artifact(...)``. Called from a sync tool, which runs on a thread of its own,
they do the work and return the result. An async function that calls one without
``await`` does nothing (Python warns "coroutine ... was never awaited").
"""

from __future__ import annotations

import asyncio
from abc import ABCMeta
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .._callables import register_context_type
from .._types import EventActions, Part, SearchMemoryResponse, State
from ..types import ours

__all__ = ["Actions", "CallbackContext", "both_ways"]

T = TypeVar("T")


def both_ways(work: Callable[[], T]) -> Any:
    """``work()`` as an awaitable when called on a running event loop, else its result."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return work()

    async def later() -> T:
        return work()

    return later()


@dataclass
class Actions:
    """The actions a callback or tool takes, google-adk's ``EventActions`` fields, set
    in place (``tool_context.actions.escalate = True``); :meth:`event_actions` is the
    event's frozen copy."""

    state_delta: dict[str, Any] = field(default_factory=dict)
    artifact_delta: dict[str, int] = field(default_factory=dict)
    escalate: bool | None = None
    skip_summarization: bool | None = None
    transfer_to_agent: str | None = None
    requested_auth_configs: dict[str, Any] = field(default_factory=dict)
    #: function call id -> the ToolConfirmation a tool asked for (google-adk's field)
    requested_tool_confirmations: dict[str, Any] = field(default_factory=dict)
    #: the structured answer the ``set_model_response`` tool accepted (google-adk's field)
    set_model_response: Any = None

    def event_actions(self) -> EventActions:
        return EventActions(state_delta=dict(self.state_delta), artifact_delta=dict(self.artifact_delta),
                            escalate=self.escalate or None, skip_summarization=self.skip_summarization or None,
                            transfer_to_agent=self.transfer_to_agent,
                            requested_auth_configs=dict(self.requested_auth_configs),
                            requested_tool_confirmations=dict(self.requested_tool_confirmations),
                            set_model_response=self.set_model_response)


class CallbackContext(metaclass=ABCMeta):  # noqa: B024 (for register, see the docstring)
    """The view of one invocation a callback gets (see the module); google-adk's
    ``Context`` too (``agents.context``). Abstract methods it has none: the metaclass
    only lets another context class be registered as one (``CallbackContext.register``)."""

    #: the function call a tool context answers (google-adk's ``Context.function_call_id``):
    #: None for a callback; a tool's context sets its own
    function_call_id: str | None = None

    def __init__(self, ctx: Any) -> None:
        self.invocation = ctx
        self.actions = Actions()
        self.state = State(ctx.session.state, self.actions.state_delta)

    @property
    def _invocation_context(self) -> Any:
        """google-adk's name for the invocation, which some agent files reach for."""
        return self.invocation

    @property
    def session(self) -> Any:
        """The run's view of its session, its events and state (google-adk's
        ``ReadonlyContext.session``)."""
        return self.invocation.session

    def get_invocation_context(self) -> Any:
        """The invocation this context views (google-adk's ``get_invocation_context()``)."""
        return self.invocation

    @property
    def user_content(self) -> Any:
        """The user's message that began the invocation (google-adk's ``user_content``)."""
        return self.invocation.user_content

    @property
    def branch(self) -> str | None:
        """The invocation's branch, ``parent.child`` for an agent under a parallel
        agent, else None (google-adk's ``branch``)."""
        branch: str | None = self.invocation.branch
        return branch

    @property
    def run_config(self) -> Any:
        """The run's :class:`~adk_actors.RunConfig` (google-adk's ``run_config``)."""
        return self.invocation.run_config

    @property
    def agent_name(self) -> str:
        name: str = self.invocation.agent.name
        return name

    @property
    def invocation_id(self) -> str:
        invocation_id: str = self.invocation.invocation_id
        return invocation_id

    @property
    def user_id(self) -> str:
        user: str = self.invocation.session.user_id
        return user

    def _where(self) -> tuple[str, str, str]:
        session = self.invocation.session
        return session.app_name, session.user_id, session.session_id

    def save_artifact(self, filename: str, artifact: Any, custom_metadata: dict[str, Any] | None = None) -> Any:
        """Save ``artifact`` (a Part, ours or google.genai's) as the next version of
        ``filename``, with ``custom_metadata`` when given (kept with the version, read
        back by :meth:`get_artifact_version`); the version number (from 0). Recorded in
        ``actions.artifact_delta``. Metadata given to a service that keeps none (a
        host's, whose artifacts are actors) is a ``NotImplementedError``."""
        service = self.invocation.artifacts
        if custom_metadata is not None and not getattr(service, "keeps_metadata", False):
            raise NotImplementedError(f"{type(service).__name__} keeps no custom metadata with artifact versions")

        def work() -> int:
            part = ours(artifact, Part)
            version: int = (service.save(*self._where(), filename, part) if custom_metadata is None
                            else service.save(*self._where(), filename, part, custom_metadata=custom_metadata))
            self.actions.artifact_delta[filename] = version
            return version

        return both_ways(work)

    def get_artifact_version(self, filename: str, version: int | None = None) -> Any:
        """What was recorded with a version of ``filename`` (the latest unless
        ``version``), as google-adk's ``ArtifactVersion``, or None when there is no such
        version. A ``NotImplementedError`` from a service that records nothing of
        versions (a host's, whose artifacts are actors)."""
        service = self.invocation.artifacts
        if not getattr(service, "keeps_metadata", False):
            raise NotImplementedError(f"{type(service).__name__} keeps no artifact version metadata")
        return both_ways(lambda: service.version(*self._where(), filename, version))

    def load_artifact(self, filename: str, version: int | None = None) -> Any:
        """The Part saved as ``filename`` (its latest version, or ``version``), or None."""
        return both_ways(lambda: self.invocation.artifacts.load(*self._where(), filename, version))

    def list_artifacts(self) -> Any:
        """The names of this session's artifacts."""
        return both_ways(lambda: self.invocation.artifacts.list(*self._where()))

    def search_memory(self, query: str, limit: int = 10) -> Any:
        """The user's memories (from earlier sessions of this app) that match ``query``,
        best first, as google-adk's ``SearchMemoryResponse`` (``.memories``)."""
        session = self.invocation.session
        return both_ways(lambda: SearchMemoryResponse(
            memories=list(self.invocation.memory.search(session.app_name, session.user_id, query, limit))))

    def add_session_to_memory(self) -> Any:
        """Remember this session as it is now (its events so far), so later sessions of
        this user can find it with ``search_memory``."""
        session = self.invocation.session
        return both_ways(lambda: self.invocation.memory.add_session(
            session.app_name, session.user_id, session.session_id, list(session.events)))


# a function tool's parameter annotated CallbackContext, Context or ToolContext is its context
register_context_type(CallbackContext)
