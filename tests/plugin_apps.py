"""An app with google-adk-shaped plugins, that a host's actor processes import by path
(tests/test_google_adk_plugins.py)."""

from __future__ import annotations

from typing import Any

from adk_actors import LlmAgent, LlmRequest
from adk_actors.apps import App
from adk_actors.models import LlmResponse, ScriptedModel
from adk_actors.plugins import BasePlugin
from adk_actors.types import Content, Part


def _echo(request: LlmRequest) -> str:
    return f"echo: {request.contents[-1].text}"


class Tripwire(BasePlugin):
    """Raises on a message that says "boom"; answers one that says "canned" itself."""

    def __init__(self) -> None:
        super().__init__(name="tripwire")

    async def before_model_callback(self, *, callback_context: Any, llm_request: LlmRequest) -> LlmResponse | None:
        text = llm_request.contents[-1].text or ""
        if "boom" in text:
            raise KeyError("tripped")
        if "canned" in text:
            return LlmResponse(content=Content(role="model", parts=[Part(text="a canned answer")]))
        return None


app = App(name="guarded", root_agent=LlmAgent(name="guarded", model=ScriptedModel(fallback=_echo)),
          plugins=[Tripwire()])
