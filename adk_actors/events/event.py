"""google-adk's import path of ``Event`` (and of ``NodeInfo``, a workflow graph's node
on an event)."""

from .._types import Event, NodeInfo

__all__ = ["Event", "NodeInfo"]
