from google.adk import Agent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools.tool_context import ToolContext


def mood_instruction(context: ReadonlyContext) -> str:
    return f"Answer in a {context.state.get('mood', 'calm')} tone."


def set_mood(mood: str, tool_context: ToolContext) -> dict:
    """Set the tone of the answers.

    Args:
      mood: The tone.
    """
    tool_context.state["mood"] = mood
    return {"mood": mood}


root_agent = Agent(model="gemini-2.0-flash", name="moody", instruction=mood_instruction, tools=[set_mood])

TURNS = ["Be cheerful from now on.", "How are you?"]
REPLIES = [{"call": "set_mood", "args": {"mood": "cheerful"}}, "Okay!", "Wonderful, thanks!"]
