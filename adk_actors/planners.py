"""google-adk's planners, as far as they mean something here.

``BuiltInPlanner(thinking_config=...)`` asks the model to think before it answers: an
agent given it sends ``thinking_config`` with every request (Gemini's thinking
settings; other providers ignore it), as google-adk's does. google-adk's
``PlanReActPlanner`` (a prompt that makes the model write /*PLANNING*/ sections, which
are then moved into thoughts) is not built: constructing one raises
:class:`AgentDefinitionError` saying so, rather than running the agent without it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ._exceptions import AgentDefinitionError
from .types import ThinkingConfig, ours

__all__ = ["BasePlanner", "BuiltInPlanner", "PlanReActPlanner"]


class BasePlanner(BaseModel):
    """What an agent's ``planner`` is: settings added to each model request."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    def generate_config(self) -> dict[str, Any]:
        """The ``generate_config`` keys this planner adds to the agent's requests."""
        return {}


class BuiltInPlanner(BasePlanner):
    thinking_config: Any = None

    def generate_config(self) -> dict[str, Any]:
        if self.thinking_config is None:
            return {}
        return {"thinking_config": ours(self.thinking_config, ThinkingConfig).model_dump(exclude_none=True)}


class PlanReActPlanner(BasePlanner):
    def __init__(self, **_settings: Any) -> None:
        raise AgentDefinitionError(
            "PlanReActPlanner is not built in adk-actors: write the plan-then-act steps into the instruction, "
            "or use BuiltInPlanner(thinking_config=...) with a model that thinks")
