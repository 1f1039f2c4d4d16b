"""google-adk's ``google.adk.evaluation.eval_config`` path (see :mod:`adk_actors.evals`),
with :func:`append_default_efficiency_metrics` and :class:`LiveModelConfig`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from ..evals import (
    CustomMetricConfig,
    EvalConfig,
    EvalMetric,
    get_eval_metrics_from_config,
    get_evaluation_criteria_or_default,
)

__all__ = ["CustomMetricConfig", "EvalConfig", "LiveModelConfig", "append_default_efficiency_metrics",
           "get_eval_metrics_from_config", "get_evaluation_criteria_or_default"]

#: google-adk's default seconds to wait for a live model's turn
DEFAULT_LIVE_TIMEOUT_SECONDS = 300


class LiveModelConfig(BaseModel):
    """google-adk's settings of a live (bidirectional streaming) eval: the seconds to
    wait for the model's turn. Live inference is not offered by this package's eval
    service (``LocalEvalService`` refuses ``use_live``); the type reads and writes
    google-adk's config."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    timeout_seconds: int = DEFAULT_LIVE_TIMEOUT_SECONDS


def append_default_efficiency_metrics(eval_metrics: list[EvalMetric]) -> list[EvalMetric]:
    """A new list: ``eval_metrics`` as given (not changed), then each informational
    efficiency metric (``tool_call_count_v1``, ``inference_call_count_v1``,
    ``token_usage_v1``, ``invocation_duration_v1``; those an eval config gets, from
    :func:`get_eval_metrics_from_config`) that no metric of the list names. A metric of
    the list that names one stays as it is, so its threshold is still refused when the
    metrics are checked."""
    requested = {metric.metric_name for metric in eval_metrics}
    defaults = get_eval_metrics_from_config(EvalConfig(criteria={}))
    return [*eval_metrics, *(metric for metric in defaults if metric.metric_name not in requested)]
