"""``Gemma3Ollama``: google-adk's class for Gemma 3 served by Ollama, through
``LiteLlm`` (the ``litellm`` extra) with Gemma's function-calling shim.

A call, in order: on a copy of the request, the history's function calls and results
become text turns and the tools are described in the system instruction, as for
``Gemma`` (``_gemma``; the calls keep the framework's ``adk-`` ids, as google-adk's
litellm path sends them), but the system instruction stays one (litellm sends it to
Ollama as its system prompt); then ``LiteLlm``'s call (litellm's ``ollama`` route,
its ``api_base`` argument or litellm's default ``http://localhost:11434``) behind our
retries and breaker; each complete answer that is one text part holding a call as
JSON becomes that function call. Without litellm, making one raises
``ModuleNotFoundError`` naming the extra (google-adk leaves the class undefined).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from .._types import LlmRequest, LlmResponse
from ._gemma import function_call_from, shimmed
from ._http import HttpModel
from ._lite_llm import LiteLlm, LiteLlmModel

__all__ = ["Gemma3Ollama", "Gemma3OllamaModel"]


class Gemma3OllamaModel(LiteLlmModel):
    """LiteLlm's connector with Gemma's shim around each call."""

    provider = "ollama"

    async def generate(self, request: LlmRequest, *, stream: bool = False) -> AsyncIterator[LlmResponse]:
        async for response in super().generate(shimmed(request, instruction_as_user_turn=False,
                                                         framework_ids=True), stream=stream):
            yield function_call_from(response)


class Gemma3Ollama(LiteLlm):
    """Gemma 3 on Ollama through litellm (see the module). Gemma 4 and later call
    functions natively: use ``LiteLlm(model="ollama_chat/gemma4:...")``."""

    def __init__(self, model: str = "ollama/gemma3:12b", **kwargs: Any) -> None:
        super().__init__(model=model, **kwargs)

    def __repr__(self) -> str:
        return f'{type(self).__name__}(model="{self.model}")'

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"ollama/gemma3.*"]

    def build_connector(self) -> HttpModel:
        return Gemma3OllamaModel(self.model, client=self.llm_client, extra=dict(self._additional_args))
