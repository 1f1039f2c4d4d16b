from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.tools.tool_context import ToolContext


async def remember(callback_context: CallbackContext) -> None:
    await callback_context.add_session_to_memory()


async def recall(query: str, tool_context: ToolContext) -> dict:
    """Look up what the user said before.

    Args:
        query: what to look for.
    """
    response = await tool_context.search_memory(query)
    found = [memory.content.parts[0].text for memory in response.memories]
    tool_context.state["recalled"] = len(found)
    return {"found": found, "authors": [memory.author for memory in response.memories]}


root_agent = LlmAgent(
    model="gemini-2.0-flash",
    name="rememberer",
    instruction="Remember what the user tells you.",
    tools=[recall],
    after_agent_callback=remember,
)

TURNS = ["My favourite colour is teal", "Which colour do I like?"]
REPLIES = ["Noted.", {"call": "recall", "args": {"query": "colour"}}, "Teal."]
