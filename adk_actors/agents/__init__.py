"""Agent definitions: LlmAgent and the workflow agents; any object with name,
description, sub_agents and run(ctx) is an agent too (structural typing:
:class:`AgentLike`). ``Agent`` and ``BaseAgent`` are google-adk's names for
``LlmAgent`` and ``AgentBase``."""

from ._base import AgentBase, AgentLike
from ._llm_agent import LlmAgent
from ._workflow import LoopAgent, ParallelAgent, SequentialAgent

#: google-adk's alias: ``Agent(...)`` is an LlmAgent.
Agent = LlmAgent
#: google-adk's name for the base of every agent class.
BaseAgent = AgentBase

__all__ = ["Agent", "AgentBase", "AgentLike", "BaseAgent", "LlmAgent", "LoopAgent", "ParallelAgent",
           "SequentialAgent"]
