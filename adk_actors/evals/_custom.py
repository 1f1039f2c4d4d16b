"""Custom metrics: a metric scored by a function of the user's, declared in the eval
config as google-adk 2.13 declares it.

``test_config.json`` (or any eval config) names the metric in ``criteria`` with its
threshold, and in ``custom_metrics`` the function that scores it::

    {"criteria": {"says_the_city": 0.8},
     "custom_metrics": {"says_the_city": {"code_config": {"name": "my_agent.metrics.says_the_city"},
                                          "description": "The answer names the city asked about."}}}

The function is google-adk's contract: ``fn(eval_metric, actual_invocations,
expected_invocations, conversation_scenario)``, plain or ``async``, returning an
:class:`EvaluationResult` (ours; google-adk's, or a dict of the same fields, is read
as one). In order:

1. the metrics are built from the config (``get_eval_metrics_from_config``): a
   criterion named in ``custom_metrics`` carries its ``code_config.name`` as the
   metric's ``custom_function_path`` and, privately, as the path to import; a
   ``custom_metrics`` entry the criteria do not name is not run;
2. before any agent runs, the path is imported (the module by its dotted name, then
   the attribute after the last dot): a path without a dot, a module that does not
   import, a missing attribute or one that cannot be called is a
   :class:`CustomMetricError` naming the metric and the path;
3. once a case's turns have run, the function gets a copy of the metric whose
   ``threshold`` is None and whose ``criterion`` reads both ways
   (``criterion.threshold`` and ``criterion["threshold"]``); the actual invocations;
   the expected ones (None for a case the user simulator played); and the case's
   ``conversation_scenario``;
4. its result is taken as it is: the overall score and status, and each
   invocation's, in order (google-adk's rule: the function, not a threshold
   comparison here, says whether it passed). A function that raises leaves the metric
   not evaluated, and ``details["error"]`` names the exception (google-adk logs it
   and reports the metric not evaluated). A result that is not an EvaluationResult,
   or that passes or fails with a number of per-invocation results other than the
   number of invocations, is a :class:`CustomMetricError` (google-adk raises a
   ``ValueError`` there too).

A metric's information (``metrics_info``) is the entry's ``metric_info`` with the
metric's name, else its ``description`` and a value in [0, 1].
"""

from __future__ import annotations

import importlib
import inspect
import logging
from abc import ABC
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from ..agents.common_configs import CodeConfig
from ._errors import EvalError
from ._models import (
    ConversationScenario,
    EvalCase,
    EvalMetric,
    EvalMetricResult,
    EvalStatus,
    Interval,
    Invocation,
    MetricInfo,
    MetricValueInfo,
)

__all__ = [
    "BaseCriterion",
    "CodeConfig",
    "CustomFunctionEvaluator",
    "CustomMetricConfig",
    "CustomMetricError",
    "EvaluationResult",
    "Evaluator",
    "PerInvocationResult",
    "config_function_path",
    "custom_metric_info",
    "custom_score",
    "evaluator_results",
    "for_evaluator",
    "load_metric_function",
    "read_evaluation_result",
    "with_function_path",
]

logger = logging.getLogger(__name__)


class CustomMetricError(EvalError):
    """A custom metric's function cannot be had (the message names the metric and its
    path), or it answered something that is not a result for every invocation."""


