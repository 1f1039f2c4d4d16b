"""Gemini's own tools, with google-adk's names: ``google_search``, ``url_context``,
``google_maps_grounding``, ``enterprise_web_search``.

The model runs them itself: none is declared as a function and none runs here.
Before each model call of an agent that has one, its ``process_llm_request`` adds
Gemini's entry for it (``{"googleSearch": {}}``, ``{"urlContext": {}}``,
``{"googleMaps": {}}``, ``{"enterpriseWebSearch": {}}``) to the request's
``builtin_tools``, which the Gemini connector sends in ``tools``; for a model that is
not Gemini's it raises ValueError instead (the run ends with it, as in google-adk).
What the model found comes back as the answer event's ``grounding_metadata``.

Gemini before 3 refuses a search tool in a request that also declares functions; the
request compiler applies google-adk's rules for that: no ``transfer_to_agent`` next to
such a tool (``adk_actors.compiler``'s transfer targets), and a
``GoogleSearchTool(bypass_multi_tools_limit=True)`` in an agent with other tools or
transfer targets replaced by a :class:`GoogleSearchAgentTool`: an agent that only
searches, called as a function, whose answer's grounding comes back on the caller's
next answer.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .._model_names import gemini_check_disabled, is_gemini_model
from ..agents._llm_agent import LlmAgent
from ._agent_tool import AgentTool
from ._base import ToolContext
from ._classes import BaseTool

__all__ = [
    "EnterpriseWebSearchTool",
    "GeminiBuiltInTool",
    "GoogleMapsGroundingTool",
    "GoogleSearchAgentTool",
    "GoogleSearchTool",
    "UrlContextTool",
    "create_google_search_agent",
    "enterprise_web_search_tool",
    "google_maps_grounding",
    "google_search",
    "url_context",
]


class GeminiBuiltInTool(BaseTool):
    """One of Gemini's own tools: ``entry`` is its item of Gemini's ``tools`` list,
    ``label`` how an error names it. Not declared to the model as a function."""

    entry: ClassVar[dict[str, Any]] = {}
    label = ""
    #: a search tool Gemini before 3 refuses next to function declarations
    builtin_search = False

    async def process_llm_request(self, *, tool_context: ToolContext, llm_request: Any) -> None:
        """Add :attr:`entry` to ``llm_request.builtin_tools`` when the request's model is
        a Gemini model (or the check is disabled); otherwise raise ValueError naming
        the model."""
        if not (is_gemini_model(llm_request.model) or gemini_check_disabled()):
            raise ValueError(f"{self.label} is one of Gemini's own tools; model {llm_request.model!r} "
                             f"does not have it")
        llm_request.builtin_tools.append(dict(self.entry))


class GoogleSearchTool(GeminiBuiltInTool):
    """Google Search, run by the model to ground its answer.

    ``bypass_multi_tools_limit``: in an agent with other tools (or agents to transfer
    to), this tool is replaced by a :class:`GoogleSearchAgentTool` (an agent that only
    searches), so that Gemini before 3 takes the request. ``model``: the model the
    request is sent to instead of the agent's.
    """

    entry: ClassVar[dict[str, Any]] = {"googleSearch": {}}
    label = "Google Search"
    builtin_search = True

    def __init__(self, *, bypass_multi_tools_limit: bool = False, model: str | None = None) -> None:
        super().__init__(name="google_search", description="google_search")
        self.bypass_multi_tools_limit = bypass_multi_tools_limit
        self.model = model
        self._substitutes: dict[Any, GoogleSearchAgentTool] = {}

    def in_multi_tool_agent(self, model: Any) -> BaseTool:
        """What stands for this tool in an agent with other tools or transfer targets
        (whose model is ``model``): with ``bypass_multi_tools_limit``, a
        :class:`GoogleSearchAgentTool` on ``model`` (one per model, kept); else itself."""
        if not self.bypass_multi_tools_limit:
            return self
        key = model if isinstance(model, str) else id(model)
        if key not in self._substitutes:
            self._substitutes[key] = GoogleSearchAgentTool(create_google_search_agent(model))
        return self._substitutes[key]

    async def process_llm_request(self, *, tool_context: ToolContext, llm_request: Any) -> None:
        """Set the request's model to :attr:`model` when one is given, then as
        :meth:`GeminiBuiltInTool.process_llm_request`."""
        if self.model is not None:
            llm_request.model = self.model
        await super().process_llm_request(tool_context=tool_context, llm_request=llm_request)


class UrlContextTool(GeminiBuiltInTool):
    """The model reads the URLs in the conversation to shape its answer (Gemini 2+)."""

    entry: ClassVar[dict[str, Any]] = {"urlContext": {}}
    label = "URL context"

    def __init__(self) -> None:
        super().__init__(name="url_context", description="url_context")


class GoogleMapsGroundingTool(GeminiBuiltInTool):
    """Google Maps grounding (Gemini on Vertex AI only: the Gemini API refuses it)."""

    entry: ClassVar[dict[str, Any]] = {"googleMaps": {}}
    label = "Google Maps grounding"

    def __init__(self) -> None:
        super().__init__(name="google_maps", description="google_maps")


class EnterpriseWebSearchTool(GeminiBuiltInTool):
    """Web grounding for enterprise compliance (Vertex AI); not Vertex AI Search."""

    entry: ClassVar[dict[str, Any]] = {"enterpriseWebSearch": {}}
    label = "Enterprise web search"
    builtin_search = True

    def __init__(self) -> None:
        super().__init__(name="enterprise_web_search", description="enterprise_web_search")


google_search = GoogleSearchTool()
url_context = UrlContextTool()
google_maps_grounding = GoogleMapsGroundingTool()
enterprise_web_search_tool = EnterpriseWebSearchTool()


_SEARCH_AGENT_INSTRUCTION = (
    "You search Google for the question you are given and answer it from what you find, "
    "using the search built into you. Call no functions.")


def create_google_search_agent(model: Any) -> LlmAgent:
    """An agent on ``model`` whose only tool is ``google_search``, named
    ``google_search_agent`` (google-adk's)."""
    return LlmAgent(name="google_search_agent", model=model,
                    description="An agent that answers a query with Google Search grounding.",
                    instruction=_SEARCH_AGENT_INSTRUCTION, tools=[google_search])


class GoogleSearchAgentTool(AgentTool):
    """``agent`` (one that only searches, :func:`create_google_search_agent`) as a
    function tool, for agents whose model cannot take ``google_search`` next to
    their other tools. Its answer's grounding is propagated: the caller's next answer
    carries it as its ``grounding_metadata``."""

    def __init__(self, agent: Any) -> None:
        super().__init__(agent=agent, propagate_grounding_metadata=True)
