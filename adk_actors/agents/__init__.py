"""Agent definitions: LlmAgent and the workflow agents; any object with name,
description, sub_agents and run(ctx) is an agent too (structural typing:
:class:`AgentLike`). ``Agent`` and ``BaseAgent`` are google-adk's names for
``LlmAgent`` and ``AgentBase``; ``Context``, ``InvocationContext``, ``LiveRequest``,
``LiveRequestQueue`` and ``RunConfig`` are here as in google-adk's ``agents``.

google-adk's schemas of agent YAML files (``BaseAgentConfig``, ``LlmAgentConfig``,
``LoopAgentConfig``, ``ParallelAgentConfig``, ``SequentialAgentConfig``, from their
``*_agent_config`` modules) are imported on first use, as google-adk's are: they bring
google.genai's types, which importing this package must not. So is
``McpInstructionProvider`` (an agent's instruction from an MCP server's prompt, from
``.mcp_instruction_provider``): it needs the ``mcp`` extra."""

import importlib
from typing import Any

from . import _config_loader  # noqa: F401  (installs the loader BaseAgent.from_config runs)
from ._base import AgentBase, AgentLike
from ._llm_agent import LlmAgent
from ._workflow import LoopAgent, ParallelAgent, SequentialAgent
from .context import Context
from .invocation_context import InvocationContext
from .live_request_queue import LiveRequest, LiveRequestQueue
from .run_config import RunConfig

#: google-adk's alias: ``Agent(...)`` is an LlmAgent.
Agent = LlmAgent
#: google-adk's name for the base of every agent class.
BaseAgent = AgentBase

__all__ = ["Agent", "AgentBase", "AgentLike", "BaseAgent", "BaseAgentConfig", "Context", "InvocationContext",
           "LiveRequest", "LiveRequestQueue", "LlmAgent", "LlmAgentConfig", "LoopAgent", "LoopAgentConfig",
           "McpInstructionProvider",
           "ParallelAgent", "ParallelAgentConfig", "RunConfig", "SequentialAgent", "SequentialAgentConfig"]

_ON_FIRST_USE = {"BaseAgentConfig": ".base_agent_config", "LlmAgentConfig": ".llm_agent_config",
                 "LoopAgentConfig": ".loop_agent_config", "ParallelAgentConfig": ".parallel_agent_config",
                 "SequentialAgentConfig": ".sequential_agent_config",
                 "McpInstructionProvider": ".mcp_instruction_provider"}


def __getattr__(name: str) -> Any:
    """A name in ``_ON_FIRST_USE`` (an agent-file schema, ``McpInstructionProvider``),
    imported from its module when first asked for; any other unknown name is an
    AttributeError."""
    if name in _ON_FIRST_USE:
        return getattr(importlib.import_module(_ON_FIRST_USE[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
