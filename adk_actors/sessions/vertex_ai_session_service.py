"""google-adk's ``VertexAiSessionService`` path. Its sessions live in Google Cloud's
Vertex AI Agent Engine, which this project does not reach: making one raises
:class:`~adk_actors.errors.ServiceUnavailableError` (a ``NotImplementedError``)
naming what is missing and what to use instead."""

from __future__ import annotations

from typing import Any

from ..errors._unavailable import ServiceUnavailableError, unavailable
from .base_session_service import BaseSessionService, GetSessionConfig, ListSessionsResponse
from .session import Session

__all__ = ["ServiceUnavailableError", "VertexAiSessionService"]

_MISSING = unavailable("VertexAiSessionService", "Vertex AI Agent Engine (a Google Cloud project, location and "
                       "agent engine)", "DatabaseSessionService('sqlite:///sessions.db') or "
                       "DatabaseSessionService('postgresql://...') for sessions that outlive the process, or "
                       "InMemorySessionService")


class VertexAiSessionService(BaseSessionService):
    """Refused when made (see the module); its arguments are google-adk's."""

    def __init__(self, project: str | None = None, location: str | None = None, agent_engine_id: str | None = None,
                 *, express_mode_api_key: str | None = None) -> None:
        raise ServiceUnavailableError(_MISSING)

    async def create_session(self, *, app_name: str, user_id: str, state: dict[str, Any] | None = None,
                             session_id: str | None = None) -> Session:
        raise ServiceUnavailableError(_MISSING)

    async def get_session(self, *, app_name: str, user_id: str, session_id: str,
                          config: GetSessionConfig | None = None) -> Session | None:
        raise ServiceUnavailableError(_MISSING)

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        raise ServiceUnavailableError(_MISSING)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        raise ServiceUnavailableError(_MISSING)
