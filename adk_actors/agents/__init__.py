"""Agent definitions: LlmAgent and the workflow agents; any object with name,
description, sub_agents and run(ctx) is an agent too (structural typing)."""

from ._base import Agent, AgentBase
from ._llm_agent import LlmAgent
from ._workflow import LoopAgent, ParallelAgent, SequentialAgent

__all__ = ["Agent", "AgentBase", "LlmAgent", "LoopAgent", "ParallelAgent", "SequentialAgent"]
