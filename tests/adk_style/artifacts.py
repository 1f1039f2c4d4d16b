from google.adk import Agent
from google.adk.tools.tool_context import ToolContext
from google.genai import types


async def save_note(text: str, tool_context: ToolContext) -> dict:
    """Save a note.

    Args:
      text: The note's text.
    """
    version = await tool_context.save_artifact("note.txt", types.Part(text=text))
    return {"version": version}


async def read_note(tool_context: ToolContext) -> dict:
    """Read the note back, with the names of every saved file."""
    part = await tool_context.load_artifact("note.txt")
    names = await tool_context.list_artifacts()
    return {"text": part.text if part else None, "files": sorted(names)}


root_agent = Agent(model="gemini-2.0-flash", name="notes", instruction="Save and read notes.",
                   tools=[save_note, read_note])

TURNS = ["Note: buy milk", "What did I note?"]
REPLIES = [{"call": "save_note", "args": {"text": "buy milk"}}, "Saved.",
           {"call": "read_note", "args": {}}, "You noted: buy milk."]
