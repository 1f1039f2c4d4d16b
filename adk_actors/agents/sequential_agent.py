"""google-adk's import path of ``SequentialAgent``, and of ``SequentialAgentState``: a
plain data type naming the sub-agent a sequence is at (``current_sub_agent``); the
engine keeps a sequence's progress in its own steps, so it neither reads nor writes
one."""

from ._workflow import SequentialAgent
from .base_agent import BaseAgentState

__all__ = ["SequentialAgent", "SequentialAgentState"]


class SequentialAgentState(BaseAgentState):
    """See the module."""

    current_sub_agent: str = ""
