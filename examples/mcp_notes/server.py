"""A small MCP server the example agent uses: notes kept in a JSON file.

``python -m examples.mcp_notes.server FILE`` serves on stdin/stdout (the agent's
McpToolset starts it); its tools ``add_note``, ``list_notes`` and ``find_notes``.
Written with the ``mcp`` SDK's MCPServer, as any third-party server would be.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes", instructions="A notebook: add notes, list them, find them by a word.")
_FILE = Path(sys.argv[1] if len(sys.argv) > 1 else "data/notes.json")


def _notes() -> list[str]:
    return list(json.loads(_FILE.read_text())) if _FILE.exists() else []


@server.tool()
def add_note(text: str) -> int:
    """Add a note; returns how many notes there are now."""
    notes = [*_notes(), text]
    _FILE.parent.mkdir(parents=True, exist_ok=True)
    _FILE.write_text(json.dumps(notes))
    return len(notes)


@server.tool()
def list_notes() -> list[str]:
    """Every note, oldest first."""
    return _notes()


@server.tool()
def find_notes(word: str) -> list[str]:
    """The notes that contain ``word`` (any case)."""
    return [note for note in _notes() if word.lower() in note.lower()]


if __name__ == "__main__":
    server.run("stdio")
