"""google-adk's ``VertexAiSearchTool``: Gemini searches a Vertex AI Search data store
or engine to ground its answer (Gemini's own retrieval; nothing runs here).

Made with exactly one of ``data_store_id`` and ``search_engine_id`` (else a
ValueError); ``data_store_specs`` (which data stores of the engine to search, each
with its own filter) only with ``search_engine_id`` (else a ValueError); ``filter``
and ``max_results`` narrow the search. ``name`` and ``description`` only label the
tool here: the model is not told of it as a function.

Before each model call of its agent, in order: the request's model must be Gemini's
(or the check disabled by ``ADK_DISABLE_GEMINI_MODEL_ID_CHECK``), else a ValueError
naming the model ends the run, as in google-adk; the search settings are built by
:meth:`VertexAiSearchTool._build_vertex_ai_search_config` (a subclass may override it
to set, say, a filter from the session's state); they are added to the request's
Gemini tools as ``{"retrieval": {"vertex_ai_search": {...}}}``, the JSON google-genai
sends. Only Gemini on Vertex AI takes it: the Gemini API connector refuses such a
request (an InvalidRequestError) before sending it, where google-genai refuses it too.

Gemini before 3 does not take the search next to function declarations; as for
``google_search``, an agent with this tool has no transfer targets on such a model
when they would all be its parent or peers, and sub-agents make it an
AgentDefinitionError (``adk_actors.compiler``). With ``bypass_multi_tools_limit``, in
an agent with other tools google-adk calls Discovery Engine's search API as a
function instead (``DiscoveryEngineSearchTool``), which needs Google Cloud's client:
here that is refused with a :class:`~adk_actors.errors.ServiceUnavailableError`
when the agent's request is compiled.
"""

from __future__ import annotations

from typing import Any

from .._model_names import gemini_check_disabled, is_gemini_model
from ._base import ToolContext
from ._classes import BaseTool
from ._gemini_builtins import GeminiBuiltInTool
from ._gemini_wire_values import snake_json
from .discovery_engine_search_tool import DiscoveryEngineSearchTool

__all__ = ["VertexAiSearchTool"]


class VertexAiSearchTool(GeminiBuiltInTool):
    """Gemini's Vertex AI Search grounding (see the module).

    ``data_store_id``: ``projects/{project}/locations/{location}/collections/
    {collection}/dataStores/{dataStore}``; ``search_engine_id``: the same path ending
    ``engines/{engine}``; ``data_store_specs``: google.genai's
    ``VertexAISearchDataStoreSpec`` objects or mappings (``data_store``, ``filter``).
    """

    label = "Vertex AI Search"
    builtin_search = True

    def __init__(self, *, data_store_id: str | None = None, data_store_specs: list[Any] | None = None,
                 search_engine_id: str | None = None, filter: str | None = None,
                 max_results: int | None = None, bypass_multi_tools_limit: bool = False,
                 name: str | None = None, description: str | None = None) -> None:
        """Keep the settings, in order: a ValueError when neither or both of
        ``data_store_id`` and ``search_engine_id`` are given, then when
        ``data_store_specs`` comes without ``search_engine_id``."""
        super().__init__(name=name or "vertex_ai_search", description=description or "vertex_ai_search")
        if (data_store_id is None) == (search_engine_id is None):
            raise ValueError("VertexAiSearchTool searches one place: give data_store_id or search_engine_id, "
                             "not both and not neither")
        if data_store_specs is not None and search_engine_id is None:
            raise ValueError("VertexAiSearchTool: data_store_specs pick data stores of a search engine, so they "
                             "need search_engine_id")
        self._custom_name = name
        self._custom_description = description
        self.data_store_id = data_store_id
        self.data_store_specs = data_store_specs
        self.search_engine_id = search_engine_id
        self.filter = filter
        self.max_results = max_results
        self.bypass_multi_tools_limit = bypass_multi_tools_limit

    def _to_discovery_engine_search_tool(self) -> DiscoveryEngineSearchTool:
        """google-adk's stand-in for this tool in an agent with other tools: Discovery
        Engine's search as a function. Making it raises ServiceUnavailableError here."""
        return DiscoveryEngineSearchTool(
            data_store_id=self.data_store_id, data_store_specs=self.data_store_specs,
            search_engine_id=self.search_engine_id, filter=self.filter, max_results=self.max_results,
            name=self._custom_name, description=self._custom_description)

    def in_multi_tool_agent(self, model: Any) -> BaseTool:
        """What stands for this tool in an agent with other tools or transfer targets:
        itself, unless ``bypass_multi_tools_limit`` is set, when google-adk's
        Discovery Engine function would (refused here, see the module)."""
        if not self.bypass_multi_tools_limit:
            return self
        return self._to_discovery_engine_search_tool()

    def _build_vertex_ai_search_config(self, readonly_context: Any) -> Any:
        """The search settings of one request (``readonly_context``: the tool context
        of the model call): by default the tool's own, as a mapping of google-genai's
        ``VertexAISearch`` fields (``datastore``, ``data_store_specs``, ``engine``,
        ``filter``, ``max_results``). An override may return google.genai's
        ``types.VertexAISearch`` or such a mapping."""
        return {"datastore": self.data_store_id, "data_store_specs": self.data_store_specs,
                "engine": self.search_engine_id, "filter": self.filter, "max_results": self.max_results}

    async def process_llm_request(self, *, tool_context: ToolContext, llm_request: Any) -> None:
        """Refuse a model that is not Gemini's (a ValueError naming it, unless the check
        is disabled), then add ``{"retrieval": {"vertex_ai_search": settings}}`` to the
        request's Gemini tools, the settings from :meth:`_build_vertex_ai_search_config`
        as google-genai sends them (empty fields left out)."""
        if not (is_gemini_model(llm_request.model) or gemini_check_disabled()):
            raise ValueError(f"{self.label} runs inside Gemini; model {llm_request.model!r} does not have it")
        settings = snake_json(self._build_vertex_ai_search_config(tool_context))
        llm_request.builtin_tools.append({"retrieval": {"vertex_ai_search": settings}})
