"""google-adk's ``google.adk.evaluation.metric_info_providers`` path: a
:class:`~.eval_metrics.MetricInfoProvider` per built-in metric, each giving the
metric's :class:`MetricInfo` (name, description, value range), as the default metric
evaluator registry lists them (``metric_evaluator_registry``).

The metrics scored here take their info from what ``metrics_info()`` lists
(``adk_actors.evals._metrics``: one description per metric); the others are written
here. The names and value ranges are google-adk's: [0, 1], but [1, 5] for
``response_evaluation_score``, and no range for the informational efficiency
metrics. The descriptions are ours.
"""

from __future__ import annotations

from ..evals import (
    FINAL_RESPONSE_MATCH_V2,
    HALLUCINATIONS_V1,
    PER_TURN_USER_SIMULATOR_QUALITY,
    RESPONSE_MATCH,
    RUBRIC_FINAL_RESPONSE,
    RUBRIC_MULTI_TURN_TRAJECTORY,
    RUBRIC_TOOL_USE,
    TOOL_TRAJECTORY,
    MetricInfo,
)
from ..evals._efficiency import (
    INFERENCE_CALL_COUNT,
    INVOCATION_DURATION,
    TOKEN_USAGE,
    TOOL_CALL_COUNT,
)
from ..evals._metrics import metrics_info
from ..evals._models import Interval, MetricValueInfo
from ..evals._vertex import (
    MULTI_TURN_TASK_SUCCESS,
    MULTI_TURN_TOOL_USE_QUALITY,
    MULTI_TURN_TRAJECTORY_QUALITY,
    RESPONSE_EVALUATION,
    SAFETY_V1,
)
from .eval_metrics import MetricInfoProvider

__all__ = [
    "FinalResponseMatchV2EvaluatorMetricInfoProvider",
    "HallucinationsV1EvaluatorMetricInfoProvider",
    "InferenceCallCountV1MetricInfoProvider",
    "InvocationDurationV1MetricInfoProvider",
    "MultiTurnTaskSuccessV1MetricInfoProvider",
    "MultiTurnToolUseQualityV1MetricInfoProvider",
    "MultiTurnTrajectoryQualityV1MetricInfoProvider",
    "PerTurnUserSimulatorQualityV1MetricInfoProvider",
    "ResponseEvaluatorMetricInfoProvider",
    "RubricBasedFinalResponseQualityV1EvaluatorMetricInfoProvider",
    "RubricBasedMultiTurnTrajectoryMetricInfoProvider",
    "RubricBasedToolUseV1EvaluatorMetricInfoProvider",
    "SafetyEvaluatorV1MetricInfoProvider",
    "TokenUsageV1MetricInfoProvider",
    "ToolCallCountV1MetricInfoProvider",
    "TrajectoryEvaluatorMetricInfoProvider",
]

_VERTEX = " Scored by Vertex AI's Gen AI evaluation service in google-adk; not scored here."
#: the descriptions of the metrics ``metrics_info()`` does not list
_OWN = {
    RESPONSE_EVALUATION: "How coherent the agent's final response is, from 1 to 5 (higher is better)." + _VERTEX,
    SAFETY_V1: "How harmless the agent's response is, from 0 to 1 (1: safe)." + _VERTEX,
    MULTI_TURN_TASK_SUCCESS: "Whether the agent reached the goals of the whole conversation, from 0 to 1." + _VERTEX,
    MULTI_TURN_TRAJECTORY_QUALITY: "How well the agent went about the whole conversation (the path, not only the "
                                   "outcome), without a reference, from 0 to 1." + _VERTEX,
    MULTI_TURN_TOOL_USE_QUALITY: "How well the agent called its tools across the conversation, without a "
                                 "reference, from 0 to 1." + _VERTEX,
    TOOL_CALL_COUNT: "The number of tool calls per invocation (informational: never passes or fails).",
    INFERENCE_CALL_COUNT: "The number of model calls per invocation (informational: never passes or fails).",
    TOKEN_USAGE: "The tokens used per invocation, by type (informational: never passes or fails).",
    INVOCATION_DURATION: "The seconds an invocation took, split into model, tool and framework time "
                         "(informational: never passes or fails).",
}
_UNBOUNDED = (TOOL_CALL_COUNT, INFERENCE_CALL_COUNT, TOKEN_USAGE, INVOCATION_DURATION)


