"""google-adk's in-process ``Runner`` and ``InMemoryRunner``, for scripts and tests.

``InMemoryRunner(agent, app_name=...)`` (or ``InMemoryRunner(app=App(name=...,
root_agent=...))``) runs an agent in this process, as google-adk's does: ``await
runner.session_service.create_session(app_name=..., user_id=...)``, then ``async for
event in runner.run_async(user_id=..., session_id=..., new_message=...)`` (or
``runner.run(...)``, a sync generator). Sessions follow the host's state rules
(``app:`` / ``user:`` scopes shared, ``temp:`` never kept) because they are kept in
the host's own session store, in memory. A long-running agent host is
:class:`adk_actors.runtime.Host` with :class:`adk_actors.runtime.Runner`.

An agent's model given by name (``"gemini-2.5-flash"``, ``"claude-..."``,
``"openai/<model>"``) is resolved by :func:`adk_actors.models.resolve_model`, the
registry a host's run workers use too, from the same environment variables
(``GEMINI_BASE_URL``, ``GOOGLE_API_KEY``... listed there).

The services are google-adk's: ``session_service`` is any
:class:`adk_actors.sessions.BaseSessionService` (ours, or a user's own subclass),
``artifact_service`` any :class:`adk_actors.artifacts.BaseArtifactService` and
``memory_service`` any :class:`adk_actors.memory.BaseMemoryService` (in-memory ones when
not given); the engine's own artifact and memory services are taken as they are too.
The engine reaches a google-adk artifact or memory service through
:mod:`adk_actors._service_loop` (its async methods run on one loop of their own).

In order, a turn: the session is read with the session service's ``get_session`` (a
missing one is a :class:`SessionNotFoundError`, which is also a ``ValueError`` as
google-adk's; or it is made with ``create_session`` first when the runner was made
with ``auto_create_session=True``); a message with a function response whose id
matches no function call of the session's live events (those no rewind took back) is
refused with google-adk's ``ValueError``, before anything is stored or run; the
message (our Content or google.genai's, always taken as the user's) is run by the engine with the runner's artifact and
memory services and the app's plugins and policies; each non-partial event is handed
to the session service's ``append_event`` with the session read, as it comes, and the
event it returns (its ``temp:`` keys taken out of its delta) is the one yielded. The
user's own event is stored but not yielded unless ``yield_user_message=True``
(google-adk's rule); every other event is yielded. What ``append_event`` raises (a
store refusing text it cannot keep, a user's service failing) is raised there, after
the events before it were kept.

A live conversation (voice, video, text with a live model) is ``async for event in
runner.run_live(user_id=..., session_id=..., live_request_queue=queue)``, the caller
sending its inputs through a :class:`adk_actors.agents.LiveRequestQueue` (see
:meth:`Runner.run_live`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import warnings
from collections.abc import AsyncIterator, Iterator
from typing import Any

from ._event_print import print_event
from ._exceptions import InvalidRequestError
from ._rewind import rewind_event
from ._types import Content, Event, RunConfig
from ._validate import MAX_JSON_DEPTH, value_problem
from .agents.invocation_context import LlmCallsLimitExceededError
from .agents.live_request_queue import LiveRequestQueue
from .artifacts import InMemoryArtifactService
from .artifacts._engine_view import engine_artifacts
from .compiler import live_events
from .engine import App, SessionView, answered_invocation, run_invocation, run_live_invocation
from .engine._compaction_adk import compact_after_invocation, is_summary
from .engine._flow_step import unmatched_answer
from .errors.session_not_found_error import SessionNotFoundError
from .memory import InMemoryMemoryService
from .memory._engine_view import engine_memory
from .models import close_pooled_clients, resolve_model
from .plugins.plugin_manager import PluginManager
from .sessions import BaseSessionService, InMemorySessionService, Session
from .tools._classes import close_toolsets
from .types import ours

__all__ = ["InMemoryRunner", "Runner"]

logger = logging.getLogger(__name__)


def _unmatched_response_ids(events: list[Event], message: Content) -> set[str]:
    """The ids of ``message``'s function responses that no function call of the live
    ``events`` has (responses without an id are not looked at)."""
    wanted = {response.id for response in message.function_responses if response.id}
    if not wanted:
        return set()
    called = {call.id for event in live_events(events) for call in event.get_function_calls()}
    return wanted - called


def _inline_media(event: Event) -> bool:
    """Whether ``event`` carries inline audio, video or an image (a live model's; not
    kept in a session, as google-adk's)."""
    return event.content is not None and any(
        part.inline_data is not None and part.inline_data.mime_type.lower().startswith(("audio/", "video/", "image/"))
        for part in event.content.parts)


class Runner:
    """Runs an app's root agent in this process (see the module).

    Exactly one of ``app`` (an :class:`adk_actors.apps.App`; ``app_name`` then
    overrides its name) and ``agent`` (with ``app_name``, required then) is given, as
    in google-adk; ``plugins`` go with ``agent`` only (an app carries its own). Any
    other combination is a ``ValueError``, and so are two plugins of one name.
    ``plugin_manager``: google-adk's :class:`~adk_actors.plugins.PluginManager` of the
    plugins, which every run of the runner uses (each invocation a copy of its own).
    ``approvals``: the engine's approval service for tools that ask a human (None: the
    engine's default).
    """

    approvals: Any = None

    def __init__(self, *, app: App | None = None, app_name: str | None = None, agent: Any = None,
                 plugins: Any = None, artifact_service: Any = None, session_service: BaseSessionService,
                 memory_service: Any = None, auto_create_session: bool = False) -> None:
        if (app is None) == (agent is None):
            raise ValueError("a Runner takes exactly one of app and agent")
        if app is not None:
            if plugins is not None:
                raise ValueError("with an app, give the plugins to the app, not to the Runner")
            agent, plugins = app.root_agent, app.plugins
            app_name = app_name or app.name
            policies: tuple[Any, ...] = tuple(app.policies)
        else:
            app = App(root_agent=agent, plugins=tuple(plugins or ()))  # named by the Runner, unchecked
            policies = ()
        if not app_name:
            raise ValueError("a Runner given an agent needs an app_name (or give an app that has a name)")
        if agent is None:
            raise ValueError("the app has no root_agent")
        self.app = app
        self.agent = agent
        self.app_name = app_name
        self.session_service = session_service
        self.artifact_service = artifact_service if artifact_service is not None else InMemoryArtifactService()
        self.memory_service = memory_service if memory_service is not None else InMemoryMemoryService()
        self.auto_create_session = auto_create_session
        self.plugins = tuple(plugins or ())
        self.plugin_manager = PluginManager(self.plugins)  # google-adk's; a duplicate name: ValueError
        self.policies = policies

    async def _session(self, user_id: str, session_id: str) -> Session:
        """The session from the session service; created when missing if the runner
        creates sessions, else SessionNotFoundError."""
        session: Session | None = await self.session_service.get_session(
            app_name=self.app_name, user_id=user_id, session_id=session_id)
        if session is not None:
            return session
        if not self.auto_create_session:
            raise SessionNotFoundError(f"session {session_id!r} of user {user_id!r} of app {self.app_name!r} "
                                       f"not found")
        created: Session = await self.session_service.create_session(app_name=self.app_name, user_id=user_id,
                                                                     session_id=session_id)
        return created

    async def run_async(self, *, user_id: str, session_id: str, new_message: Any = None,
                        state_delta: dict[str, Any] | None = None, run_config: RunConfig | None = None,
                        yield_user_message: bool = False) -> AsyncIterator[Event]:
        """One turn (see the module): the agents' events as they come, the user's own
        first only with ``yield_user_message``. No message is a ``ValueError``; so is a
        root LlmAgent of ``mode="single_turn"`` (google-adk's rule: a root agent chats),
        before anything is read or written; and a function response answering no call
        of the session (google-adk's text), or answering calls of two invocations
        (google-adk's text), once the session is read and before anything is written.
        A message answering calls goes on in their invocation (google-adk's rule). A
        run that reaches ``RunConfig.max_llm_calls`` raises google-adk's
        ``LlmCallsLimitExceededError`` after its error event (``error_code`` the error's
        name, as google-adk's) is kept and yielded."""
        if new_message is None:
            raise ValueError("run_async needs a new_message")
        if getattr(self.agent, "mode", None) == "single_turn":
            raise ValueError(f"LlmAgent as root agent must have mode='chat' or 'task', but got "
                             f"mode='single_turn' (agent {self.agent.name!r})")
        message = ours(new_message, Content)
        if message.role != "user":
            message = Content(role="user", parts=message.parts)
        problem = (value_problem(message, MAX_JSON_DEPTH, "new_message")
                   or value_problem(state_delta, MAX_JSON_DEPTH, "state_delta"))
        if problem is not None:  # before the session is read: nothing stored, the session runs on
            raise InvalidRequestError(problem)
        session = await self._session(user_id, session_id)
        unmatched = _unmatched_response_ids(session.events, message)
        if unmatched:
            raise unmatched_answer(unmatched)
        # an answer to calls goes on in their invocation (google-adk's): its events carry that id
        answered = answered_invocation(session.events, message, strict=True)
        view = SessionView(app_name=self.app_name, user_id=user_id, session_id=session_id,
                           state=dict(session.state), events=list(session.events))
        first = True
        async for event in run_invocation(self.agent, view, message, state_delta=state_delta,
                                          invocation_id=answered, run_config=run_config, **self._engine_services()):
            limit_reached = event.error_code == "max_llm_calls"
            if limit_reached:  # google-adk's: an error event named by its exception's type, then the raise
                event = event.model_copy(update={"error_code": LlmCallsLimitExceededError.__name__})
            if not event.partial:  # yielded as kept (google-adk's: its temp: keys taken out)
                event = await self.session_service.append_event(session, event) or event
            users_own, first = first and event.author == "user", False
            # a google-adk summary made inside the invocation: kept, not yielded (google-adk's)
            if (yield_user_message or not users_own) and not is_summary(event):
                yield event
            if limit_reached:
                raise LlmCallsLimitExceededError(event.error_message or "the run reached RunConfig.max_llm_calls")
        await compact_after_invocation(self.app, self.session_service, session)  # App.events_compaction_config

    def _engine_services(self) -> dict[str, Any]:
        """What the engine's runs (a turn, a live conversation) are given of this runner:
        its services, plugins, policies, model resolver and the app's settings."""
        return {"artifacts": engine_artifacts(self.artifact_service), "memory": engine_memory(self.memory_service),
                "plugins": self.plugin_manager, "policies": self.policies, "resolve_model": resolve_model,
                "context_cache_config": self.app.context_cache_config,
                "events_compaction_config": self.app.events_compaction_config,
                "tool_errors": self.app.tool_errors, "approvals": self.approvals}

    async def run_live(self, *, user_id: str | None = None, session_id: str | None = None,
                       live_request_queue: LiveRequestQueue, run_config: RunConfig | None = None,
                       session: Session | None = None) -> AsyncIterator[Event]:
        """A live conversation (google-adk's ``run_live``): the events of the engine's
        live run (``engine.run_live_invocation``) fed by ``live_request_queue``, as
        they come, until the caller closes the queue (or stops iterating), the model
        ends the conversation, or it fails. In order: without
        ``RunConfig.response_modalities`` the model is asked for ``AUDIO`` (on a copy of
        ``run_config``, as google-adk's); the session is ``session`` when given (google-
        adk's deprecated way: a ``DeprecationWarning``), else read with ``user_id`` and
        ``session_id`` as :meth:`run_async` reads it (missing: ``SessionNotFoundError``
        unless the runner creates sessions; neither given: a ``ValueError``); then each
        event of the run that is not partial and carries no inline audio, video or
        image is handed to the session service's ``append_event`` before it is yielded
        (the event it returns is the one yielded). The user's own events (what the
        caller typed, a ``state_delta`` it sent) are stored but not yielded, as
        google-adk's; the user's transcribed speech is yielded. Every check raises at
        the first ``__anext__``, before anything is stored; what the run raises (a
        model error) is raised after the events before it were kept."""
        config = run_config or RunConfig()
        if config.response_modalities is None:  # google-adk's default for live runs, on a copy
            config = config.model_copy(update={"response_modalities": ("AUDIO",)})
        if session is not None:
            warnings.warn("The `session` parameter is deprecated. Please use `user_id` and `session_id` instead.",
                          DeprecationWarning, stacklevel=2)
        elif user_id is None or session_id is None:
            raise ValueError("Either session or user_id and session_id must be provided.")
        else:
            session = await self._session(user_id, session_id)
        view = SessionView(app_name=self.app_name, user_id=session.user_id, session_id=session.id,
                           state=dict(session.state), events=list(session.events))
        live = run_live_invocation(self.agent, view, live_request_queue, run_config=config,
                                   **self._engine_services())
        async with contextlib.aclosing(live) as events:
            async for event in events:
                if not event.partial and not _inline_media(event):
                    event = await self.session_service.append_event(session, event) or event
                if event.author != "user" or event.input_transcription is not None:
                    yield event

    def run(self, *, user_id: str, session_id: str, new_message: Any, state_delta: dict[str, Any] | None = None,
            run_config: RunConfig | None = None) -> Iterator[Event]:
        """:meth:`run_async` from sync code: the turn runs on a thread of its own event
        loop (whose model connections are closed when the turn ends); events come as
        they are made. An error of the turn is raised here."""
        events: queue.Queue[tuple[str, Any]] = queue.Queue()

        async def drive() -> None:
            try:
                async for event in self.run_async(user_id=user_id, session_id=session_id, new_message=new_message,
                                                  state_delta=state_delta, run_config=run_config):
                    events.put(("event", event))
            finally:
                await close_pooled_clients()

        def work() -> None:
            try:
                asyncio.run(drive())
                events.put(("end", None))
            except BaseException as exc:  # handed to the caller's thread
                events.put(("error", exc))

        threading.Thread(target=work, name="adk-runner", daemon=True).start()
        while True:
            kind, value = events.get()
            if kind == "event":
                yield value
            elif kind == "error":
                raise value
            else:
                return

    async def run_debug(self, user_messages: str | list[str], *, user_id: str = "debug_user_id",
                        session_id: str = "debug_session_id", run_config: RunConfig | None = None,
                        quiet: bool = False, verbose: bool = False) -> list[Event]:
        """google-adk's quick try-out: send each of ``user_messages`` (one string or a
        list) in turn, in the session ``session_id`` of ``user_id`` (created when it does
        not exist yet, continued when it does), and return every event the turns
        yielded, in order. Unless ``quiet``: logs which session it uses and each message
        (the ``adk_actors.runners`` logger, at INFO), and prints each event as it comes
        (its texts; with ``verbose`` its tool calls, results, code and data too). A turn's
        error is raised here, the events before it kept in the session."""
        found = await self.session_service.get_session(app_name=self.app_name, user_id=user_id,
                                                       session_id=session_id)
        created = found is None
        if created:
            await self.session_service.create_session(app_name=self.app_name, user_id=user_id,
                                                      session_id=session_id)
        if not quiet:
            logger.info("%s session: %s", "Created new" if created else "Continue", session_id)
        collected: list[Event] = []
        for text in [user_messages] if isinstance(user_messages, str) else list(user_messages):
            if not quiet:
                logger.info("User > %s", text)
            async for event in self.run_async(user_id=user_id, session_id=session_id, new_message=Content.user(text),
                                              run_config=run_config):
                if not quiet:
                    print_event(event, verbose=verbose)
                collected.append(event)
        return collected

    async def rewind_async(self, *, user_id: str, session_id: str, rewind_before_invocation_id: str,
                           run_config: RunConfig | None = None) -> None:
        """google-adk's rewind: take the session back to before the invocation
        ``rewind_before_invocation_id``. In order: the session is read (missing:
        :class:`SessionNotFoundError`, unless the runner creates sessions); the
        invocation's first event is found (none: :class:`InvocationNotFoundError`, a
        ``ValueError``); the state changes and artifact versions made since are undone
        by one user event handed to the session service's ``append_event`` (see
        :mod:`adk_actors._rewind`). The events stay in the session; the request
        compiler no longer sends the rewound ones to a model. ``run_config`` is taken
        and not used, as in google-adk."""
        session = await self._session(user_id, session_id)
        event = rewind_event(session.events, dict(session.state), rewind_before_invocation_id,
                             engine_artifacts(self.artifact_service), (self.app_name, user_id, session_id))
        await self.session_service.append_event(session, event)

    async def close(self) -> None:
        """Close the agent tree's google-adk toolsets (``BaseToolset.close``, as
        google-adk's ``close`` does), then the plugins (``plugin_manager.close()``: a
        plugin that fails to close is a ``RuntimeError`` once the others are closed),
        then the model connections this event loop's turns opened (also when closing
        a plugin failed)."""
        if self.agent is not None:
            await close_toolsets(self.agent)
        try:
            await self.plugin_manager.close()
        finally:
            await close_pooled_clients()

    async def __aenter__(self) -> Runner:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class InMemoryRunner(Runner):
    """A :class:`Runner` with in-memory sessions, artifacts and memories; its
    ``app_name`` is ``"InMemoryRunner"`` when neither it nor an app is given."""

    def __init__(self, agent: Any = None, *, app_name: str | None = None, plugins: Any = None,
                 app: App | None = None) -> None:
        if app is None and app_name is None:
            app_name = "InMemoryRunner"
        super().__init__(agent=agent, app_name=app_name, plugins=plugins, app=app,
                         session_service=InMemorySessionService(), artifact_service=InMemoryArtifactService(),
                         memory_service=InMemoryMemoryService())
