"""google-adk's ``google.adk.sessions``: the session services, in process.

:class:`BaseSessionService` is the class a user's own service subclasses (the
in-process Runner uses any subclass); :class:`InMemorySessionService` keeps sessions
in memory, as google-adk's does; :class:`DatabaseSessionService` (``sqlite:///...``,
``postgresql://...``) and ``sqlite_session_service.SqliteSessionService`` keep them in
our session stores; :class:`VertexAiSessionService` is refused with a typed error (no
Vertex AI here). :class:`Session`, :class:`State` and the config and response models
are google-adk's shapes. Every method is google-adk's: async and by keyword.
"""

from .base_session_service import BaseSessionService, GetSessionConfig, ListSessionsResponse
from .database_session_service import DatabaseSessionService
from .in_memory_session_service import InMemorySessionService
from .session import Session
from .state import State, StateSchemaError
from .vertex_ai_session_service import VertexAiSessionService

__all__ = [
    "BaseSessionService",
    "DatabaseSessionService",
    "GetSessionConfig",
    "InMemorySessionService",
    "ListSessionsResponse",
    "Session",
    "State",
    "StateSchemaError",
    "VertexAiSessionService",
]
