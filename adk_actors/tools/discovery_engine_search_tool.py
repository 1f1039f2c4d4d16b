"""google-adk's ``DiscoveryEngineSearchTool`` path, with its ``SearchResultMode``.

google-adk's tool calls Vertex AI Search's Discovery Engine API (google-cloud-
discoveryengine, with Google Cloud credentials) as a function the model calls. This
project has no client for it: making one raises
:class:`~adk_actors.errors.ServiceUnavailableError` (a ``NotImplementedError``)
naming what to use instead. ``SearchResultMode`` is here as google-adk's values.
"""

from __future__ import annotations

import enum
from typing import Any

from ..errors._unavailable import ServiceUnavailableError, unavailable
from ._function import FunctionTool

__all__ = ["DiscoveryEngineSearchTool", "SearchResultMode"]


class SearchResultMode(enum.Enum):
    """How Discovery Engine answers a search: ``CHUNKS`` (passages of unstructured
    documents) or ``DOCUMENTS`` (whole documents, which structured data stores need)."""

    CHUNKS = "CHUNKS"
    DOCUMENTS = "DOCUMENTS"


class DiscoveryEngineSearchTool(FunctionTool):
    """Refused when made (see the module); its arguments are google-adk's (a
    FunctionTool, as google-adk's is)."""

    def __init__(self, data_store_id: str | None = None, data_store_specs: list[Any] | None = None,
                 search_engine_id: str | None = None, filter: str | None = None,
                 max_results: int | None = None, *, search_result_mode: SearchResultMode | None = None,
                 location: str | None = None, name: str | None = None, description: str | None = None) -> None:
        raise ServiceUnavailableError(unavailable(
            "DiscoveryEngineSearchTool", "Vertex AI Search's Discovery Engine API (google-cloud-discoveryengine "
            "and a Google Cloud project)",
            "VertexAiSearchTool without bypass_multi_tools_limit, on a Gemini model on Vertex AI (Gemini runs the "
            "search itself), or a FunctionTool of your own that calls the API"))
