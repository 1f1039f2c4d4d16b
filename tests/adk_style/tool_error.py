from typing import Any

from google.adk import Agent
from google.adk.tools.tool_context import ToolContext


def divide(a: float, b: float) -> float:
    """Divide a by b.

    Args:
      a: The dividend.
      b: The divisor.
    """
    return a / b


def on_error(tool, args: dict[str, Any], tool_context: ToolContext, error: Exception) -> dict | None:
    tool_context.state["errors"] = tool_context.state.get("errors", 0) + 1
    return {"error": f"cannot divide: {type(error).__name__}"}


root_agent = Agent(model="gemini-2.0-flash", name="divider", instruction="Divide with the tool.",
                   tools=[divide], on_tool_error_callback=on_error)

TURNS = ["10 / 4", "1 / 0"]
REPLIES = [{"call": "divide", "args": {"a": 10, "b": 4}}, "2.5",
           {"call": "divide", "args": {"a": 1, "b": 0}}, "You cannot divide by zero."]
