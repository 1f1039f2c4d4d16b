"""How an answer of Gemini's own tools was grounded, in google-genai's names
(``GroundingMetadata``, which google-adk puts on its ``LlmResponse`` and ``Event``).
The parts of a code run the model made itself are ``ExecutableCode`` and
``CodeExecutionResult`` in ``_types``.

Their JSON form is camelCase (``webSearchQueries``, ``groundingChunks``...), as
Gemini sends it and as google-adk's events carry it over HTTP; snake_case is accepted
on input. Fields Gemini adds beyond these are dropped, not refused: a newer answer
still parses.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = [
    "GroundingChunk",
    "GroundingChunkMaps",
    "GroundingChunkRetrievedContext",
    "GroundingChunkWeb",
    "GroundingMetadata",
    "GroundingSupport",
    "RetrievalMetadata",
    "SearchEntryPoint",
    "Segment",
]


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore",
                              ser_json_bytes="base64", val_json_bytes="base64")


class GroundingChunkWeb(_Wire):
    uri: str | None = None
    title: str | None = None
    domain: str | None = None


class GroundingChunkRetrievedContext(_Wire):
    uri: str | None = None
    title: str | None = None
    text: str | None = None
    document_name: str | None = None


class GroundingChunkMaps(_Wire):
    uri: str | None = None
    title: str | None = None
    text: str | None = None
    place_id: str | None = None


class GroundingChunk(_Wire):
    """One source the answer rests on: a web page, a retrieved document or a place."""

    web: GroundingChunkWeb | None = None
    retrieved_context: GroundingChunkRetrievedContext | None = None
    maps: GroundingChunkMaps | None = None


class Segment(_Wire):
    """A piece of the answer's text (indexes in bytes of the part it is in)."""

    start_index: int | None = None
    end_index: int | None = None
    part_index: int | None = None
    text: str | None = None


class GroundingSupport(_Wire):
    """Which chunks (by index in ``grounding_chunks``) support a segment of the answer."""

    segment: Segment | None = None
    grounding_chunk_indices: tuple[int, ...] | None = None
    confidence_scores: tuple[float, ...] | None = None


class SearchEntryPoint(_Wire):
    """The search suggestions Google asks an app to show with a grounded answer."""

    rendered_content: str | None = None
    sdk_blob: bytes | None = None


class RetrievalMetadata(_Wire):
    google_search_dynamic_retrieval_score: float | None = None


class GroundingMetadata(_Wire):
    """How an answer was grounded (Google Search, URL context, Maps, enterprise web
    search): the queries run, the sources found, and which source supports which
    part of the text."""

    web_search_queries: tuple[str, ...] | None = None
    grounding_chunks: tuple[GroundingChunk, ...] | None = None
    grounding_supports: tuple[GroundingSupport, ...] | None = None
    search_entry_point: SearchEntryPoint | None = None
    retrieval_metadata: RetrievalMetadata | None = None
    retrieval_queries: tuple[str, ...] | None = None
    image_search_queries: tuple[str, ...] | None = None
    google_maps_widget_context_token: str | None = None
