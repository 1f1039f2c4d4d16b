"""What to simulate (google-adk's ``environment_simulation_config``): which tools are
answered instead of run, and how.

A :class:`ToolSimulationConfig` names one tool. Its :class:`InjectionConfig` entries
are tried first, in order: an entry whose ``match_args`` all equal the call's
arguments (no ``match_args``: every call) and whose probability draw succeeds waits
``injected_latency_seconds`` and answers with its :class:`InjectedError` (as
``{"error_code": ..., "error_message": ...}``) or its ``injected_response``. When no
entry answers, the tool's :class:`MockStrategy` does; with none the real tool runs.

:class:`EnvironmentSimulationConfig` holds the tools' configs (at least one when
given, each tool named once), the model the simulator itself asks (by name, through
the model registry) and its generation settings, and two texts handed to the mock
strategy: ``environment_data`` (a database dump, say) and ``tracing`` (a recorded
earlier run). Every rule is checked when the config is made: a broken one is a
pydantic ``ValidationError``, as in google-adk.
"""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel, Field, field_validator, model_validator

from ...types import GenerateContentConfig, ThinkingConfig, ours

__all__ = ["EnvironmentSimulationConfig", "InjectedError", "InjectionConfig", "MockStrategy", "ToolSimulationConfig"]


class InjectedError(BaseModel):
    """A failure to answer with: the HTTP status (``error_code`` in the tool's result)
    and the text (``error_message``)."""

    injected_http_error_code: int
    error_message: str


class InjectionConfig(BaseModel):
    """One canned answer for a tool's calls: exactly one of ``injected_error`` and
    ``injected_response`` (an empty response counts as none). ``match_args`` limits it
    to calls with those argument values; ``injection_probability`` is the chance it is
    used for a matching call (1.0: always), drawn from its own generator seeded with
    ``random_seed`` when one is given, else from one unseeded generator the
    simulator shares; ``injected_latency_seconds`` (at most 120) is waited before the
    answer is given."""

    injection_probability: float = 1.0
    match_args: dict[str, Any] | None = None
    injected_latency_seconds: float = Field(default=0.0, le=120.0)
    random_seed: int | None = None
    injected_error: InjectedError | None = None
    injected_response: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_answer(self) -> InjectionConfig:
        """Refuse a config with both answers set, or with neither."""
        if bool(self.injected_error) == bool(self.injected_response):
            raise ValueError("an injection needs exactly one answer: injected_error or injected_response")
        return self


class MockStrategy(enum.Enum):
    """How a call no injection answered is answered: not at all (the tool runs), from
    the tool's declaration by the simulator's model (``MOCK_STRATEGY_TOOL_SPEC``), or
    by the tracing strategy (``MOCK_STRATEGY_TRACING``, deprecated in google-adk: its
    strategy answers every call with an error result)."""

    MOCK_STRATEGY_UNSPECIFIED = 0
    MOCK_STRATEGY_TOOL_SPEC = 1
    MOCK_STRATEGY_TRACING = 2


class ToolSimulationConfig(BaseModel):
    """The simulation of the tool named ``tool_name``: its injections, tried in order,
    then its mock strategy. A config with neither is refused."""

    tool_name: str
    injection_configs: list[InjectionConfig] = Field(default_factory=list)
    mock_strategy_type: MockStrategy = MockStrategy.MOCK_STRATEGY_UNSPECIFIED

    @model_validator(mode="after")
    def _answers_somehow(self) -> ToolSimulationConfig:
        """Refuse a tool with no injection and no mock strategy."""
        if not self.injection_configs and self.mock_strategy_type == MockStrategy.MOCK_STRATEGY_UNSPECIFIED:
            raise ValueError(f"tool {self.tool_name!r} has no injection_configs, so it needs a mock_strategy_type "
                             "other than MOCK_STRATEGY_UNSPECIFIED")
        return self


def _default_generation() -> GenerateContentConfig:
    """google-adk's settings for the simulator's model: thoughts not returned, a
    thinking budget of 10240 tokens."""
    return GenerateContentConfig(thinking_config=ThinkingConfig(include_thoughts=False, thinking_budget=10240))


class EnvironmentSimulationConfig(BaseModel):
    """The whole simulation (see the module). ``simulation_model``: the model name the
    simulator asks to analyze the tools and to invent results;
    ``simulation_model_configuration``: its generation settings (ours or
    google.genai's ``GenerateContentConfig``)."""

    tool_simulation_configs: list[ToolSimulationConfig] = Field(default_factory=list)
    simulation_model: str = "gemini-2.5-flash"
    simulation_model_configuration: GenerateContentConfig = Field(default_factory=_default_generation)
    tracing: str | None = None
    environment_data: str | None = None

    @field_validator("simulation_model_configuration", mode="before")
    @classmethod
    def _our_generation(cls, value: Any) -> Any:
        """A google.genai config (or a dict of its fields) taken as ours."""
        return ours(value, GenerateContentConfig)

    @field_validator("tool_simulation_configs")
    @classmethod
    def _some_tools_once_each(cls, value: list[ToolSimulationConfig]) -> list[ToolSimulationConfig]:
        """Refuse an empty list, and a tool named twice."""
        if not value:
            raise ValueError("tool_simulation_configs is empty: name at least one tool to simulate")
        named: set[str] = set()
        for config in value:
            if config.tool_name in named:
                raise ValueError(f"tool {config.tool_name!r} is configured twice in tool_simulation_configs")
            named.add(config.tool_name)
        return value
