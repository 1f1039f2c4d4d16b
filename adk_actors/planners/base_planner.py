"""``BasePlanner``: what an agent's ``planner`` is (google-adk's abstract class)."""

from __future__ import annotations

import abc
from typing import Any

from .._types import LlmRequest, Part

__all__ = ["BasePlanner"]


class BasePlanner(abc.ABC):
    """A planner guides how the agent's model plans its answer.

    A subclass gives google-adk's two steps: :meth:`build_planning_instruction` (text
    for the system instruction, or None) and :meth:`process_planning_response` (the
    model's answer parts rewritten, or None to keep them). :meth:`generate_config`
    (ours) gives the request settings the agent adds to every model call; an agent
    reads it once, when it is defined.
    """

    @abc.abstractmethod
    def build_planning_instruction(self, readonly_context: Any, llm_request: LlmRequest) -> str | None:
        """The planning text to add to the request's system instruction, or None for
        none. ``llm_request`` is read, never changed."""

    @abc.abstractmethod
    def process_planning_response(self, callback_context: Any, response_parts: list[Part]) -> list[Part] | None:
        """The model's answer parts as the agent should keep them, or None to keep
        them as they are."""

    def generate_config(self) -> dict[str, Any]:
        """The ``generate_config`` keys this planner adds to the agent's requests
        (none here)."""
        return {}
