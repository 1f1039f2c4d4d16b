"""google-adk's ``google.adk.agents.sequential_agent_config``: :class:`SequentialAgentConfig`, the
schema of a ``SequentialAgent`` file: the base fields (no fields of its own); an unknown
key is refused. Deprecated as in google-adk: making or validating one warns
``DeprecationWarning`` "SequentialAgentConfig is deprecated"."""

from __future__ import annotations

import warnings

from pydantic import ConfigDict
from typing_extensions import deprecated

from .base_agent_config import BaseAgentConfig, deprecation

__all__ = ["SequentialAgentConfig"]

with warnings.catch_warnings():  # subclassing the deprecated base here is not the user's doing
    warnings.simplefilter("ignore", DeprecationWarning)

    @deprecated(deprecation("SequentialAgentConfig"))
    class SequentialAgentConfig(BaseAgentConfig):
        """A SequentialAgent's file."""

        model_config = ConfigDict(extra="forbid")

        agent_class: str = "SequentialAgent"
