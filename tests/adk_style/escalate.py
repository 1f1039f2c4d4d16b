from google.adk.agents import LlmAgent, LoopAgent
from google.adk.tools.tool_context import ToolContext


def check_done(tool_context: ToolContext) -> dict:
    """Count an attempt, and stop the loop at the second."""
    attempts = tool_context.state.get("attempts", 0) + 1
    tool_context.state["attempts"] = attempts
    if attempts >= 2:
        tool_context.actions.escalate = True
    return {"attempts": attempts}


worker = LlmAgent(model="gemini-2.0-flash", name="worker", instruction="Call check_done each time.",
                  tools=[check_done])
root_agent = LoopAgent(name="retry", sub_agents=[worker], max_iterations=4)

TURNS = ["go"]
REPLIES = [{"call": "check_done", "args": {}}, "Not yet.", {"call": "check_done", "args": {}}, "Done now."]
