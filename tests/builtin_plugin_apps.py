"""An app with google-adk's built-in plugins, that a host's actor processes import by
path (tests/test_builtin_plugins.py): a scripted model that shows what it was sent."""

from __future__ import annotations

from typing import Any

from adk_actors import LlmAgent, LlmRequest
from adk_actors.apps import App
from adk_actors.models import ScriptedModel, call
from adk_actors.plugins import ReflectAndRetryToolPlugin
from adk_actors.plugins.context_filter_plugin import ContextFilterPlugin
from adk_actors.plugins.global_instruction_plugin import GlobalInstructionPlugin
from adk_actors.plugins.save_files_as_artifacts_plugin import SaveFilesAsArtifactsPlugin


def get_price(symbol: str) -> dict[str, Any]:
    """The last price of a stock, by its ticker symbol in capitals."""
    if symbol != symbol.upper():
        raise ValueError(f"unknown symbol {symbol!r}")
    return {"symbol": symbol, "price": 187.5}


def _answer(request: LlmRequest) -> Any:
    """Asks for a price in lower case, corrects it after the plugin's guidance, then
    tells what it saw: the start of its instruction, the user's last words, how many
    contents it was sent."""
    last = request.contents[-1]
    response = last.parts[0].function_response
    if response is not None:
        if response.response.get("response_type") == "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN":
            return [call("get_price", symbol="GOOG")]
        return f"price {response.response['price']}"
    if last.text == "price":
        return [call("get_price", symbol="goog")]
    return (f"instruction starts {request.system_instruction.split(chr(10))[0]!r}; "
            f"you said {' | '.join(p.text or '' for p in last.parts)!r}; contents {len(request.contents)}")


app = App(name="builtins", root_agent=LlmAgent(name="builtins", model=ScriptedModel(fallback=_answer),
                                               instruction="Answer questions.", tools=[get_price]),
          plugins=[ReflectAndRetryToolPlugin(max_retries=2), GlobalInstructionPlugin("House rules for {user?}."),
                   SaveFilesAsArtifactsPlugin(), ContextFilterPlugin(num_invocations_to_keep=2)])
