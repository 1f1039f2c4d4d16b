"""google-adk's ``google.adk.evaluation.conversation_scenarios`` path: a scenario the
user simulator plays (:class:`ConversationScenario`, the same class as an eval case's
``conversation_scenario``), a file's list of them, and the settings of a request to
generate scenarios.

Generating scenarios with a model is google-adk's Vertex AI call
(``_vertex_ai_scenario_generation_facade``), which needs Google Cloud: it is not
offered here. :class:`ConversationGenerationConfig` is here so that such a file's
settings read and write as google-adk's."""

from __future__ import annotations

from pydantic import Field

from ..evals import ConversationScenario
from .common import EvalBaseModel

__all__ = ["ConversationGenerationConfig", "ConversationScenario", "ConversationScenarios"]


class ConversationScenarios(EvalBaseModel):
    """A list of scenarios, as a file holds them (``{"scenarios": [...]}``)."""

    scenarios: list[ConversationScenario] = Field(default_factory=list)


class ConversationGenerationConfig(EvalBaseModel):
    """How many scenarios to generate, toward what goal, with what the agent's tools
    can see, by which model (google-adk's fields; see the module)."""

    count: int
    generation_instruction: str | None = None
    environment_context: str | None = None
    model_name: str
