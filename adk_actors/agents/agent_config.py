"""google-adk's ``google.adk.agents.agent_config``: :class:`AgentConfig`, one agent
file's parsed YAML validated as the config of the class it names.

``AgentConfig.model_validate(data)`` does, in order: :func:`agent_config_discriminator`
picks the schema (``agent_class`` ``LlmAgent`` when absent; ``LoopAgent``,
``ParallelAgent``, ``SequentialAgent`` by name; any other class name, ``Agent``
included, :class:`BaseAgentConfig`, which keeps unknown keys), and the data is
validated into it (``.root``); a mapping that does not fit is pydantic's
ValidationError, anything that is not a mapping a ValueError. Deprecated as in
google-adk 2.13: validating warns ``DeprecationWarning`` for ``AgentConfig`` and for the
chosen config class."""

from __future__ import annotations

import warnings
from typing import Annotated, Any

from pydantic import Discriminator, RootModel, Tag
from typing_extensions import deprecated

from .base_agent_config import BaseAgentConfig, deprecation
from .llm_agent_config import LlmAgentConfig
from .loop_agent_config import LoopAgentConfig
from .parallel_agent_config import ParallelAgentConfig
from .sequential_agent_config import SequentialAgentConfig

__all__ = ["AgentConfig", "ConfigsUnion", "agent_config_discriminator"]

_OWN_SCHEMA = frozenset({"LlmAgent", "LoopAgent", "ParallelAgent", "SequentialAgent"})


def agent_config_discriminator(v: Any) -> str:
    """The tag of the schema for the mapping ``v``: its ``agent_class`` (``LlmAgent``
    when absent) when that is one of the four built-in classes with a schema, else
    ``BaseAgent``. Raises ValueError when ``v`` is not a mapping."""
    if not isinstance(v, dict):
        raise ValueError(f"an agent config is a mapping, not {v!r}")
    agent_class = v.get("agent_class", "LlmAgent")
    return agent_class if agent_class in _OWN_SCHEMA else "BaseAgent"


ConfigsUnion = Annotated[
    Annotated[LlmAgentConfig, Tag("LlmAgent")]
    | Annotated[LoopAgentConfig, Tag("LoopAgent")]
    | Annotated[ParallelAgentConfig, Tag("ParallelAgent")]
    | Annotated[SequentialAgentConfig, Tag("SequentialAgent")]
    | Annotated[BaseAgentConfig, Tag("BaseAgent")],
    Discriminator(agent_config_discriminator),
]



def _root_model() -> type[RootModel[ConfigsUnion]]:
    """``RootModel[ConfigsUnion]``, made inside a function: made at module level,
    pydantic would also bind it in this module under its printed name (not a name
    one can import)."""
    return RootModel[ConfigsUnion]


with warnings.catch_warnings():  # the union's members are not the user's doing
    warnings.simplefilter("ignore", DeprecationWarning)

    @deprecated(deprecation("AgentConfig"))
    class AgentConfig(_root_model()):  # type: ignore[misc]
        """One agent file as the config of its class (``.root``)."""
