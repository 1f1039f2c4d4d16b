"""The metrics a run of an eval set computes, scored as google-adk 2.13 scores them.

* ``tool_trajectory_avg_score``: per invocation, 1.0 when the agent's tool calls match
  the expected ones, else 0.0; overall, the mean. How they match is the criterion's
  (google-adk's ``ToolTrajectoryCriterion``): ``match_type`` ``EXACT`` (the default:
  the same calls, in order, nothing more), ``IN_ORDER`` (the expected calls in that
  order, others allowed between them) or ``ANY_ORDER`` (the expected calls in any
  order, others allowed; each actual call answers one expected call); no expected
  call matches anything under ``IN_ORDER`` and ``ANY_ORDER``. A call matches when its
  name and its arguments are equal; ``ignore_args`` compares names only.
  ``match_type`` is read as google-adk reads it: a name in any case, with ``-`` or
  a space for ``_``, or the enum's number (0, 1, 2).
* ``response_match_score``: per invocation, ROUGE-1 F1 between the expected and the
  actual final response (see ``_rouge``: google-adk's tokens and Porter stemming);
  an invocation without an expected or an actual response compares an empty text
  (0.0). Overall, the mean.
* ``final_response_match_v2``: a judge model's verdict (see ``_judge``).
* ``rubric_based_final_response_quality_v1``, ``rubric_based_tool_use_quality_v1``:
  a judge model's yes or no per rubric (see ``_rubrics``).
* ``hallucinations_v1``: the share of supported sentences (see ``_hallucinations``).
* ``rubric_based_multi_turn_trajectory_quality_v1``: a judge model's yes or no per
  rubric on the whole conversation, scored on its last invocation (see ``_multi_turn``).
* ``per_turn_user_simulator_quality_v1``: whether the user simulator kept to its
  scenario, turn by turn (see ``_simulator_quality``).
* a custom metric (its eval config's ``custom_metrics``): the user's function scores
  it and says whether it passed (see ``_custom``); a custom metric of a built-in
  metric's name replaces it, as in google-adk.
* a metric whose name the metric evaluator registry in use maps to an evaluator
  class of the user's (``adk_actors.evaluation.metric_evaluator_registry``: the
  default registry, or the one a ``LocalEvalService`` was given): that class,
  made with ``cls(eval_metric=...)``, scores it; its ``EvaluationResult`` is taken as
  a custom metric's is (see :func:`~._custom.evaluator_results`). A registry entry
  that is one of our evaluator classes for its own metric scores as below; one
  registered from an eval config's ``custom_metrics`` runs that config's function.

Each passes when its score reaches the threshold (the criterion's, else the
metric's; the host's ``adk-actors eval`` defaults are 1.0 and 0.8 for the first two,
google-adk's ``test_config.json`` defaults). The informational efficiency metrics
(``_efficiency``) report a value, never pass or fail, and take no threshold.
google-adk's metrics that Vertex AI's eval service scores (``safety_v1``,
``response_evaluation_score``, ``multi_turn_task_success_v1``,
``multi_turn_trajectory_quality_v1``, ``multi_turn_tool_use_quality_v1``) are not
offered here: naming one is a :class:`~._vertex.VertexEvalRequired` saying what it
needs (see ``_vertex``); an unknown metric name is an :class:`EvalError`.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

from .. import models
from ._custom import (
    CustomFunctionEvaluator,
    CustomMetricConfig,
    Evaluator,
    config_function_path,
    custom_metric_info,
    custom_score,
    evaluator_results,
    for_evaluator,
    load_metric_function,
    with_function_path,
)
from ._efficiency import EFFICIENCY_METRICS, check_no_threshold, efficiency_results
from ._errors import EvalError
from ._hallucinations import HALLUCINATIONS_V1, hallucinations_score
from ._judge import (
    FINAL_RESPONSE_MATCH_V2,
    JudgeOutcome,
    LlmAsAJudgeCriterion,
    criterion_of,
    joined_text,
    judge_score,
)
from ._models import (
    EvalCase,
    EvalMetric,
    EvalMetricResult,
    EvalStatus,
    Interval,
    Invocation,
    MetricInfo,
    MetricValueInfo,
)
from ._multi_turn import RUBRIC_MULTI_TURN_TRAJECTORY, multi_turn_trajectory_score
from ._rouge import rouge1_f
from ._rubrics import (
    RUBRIC_FINAL_RESPONSE,
    RUBRIC_METRICS,
    RUBRIC_TOOL_USE,
    RubricsBasedCriterion,
    rubric_score,
)
from ._simulator_quality import (
    PER_TURN_USER_SIMULATOR_QUALITY,
    LlmBackedUserSimulatorCriterion,
    simulator_quality_score,
)
from ._vertex import VERTEX_METRICS, VertexEvalRequired, vertex_required

__all__ = [
    "DEFAULT_THRESHOLDS",
    "FINAL_RESPONSE_MATCH_V2",
    "HALLUCINATIONS_V1",
    "JUDGE_METRICS",
    "MATCH_TYPES",
    "PER_TURN_USER_SIMULATOR_QUALITY",
    "RESPONSE_MATCH",
    "RUBRIC_FINAL_RESPONSE",
    "RUBRIC_MULTI_TURN_TRAJECTORY",
    "RUBRIC_TOOL_USE",
    "TOOL_TRAJECTORY",
    "VERTEX_METRICS",
    "EvalError",
    "EvaluatorLookup",
    "VertexEvalRequired",
    "check_metric",
    "metrics_info",
    "registry_in_use",
    "rouge1_f",
    "score",
    "score_async",
    "threshold_of",
    "unscored",
    "use_default_registry",
]

TOOL_TRAJECTORY = "tool_trajectory_avg_score"
RESPONSE_MATCH = "response_match_score"
DEFAULT_THRESHOLDS = {TOOL_TRAJECTORY: 1.0, RESPONSE_MATCH: 0.8}
JUDGE_METRICS = (FINAL_RESPONSE_MATCH_V2, *RUBRIC_METRICS, HALLUCINATIONS_V1, RUBRIC_MULTI_TURN_TRAJECTORY,
                 PER_TURN_USER_SIMULATOR_QUALITY)
#: each judge metric's criterion type (google-adk's), where it is not LlmAsAJudgeCriterion
_CRITERIA: dict[str, type[LlmAsAJudgeCriterion]] = {
    **dict.fromkeys((*RUBRIC_METRICS, RUBRIC_MULTI_TURN_TRAJECTORY), RubricsBasedCriterion),
    PER_TURN_USER_SIMULATOR_QUALITY: LlmBackedUserSimulatorCriterion}

#: the trajectory criterion's match types (google-adk's ``ToolTrajectoryCriterion.MatchType``)
MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER")


class EvaluatorLookup(Protocol):
    """What scoring asks of a metric evaluator registry (google-adk's
    ``MetricEvaluatorRegistry``, ``adk_actors.evaluation.metric_evaluator_registry``)."""

    def registered_class(self, metric_name: str) -> type[Evaluator] | None:
        """The evaluator class registered for ``metric_name``; None when there is none."""

    def registered_function_path(self, metric_name: str) -> str | None:
        """The function an eval config declared for ``metric_name``, when it was
        registered from one; else None."""

    def get_evaluator(self, eval_metric: EvalMetric) -> Evaluator:
        """A new evaluator of ``eval_metric``."""

    def user_registered_metrics(self) -> list[MetricInfo]:
        """The info of the metrics registered beyond the built-in ones, in order."""


#: the registry the metric evaluator registry module makes its default (set on its import)
_DEFAULT_REGISTRY: list[EvaluatorLookup] = []
#: a registry that replaces the default while a service scores (``registry_in_use``)
_REGISTRY_IN_USE: ContextVar[EvaluatorLookup | None] = ContextVar("adk_actors_metric_registry", default=None)


def use_default_registry(registry: EvaluatorLookup) -> None:
    """Make ``registry`` the one scoring consults when no other is in use (the metric
    evaluator registry module calls this with its default registry when imported)."""
    _DEFAULT_REGISTRY[:] = [registry]


@contextmanager
def registry_in_use(registry: EvaluatorLookup | None) -> Iterator[None]:
    """Within the block, scoring in this context consults ``registry`` instead of the
    default one (None: the default); the previous one is back after it, even on
    failure."""
    token = _REGISTRY_IN_USE.set(registry)
    try:
        yield
    finally:
        _REGISTRY_IN_USE.reset(token)


def _ours_for(klass: type, name: str) -> bool:
    """Whether ``klass`` is one of our evaluator classes scoring metric ``name`` as
    this module does: the first class up its MRO that names the metrics it scores
    (``_scores_metrics``) names ``name``, and no class before it redefines
    ``evaluate_invocations``."""
    for base in klass.__mro__:
        if "_scores_metrics" in vars(base):
            return name in vars(base)["_scores_metrics"]
        if "evaluate_invocations" in vars(base):
            return False
    return False


def _routed(metric: EvalMetric) -> tuple[EvalMetric, EvaluatorLookup | None]:
    """How ``metric`` is scored, by the registry in use, in order: a metric with a
    config's function, or whose name has no entry, or whose entry is ours for it,
    as it is, with no registry; an entry registered from an eval config, as a custom
    metric of that config's function; any other entry, by that registry."""
    if config_function_path(metric) is not None:
        return metric, None
    registry = _REGISTRY_IN_USE.get() or (_DEFAULT_REGISTRY[0] if _DEFAULT_REGISTRY else None)
    klass = registry.registered_class(metric.metric_name) if registry is not None else None
    if registry is None or klass is None or _ours_for(klass, metric.metric_name):
        return metric, None
    path = registry.registered_function_path(metric.metric_name)
    if path is not None and issubclass(klass, CustomFunctionEvaluator):
        return with_function_path(metric, path), None
    return metric, registry


