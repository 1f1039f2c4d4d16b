"""google-adk's import path of ``BaseTool``: here the tool protocol."""

from ._base import Tool

BaseTool = Tool

__all__ = ["BaseTool"]
