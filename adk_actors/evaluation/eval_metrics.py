"""google-adk's ``google.adk.evaluation.eval_metrics`` path (see :mod:`adk_actors.evals`).
A criterion is given as a dict (or in ``test_config.json``); the criteria are here as
classes to build one with (``ToolTrajectoryCriterion(...).model_dump()``), and a
metric result's ``details`` (plain data here) as google-adk's typed
:class:`EvalMetricResultDetails`."""

from __future__ import annotations

import abc
import enum
from typing import Any, TypeAlias

from pydantic import field_validator

from ..evals import (
    BaseCriterion,
    DurationDetails,
    EvalMetric,
    EvalMetricResult,
    EvalMetricResultPerInvocation,
    EvalStatus,
    HallucinationsCriterion,
    JudgeModelOptions,
    LlmAsAJudgeCriterion,
    LlmBackedUserSimulatorCriterion,
    MetricInfo,
    Rubric,
    RubricsBasedCriterion,
)
from ..evals._metrics import MATCH_TYPES, _match_type
from ..evals._models import Interval, MetricValueInfo
from .common import EvalBaseModel
from .eval_rubrics import RubricScore

__all__ = ["BaseCriterion", "DurationDetails", "EvalMetric", "EvalMetricResult", "EvalMetricResultDetails",
           "EvalMetricResultPerInvocation", "EvalStatus", "HallucinationsCriterion", "Interval", "JudgeModelOptions",
           "LlmAsAJudgeCriterion", "LlmBackedUserSimulatorCriterion", "MetricInfo", "MetricInfoProvider",
           "MetricName", "MetricValueInfo", "PrebuiltMetrics", "Rubric", "RubricsBasedCriterion", "Threshold",
           "TokenUsageDetails", "ToolTrajectoryCriterion"]


class PrebuiltMetrics(enum.Enum):
    """google-adk's metric names. Those scored by Vertex AI's eval service
    (``safety_v1``, ``response_evaluation_score``, the ``multi_turn_*_v1`` ones) are
    named here but refused when run (:class:`~adk_actors.evals.VertexEvalRequired`)."""

    TOOL_TRAJECTORY_AVG_SCORE = "tool_trajectory_avg_score"
    RESPONSE_EVALUATION_SCORE = "response_evaluation_score"
    RESPONSE_MATCH_SCORE = "response_match_score"
    SAFETY_V1 = "safety_v1"
    FINAL_RESPONSE_MATCH_V2 = "final_response_match_v2"
    RUBRIC_BASED_FINAL_RESPONSE_QUALITY_V1 = "rubric_based_final_response_quality_v1"
    HALLUCINATIONS_V1 = "hallucinations_v1"
    RUBRIC_BASED_TOOL_USE_QUALITY_V1 = "rubric_based_tool_use_quality_v1"
    PER_TURN_USER_SIMULATOR_QUALITY_V1 = "per_turn_user_simulator_quality_v1"
    MULTI_TURN_TASK_SUCCESS_V1 = "multi_turn_task_success_v1"
    MULTI_TURN_TRAJECTORY_QUALITY_V1 = "multi_turn_trajectory_quality_v1"
    MULTI_TURN_TOOL_USE_QUALITY_V1 = "multi_turn_tool_use_quality_v1"
    RUBRIC_BASED_MULTI_TURN_TRAJECTORY_QUALITY_V1 = "rubric_based_multi_turn_trajectory_quality_v1"
    TOOL_CALL_COUNT_V1 = "tool_call_count_v1"
    INFERENCE_CALL_COUNT_V1 = "inference_call_count_v1"
    TOKEN_USAGE_V1 = "token_usage_v1"
    INVOCATION_DURATION_V1 = "invocation_duration_v1"


MetricName: TypeAlias = str | PrebuiltMetrics
Threshold: TypeAlias = float


class ToolTrajectoryCriterion(BaseCriterion):
    """The criterion of ``tool_trajectory_avg_score``: how the actual tool calls must
    match the expected ones (``match_type``), and whether only names are compared
    (``ignore_args``). ``match_type`` is read as the metric reads it: a member, its
    number, or its name in any case with ``-`` or spaces for ``_``; anything else is a
    validation error."""

    class MatchType(enum.IntEnum):
        EXACT = 0  # the same calls, in the same order, nothing else
        IN_ORDER = 1  # the expected calls in their order, other calls between them allowed
        ANY_ORDER = 2  # the expected calls in any order, other calls allowed

    match_type: MatchType = MatchType.EXACT
    ignore_args: bool = False
    include_intermediate_responses_in_final: bool = False

    @field_validator("match_type", mode="before")
    @classmethod
    def _read_match_type(cls, value: object) -> object:
        """The member the metric's own reading of ``value`` names (its EvalError, a
        ValueError, makes the validation error)."""
        return cls.MatchType(MATCH_TYPES.index(_match_type({"match_type": value})))


class TokenUsageDetails(EvalBaseModel):
    """The token counts behind a ``token_usage_v1`` score; each count holds those listed
    under it (``input_tokens`` is ``prompt_tokens`` and ``tool_use_tokens``;
    ``prompt_tokens`` holds ``cached_tokens``; ``output_tokens`` is
    ``candidates_tokens`` and ``reasoning_tokens``; ``total_tokens`` is input and
    output). None: no model call reported that count."""

    total_tokens: float | None = None
    input_tokens: float | None = None
    prompt_tokens: float | None = None
    cached_tokens: float | None = None
    tool_use_tokens: float | None = None
    output_tokens: float | None = None
    candidates_tokens: float | None = None
    reasoning_tokens: float | None = None


class EvalMetricResultDetails(EvalBaseModel):
    """A metric result's details, typed: the rubric scores, the token counts and the
    duration split. Our :class:`EvalMetricResult` keeps them as data in ``details``
    (with ``error`` when a metric could not be scored, which this type, as google-adk's,
    does not have): :meth:`of` reads them."""

    rubric_scores: list[RubricScore] | None = None
    token_usage_details: TokenUsageDetails | None = None
    duration_details: DurationDetails | None = None

    @classmethod
    def of(cls, result: EvalMetricResult) -> EvalMetricResultDetails:
        """``result.details`` as this type, its ``error`` (if any) left out."""
        details: dict[str, Any] = result.details or {}
        return cls.model_validate({name: details.get(name) for name in cls.model_fields})


class MetricInfoProvider(abc.ABC):
    """Gives a metric's :class:`MetricInfo` (its name, description and value range)."""

    @abc.abstractmethod
    def get_metric_info(self) -> MetricInfo:
        """The metric's info."""