def _given_threshold(metric: EvalMetric) -> float | None:
    """The criterion's threshold, else the metric's, else None (a registered
    evaluator's metric may have none)."""
    given = _criterion_value(metric.criterion, "threshold", "threshold", metric.threshold)
    return float(given) if isinstance(given, int | float) and not isinstance(given, bool) else None


async def _registered_score(registry: EvaluatorLookup, metric: EvalMetric,
                            pairs: list[tuple[Invocation, Invocation | None]], case: EvalCase | None
                            ) -> tuple[EvalMetricResult, list[EvalMetricResult]]:
    """``metric`` scored by the evaluator ``registry`` makes for it (see the module)."""
    given = for_evaluator(metric)

    def call(actual: list[Invocation], expected: list[Invocation] | None, scenario: Any) -> Any:
        return registry.get_evaluator(given).evaluate_invocations(actual, expected, scenario)

    name = metric.metric_name
    who = (f"the evaluator registered for metric {name!r}", f"metric {name!r}: its registered evaluator")
    return await evaluator_results(metric, _given_threshold(metric), who, call, pairs, case)


def _criterion_value(criterion: dict[str, Any] | None, snake: str, camel: str, default: Any) -> Any:
    if not criterion:
        return default
    return criterion.get(snake, criterion.get(camel, default))


