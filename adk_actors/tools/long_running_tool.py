"""google-adk's import path of ``LongRunningFunctionTool``."""

from ._function import LongRunningFunctionTool

__all__ = ["LongRunningFunctionTool"]
