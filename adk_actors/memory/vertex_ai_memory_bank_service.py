"""google-adk's ``VertexAiMemoryBankService`` path. Its memories live in Vertex AI
Agent Engine's Memory Bank, which this project does not reach: making one raises
:class:`~adk_actors.errors.ServiceUnavailableError` (a ``NotImplementedError``)."""

from __future__ import annotations

from typing import Any

from ..errors._unavailable import ServiceUnavailableError, unavailable

__all__ = ["VertexAiMemoryBankService"]


class VertexAiMemoryBankService:
    """Refused when made (see the module); its arguments are google-adk's."""

    def __init__(self, project: str | None = None, location: str | None = None, agent_engine_id: str | None = None,
                 *, express_mode_api_key: str | None = None, credentials: Any = None) -> None:
        raise ServiceUnavailableError(unavailable(
            "VertexAiMemoryBankService", "Vertex AI Agent Engine's Memory Bank (a Google Cloud project)",
            "InMemoryMemoryService, or a BaseMemoryService subclass of your own"))
