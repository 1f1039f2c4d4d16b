from google.adk import Agent
from google.adk.tools import ToolContext


def remember_name(name: str, tool_context: ToolContext) -> dict:
    """Remember the user's name.

    Args:
      name: The user's name.
    """
    tool_context.state["user:name"] = name
    return {"status": "remembered"}


root_agent = Agent(
    model="gemini-2.0-flash",
    name="host",
    instruction="You talk to {user:name?}. Use remember_name when the user says their name.",
    tools=[remember_name],
    output_key="last_reply",
)

TURNS = ["I am Ada.", "Who am I?"]
REPLIES = [{"call": "remember_name", "args": {"name": "Ada"}}, "Nice to meet you, Ada.", "You are Ada."]
