"""``BuiltInPlanner``: the model's own thinking, switched on by a thinking config."""

from __future__ import annotations

import logging
from typing import Any

from .._types import LlmRequest, Part
from ..types import ThinkingConfig, ours
from .base_planner import BasePlanner

__all__ = ["BuiltInPlanner"]

_log = logging.getLogger("adk_actors.planners")


class BuiltInPlanner(BasePlanner):
    """Asks the model to think with ``thinking_config`` (ours or google.genai's
    ``ThinkingConfig``, or its dict). It adds no instruction and leaves the answer as
    it is; an agent given it sends the thinking config with every model call, over
    one its ``generate_content_config`` set."""

    thinking_config: Any

    def __init__(self, *, thinking_config: Any) -> None:
        """Keeps ``thinking_config`` as given; it is checked when it is used
        (:meth:`generate_config`, :meth:`apply_thinking_config`), which raises
        ``InvalidRequestError`` when it is no thinking config."""
        self.thinking_config = thinking_config

    def _settings(self) -> dict[str, Any] | None:
        if not self.thinking_config:
            return None
        return ours(self.thinking_config, ThinkingConfig).model_dump(exclude_none=True)

    def generate_config(self) -> dict[str, Any]:
        """``{"thinking_config": ...}`` (its settings that are set), or nothing when
        the thinking config is None."""
        settings = self._settings()
        return {} if settings is None else {"thinking_config": settings}

    def apply_thinking_config(self, llm_request: LlmRequest) -> None:
        """Puts the thinking config in ``llm_request.config``, replacing one already
        there (logged at debug level); does nothing when it is None."""
        settings = self._settings()
        if settings is None:
            return
        if llm_request.config.get("thinking_config"):
            _log.debug("the BuiltInPlanner's thinking_config replaces the request's")
        llm_request.config["thinking_config"] = settings

    def build_planning_instruction(self, readonly_context: Any, llm_request: LlmRequest) -> str | None:
        """None: the model's own thinking needs no instruction."""
        return None

    def process_planning_response(self, callback_context: Any, response_parts: list[Part]) -> list[Part] | None:
        """None: the answer is kept as the model gave it."""
        return None
