"""Agent definitions: LlmAgent and the workflow agents; any object with name,
description, sub_agents and run(ctx) is an agent too (structural typing:
:class:`AgentLike`). ``Agent`` and ``BaseAgent`` are google-adk's names for
``LlmAgent`` and ``AgentBase``; ``Context``, ``InvocationContext``, ``LiveRequest``,
``LiveRequestQueue`` and ``RunConfig`` are here as in google-adk's ``agents``."""

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

__all__ = ["Agent", "AgentBase", "AgentLike", "BaseAgent", "Context", "InvocationContext", "LiveRequest",
           "LiveRequestQueue", "LlmAgent", "LoopAgent", "ParallelAgent", "RunConfig", "SequentialAgent"]
