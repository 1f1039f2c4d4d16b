"""Agents given google-adk's model classes, for a host's run workers
(tests/test_google_adk_models.py): the worker imports this module by its path."""

from collections.abc import AsyncGenerator

from adk_actors import types
from adk_actors.agents import LlmAgent
from adk_actors.models import BaseLlm, Gemini, LLMRegistry
from adk_actors.models.llm_request import LlmRequest
from adk_actors.models.llm_response import LlmResponse

#: a Gemini instance that tries once: each failure reaches the host's breaker at once
gemini_agent = LlmAgent(name="gemini_instance", instruction="Answer briefly.",
                        model=Gemini(model="gemini-2.5-flash", retry_options=types.HttpRetryOptions(attempts=1)))


class EchoLlm(BaseLlm):
    """A program's own model class: answers with the user's last words, reversed."""

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"reverse-echo-.*"]

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        said = llm_request.contents[-1].parts[0].text or ""
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=f"{self.model}: {said[::-1]}")]))


LLMRegistry.register(EchoLlm)

#: an agent naming its model by a name only EchoLlm serves: the run worker resolves it
echo_agent = LlmAgent(name="echo_by_name", model="reverse-echo-1", instruction="Echo.")
