
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.llm_agent import Agent
from google.genai import types


async def once(callback_context: CallbackContext) -> types.Content | None:
    if "replied" in callback_context.state:
        return types.ModelContent("Sorry, I can only reply once.")
    callback_context.state["replied"] = True
    return None


root_agent = Agent(model="gemini-2.0-flash", name="once", instruction="Answer.", before_agent_callback=once)

TURNS = ["first question", "second question"]
REPLIES = ["First answer."]
