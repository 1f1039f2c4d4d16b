"""google-adk's import path of ``BaseAgent``, and of ``BaseAgentState``: the base of
the plain data types that name where a workflow agent is in its run
(``LoopAgentState``, ``SequentialAgentState``); an unknown field is refused."""

from pydantic import BaseModel, ConfigDict

from ._base import AgentBase

BaseAgent = AgentBase

__all__ = ["BaseAgent", "BaseAgentState"]


class BaseAgentState(BaseModel):
    """See the module."""

    model_config = ConfigDict(extra="forbid")
