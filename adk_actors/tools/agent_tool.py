"""google-adk's import path of ``AgentTool`` and ``AgentToolConfig``.

:class:`AgentToolConfig` is the model of an ``AgentTool`` entry's ``args`` in an agent
file (google-adk's fields and defaults: ``agent``, an ``AgentRefConfig``, exactly one of
``config_path`` or ``code``; ``skip_summarization`` False; ``include_plugins`` True; an
unknown key refused, as by every :class:`BaseToolConfig`). It takes its fields from the
model the agent-file loader validates those ``args`` with, so a file that loads there
validates here the same way and the other way round.
"""

from ..agents._config_loader import _AgentToolArgs
from ._agent_tool import AgentTool
from .tool_configs import BaseToolConfig

__all__ = ["AgentTool", "AgentToolConfig"]


class AgentToolConfig(BaseToolConfig, _AgentToolArgs):
    """The config of an ``AgentTool`` (google-adk's): the agent it wraps, whether its
    output ends the caller's turn, and whether the caller's plugins run in it."""