def _match_type(criterion: dict[str, Any] | None) -> str:
    given = _criterion_value(criterion, "match_type", "matchType", "EXACT")
    if isinstance(given, int) and not isinstance(given, bool) and 0 <= given < len(MATCH_TYPES):
        return MATCH_TYPES[given]
    match = str(given).strip().upper().replace("-", "_").replace(" ", "_")
    if match not in MATCH_TYPES:
        raise EvalError(f"a tool trajectory's match_type is one of {', '.join(MATCH_TYPES)}, got {given!r}")
    return match


def _trajectory(actual: Invocation, expected: Invocation | None, criterion: dict[str, Any] | None) -> float | None:
    if expected is None:
        return None
    match = _match_type(criterion)
    names_only = bool(_criterion_value(criterion, "ignore_args", "ignoreArgs", False))

    def calls(invocation: Invocation) -> list[tuple[str, Any]]:
        return [(call.name, None if names_only else dict(call.args)) for call in invocation.tool_calls()]

    made, wanted = calls(actual), calls(expected)
    if match == "EXACT":
        return 1.0 if made == wanted else 0.0
    if match == "IN_ORDER":
        rest = iter(made)
        return 1.0 if all(any(call == one for one in rest) for call in wanted) else 0.0
    left = list(made)
    for call in wanted:
        if call not in left:
            return 0.0
        left.remove(call)
    return 1.0


