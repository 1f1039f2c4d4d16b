from google.adk import Agent
from google.adk.tools.tool_context import ToolContext


def get_price(item: str, tool_context: ToolContext) -> dict:
    """The price of an item.

    Args:
      item: The item.
    """
    prices = {"apple": 1.0, "pear": 1.5}
    tool_context.state[f"price_{item}"] = prices.get(item)
    return {"item": item, "price": prices.get(item)}


root_agent = Agent(model="gemini-2.0-flash", name="shop", instruction="Look prices up, several at once.",
                   tools=[get_price])

TURNS = ["Prices of apple and pear?"]
REPLIES = [[{"call": "get_price", "args": {"item": "apple"}}, {"call": "get_price", "args": {"item": "pear"}}],
           "Apple 1.0, pear 1.5."]
