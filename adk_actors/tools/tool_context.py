"""google-adk's import path of :class:`ToolContext`."""

from ._base import ToolContext

__all__ = ["ToolContext"]
