from google.adk.agents import LlmAgent, LoopAgent
from google.adk.tools import exit_loop
from google.adk.tools.tool_context import ToolContext


def add_line(line: str, tool_context: ToolContext) -> dict:
    """Add a line to the draft.

    Args:
      line: The line to add.
    """
    lines = [*tool_context.state.get("lines", []), line]
    tool_context.state["lines"] = lines
    return {"count": len(lines)}


drafter = LlmAgent(model="gemini-2.0-flash", name="drafter",
                   instruction="Add a line; when there are two lines, exit the loop.",
                   tools=[add_line, exit_loop])

root_agent = LoopAgent(name="refine", sub_agents=[drafter], max_iterations=5)

TURNS = ["write two lines"]
REPLIES = [{"call": "add_line", "args": {"line": "first"}}, "One line so far.",
           {"call": "add_line", "args": {"line": "second"}}, {"call": "exit_loop", "args": {}}]