def _response(actual: Invocation, expected: Invocation | None, criterion: dict[str, Any] | None) -> float | None:
    if expected is None:
        return None
    return rouge1_f(joined_text(expected.final_response) or "", joined_text(actual.final_response) or "")


_SCORERS: dict[str, Callable[[Invocation, Invocation | None, dict[str, Any] | None], float | None]] = {
    TOOL_TRAJECTORY: _trajectory, RESPONSE_MATCH: _response}
_DESCRIPTIONS = {
    TOOL_TRAJECTORY: "1.0 when the agent made the expected tool calls (criterion match_type: EXACT, IN_ORDER or "
                     "ANY_ORDER; ignore_args); the mean over the conversation's invocations.",
    RESPONSE_MATCH: "ROUGE-1 F1 between the expected and the actual final response (stemmed words, as "
                    "google-adk); the mean over the conversation's invocations.",
    FINAL_RESPONSE_MATCH_V2: "A judge model's verdict (valid 1.0, invalid 0.0; a majority of num_samples) on "
                             "whether the final response is as good as the expected one; the mean.",
    RUBRIC_FINAL_RESPONSE: "A judge model's yes (1.0) or no (0.0) on each rubric of type FINAL_RESPONSE_QUALITY "
                           "for the final response, given the tool steps; the mean over rubrics and invocations.",
    RUBRIC_TOOL_USE: "A judge model's yes (1.0) or no (0.0) on each rubric of type TOOL_USE_QUALITY for the "
                     "tool calls and their answers; the mean over rubrics and invocations.",
    HALLUCINATIONS_V1: "The share of the response's sentences a judge model finds supported by the context "
                       "(the user's message, the tool calls and their answers) or asserting no fact; the mean.",
    RUBRIC_MULTI_TURN_TRAJECTORY: "A judge model's yes (1.0) or no (0.0) on each rubric of type TRAJECTORY_QUALITY "
                                  "for the whole conversation, scored on its last invocation; the mean over rubrics.",
    PER_TURN_USER_SIMULATOR_QUALITY: "Whether the user simulator kept to its conversation scenario: the starting "
                                     "prompt, then a judge model's verdict on each later message and on the stop; "
                                     "the share of passing turns.",
}


def metrics_info(custom_metrics: dict[str, CustomMetricConfig] | None = None) -> list[MetricInfo]:
    """The metrics this kit computes, as google-adk's ``metrics-info`` lists them; then
    the custom metrics of an eval config's ``custom_metrics`` (``_custom``), one of a
    built-in metric's name taking its place; then each metric the user registered in
    the metric evaluator registry in use (``registry_in_use``, else the default one:
    google-adk lists every metric of its registry), one of a name listed before taking
    that one's place."""
    custom = {name: custom_metric_info(name, config) for name, config in (custom_metrics or {}).items()}
    built_in = [MetricInfo(metric_name=name, description=_DESCRIPTIONS[name],
                           metric_value_info=MetricValueInfo(interval=Interval(min_value=0.0, max_value=1.0)))
                for name in (*_SCORERS, *JUDGE_METRICS) if name not in custom]
    listed = {str(info.metric_name): info for info in built_in + list(custom.values())}
    registry = _REGISTRY_IN_USE.get() or (_DEFAULT_REGISTRY[0] if _DEFAULT_REGISTRY else None)
    for info in registry.user_registered_metrics() if registry is not None else []:
        listed[str(info.metric_name)] = info
    return list(listed.values())


