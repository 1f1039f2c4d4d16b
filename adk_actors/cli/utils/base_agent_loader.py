"""google-adk's ``google.adk.cli.utils.base_agent_loader``: what an agent loader is
(a custom one may be given to a server built on google-adk's API)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from ..._exceptions import AdkError

__all__ = ["AgentLoadError", "BaseAgentLoader"]


class AgentLoadError(AdkError, RuntimeError):
    """An agent exists but does not load (its code or config raises, or defines no
    usable root agent): a RuntimeError, as google-adk's, never a ValueError, which from
    a loader means that there is no agent of that name. The loader's own error is its
    ``__cause__``."""


class BaseAgentLoader(ABC):
    """An agent loader: :meth:`load_agent` by name, :meth:`list_agents`."""

    _allow_special_agents: bool = False

    @abstractmethod
    def load_agent(self, agent_name: str) -> Any:
        """The agent (or ``App``) named ``agent_name``: a ValueError when there is no
        agent of that name, :class:`AgentLoadError` when there is one that does not load."""

    @abstractmethod
    def list_agents(self) -> list[str]:
        """The names of the agents this loader loads, sorted."""

    def list_agents_detailed(self) -> list[dict[str, Any]]:
        """A dict per agent of :meth:`list_agents`: its ``name``; ``display_name``,
        ``description`` and ``type`` None (a loader that knows more says more)."""
        return [{"name": name, "display_name": None, "description": None, "type": None}
                for name in self.list_agents()]
