"""google-adk's ``AnthropicGenerateContentConfig``: a generate_content_config with
Claude's reasoning ``effort``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..types import GenerateContentConfig


class AnthropicGenerateContentConfig(GenerateContentConfig):
    """A :class:`~adk_actors.types.GenerateContentConfig` that also carries Claude's
    reasoning ``effort`` (``"low"``, ``"medium"``, ``"high"``, ``"xhigh"`` or
    ``"max"``; any other value raises a pydantic ``ValidationError``).

    Given as an agent's ``generate_content_config``, the effort reaches the request
    config as ``effort``; the Anthropic connector sends it as
    ``output_config.effort`` (beside a response schema's ``output_config.format``).
    Other connectors ignore it. ``thinking_config.thinking_level`` is refused here
    as google-adk refuses it (a ``ValueError``): effort is how Claude's depth is set."""

    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = Field(
        default=None, description="Claude's reasoning effort for adaptive extended thinking.")


__all__ = ["AnthropicGenerateContentConfig"]
