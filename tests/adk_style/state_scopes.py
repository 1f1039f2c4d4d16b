from google.adk import Agent
from google.adk.tools.tool_context import ToolContext


def set_preferences(theme: str, tool_context: ToolContext) -> dict:
    """Save the user's theme.

    Args:
      theme: light or dark.
    """
    tool_context.state["user:theme"] = theme
    tool_context.state["app:last_theme_change"] = theme
    tool_context.state["temp:scratch"] = "not kept"
    tool_context.state["changes"] = tool_context.state.get("changes", 0) + 1
    return {"theme": theme, "scratch_seen": tool_context.state.get("temp:scratch")}


root_agent = Agent(model="gemini-2.0-flash", name="prefs", instruction="Save preferences.",
                   tools=[set_preferences])

TURNS = ["Use the dark theme", "Now light"]
REPLIES = [{"call": "set_preferences", "args": {"theme": "dark"}}, "Dark it is.",
           {"call": "set_preferences", "args": {"theme": "light"}}, "Light it is."]
