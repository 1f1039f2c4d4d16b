"""Eval sets and their results, in google-adk 2.13's shapes (camelCase on the wire).

An eval set holds eval cases; a case is a conversation (the user's messages, each
with the final response and the tool calls expected) or a scenario the user
simulator plays (``conversation_scenario``), the session it starts from, and the
rubrics the rubric metrics check (the case's, and each invocation's). A run of a set gives, per case, each metric's score per invocation and
overall, and a status. The files are google-adk's (``<id>.evalset.json``), so a set
made with ``adk web`` runs here and the other way round. On the wire names are
camelCase (``wire()``), except an eval set's own; in files they are snake_case, as
google-adk writes them.
"""

from __future__ import annotations

import enum
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializationInfo,
    field_serializer,
    field_validator,
)
from pydantic.alias_generators import to_camel

from .._types import Content, FunctionCall, FunctionResponse, GroundingMetadata, Part, UsageMetadata

__all__ = [
    "AgentDetails",
    "AppDetails",
    "ConversationScenario",
    "DurationDetails",
    "EvalCase",
    "EvalCaseResult",
    "EvalMetric",
    "EvalMetricResult",
    "EvalMetricResultPerInvocation",
    "EvalSet",
    "EvalSetResult",
    "EvalStatus",
    "IntermediateData",
    "Invocation",
    "InvocationEvent",
    "InvocationEvents",
    "MetricInfo",
    "Rubric",
    "RubricContent",
    "SessionInput",
]


