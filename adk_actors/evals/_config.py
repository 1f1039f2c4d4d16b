"""An eval config: which metrics to compute and how, in google-adk 2.13's format.

A ``test_config.json`` beside a test file holds ``{"criteria": {...}}``: each key a
metric's name, each value either its threshold (a number) or a criterion (an object
with ``threshold`` and the metric's options, e.g. ``match_type`` for
``tool_trajectory_avg_score``, ``judge_model_options`` for a judge metric). Names may
be snake_case or camelCase, as google-adk reads them. Without a file, the criteria
are google-adk's defaults: ``tool_trajectory_avg_score`` 1.0 and
``response_match_score`` 0.8.

``custom_metrics`` declares, per metric name, the function that scores it (google-adk's
``CustomMetricConfig``: ``code_config.name``, ``metric_info``, ``description``; see
``_custom``); a criterion of that name runs it. ``user_simulator_config`` configures
the user simulator (``_simulator``); ``live_model_config`` is read (so a google-adk
config file loads) but not acted on here.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from ._custom import CustomMetricConfig, with_function_path
from ._efficiency import EFFICIENCY_METRICS
from ._errors import EvalError
from ._models import EvalMetric

__all__ = ["EvalConfig", "get_eval_metrics_from_config", "get_evaluation_criteria_or_default"]

logger = logging.getLogger(__name__)


class EvalConfig(BaseModel):
    """google-adk's ``EvalConfig``: ``criteria`` maps a metric's name to its threshold
    or its criterion (see the module)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    criteria: dict[str, float | dict[str, Any]] = Field(default_factory=dict)
    custom_metrics: dict[str, CustomMetricConfig] | None = None
    user_simulator_config: dict[str, Any] | None = None
    live_model_config: dict[str, Any] | None = None

    @field_validator("criteria", mode="before")
    @classmethod
    def _criteria_as_data(cls, criteria: Any) -> Any:
        """A criterion given as an object (google-adk's ``BaseCriterion`` or one of ours)
        is kept as its data, as a file gives it."""
        if isinstance(criteria, dict):
            return {name: value.model_dump() if isinstance(value, BaseModel) else value
                    for name, value in criteria.items()}
        return criteria

    @field_validator("criteria")
    @classmethod
    def _thresholds(cls, criteria: dict[str, float | dict[str, Any]]) -> dict[str, float | dict[str, Any]]:
        for name, criterion in criteria.items():
            threshold = criterion.get("threshold") if isinstance(criterion, dict) else criterion
            if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not math.isfinite(threshold):
                raise ValueError(f"criterion {name!r} needs a numeric threshold, got {threshold!r}")
        return criteria


_DEFAULT_CRITERIA: dict[str, float | dict[str, Any]] = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}


def get_evaluation_criteria_or_default(eval_config_file_path: str | Path | None) -> EvalConfig:
    """The config in ``eval_config_file_path`` when that file exists, else the default
    criteria. A file that is not a valid config is an :class:`EvalError` naming it."""
    if eval_config_file_path is None or not Path(eval_config_file_path).exists():
        logger.info("no eval config file: the default criteria are used")
        return EvalConfig(criteria=dict(_DEFAULT_CRITERIA))
    text = Path(eval_config_file_path).read_text(encoding="utf-8")
    try:
        return EvalConfig.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the file"
        raise EvalError(f"{eval_config_file_path}: not an eval config ({where}: {first['msg']})") from None


def get_eval_metrics_from_config(eval_config: EvalConfig) -> list[EvalMetric]:
    """One :class:`EvalMetric` per criterion, in the config's order: its threshold, and
    its criterion as an object (a bare number becomes ``{"threshold": n}``), and for a
    metric ``custom_metrics`` names, the path of its function; then, as
    google-adk, the informational efficiency metrics the criteria do not name (naming
    one gives it a threshold, which it refuses: an EvalError when the metrics are
    checked)."""
    metrics = []
    custom = eval_config.custom_metrics or {}
    for name, criterion in eval_config.criteria.items():
        body = {"threshold": float(criterion)} if not isinstance(criterion, dict) else dict(criterion)
        metric = EvalMetric(metric_name=name, threshold=float(body["threshold"]), criterion=body)
        if name in custom:  # the config's own function for it: _custom
            metric = with_function_path(metric, custom[name].code_config.name)
        metrics.append(metric)
    named = {metric.metric_name for metric in metrics}
    return metrics + [EvalMetric(metric_name=name) for name in EFFICIENCY_METRICS if name not in named]
