"""An app with more of google-adk's built-in plugins, that a host's actor processes
import by path (tests/test_builtin_plugins_more.py): a scripted model that shows what
it was sent."""

from __future__ import annotations

from typing import Any

from adk_actors import LlmAgent, LlmRequest, types
from adk_actors.apps import App
from adk_actors.models import LlmResponse, ScriptedModel, call
from adk_actors.plugins import (
    ForceEscalationPlugin,
    ReflectAndRetryModelPlugin,
    ToolCallIntegrityPlugin,
)
from adk_actors.plugins.multimodal_tool_results_plugin import MultimodalToolResultsPlugin


def model_consult(question: str) -> dict[str, Any]:
    """Asks a stronger model for advice."""
    return {"status": "ok", "advice": "look at the chart"}


def chart(region: str) -> list[types.Part]:
    """A region's chart, described."""
    return [types.Part(text=f"chart of {region}: up 12%")]


def _answer(request: LlmRequest) -> Any:
    """First a malformed call (the model plugin answers it), then the advisor (forced
    on the first call), then the chart, then what it saw: the parts after the chart's
    response, the tool config it was given on its first call."""
    last = request.contents[-1]
    names = [p.function_response.name for p in last.parts if p.function_response is not None]
    if last.text == "go":
        forced = request.config.get("tool_config")
        return LlmResponse(finish_reason="MALFORMED_FUNCTION_CALL") if forced else "not forced"
    if names == ["adk_handle_model_error"]:
        return [call("model_consult", question="how?")]
    if names == ["model_consult"]:
        return [call("chart", region="north")]
    return "saw " + " | ".join(p.text for p in last.parts if p.text)


app = App(name="more_builtins", root_agent=LlmAgent(
    name="analyst", model=ScriptedModel(fallback=_answer), instruction="Report.", tools=[model_consult, chart]),
    plugins=[ToolCallIntegrityPlugin(secret_key=b"host-key" * 4), ForceEscalationPlugin(),
             ReflectAndRetryModelPlugin(), MultimodalToolResultsPlugin()])
