"""google-adk's import path of ``LoopAgent``, and of ``LoopAgentState``: a plain data
type naming where a loop is (``current_sub_agent``, ``times_looped``); the engine
keeps a loop's progress in its own steps, so it neither reads nor writes one."""

from ._workflow import LoopAgent
from .base_agent import BaseAgentState

__all__ = ["LoopAgent", "LoopAgentState"]


class LoopAgentState(BaseAgentState):
    """See the module."""

    current_sub_agent: str = ""
    times_looped: int = 0
