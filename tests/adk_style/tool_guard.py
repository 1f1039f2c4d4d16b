from typing import Any

from google.adk import Agent
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext


def get_weather(city: str) -> dict:
    """The weather in a city.

    Args:
      city: The city.
    """
    return {"city": city, "forecast": "sunny"}


def refuse_atlantis(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext) -> dict | None:
    if args.get("city") == "Atlantis":
        tool_context.state["refused"] = tool.name
        return {"error": "Atlantis is not a real city."}
    return None


def stamp(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: dict) -> dict | None:
    if isinstance(tool_response, dict) and "forecast" in tool_response:
        return {**tool_response, "checked_by": "stamp"}
    return None


root_agent = Agent(model="gemini-2.0-flash", name="weather", instruction="Tell the weather.",
                   tools=[get_weather], before_tool_callback=refuse_atlantis, after_tool_callback=stamp)

TURNS = ["Weather in Paris?", "Weather in Atlantis?"]
REPLIES = [{"call": "get_weather", "args": {"city": "Paris"}}, "Sunny in Paris.",
           {"call": "get_weather", "args": {"city": "Atlantis"}}, "Atlantis does not exist."]
