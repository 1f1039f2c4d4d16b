"""google-adk's ``google.adk.tools.tool_configs``: the models of an agent file's
``tools`` entries (:class:`ToolConfig`: a name and optional ``args``;
:class:`ToolArgsConfig`: free keys; :class:`BaseToolConfig`: the base of a tool's own
config, unknown keys refused). Defined beside the agent configs that hold them."""

from ..agents._tool_configs import BaseToolConfig, ToolArgsConfig, ToolConfig

__all__ = ["BaseToolConfig", "ToolArgsConfig", "ToolConfig"]
