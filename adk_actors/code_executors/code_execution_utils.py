"""google-adk's module path for the data of a code run."""

from ._utils import CodeExecutionInput, CodeExecutionResult, CodeExecutionUtils, File

__all__ = ["CodeExecutionInput", "CodeExecutionResult", "CodeExecutionUtils", "File"]