class _Eval(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def wire(self) -> dict[str, Any]:
        """As google-adk serves and stores it: camelCase, no nulls."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class InvocationEvent(_Eval):
    """One event of an invocation as an eval records it (google-adk's): who made it, its
    content (None for the final response's own event: that is the invocation's
    ``final_response``), the grounding of Gemini's own tools (search, retrieval) it
    carried, the model's token counts and version."""

    author: str
    content: Content | None = None
    grounding_metadata: GroundingMetadata | None = None
    usage_metadata: UsageMetadata | None = None
    model_version: str | None = None


class InvocationEvents(_Eval):
    """What happened between the user's message and the final response (google-adk 2.x)."""

    invocation_events: list[InvocationEvent] = Field(default_factory=list)


class IntermediateData(_Eval):
    """The older form of the same (google-adk 1.x files): tool calls, their answers,
    and the responses of agents other than the last."""

    tool_uses: list[FunctionCall] = Field(default_factory=list)
    tool_responses: list[FunctionResponse] = Field(default_factory=list)
    intermediate_responses: list[tuple[str, list[Part]]] = Field(default_factory=list)


class RubricContent(_Eval):
    text_property: str | None = None


class Rubric(_Eval):
    """A property a judge checks an invocation for (google-adk's ``Rubric``); ``type``
    says which rubric metric reads it (``FINAL_RESPONSE_QUALITY``, ``TOOL_USE_QUALITY``)."""

    rubric_id: str
    rubric_content: RubricContent
    description: str | None = None
    type: str | None = None


class AgentDetails(_Eval):
    """google-adk's ``AgentDetails``: an agent's name, its instructions, its tools."""

    name: str
    instructions: str = ""
    #: Gemini ``Tool`` entries as data (``{"function_declarations": [{"name", "description", ...}]}``)
    tool_declarations: list[Any] = Field(default_factory=list)


class AppDetails(_Eval):
    """google-adk's ``AppDetails``: the details of each agent that ran, by name."""

    agent_details: dict[str, AgentDetails] = Field(default_factory=dict)

    def get_developer_instructions(self, agent_name: str) -> str:
        """The instructions of agent ``agent_name``; ValueError when no agent of that
        name is in the details (google-adk's)."""
        if agent_name not in self.agent_details:
            raise ValueError(f"agent {agent_name!r} is not among the app's agents")
        return self.agent_details[agent_name].instructions

    def get_tools_by_agent_name(self) -> dict[str, list[Any]]:
        """Each agent's tool declarations, by the agent's name (google-adk's)."""
        return {name: agent.tool_declarations for name, agent in self.agent_details.items()}


class Invocation(_Eval):
    """One user message and what the agent did with it."""

    invocation_id: str = ""
    user_content: Content
    final_response: Content | None = None
    intermediate_data: InvocationEvents | IntermediateData | None = None
    creation_timestamp: float = 0.0
    #: rubrics for this invocation only (an expected invocation's go to the actual one)
    rubrics: list[Rubric] | None = None
    #: what each agent that called a model in this turn was told (its instructions and
    #: tools; google-adk's): set on the actual invocations of an in-process eval run
    app_details: AppDetails | None = None
    #: the seconds the turn took, measured while it ran (None: not timed: read back
    #: from a session or a file, or run where this process could not time it)
    duration: float | None = None
    #: of ``duration``, the seconds at least one model call was in flight (overlapping
    #: calls counted once); set with ``duration``, else None
    model_duration: float | None = None
    #: of ``duration``, the seconds inside a tool that were not model time (an
    #: AgentTool's child model calls count as model time only); set with ``duration``
    tool_duration: float | None = None

    def tool_calls(self) -> list[FunctionCall]:
        """The tool calls made, in order (either form of ``intermediate_data``)."""
        data = self.intermediate_data
        if isinstance(data, IntermediateData):
            return list(data.tool_uses)
        if isinstance(data, InvocationEvents):
            return [call for event in data.invocation_events if event.content is not None
                    for call in event.content.function_calls]
        return []

    def tool_responses(self) -> list[FunctionResponse]:
        """The tools' answers, in order (either form of ``intermediate_data``)."""
        data = self.intermediate_data
        if isinstance(data, IntermediateData):
            return list(data.tool_responses)
        if isinstance(data, InvocationEvents):
            return [answer for event in data.invocation_events if event.content is not None
                    for answer in event.content.function_responses]
        return []


class SessionInput(_Eval):
    app_name: str
    user_id: str
    session_id: str | None = None
    state: dict[str, Any] = Field(default_factory=dict)


class ConversationScenario(_Eval):
    """A conversation the user simulator plays (google-adk's): the first message, and
    the plan the simulated user follows after it."""

    starting_prompt: str
    conversation_plan: str
    user_persona: dict[str, Any] | str | None = None


class EvalCase(_Eval):
    eval_id: str
    conversation: list[Invocation] | None = None
    session_input: SessionInput | None = None
    creation_timestamp: float = 0.0
    final_session_state: dict[str, Any] | None = Field(default_factory=dict)
    #: rubrics for every invocation of the case
    rubrics: list[Rubric] | None = None
    #: a case played by the user simulator instead of a fixed ``conversation``
    conversation_scenario: ConversationScenario | None = None


class EvalSet(_Eval):
    """google-adk's EvalSet has no camelCase names of its own (its cases do)."""

    model_config = ConfigDict(alias_generator=None, populate_by_name=True, extra="ignore")

    eval_set_id: str
    name: str | None = None
    description: str | None = None
    eval_cases: list[EvalCase] = Field(default_factory=list)
    creation_timestamp: float = 0.0


class EvalStatus(enum.IntEnum):
    PASSED = 1
    FAILED = 2
    NOT_EVALUATED = 3
    #: a value reported that never passes or fails (the efficiency metrics)
    INFORMATIONAL = 4


class EvalMetric(_Eval):
    """A metric to compute, by name, with the score it must reach to pass.

    ``custom_function_path`` is google-adk's field, kept in results as it keeps it; it
    is never imported from (a metric sent in a request could name any module). The
    function a custom metric runs is the one its eval config declared, carried in a
    private attribute (:func:`config_function_path`) that only
    ``get_eval_metrics_from_config`` sets."""

    metric_name: str
    threshold: float | None = None
    criterion: dict[str, Any] | None = None
    custom_function_path: str | None = None
    _config_custom_function_path: str | None = PrivateAttr(default=None)

    @field_validator("criterion", mode="before")
    @classmethod
    def _criterion_fields(cls, value: Any) -> Any:
        """A criterion given as an object (``ToolTrajectoryCriterion(...)``, ours or
        google-adk's, google-adk's way) is kept as its fields."""
        return value.model_dump(mode="json", exclude_none=True) if isinstance(value, BaseModel) else value


class DurationDetails(_Eval):
    """Where an ``invocation_duration_v1`` score's seconds went (google-adk's): the
    parts add up to the total, ``framework_seconds`` being what the model and the tools
    leave of it (never below 0). A part is None when it was not measured (n/a), not 0.
    In a metric result's ``details["duration_details"]`` as ``model_dump()`` gives it."""

    total_seconds: float | None = None
    model_seconds: float | None = None
    tool_seconds: float | None = None
    framework_seconds: float | None = None


def _camel_keys(value: Any, drop_none: bool) -> Any:
    """``value`` with every dict key in camelCase (and, ``drop_none``, no None values)."""
    if isinstance(value, dict):
        return {to_camel(str(k)): _camel_keys(v, drop_none) for k, v in value.items()
                if not (drop_none and v is None)}
    if isinstance(value, list):
        return [_camel_keys(v, drop_none) for v in value]
    return value


class EvalMetricResult(EvalMetric):
    score: float | None = None
    eval_status: EvalStatus
    #: google-adk's ``EvalMetricResultDetails`` fields (``rubric_scores``,
    #: ``token_usage_details``, ``duration_details``) as plain data, snake_case, plus
    #: ``error`` when a metric could not be scored
    details: dict[str, Any] = Field(default_factory=dict)

    @field_serializer("details")
    def _details_out(self, details: dict[str, Any], info: SerializationInfo) -> dict[str, Any]:
        """By alias (the wire, ``wire()``), camelCase as google-adk serves its details
        (nulls left out with ``exclude_none``); otherwise (files) as kept."""
        if not info.by_alias:
            return details
        camel: dict[str, Any] = _camel_keys(details, info.exclude_none)
        return camel


class EvalMetricResultPerInvocation(_Eval):
    actual_invocation: Invocation
    expected_invocation: Invocation | None = None
    eval_metric_results: list[EvalMetricResult] = Field(default_factory=list)


class EvalCaseResult(_Eval):
    eval_set_file: str | None = None
    eval_set_id: str = ""
    eval_id: str = ""
    final_eval_status: EvalStatus
    overall_eval_metric_results: list[EvalMetricResult]
    eval_metric_result_per_invocation: list[EvalMetricResultPerInvocation]
    session_id: str
    user_id: str | None = None


class EvalSetResult(_Eval):
    eval_set_result_id: str
    eval_set_result_name: str | None = None
    eval_set_id: str
    eval_case_results: list[EvalCaseResult] = Field(default_factory=list)
    creation_timestamp: float = 0.0


class Interval(_Eval):
    min_value: float
    open_at_min: bool = False
    max_value: float
    open_at_max: bool = False


class MetricValueInfo(_Eval):
    interval: Interval | None = None


class MetricInfo(_Eval):
    metric_name: str
    description: str | None = None
    metric_value_info: MetricValueInfo
    requires_threshold: bool = True
