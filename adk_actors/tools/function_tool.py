"""google-adk's import path of ``FunctionTool``."""

from ._function import FunctionTool

__all__ = ["FunctionTool"]
