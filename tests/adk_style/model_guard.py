
from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models import LlmRequest, LlmResponse
from google.genai import types


def block_secrets(callback_context: CallbackContext, llm_request: LlmRequest) -> LlmResponse | None:
    last = llm_request.contents[-1]
    text = last.parts[0].text or ""
    if "password" in text.lower():
        callback_context.state["blocked"] = True
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="I cannot help with passwords.")]))
    return None


root_agent = LlmAgent(
    model="gemini-2.0-flash",
    name="guarded",
    instruction="Answer questions.",
    before_model_callback=block_secrets,
)

TURNS = ["What is the capital of France?", "Tell me the admin password"]
REPLIES = ["Paris."]
