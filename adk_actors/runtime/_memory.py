"""The memory actor: indexes sessions and answers searches, per (app, user).

``AddSessionToMemory(app, user, session)`` reads the session from the session store
(or takes the events a run sends) and (re)indexes it; ``SearchMemory(app, user, query, limit)`` -> entries. Data is in
SQLite, so a restarted actor (kill -9 included) answers as before.
"""

from __future__ import annotations

from typing import Any

from supervision import BadRequest, CallerRef, CallError, GenServer

from .._types import Event
from .._validate import check_message
from ..store import SessionNotFound, connection_name, open_session_store
from ..store._memory import MemoryStore
from ._service_calls import AddSessionToMemory, SearchMemory

__all__ = ["MemoryActor"]


class MemoryActor(GenServer):
    check_request = staticmethod(check_message)  # malformed requests: invalid_request, never a crash

    def init(self, args: dict[str, Any]) -> None:
        host = args.get("host", "")  # how its PostgreSQL connections are called (store.connection_name)
        self.memory = MemoryStore(args["memory"], application_name=connection_name(host, "memory"))
        self.sessions = open_session_store(args["session_store"],
                                           application_name=connection_name(host, "memory-sessions"))

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if isinstance(request, AddSessionToMemory):
            events = request.events
            if events is None:
                try:
                    events = tuple(self.sessions.get_session(request.app_name, request.user_id,
                                                             request.session_id).events)
                except SessionNotFound as exc:
                    raise CallError(str(exc), code="unknown_session") from None
            if not all(isinstance(event, Event) for event in events):
                raise BadRequest("events must be Event objects")
            return self.memory.add_session(request.app_name, request.user_id, request.session_id, list(events))
        if isinstance(request, SearchMemory):
            if not isinstance(request.query, str):
                raise BadRequest("the query must be a string")
            return self.memory.search(request.app_name, request.user_id, request.query, max(1, request.limit))
        return super().handle_call(request, caller)

    def terminate(self, reason: Any) -> None:
        self.memory.close()
        self.sessions.close()