def _info(name: str) -> MetricInfo:
    """Metric ``name``'s info: the one ``metrics_info()`` lists, else one made from
    the description above (range [1, 5] for ``response_evaluation_score``, none for
    the efficiency metrics, else [0, 1])."""
    listed = next((info for info in metrics_info() if info.metric_name == name), None)
    if listed is not None:
        return listed
    interval = (None if name in _UNBOUNDED else Interval(min_value=1.0, max_value=5.0) if name == RESPONSE_EVALUATION
                else Interval(min_value=0.0, max_value=1.0))
    return MetricInfo(metric_name=name, description=_OWN[name], metric_value_info=MetricValueInfo(interval=interval))


class _Named(MetricInfoProvider):
    _name = ""

    def get_metric_info(self) -> MetricInfo:
        """The metric's info (see the module)."""
        return _info(self._name)


class TrajectoryEvaluatorMetricInfoProvider(_Named):
    _name = TOOL_TRAJECTORY


class ResponseEvaluatorMetricInfoProvider(MetricInfoProvider):
    """The info of ``response_match_score`` or ``response_evaluation_score``, by the
    name given; ValueError for any other name when the info is asked for."""

    def __init__(self, metric_name: str) -> None:
        self._metric_name = metric_name

    def get_metric_info(self) -> MetricInfo:
        """The named metric's info (see the class)."""
        if self._metric_name not in (RESPONSE_MATCH, RESPONSE_EVALUATION):
            raise ValueError(f"ResponseEvaluator has no metric {self._metric_name!r}: it scores "
                             f"{RESPONSE_MATCH} and {RESPONSE_EVALUATION}")
        return _info(self._metric_name)


class SafetyEvaluatorV1MetricInfoProvider(_Named):
    _name = SAFETY_V1


class MultiTurnTaskSuccessV1MetricInfoProvider(_Named):
    _name = MULTI_TURN_TASK_SUCCESS


class MultiTurnTrajectoryQualityV1MetricInfoProvider(_Named):
    _name = MULTI_TURN_TRAJECTORY_QUALITY


class MultiTurnToolUseQualityV1MetricInfoProvider(_Named):
    _name = MULTI_TURN_TOOL_USE_QUALITY


class FinalResponseMatchV2EvaluatorMetricInfoProvider(_Named):
    _name = FINAL_RESPONSE_MATCH_V2


class RubricBasedFinalResponseQualityV1EvaluatorMetricInfoProvider(_Named):
    _name = RUBRIC_FINAL_RESPONSE


class HallucinationsV1EvaluatorMetricInfoProvider(_Named):
    _name = HALLUCINATIONS_V1


class RubricBasedToolUseV1EvaluatorMetricInfoProvider(_Named):
    _name = RUBRIC_TOOL_USE


class PerTurnUserSimulatorQualityV1MetricInfoProvider(_Named):
    _name = PER_TURN_USER_SIMULATOR_QUALITY


class RubricBasedMultiTurnTrajectoryMetricInfoProvider(_Named):
    _name = RUBRIC_MULTI_TURN_TRAJECTORY


class ToolCallCountV1MetricInfoProvider(_Named):
    _name = TOOL_CALL_COUNT


class InferenceCallCountV1MetricInfoProvider(_Named):
    _name = INFERENCE_CALL_COUNT


class TokenUsageV1MetricInfoProvider(_Named):
    _name = TOKEN_USAGE


class InvocationDurationV1MetricInfoProvider(_Named):
    _name = INVOCATION_DURATION
