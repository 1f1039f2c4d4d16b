import random

from google.adk import Agent
from google.adk.tools.tool_context import ToolContext
from google.genai import types


def roll_die(sides: int, tool_context: ToolContext) -> int:
    """Roll a die and return the rolled result.

    Args:
      sides: The integer number of sides the die has.
    """
    result = random.Random(sides).randint(1, sides)
    if "rolls" not in tool_context.state:
        tool_context.state["rolls"] = []
    tool_context.state["rolls"] = tool_context.state["rolls"] + [result]
    return result


async def check_prime(nums: list[int]) -> str:
    """Check which of the given numbers are prime.

    Args:
      nums: The numbers to check.
    """
    primes = [n for n in nums if n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))]
    return f"{', '.join(map(str, primes))} are prime numbers." if primes else "No prime numbers found."


root_agent = Agent(
    model="gemini-2.0-flash",
    name="dice_agent",
    description="Rolls dice and checks primes.",
    instruction="Roll dice when asked, then check whether the result is prime.",
    tools=[roll_die, check_prime],
    generate_content_config=types.GenerateContentConfig(
        safety_settings=[types.SafetySetting(category=types.HarmCategory.HARM_CATEGORY_DANGEROUS_CONTENT,
                                             threshold=types.HarmBlockThreshold.OFF)]),
)

TURNS = ["Roll a 6-sided die and tell me if it is prime.", "Roll a 20-sided die."]
REPLIES = [{"call": "roll_die", "args": {"sides": 6}}, {"call": "check_prime", "args": {"nums": [4]}},
           "You rolled 4; it is not prime.", {"call": "roll_die", "args": {"sides": 20}}, "You rolled a 20-sider."]
