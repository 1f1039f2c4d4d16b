import random

from google.adk.agents import Agent
from google.adk.examples.example import Example
from google.adk.tools.example_tool import ExampleTool
from google.genai import types


def roll_die(sides: int) -> int:
    """Roll a die with the given number of sides."""
    return random.randint(1, sides)


examples = ExampleTool(examples=[
    Example(
        input=types.UserContent(parts=[types.Part(text="Roll a six-sided die.")]),
        output=[types.ModelContent(parts=[types.Part(function_call=types.FunctionCall(name="roll_die",
                                                                                     args={"sides": 6}))]),
                types.ModelContent(parts=[types.Part(text="You rolled a 4.")])],
    ),
    Example(
        input=types.UserContent(parts=[types.Part(text="Flip a coin.")]),
        output=[types.ModelContent(parts=[types.Part(text="I only roll dice.")])],
    ),
])

root_agent = Agent(
    model="gemini-2.0-flash",
    name="dice_with_examples",
    instruction="Roll dice when asked.",
    tools=[roll_die, examples],
)

TURNS = ["Roll a die for me", ""]
REPLIES = [
    [{"echo": "instruction", "has": "EXAMPLE 2:\nBegin example\n[user]\nFlip a coin.\n[model]\nI only roll dice."},
     {"echo": "instruction", "has": "```tool_code\nroll_die(sides=6)\n```"},
     {"echo": "instruction", "has": "The following are examples of user queries"}],
    {"echo": "instruction", "has": "EXAMPLE 1:"},
]
