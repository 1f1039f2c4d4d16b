from google.adk import Agent
from google.adk.agents.callback_context import CallbackContext
from google.genai import types


def count_visits(callback_context: CallbackContext):
    callback_context.state["visits"] = callback_context.state.get("visits", 0) + 1


def note_agent(callback_context: CallbackContext):
    callback_context.state["last_agent"] = callback_context.agent_name


async def sign_off(callback_context: CallbackContext):
    if callback_context.state.get("visits", 0) >= 2:
        return types.ModelContent(parts=[types.Part(text="(stopped) that is all for today")])
    return None


root_agent = Agent(
    model="gemini-2.0-flash",
    name="greeter",
    instruction="Greet the user.",
    before_agent_callback=[count_visits, note_agent],
    after_agent_callback=sign_off,
)

TURNS = ["hello", "hello again"]
REPLIES = ["Hi there!", "Hi, welcome back!"]