class CustomMetricConfig(BaseModel):
    """google-adk's ``CustomMetricConfig``: where a custom metric's function is, and
    what ``metrics_info`` says of it."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    code_config: CodeConfig
    metric_info: MetricInfo | None = None
    description: str = ""


def _plain(value: Any) -> Any:
    """A pydantic object (google-adk's ``RubricScore``, ``TokenUsageDetails``...) as data."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


class _Result(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    rubric_scores: list[dict[str, Any]] | None = None
    token_usage_details: dict[str, Any] | None = None
    duration_details: dict[str, Any] | None = None

    @field_validator("rubric_scores", "token_usage_details", "duration_details", mode="before")
    @classmethod
    def _as_data(cls, value: Any) -> Any:
        return _plain(value)

    def details(self) -> dict[str, Any]:
        """The result's details as a metric result keeps them (those given only)."""
        given = {"rubric_scores": self.rubric_scores, "token_usage_details": self.token_usage_details,
                 "duration_details": self.duration_details}
        return {key: value for key, value in given.items() if value is not None}


class PerInvocationResult(_Result):
    """google-adk's ``PerInvocationResult``: one invocation's score and status."""

    actual_invocation: Invocation
    expected_invocation: Invocation | None = None
    score: float | None = None
    eval_status: EvalStatus = EvalStatus.NOT_EVALUATED


class EvaluationResult(BaseModel):
    """google-adk's ``EvaluationResult``: a metric's overall score and status, and its
    result per invocation."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    overall_score: float | None = None
    overall_eval_status: EvalStatus = EvalStatus.NOT_EVALUATED
    per_invocation_results: list[PerInvocationResult] = Field(default_factory=list)
    overall_rubric_scores: list[dict[str, Any]] | None = None
    overall_token_usage_details: dict[str, Any] | None = None
    overall_duration_details: dict[str, Any] | None = None

    @field_validator("overall_rubric_scores", "overall_token_usage_details", "overall_duration_details",
                     mode="before")
    @classmethod
    def _as_data(cls, value: Any) -> Any:
        return _plain(value)

    def details(self) -> dict[str, Any]:
        """The overall details as a metric result keeps them (those given only)."""
        given = {"rubric_scores": self.overall_rubric_scores, "token_usage_details": self.overall_token_usage_details,
                 "duration_details": self.overall_duration_details}
        return {key: value for key, value in given.items() if value is not None}


class BaseCriterion(BaseModel):
    """A criterion as a custom metric's function reads it: google-adk's
    ``BaseCriterion`` (``criterion.threshold``, its other fields as attributes), and
    a dict's ``criterion["threshold"]`` / ``criterion.get(...)`` too."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    threshold: float

    def __getitem__(self, key: str) -> Any:
        return self.model_dump()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.model_dump().get(key, default)


class Evaluator(ABC):  # noqa: B024 - google-adk's base: abstract in name, with a default that raises
    """google-adk's ``Evaluator``: what scores one metric on a conversation's
    invocations. The eval services get one from the metric evaluator registry
    (``adk_actors.evaluation.metric_evaluator_registry``), as ``cls(eval_metric=...)``,
    and call :meth:`evaluate_invocations`; a class of yours registered there for a
    metric's name is what scores that metric."""

    #: the criterion type the evaluator reads (google-adk's class attribute)
    criterion_type: ClassVar[type[BaseModel]] = BaseCriterion

    def evaluate_invocations(self, actual_invocations: list[Invocation],
                             expected_invocations: list[Invocation] | None = None,
                             conversation_scenario: ConversationScenario | None = None,
                             ) -> EvaluationResult | Awaitable[EvaluationResult]:
        """The metric's result on the agent's ``actual_invocations``, against the
        ``expected_invocations`` when the case has them (then as many as the actual
        ones) and the case's ``conversation_scenario`` when it was simulated: an
        :class:`EvaluationResult` with one per-invocation result per actual
        invocation, or an awaitable of one. Subclasses implement it; this one raises
        NotImplementedError."""
        raise NotImplementedError(f"{type(self).__name__} does not implement evaluate_invocations")


def config_function_path(metric: EvalMetric) -> str | None:
    """The path of the function an eval config declared for ``metric``; None for a
    metric not built from a config's ``custom_metrics`` (its public
    ``custom_function_path`` is not read: see :class:`EvalMetric`)."""
    path: str | None = metric._config_custom_function_path
    return path


def with_function_path(metric: EvalMetric, path: str) -> EvalMetric:
    """``metric`` as a custom metric of the function at ``path``: the path in its
    ``custom_function_path`` and in the private attribute this module imports from."""
    made = metric.model_copy(update={"custom_function_path": path})
    made._config_custom_function_path = path
    return made


def load_metric_function(metric_name: str, path: str) -> Callable[..., Any]:
    """The function at ``path`` (see the module, step 2); CustomMetricError naming
    ``metric_name`` and ``path`` when it cannot be had."""
    module_name, dot, attribute = path.rpartition(".")
    if not dot or not module_name or not attribute:
        raise CustomMetricError(f"custom metric {metric_name!r}: its code_config.name {path!r} is not a dotted "
                                f"path to a function (package.module.function)")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # the user's module may raise anything while it is imported
        raise CustomMetricError(f"custom metric {metric_name!r}: cannot import module {module_name!r} of its "
                                f"function {path!r} ({type(exc).__name__}: {exc})") from exc
    function = getattr(module, attribute, None)
    if function is None:
        raise CustomMetricError(f"custom metric {metric_name!r}: module {module_name!r} has no {attribute!r} "
                                f"(its code_config.name is {path!r})")
    if not callable(function):
        raise CustomMetricError(f"custom metric {metric_name!r}: {path!r} is not a function (its type is "
                                f"{type(function).__name__})")
    return function  # type: ignore[no-any-return]


def _criterion_object(metric: EvalMetric) -> BaseCriterion | None:
    body = dict(metric.criterion or {})
    if "threshold" not in body and metric.threshold is not None:
        body["threshold"] = metric.threshold
    return BaseCriterion.model_validate(body) if "threshold" in body else None


def _for_function(metric: EvalMetric) -> EvalMetric:
    """The copy of ``metric`` the function gets (see the module, step 3)."""
    return metric.model_copy(update={"threshold": None, "criterion": _criterion_object(metric)}, deep=True)


def for_evaluator(metric: EvalMetric) -> EvalMetric:
    """The copy of ``metric`` a registered evaluator class gets: its threshold kept,
    its criterion read both ways (``criterion.threshold``, ``criterion["threshold"]``)
    as google-adk's config-built metrics carry a criterion object."""
    criterion = _criterion_object(metric)
    return metric.model_copy(update={"criterion": criterion if criterion is not None else metric.criterion},
                             deep=True)


def read_evaluation_result(who: str, answer: Any) -> EvaluationResult:
    """``answer`` as an :class:`EvaluationResult` (ours as it is; google-adk's, or a
    dict of the same fields, read as one); CustomMetricError naming ``who`` (what
    answered: "custom metric 'x': its function") when it is not one."""
    if isinstance(answer, EvaluationResult):
        return answer
    data = answer.model_dump(mode="json") if isinstance(answer, BaseModel) else answer
    if not isinstance(data, dict):
        raise CustomMetricError(f"{who} returned a {type(answer).__name__}, not an EvaluationResult")
    try:
        return EvaluationResult.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the result"
        raise CustomMetricError(f"{who}'s result is not an EvaluationResult ({where}: {first['msg']})") from None


def _function_inputs(pairs: list[tuple[Invocation, Invocation | None]], case: EvalCase | None
                     ) -> tuple[list[Invocation], list[Invocation] | None, ConversationScenario | None]:
    """The actual invocations, the expected ones (None for a simulated case or one
    whose expected turns are not all there) and the case's scenario."""
    actual = [made for made, _ in pairs]
    expected: list[Invocation] | None = [wanted for _, wanted in pairs if wanted is not None]
    if (case is not None and case.conversation is None) or len(expected or []) != len(pairs):
        expected = None
    return actual, expected, case.conversation_scenario if case is not None else None


def evaluator_results(metric: EvalMetric, threshold: float | None, who: tuple[str, str], call: Callable[..., Any],
                      pairs: list[tuple[Invocation, Invocation | None]], case: EvalCase | None = None
                      ) -> Awaitable[tuple[EvalMetricResult, list[EvalMetricResult]]]:
    """The overall and per-invocation results of ``metric`` from what ``call(actual,
    expected, scenario)`` answers (an EvaluationResult or an awaitable of one), in
    order: a ``call`` that raises leaves the metric not evaluated on every
    invocation, ``details["error"]`` naming it (``who[0]``) and the exception (logged);
    otherwise the answer is read (:func:`read_evaluation_result`) and taken as it is.
    A result that passes or fails with another number of per-invocation results than
    of invocations is a CustomMetricError (google-adk raises ValueError); one not
    evaluated or informational keeps its overall result and gets blank rows."""
    actual, expected, scenario = _function_inputs(pairs, case)

    def result(score: float | None, status: EvalStatus, details: dict[str, Any]) -> EvalMetricResult:
        return EvalMetricResult(metric_name=metric.metric_name, threshold=threshold, criterion=metric.criterion,
                                custom_function_path=metric.custom_function_path, score=score, eval_status=status,
                                details=details)

    async def run() -> tuple[EvalMetricResult, list[EvalMetricResult]]:
        try:
            answer = call(actual, expected, scenario)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as exc:  # the user's code may raise anything: not evaluated, and why
            logger.error("metric %r: %s raised", metric.metric_name, who[0], exc_info=True)
            blank = result(None, EvalStatus.NOT_EVALUATED, {"error": f"{who[0]} raised {type(exc).__name__}: {exc}"})
            return blank, [blank.model_copy(deep=True) for _ in pairs]
        outcome = read_evaluation_result(who[1], answer)
        rows = outcome.per_invocation_results
        if len(rows) != len(pairs):
            if outcome.overall_eval_status in (EvalStatus.PASSED, EvalStatus.FAILED):
                raise CustomMetricError(f"{who[1]} returned {len(rows)} per-invocation results for {len(pairs)} "
                                        "invocations")
            rows = [PerInvocationResult(actual_invocation=made) for made in actual]
        return (result(outcome.overall_score, outcome.overall_eval_status, outcome.details()),
                [result(row.score, row.eval_status, row.details()) for row in rows])

    return run()


async def custom_score(metric: EvalMetric, pairs: list[tuple[Invocation, Invocation | None]],
                       threshold: float, case: EvalCase | None = None
                       ) -> tuple[EvalMetricResult, list[EvalMetricResult]]:
    """The custom ``metric`` over one case's (actual, expected) invocations: the overall
    result and one per invocation (see the module, steps 3 and 4)."""
    path = config_function_path(metric)
    if path is None:
        raise CustomMetricError(f"metric {metric.metric_name!r} has no custom function declared in its eval config")
    function = load_metric_function(metric.metric_name, path)
    given = _for_function(metric)
    who = (f"the custom metric's function {path}", f"custom metric {metric.metric_name!r}: its function")
    return await evaluator_results(metric, threshold, who,
                                   lambda actual, expected, scenario: function(given, actual, expected, scenario),
                                   pairs, case)


class CustomFunctionEvaluator(Evaluator):
    """The evaluator of a custom metric an eval config declared (google-adk's private
    ``_CustomMetricEvaluator``): ``CustomFunctionEvaluator(eval_metric=...,
    custom_function_path=...)`` imports the function at once (CustomMetricError when
    it cannot be had); :meth:`evaluate_invocations` calls it as a custom metric's
    function is called (see the module) and reads its answer."""

    def __init__(self, eval_metric: EvalMetric, custom_function_path: str) -> None:
        self._eval_metric = eval_metric
        self._path = custom_function_path
        self._function = load_metric_function(eval_metric.metric_name, custom_function_path)

    async def evaluate_invocations(self, actual_invocations: list[Invocation],
                                   expected_invocations: list[Invocation] | None = None,
                                   conversation_scenario: ConversationScenario | None = None) -> EvaluationResult:
        """The function's answer, awaited when it is a coroutine, as an
        EvaluationResult (CustomMetricError when it is not one)."""
        answer = self._function(_for_function(self._eval_metric), actual_invocations, expected_invocations,
                                conversation_scenario)
        if inspect.isawaitable(answer):
            answer = await answer
        return read_evaluation_result(f"custom metric {self._eval_metric.metric_name!r}: its function", answer)


def custom_metric_info(name: str, config: CustomMetricConfig) -> MetricInfo:
    """What ``metrics_info`` lists for the custom metric ``name`` (see the module)."""
    if config.metric_info is not None:
        return config.metric_info.model_copy(update={"metric_name": name}, deep=True)
    return MetricInfo(metric_name=name, description=config.description,
                      metric_value_info=MetricValueInfo(interval=Interval(min_value=0.0, max_value=1.0)))
