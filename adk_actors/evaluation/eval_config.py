"""google-adk's ``google.adk.evaluation.eval_config`` path (see :mod:`adk_actors.evals`)."""

from ..evals import (
    CustomMetricConfig,
    EvalConfig,
    get_eval_metrics_from_config,
    get_evaluation_criteria_or_default,
)

__all__ = ["CustomMetricConfig", "EvalConfig", "get_eval_metrics_from_config", "get_evaluation_criteria_or_default"]
