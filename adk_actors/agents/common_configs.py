"""google-adk's ``google.adk.agents.common_configs``: the two references an agent file
makes, as data. :class:`CodeConfig` names Python code by its dotted name (a tool, a
callback, a schema); :class:`AgentRefConfig` names another agent, by the YAML file
that defines it (``config_path``, relative to the referring file) or by the dotted
name of an agent object (``code``). Neither imports or reads anything: the loader
(:mod:`adk_actors.agents.config_agent_utils`) does that. An unknown key is refused."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["AgentRefConfig", "CodeConfig"]


class CodeConfig(BaseModel):
    """A variable, function or class by its dotted name (``package.module.name``); a
    built-in tool by its bare name (``google_search``)."""

    model_config = ConfigDict(extra="forbid")

    name: str


class AgentRefConfig(BaseModel):
    """Another agent: ``config_path`` (its YAML file) or ``code`` (the dotted name of an
    agent object). Validation fails (a ValueError inside pydantic's ValidationError)
    when both or neither is given."""

    model_config = ConfigDict(extra="forbid")

    config_path: str | None = None
    code: str | None = None

    @model_validator(mode="after")
    def _one_of_the_two(self) -> AgentRefConfig:
        if self.config_path is not None and self.code is not None:
            raise ValueError("an agent reference names `config_path` or `code`, not both")
        if self.config_path is None and self.code is None:
            raise ValueError("an agent reference names one of `config_path` or `code`")
        return self
