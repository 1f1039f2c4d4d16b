"""Tools: the protocol, FunctionTool, toolsets and the built-ins."""

from ._base import Tool, ToolContext, Toolset
from ._builtins import (
    AgentTool,
    PreloadMemoryTool,
    exit_loop,
    load_artifacts,
    load_memory,
    preload_memory,
)
from ._function import FunctionTool, LongRunningFunctionTool, ToolArgumentError, idempotent
from .example_tool import ExampleTool

__all__ = [
    "AgentTool",
    "ExampleTool",
    "FunctionTool",
    "LongRunningFunctionTool",
    "PreloadMemoryTool",
    "Tool",
    "ToolArgumentError",
    "ToolContext",
    "Toolset",
    "exit_loop",
    "idempotent",
    "load_artifacts",
    "load_memory",
    "preload_memory",
]
