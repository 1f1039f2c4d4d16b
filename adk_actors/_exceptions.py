"""Every error adk_actors raises, in one shallow hierarchy."""

from __future__ import annotations

__all__ = ["AdkError", "AgentDefinitionError", "CompileError"]


class AdkError(Exception):
    """Base class of every adk_actors error."""


class AgentDefinitionError(AdkError, ValueError):
    """An agent definition is invalid (raised when it is constructed, not at the first request)."""


class CompileError(AdkError):
    """A request could not be compiled from the definition and context."""
