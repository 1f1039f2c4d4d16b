"""Evaluations: eval sets of conversations, run against a host and scored (google-adk's
eval sets, files and HTTP routes; see ``_run`` for a run and ``_metrics`` for the
metrics)."""

from ._files import EvalFiles, EvalNotFound
from ._metrics import (
    DEFAULT_THRESHOLDS,
    RESPONSE_MATCH,
    TOOL_TRAJECTORY,
    EvalError,
    metrics_info,
    rouge1_f,
)
from ._models import (
    EvalCase,
    EvalCaseResult,
    EvalMetric,
    EvalMetricResult,
    EvalMetricResultPerInvocation,
    EvalSet,
    EvalSetResult,
    EvalStatus,
    IntermediateData,
    Invocation,
    InvocationEvent,
    InvocationEvents,
    MetricInfo,
    SessionInput,
)
from ._run import EVAL_SESSION_PREFIX, case_from_session, invocations_of, run_eval_set

__all__ = [
    "DEFAULT_THRESHOLDS",
    "EVAL_SESSION_PREFIX",
    "RESPONSE_MATCH",
    "TOOL_TRAJECTORY",
    "EvalCase",
    "EvalCaseResult",
    "EvalError",
    "EvalFiles",
    "EvalMetric",
    "EvalMetricResult",
    "EvalMetricResultPerInvocation",
    "EvalNotFound",
    "EvalSet",
    "EvalSetResult",
    "EvalStatus",
    "IntermediateData",
    "Invocation",
    "InvocationEvent",
    "InvocationEvents",
    "MetricInfo",
    "SessionInput",
    "case_from_session",
    "invocations_of",
    "metrics_info",
    "rouge1_f",
    "run_eval_set",
]
