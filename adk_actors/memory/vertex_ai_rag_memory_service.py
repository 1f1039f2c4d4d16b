"""google-adk's ``VertexAiRagMemoryService`` path. Its memories live in a Vertex AI
RAG corpus, which this project does not reach: making one raises
:class:`~adk_actors.errors.ServiceUnavailableError` (a ``NotImplementedError``)."""

from __future__ import annotations

from ..errors._unavailable import ServiceUnavailableError, unavailable

__all__ = ["VertexAiRagMemoryService"]


class VertexAiRagMemoryService:
    """Refused when made (see the module); its arguments are google-adk's."""

    def __init__(self, rag_corpus: str | None = None, similarity_top_k: int | None = None,
                 vector_distance_threshold: float = 10, project: str | None = None,
                 location: str | None = None) -> None:
        raise ServiceUnavailableError(unavailable(
            "VertexAiRagMemoryService", "a Vertex AI RAG corpus (a Google Cloud project)",
            "InMemoryMemoryService, or a BaseMemoryService subclass of your own"))
