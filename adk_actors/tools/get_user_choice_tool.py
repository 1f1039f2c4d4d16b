"""google-adk's ``get_user_choice``: a long-running tool by which the model offers the
user options. Its call ends the turn with nothing answered (the call stays open, its
summary skipped); the client answers it with a function response carrying the
user's choice, as for any long-running tool."""

from __future__ import annotations

from ._base import ToolContext
from ._function import LongRunningFunctionTool

__all__ = ["get_user_choice", "get_user_choice_tool"]


def _get_user_choice(options: list[str], tool_context: ToolContext) -> str | None:
    """Show the user these options (short texts) and let them pick one; the choice comes back later."""
    tool_context.actions.skip_summarization = True
    return None


get_user_choice_tool = LongRunningFunctionTool(_get_user_choice, name="get_user_choice")
get_user_choice = get_user_choice_tool
