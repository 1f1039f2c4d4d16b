"""google-adk's import path of ``SessionContext`` (one ``mcp`` SDK session kept open by
a task of its own): :mod:`adk_actors.mcp`'s, where what differs from google-adk's is
said."""

from ...mcp import SessionContext

__all__ = ["SessionContext"]
