"""google-adk's ``google.adk.agents.loop_agent_config``: :class:`LoopAgentConfig`, the
schema of a ``LoopAgent`` file: the base fields and ``max_iterations``; an unknown key
is refused. Deprecated as in google-adk: making or validating one warns
``DeprecationWarning`` "LoopAgentConfig is deprecated"."""

from __future__ import annotations

import warnings

from pydantic import ConfigDict
from typing_extensions import deprecated

from .base_agent_config import BaseAgentConfig, deprecation

__all__ = ["LoopAgentConfig"]

with warnings.catch_warnings():  # subclassing the deprecated base here is not the user's doing
    warnings.simplefilter("ignore", DeprecationWarning)

    @deprecated(deprecation("LoopAgentConfig"))
    class LoopAgentConfig(BaseAgentConfig):
        """A LoopAgent's file."""

        model_config = ConfigDict(extra="forbid")

        agent_class: str = "LoopAgent"
        max_iterations: int | None = None
