"""google-adk's ``VertexAiRagRetrieval``: Vertex AI RAG corpora the model searches.

On a Gemini model (or with ``ADK_DISABLE_GEMINI_MODEL_ID_CHECK`` set), Gemini does
the retrieval itself: before each model call the tool's function declaration is taken
out of the request and ``{"retrieval": {"vertex_rag_store": {...}}}`` goes into its
Gemini tools instead, the JSON google-genai sends (only Gemini on Vertex AI takes it:
the Gemini API connector refuses it with an InvalidRequestError, as google-genai does).

On any other model google-adk calls Vertex AI RAG's ``retrieveContexts`` itself (with
Google Cloud's client and credentials), which this project has no client for: the
request is refused before the model is called, with a
:class:`~adk_actors.errors.ServiceUnavailableError` (a ``NotImplementedError``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from ..._model_names import gemini_check_disabled, is_gemini_model
from ...errors._unavailable import ServiceUnavailableError, unavailable
from .._base import ToolContext
from .._gemini_wire_values import snake_json
from .base_retrieval_tool import BaseRetrievalTool

__all__ = ["RagResourceLike", "VertexAiRagRetrieval"]


class RagResourceLike(Protocol):
    """What a RAG resource is read for: its corpus and, optionally, some of its files
    (google.genai's ``VertexRagStoreRagResource`` and ``vertexai.rag.RagResource`` are such)."""

    rag_corpus: str | None
    rag_file_ids: list[str] | None


class _RagResource(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rag_corpus: str | None = None
    rag_file_ids: list[str] | None = None


class _RagStore(BaseModel):
    """The fields of google.genai's ``VertexRagStore`` the tool sets."""

    model_config = ConfigDict(extra="forbid")

    rag_corpora: list[str] | None = None
    rag_resources: list[_RagResource] | None = None
    similarity_top_k: int | None = None
    vector_distance_threshold: float | None = None


def _rag_resource(resource: Any) -> _RagResource:
    """``resource`` as a RAG resource: a mapping or pydantic object by its fields, any
    other object by its ``rag_corpus`` / ``rag_file_ids`` attributes; a TypeError for
    an object with neither."""
    if isinstance(resource, Mapping) or hasattr(resource, "model_dump"):
        return _RagResource.model_validate(snake_json(resource))
    if not (hasattr(resource, "rag_corpus") or hasattr(resource, "rag_file_ids")):
        raise TypeError(f"a RAG resource names its corpus (rag_corpus) or files (rag_file_ids): a mapping, "
                        f"google.genai's VertexRagStoreRagResource or such an object, not a "
                        f"{type(resource).__name__}")
    return _RagResource(rag_corpus=getattr(resource, "rag_corpus", None),
                        rag_file_ids=getattr(resource, "rag_file_ids", None))


class VertexAiRagRetrieval(BaseRetrievalTool):
    """Retrieval from Vertex AI RAG (see the module): ``rag_corpora`` (corpus resource
    names), ``rag_resources`` (corpora with some of their files), ``similarity_top_k``
    and ``vector_distance_threshold``, as google.genai's ``VertexRagStore`` has them."""

    def __init__(self, *, name: str, description: str, rag_corpora: list[str] | None = None,
                 rag_resources: list[Any] | None = None, similarity_top_k: int | None = None,
                 vector_distance_threshold: float | None = None) -> None:
        """Keep the store's settings; a TypeError for a ``rag_resources`` item that
        is not a RAG resource (see :func:`_rag_resource`)."""
        super().__init__(name=name, description=description)
        self.vertex_rag_store = _RagStore(
            rag_corpora=rag_corpora,
            rag_resources=[_rag_resource(resource) for resource in rag_resources] if rag_resources else None,
            similarity_top_k=similarity_top_k, vector_distance_threshold=vector_distance_threshold)

    async def process_llm_request(self, *, tool_context: ToolContext, llm_request: Any) -> None:
        """On a Gemini model (or the check disabled): drop the tool's own function
        declaration from the request and add the store as Gemini's retrieval entry.
        On any other model: a ServiceUnavailableError (see the module)."""
        if not (is_gemini_model(llm_request.model) or gemini_check_disabled()):
            raise self._unavailable(llm_request.model)
        llm_request.tools[:] = [declared for declared in llm_request.tools if declared.name != self.name]
        store = snake_json(self.vertex_rag_store)
        llm_request.builtin_tools.append({"retrieval": {"vertex_rag_store": store}})

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """A ServiceUnavailableError: answering a call needs Vertex AI RAG's API (see the module)."""
        raise self._unavailable(None)

    def _unavailable(self, model: str | None) -> ServiceUnavailableError:
        on = f" on model {model!r}" if model else ""
        return ServiceUnavailableError(unavailable(
            f"VertexAiRagRetrieval {self.name!r}{on} (a model that is not Gemini's calls Vertex AI RAG's "
            "retrieveContexts as a function)", "Vertex AI RAG's API (a Google Cloud project and its client)",
            "a Gemini model on Vertex AI, which retrieves from the corpora itself, or a LlamaIndexRetrieval "
            "or FunctionTool of your own"))
