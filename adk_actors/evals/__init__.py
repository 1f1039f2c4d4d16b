"""Evaluations: eval sets of conversations, run against a host and scored (google-adk's
eval sets, files and HTTP routes; see ``_run`` for a run and ``_metrics`` for the
metrics), or in this process by google-adk's ``AgentEvaluator`` (``_agent_evaluator``,
with ``test_config.json`` files read by ``_config``), or on an agent folder's app
(``eval AGENT_DIR``, google-adk's ``adk eval``: ``_folder``)."""

from ._agent_evaluator import NUM_RUNS, AgentEvaluator, EvalFailed
from ._config import EvalConfig, get_eval_metrics_from_config, get_evaluation_criteria_or_default
from ._errors import EvalError
from ._files import EvalFiles, EvalNotFound
from ._folder import (
    AppEvalResult,
    check_cases,
    check_metrics,
    check_simulator,
    eval_config_for,
    eval_set_for,
    evaluate_app,
    parse_eval_targets,
    read_eval_set_file,
)
from ._hallucinations import HallucinationsCriterion
from ._judge import FINAL_RESPONSE_MATCH_V2, JudgeModelOptions, LlmAsAJudgeCriterion
from ._metrics import (
    DEFAULT_THRESHOLDS,
    HALLUCINATIONS_V1,
    PER_TURN_USER_SIMULATOR_QUALITY,
    RESPONSE_MATCH,
    RUBRIC_FINAL_RESPONSE,
    RUBRIC_MULTI_TURN_TRAJECTORY,
    RUBRIC_TOOL_USE,
    TOOL_TRAJECTORY,
    VERTEX_METRICS,
    metrics_info,
    rouge1_f,
    score_async,
)
from ._models import (
    ConversationScenario,
    DurationDetails,
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
    Rubric,
    RubricContent,
    SessionInput,
)
from ._rubrics import RubricsBasedCriterion
from ._run import EVAL_SESSION_PREFIX, case_from_session, invocations_of, run_eval_set
from ._simulator_quality import LlmBackedUserSimulatorCriterion
from ._vertex import VertexEvalRequired

__all__ = [
    "DEFAULT_THRESHOLDS",
    "EVAL_SESSION_PREFIX",
    "FINAL_RESPONSE_MATCH_V2",
    "HALLUCINATIONS_V1",
    "NUM_RUNS",
    "PER_TURN_USER_SIMULATOR_QUALITY",
    "RESPONSE_MATCH",
    "RUBRIC_FINAL_RESPONSE",
    "RUBRIC_MULTI_TURN_TRAJECTORY",
    "RUBRIC_TOOL_USE",
    "TOOL_TRAJECTORY",
    "VERTEX_METRICS",
    "AgentEvaluator",
    "AppEvalResult",
    "ConversationScenario",
    "DurationDetails",
    "EvalCase",
    "EvalCaseResult",
    "EvalConfig",
    "EvalError",
    "EvalFailed",
    "EvalFiles",
    "EvalMetric",
    "EvalMetricResult",
    "EvalMetricResultPerInvocation",
    "EvalNotFound",
    "EvalSet",
    "EvalSetResult",
    "EvalStatus",
    "HallucinationsCriterion",
    "IntermediateData",
    "Invocation",
    "InvocationEvent",
    "InvocationEvents",
    "JudgeModelOptions",
    "LlmAsAJudgeCriterion",
    "LlmBackedUserSimulatorCriterion",
    "MetricInfo",
    "Rubric",
    "RubricContent",
    "RubricsBasedCriterion",
    "SessionInput",
    "VertexEvalRequired",
    "case_from_session",
    "check_cases",
    "check_metrics",
    "check_simulator",
    "eval_config_for",
    "eval_set_for",
    "evaluate_app",
    "get_eval_metrics_from_config",
    "get_evaluation_criteria_or_default",
    "invocations_of",
    "metrics_info",
    "parse_eval_targets",
    "read_eval_set_file",
    "rouge1_f",
    "run_eval_set",
    "score_async",
]