def _status(value: float | None, threshold: float) -> EvalStatus:
    if value is None:
        return EvalStatus.NOT_EVALUATED
    return EvalStatus.PASSED if value >= threshold else EvalStatus.FAILED


def check_metric(metric: EvalMetric) -> None:
    """EvalError for a metric not offered here or a criterion that is not valid for it
    (an informational metric given a threshold among them); for a custom metric, a
    :class:`~._custom.CustomMetricError` when its function cannot be imported. A
    metric a registered evaluator of the user's scores is not checked here."""
    metric, registry = _routed(metric)
    if registry is not None:
        return
    path = config_function_path(metric)
    if path is not None:
        load_metric_function(metric.metric_name, path)
        threshold_of(metric)
    elif metric.metric_name in EFFICIENCY_METRICS:
        check_no_threshold(metric)
    else:
        threshold_of(metric)


def threshold_of(metric: EvalMetric) -> float:
    """The criterion's threshold, else the metric's, else (the host's trajectory and
    response metrics only) its default; EvalError for an unknown metric, a bad
    criterion, or a judge or custom metric without a threshold."""
    metric, registry = _routed(metric)
    if registry is not None:
        given = _given_threshold(metric)
        if given is None:
            raise EvalError(f"metric {metric.metric_name!r} has no threshold")
        return given
    if config_function_path(metric) is not None:
        given = _criterion_value(metric.criterion, "threshold", "threshold", metric.threshold)
        if isinstance(given, bool) or not isinstance(given, int | float):
            raise EvalError(f"custom metric {metric.metric_name!r} needs a numeric threshold, got {given!r}")
        return float(given)
    if metric.metric_name in VERTEX_METRICS:
        raise vertex_required(metric)
    if metric.metric_name not in _SCORERS and metric.metric_name not in JUDGE_METRICS:
        offered = sorted((*_SCORERS, *JUDGE_METRICS, *EFFICIENCY_METRICS))
        if metric.metric_name in EFFICIENCY_METRICS:
            raise EvalError(f"metric {metric.metric_name!r} reports a value and has no threshold")
        raise EvalError(f"metric {metric.metric_name!r} is not offered here; the metrics are {', '.join(offered)}")
    if metric.metric_name == TOOL_TRAJECTORY:
        _match_type(metric.criterion)
    if metric.metric_name in JUDGE_METRICS:
        return criterion_of(metric, _CRITERIA.get(metric.metric_name, LlmAsAJudgeCriterion)).threshold
    given = _criterion_value(metric.criterion, "threshold", "threshold", metric.threshold)
    if given is None:
        return DEFAULT_THRESHOLDS[metric.metric_name]
    if isinstance(given, bool) or not isinstance(given, int | float):
        raise EvalError(f"metric {metric.metric_name!r}: the threshold must be a number, got {given!r}")
    return float(given)


def _results(metric: EvalMetric, threshold: float, outcome: JudgeOutcome
             ) -> tuple[EvalMetricResult, list[EvalMetricResult]]:
    def result(value: float | None, why: str = "", more: dict[str, Any] | None = None) -> EvalMetricResult:
        details = {**(more or {}), **({"error": why} if why else {})}
        return EvalMetricResult(metric_name=metric.metric_name, threshold=threshold, criterion=metric.criterion,
                                score=value, eval_status=_status(value, threshold), details=details)

    known = [value for value in outcome.scores if value is not None]
    total = outcome.overall if outcome.overall is not None else statistics.fmean(known) if known else None
    reasons = sorted({why for why in outcome.reasons if why})
    more = outcome.details or [{} for _ in outcome.scores]
    return (result(total, "; ".join(reasons) if total is None else "", outcome.overall_details),
            [result(value, why, extra) for value, why, extra in zip(outcome.scores, outcome.reasons, more,
                                                                     strict=True)])


