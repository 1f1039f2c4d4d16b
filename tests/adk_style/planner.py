from google.adk import Agent
from google.adk.planners import BuiltInPlanner
from google.genai import types


def multiply(a: float, b: float) -> float:
    """Multiply two numbers.

    Args:
      a: The first number.
      b: The second number.
    """
    return a * b


root_agent = Agent(
    model="gemini-2.5-flash",
    name="thinker",
    instruction="Think, then multiply with the tool.",
    tools=[multiply],
    planner=BuiltInPlanner(thinking_config=types.ThinkingConfig(include_thoughts=False, thinking_budget=512)),
)

TURNS = ["What is 6 times 7?"]
REPLIES = [{"call": "multiply", "args": {"a": 6, "b": 7}}, "42."]
