"""google-adk's import path of ``McpInstructionProvider`` (an agent's instruction from an
MCP server's prompt; ``google.adk.agents.mcp_instruction_provider``): the class is
:mod:`adk_actors.mcp`'s (which needs the ``mcp`` extra), looked up by name when first
asked for, as the agents package looks up the workflow package: the MCP client sits
above the agents in the layers (``tests/test_layers.py``)."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["McpInstructionProvider"]  # noqa: F822 (given by __getattr__)

#: where the class lives
MCP_PACKAGE = "adk_actors.mcp"


def __getattr__(name: str) -> Any:
    """``McpInstructionProvider``, from :data:`MCP_PACKAGE` (ModuleNotFoundError when the
    ``mcp`` SDK is not installed); any other unknown name is an AttributeError."""
    if name == "McpInstructionProvider":
        return importlib.import_module(MCP_PACKAGE).McpInstructionProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
