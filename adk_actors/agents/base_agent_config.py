"""google-adk's ``google.adk.agents.base_agent_config``: :class:`BaseAgentConfig`, the
fields every agent file has (``agent_class``, ``name``, ``description``,
``sub_agents``, the agent callbacks), as a pydantic model that keeps unknown keys (a
custom agent class's own fields). google-adk 2.13 deprecates it: making one (or
validating data into one) warns ``DeprecationWarning`` "BaseAgentConfig is
deprecated", as there; so does subclassing it outside this package. Files are loaded
by :func:`adk_actors.agents.config_agent_utils.from_config`. It is ``BaseAgent``'s
``config_type``: a custom agent class names a subclass of it (with its own keys) as
its ``config_type``, and the loader validates the class's file against it and hands
the result to the class's ``_parse_config`` / ``from_config`` hooks, as google-adk does."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from typing_extensions import deprecated

from .common_configs import AgentRefConfig, CodeConfig

__all__ = ["BaseAgentConfig"]


def deprecation(name: str) -> str:
    """The warning text of google-adk 2.13's deprecated agent config class ``name``."""
    return (f"{name} is deprecated (google-adk 2.13) and will be removed: agent files load through "
            "config_agent_utils.from_config, which maps their keys onto the agent class itself")


@deprecated(deprecation("BaseAgentConfig"))
class BaseAgentConfig(BaseModel):
    """What every agent file holds; other keys are kept (``model_extra``)."""

    model_config = ConfigDict(extra="allow")

    agent_class: str = "BaseAgent"
    name: str
    description: str = ""
    sub_agents: list[AgentRefConfig] | None = None
    before_agent_callbacks: list[CodeConfig] | None = None
    after_agent_callbacks: list[CodeConfig] | None = None
