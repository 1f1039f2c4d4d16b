from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models import LlmResponse
from google.genai import types


def shout(callback_context: CallbackContext, llm_response: LlmResponse):
    if not llm_response.content or not llm_response.content.parts:
        return None
    text = llm_response.content.parts[0].text
    if not text:
        return None
    callback_context.state["rewrites"] = callback_context.state.get("rewrites", 0) + 1
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text.upper())]))


root_agent = LlmAgent(model="gemini-2.0-flash", name="shouter", instruction="Answer briefly.",
                      after_model_callback=shout)

TURNS = ["say hi", "say bye"]
REPLIES = ["hi there", "bye now"]
