"""The tool entries of an agent file as data (google-adk's ``tool_configs`` models).
They live with the agent configs, which hold them; :mod:`adk_actors.tools.tool_configs`
is their public path, as in google-adk."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["BaseToolConfig", "ToolArgsConfig", "ToolConfig"]


class BaseToolConfig(BaseModel):
    """The base of a tool's own config model (an unknown key is refused)."""

    model_config = ConfigDict(extra="forbid")


class ToolArgsConfig(BaseModel):
    """A tool entry's ``args``: free keys, kept as given (``model_dump()`` gives them)."""

    model_config = ConfigDict(extra="allow")


class ToolConfig(BaseModel):
    """One entry of ``tools``: ``name`` is a built-in tool's name (``load_memory``,
    ``AgentTool``) or the dotted name of a tool, function or toolset; ``args`` what the
    named tool is made with (only ``AgentTool`` takes them here)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    args: ToolArgsConfig | None = None
