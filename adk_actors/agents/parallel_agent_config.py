"""google-adk's ``google.adk.agents.parallel_agent_config``: :class:`ParallelAgentConfig`, the
schema of a ``ParallelAgent`` file: the base fields (no fields of its own); an unknown
key is refused. Deprecated as in google-adk: making or validating one warns
``DeprecationWarning`` "ParallelAgentConfig is deprecated"."""

from __future__ import annotations

import warnings

from pydantic import ConfigDict
from typing_extensions import deprecated

from .base_agent_config import BaseAgentConfig, deprecation

__all__ = ["ParallelAgentConfig"]

with warnings.catch_warnings():  # subclassing the deprecated base here is not the user's doing
    warnings.simplefilter("ignore", DeprecationWarning)

    @deprecated(deprecation("ParallelAgentConfig"))
    class ParallelAgentConfig(BaseAgentConfig):
        """A ParallelAgent's file."""

        model_config = ConfigDict(extra="forbid")

        agent_class: str = "ParallelAgent"
