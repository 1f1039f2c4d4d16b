"""google-adk's in-process ``Runner`` and ``InMemoryRunner``, for scripts and tests.

``InMemoryRunner(agent, app_name=...)`` runs an agent in this process, as google-adk's
does: ``await runner.session_service.create_session(app_name=..., user_id=...)``, then
``async for event in runner.run_async(user_id=..., session_id=..., new_message=...)``
(or ``runner.run(...)``, a sync generator). Sessions follow the host's state rules
(``app:`` / ``user:`` scopes shared, ``temp:`` never kept) because they are kept in
the host's own session store, in memory. A long-running agent host is
:class:`adk_actors.runtime.Host` with :class:`adk_actors.runtime.Runner`.

In order, a turn: the session is read (a missing one is a :class:`SessionNotFoundError`);
the message (our Content or google.genai's) is run by the engine with the runner's
artifact and memory services; each final event is appended to the session as it is
yielded. An event the store refuses (text that cannot be stored) raises there, after
the events before it were kept.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

from ._exceptions import SessionNotFoundError
from ._types import Content, Event, RunConfig
from .engine import InMemoryArtifactService, InMemoryMemoryService, SessionView, run_invocation
from .sessions import InMemorySessionService
from .store._base import SessionNotFound
from .types import ours

__all__ = ["InMemoryRunner", "Runner"]


class Runner:
    """Runs ``agent`` (the app's root agent) for ``app_name`` in this process."""

    def __init__(self, *, agent: Any = None, app_name: str | None = None,
                 session_service: InMemorySessionService | None = None, artifact_service: Any = None,
                 memory_service: Any = None, plugins: Any = (), app: Any = None) -> None:
        if app is not None:  # google-adk's App: a name and a root agent
            agent = agent or app.root_agent
            app_name = app_name or app.name
            plugins = plugins or getattr(app, "plugins", ()) or ()
        if agent is None or not app_name:
            raise ValueError("a Runner needs an agent (or an app) and an app_name")
        self.agent = agent
        self.app_name = app_name
        self.session_service = session_service or InMemorySessionService()
        self.artifact_service = artifact_service or InMemoryArtifactService()
        self.memory_service = memory_service or InMemoryMemoryService()
        self.plugins = tuple(plugins or ())

    async def run_async(self, *, user_id: str, session_id: str, new_message: Any,
                        state_delta: dict[str, Any] | None = None,
                        run_config: RunConfig | None = None) -> AsyncIterator[Event]:
        """One turn (see the module): every event, the user's first."""
        store = self.session_service.store
        try:
            stored = store.get_session(self.app_name, user_id, session_id)
        except SessionNotFound as exc:
            raise SessionNotFoundError(f"session {session_id!r} of user {user_id!r} not found") from exc
        view = SessionView(app_name=self.app_name, user_id=user_id, session_id=session_id,
                           state=dict(stored.state), events=list(stored.events))
        async for event in run_invocation(self.agent, view, ours(new_message, Content), state_delta=state_delta,
                                          run_config=run_config, artifacts=self.artifact_service,
                                          memory=self.memory_service, plugins=self.plugins):
            if not event.partial:
                store.append_event(self.app_name, user_id, session_id, event)
            yield event

    def run(self, *, user_id: str, session_id: str, new_message: Any,
            run_config: RunConfig | None = None) -> Iterator[Event]:
        """:meth:`run_async` from sync code: the turn runs on a thread of its own event
        loop; events come as they are made. An error of the turn is raised here."""
        events: queue.Queue[tuple[str, Any]] = queue.Queue()

        async def drive() -> None:
            async for event in self.run_async(user_id=user_id, session_id=session_id, new_message=new_message,
                                              run_config=run_config):
                events.put(("event", event))

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

    async def close(self) -> None:
        """Nothing to release: google-adk's runners have it, so callers may call it."""


class InMemoryRunner(Runner):
    """A :class:`Runner` with in-memory sessions, artifacts and memories."""

    def __init__(self, agent: Any = None, *, app_name: str = "InMemoryRunner", plugins: Any = (),
                 app: Any = None) -> None:
        super().__init__(agent=agent, app_name=app_name if app is None else "", plugins=plugins, app=app)
