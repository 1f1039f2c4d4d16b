from google.adk import Agent
from google.adk.tools.tool_context import ToolContext


def lookup_order(order_id: str, tool_context: ToolContext) -> dict:
    """Look an order up; its record is the answer.

    Args:
      order_id: The order's id.
    """
    tool_context.actions.skip_summarization = True
    return {"order": order_id, "status": "shipped"}


root_agent = Agent(model="gemini-2.0-flash", name="orders", instruction="Look orders up.", tools=[lookup_order])

TURNS = ["Where is order 42?"]
REPLIES = [{"call": "lookup_order", "args": {"order_id": "42"}}]