async def score_async(metric: EvalMetric, pairs: list[tuple[Invocation, Invocation | None]],
                      resolve: Callable[[str], Any] | None = None, case: EvalCase | None = None
                      ) -> tuple[EvalMetricResult, list[EvalMetricResult]]:
    """``metric`` over the (actual, expected) invocations of ``case``: the overall
    result and one per invocation. A judge metric asks its judge model, resolved by
    ``resolve`` (default :func:`adk_actors.models.resolve_model`); a rubric metric
    reads the case's rubrics too; a custom metric calls its function (``_custom``).
    EvalError for a metric not offered here or a criterion that is not valid, before
    any call. A metric the registry in use maps to an evaluator of the user's is
    scored by it (see the module)."""
    metric, registry = _routed(metric)
    if registry is not None:
        return await _registered_score(registry, metric, pairs, case)
    if config_function_path(metric) is not None:
        return await custom_score(metric, pairs, threshold_of(metric), case)
    if metric.metric_name in EFFICIENCY_METRICS:
        return efficiency_results(metric, [actual for actual, _ in pairs])
    threshold = threshold_of(metric)
    if metric.metric_name == FINAL_RESPONSE_MATCH_V2:
        return _results(metric, threshold, await judge_score(metric, pairs, resolve or models.resolve_model))
    if metric.metric_name == HALLUCINATIONS_V1:
        return _results(metric, threshold, await hallucinations_score(metric, pairs, resolve or models.resolve_model))
    if metric.metric_name in RUBRIC_METRICS:
        return _results(metric, threshold,
                        await rubric_score(metric, pairs, resolve or models.resolve_model, case))
    if metric.metric_name == RUBRIC_MULTI_TURN_TRAJECTORY:
        return _results(metric, threshold,
                        await multi_turn_trajectory_score(metric, pairs, resolve or models.resolve_model, case))
    if metric.metric_name == PER_TURN_USER_SIMULATOR_QUALITY:
        return _results(metric, threshold,
                        await simulator_quality_score(metric, pairs, resolve or models.resolve_model, case))
    return _plain_scores(metric, threshold, pairs)


def _plain_scores(metric: EvalMetric, threshold: float, pairs: list[tuple[Invocation, Invocation | None]]
                  ) -> tuple[EvalMetricResult, list[EvalMetricResult]]:
    scorer = _SCORERS[metric.metric_name]
    values = [scorer(actual, expected, metric.criterion) for actual, expected in pairs]
    return _results(metric, threshold, JudgeOutcome(values, [""] * len(values)))


def unscored(metric: EvalMetric, count: int, why: str) -> tuple[EvalMetricResult, list[EvalMetricResult]]:
    """``metric`` not evaluated, overall and on each of ``count`` invocations, for the
    reason ``why`` (in ``details["error"]``): a judge that could not be had."""
    metric, registry = _routed(metric)
    custom = config_function_path(metric) is not None
    threshold = (_given_threshold(metric) if registry is not None else
                 None if metric.metric_name in EFFICIENCY_METRICS and not custom else threshold_of(metric))
    blank = EvalMetricResult(metric_name=metric.metric_name, threshold=threshold,
                             criterion=metric.criterion, custom_function_path=metric.custom_function_path,
                             eval_status=EvalStatus.NOT_EVALUATED, details={"error": why})
    return blank, [blank.model_copy(deep=True) for _ in range(count)]


def score(metric: EvalMetric, pairs: list[tuple[Invocation, Invocation | None]], case: EvalCase | None = None
          ) -> tuple[EvalMetricResult, list[EvalMetricResult]]:
    """:func:`score_async` from sync code (a judge or custom metric runs on an event
    loop of its own; EvalError if this thread already runs one)."""
    routed, registry = _routed(metric)
    custom = registry is not None or config_function_path(routed) is not None
    if metric.metric_name in EFFICIENCY_METRICS and not custom:
        return efficiency_results(metric, [actual for actual, _ in pairs])
    if metric.metric_name not in JUDGE_METRICS and not custom:
        return _plain_scores(metric, threshold_of(metric), pairs)
    try:
        asyncio.get_running_loop()
        running = True
    except RuntimeError:
        running = False
    if running:
        raise EvalError("a judge or custom metric scored from a running event loop: use score_async")
    return asyncio.run(score_async(metric, pairs, case=case))
