"""google-adk's ``google.adk.agents.llm_agent_config``: :class:`LlmAgentConfig`, the
schema of an ``LlmAgent`` file (google-adk 2.13's fields; ``instruction`` is required,
an unknown key is refused, ``model`` and ``model_code`` exclude each other). Deprecated
as in google-adk: making or validating one warns ``DeprecationWarning``
"LlmAgentConfig is deprecated"."""

from __future__ import annotations

import warnings
from typing import Literal

from google.genai import types
from pydantic import ConfigDict, model_validator
from typing_extensions import deprecated

from ._tool_configs import ToolConfig
from .base_agent_config import BaseAgentConfig, deprecation
from .common_configs import CodeConfig

__all__ = ["LlmAgentConfig"]

with warnings.catch_warnings():  # subclassing the deprecated base here is not the user's doing
    warnings.simplefilter("ignore", DeprecationWarning)

    @deprecated(deprecation("LlmAgentConfig"))
    class LlmAgentConfig(BaseAgentConfig):
        """An LlmAgent's file: the base fields and the LlmAgent's own (tools and
        callbacks by name, schemas by :class:`CodeConfig`)."""

        model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

        agent_class: str = "LlmAgent"
        model: str | None = None
        model_code: CodeConfig | None = None
        instruction: str
        static_instruction: types.ContentUnion | None = None
        disallow_transfer_to_parent: bool | None = None
        disallow_transfer_to_peers: bool | None = None
        input_schema: CodeConfig | None = None
        output_schema: CodeConfig | None = None
        output_key: str | None = None
        include_contents: Literal["default", "none"] = "default"
        tools: list[ToolConfig] | None = None
        before_model_callbacks: list[CodeConfig] | None = None
        after_model_callbacks: list[CodeConfig] | None = None
        before_tool_callbacks: list[CodeConfig] | None = None
        after_tool_callbacks: list[CodeConfig] | None = None
        generate_content_config: types.GenerateContentConfig | None = None

        @model_validator(mode="after")
        def _one_model_source(self) -> LlmAgentConfig:
            if self.model and self.model_code:
                raise ValueError(f"give `model` or `model_code`, not both (model={self.model!r}, "
                                 f"model_code={self.model_code!r})")
            return self
