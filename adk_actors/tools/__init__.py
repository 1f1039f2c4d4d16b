"""Tools: the protocol, FunctionTool, toolsets and the built-ins.

``McpToolset`` / ``MCPToolset`` are reached here on first use, as in google-adk: they
need the optional ``mcp`` package, which importing this package must not require.
``ModelConsultTool`` and ``ModelConsultContextConfig`` (``.model_consult``) are reached
on first use too, as google-adk's are, and so is ``AuthToolArguments`` (the auth
tool's arguments, the same class as ``adk_actors.auth.auth_tool.AuthToolArguments``).
"""

import importlib
from typing import Any

from ._agent_tool import AgentTool
from ._base import Tool, ToolContext, Toolset
from ._builtins import (
    PreloadMemoryTool,
    exit_loop,
    load_artifacts,
    load_memory,
    preload_memory,
)
from ._classes import BaseTool, BaseToolset, ToolPredicate
from ._function import FunctionTool, LongRunningFunctionTool, ToolArgumentError, idempotent
from ._gemini_builtins import enterprise_web_search_tool as enterprise_web_search
from ._gemini_builtins import google_maps_grounding, google_search, url_context
from ._request_input_tool import request_input
from .discovery_engine_search_tool import DiscoveryEngineSearchTool, SearchResultMode
from .example_tool import ExampleTool
from .get_user_choice_tool import get_user_choice
from .transfer_to_agent_tool import TransferToAgentTool, transfer_to_agent
from .vertex_ai_search_tool import VertexAiSearchTool

__all__ = [
    "AgentTool",
    "AuthToolArguments",
    "BaseTool",
    "BaseToolset",
    "DiscoveryEngineSearchTool",
    "ExampleTool",
    "FunctionTool",
    "LongRunningFunctionTool",
    "ModelConsultContextConfig",
    "ModelConsultTool",
    "PreloadMemoryTool",
    "SearchResultMode",
    "Tool",
    "ToolArgumentError",
    "ToolContext",
    "ToolPredicate",
    "Toolset",
    "TransferToAgentTool",
    "VertexAiSearchTool",
    "enterprise_web_search",
    "exit_loop",
    "get_user_choice",
    "google_maps_grounding",
    "google_search",
    "idempotent",
    "load_artifacts",
    "load_memory",
    "preload_memory",
    "request_input",
    "transfer_to_agent",
    "url_context",
]

_ON_FIRST_USE = {"AuthToolArguments": "..auth.auth_tool",
                 "McpToolset": ".mcp_tool", "MCPToolset": ".mcp_tool",
                 "ModelConsultTool": ".model_consult", "ModelConsultContextConfig": ".model_consult"}


def __getattr__(name: str) -> Any:
    """``McpToolset`` and ``MCPToolset`` from :mod:`adk_actors.tools.mcp_tool` (an
    ImportError naming ``mcp`` when it is not installed), ``ModelConsultTool`` and
    ``ModelConsultContextConfig`` from :mod:`adk_actors.tools.model_consult`,
    ``AuthToolArguments`` from :mod:`adk_actors.auth.auth_tool`, each
    imported when first asked for; any other unknown name is an AttributeError."""
    if name in _ON_FIRST_USE:
        return getattr(importlib.import_module(_ON_FIRST_USE[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
