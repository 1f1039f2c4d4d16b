from typing import Any

from google.adk import Agent
from google.adk.tools import ToolContext
from google.adk.tools.long_running_tool import LongRunningFunctionTool
from google.genai import types


def reimburse(purpose: str, amount: float) -> dict:
    """Reimburse the amount to the employee.

    Args:
      purpose: What the money was for.
      amount: How much.
    """
    return {"status": "ok"}


def ask_for_approval(purpose: str, amount: float, tool_context: ToolContext) -> dict[str, Any]:
    """Ask the manager to approve a reimbursement.

    Args:
      purpose: What the money was for.
      amount: How much.
    """
    tool_context.state["pending"] = purpose
    return {"status": "pending", "amount": amount, "ticket_id": "ticket-001"}


root_agent = Agent(
    model="gemini-2.0-flash",
    name="reimbursements",
    instruction="Reimburse under 100 at once; ask for approval above.",
    tools=[reimburse, LongRunningFunctionTool(func=ask_for_approval)],
    generate_content_config=types.GenerateContentConfig(temperature=0.1),
)

TURNS = ["Reimburse 50 for lunch", "Reimburse 500 for a flight"]
REPLIES = [{"call": "reimburse", "args": {"purpose": "lunch", "amount": 50}}, "Done: 50 reimbursed.",
           {"call": "ask_for_approval", "args": {"purpose": "flight", "amount": 500}},
           "Your request is waiting for the manager (ticket-001)."]
