"""google-adk's ``google.adk.evaluation.metric_evaluator_registry`` path: which
:class:`~.evaluator.Evaluator` class scores a metric, by the metric's name.

:data:`DEFAULT_METRIC_EVALUATOR_REGISTRY` is the registry our eval runs consult
(``AgentEvaluator.evaluate``, ``adk-actors eval AGENT_DIR``, ``LocalEvalService``
without a registry of its own, ``adk_actors.evals._metrics``): register a class of
yours for a metric's name there and that class scores the metric, made as
``cls(eval_metric=...)``. A ``LocalEvalService`` given another registry consults that
one instead, while it scores.

A registry starts with the built-in metrics (google-adk's list): the evaluator class
of each metric scored here (``TrajectoryEvaluator``, ``ResponseEvaluator``, the judge
and rubric evaluators, the informational efficiency metrics), and of the metrics only
Vertex AI scores (made, they raise ``VertexEvalRequired``).

Unlike google-adk, :meth:`MetricEvaluatorRegistry.register_evaluator` checks what it
is given: a ``metric_info`` that is not a :class:`MetricInfo`, or an ``evaluator``
that is not an :class:`Evaluator` subclass, is a TypeError (google-adk takes it, and
fails when the metric is scored).
"""

from __future__ import annotations

import copy
import logging

from .._exceptions import NotFoundError
from ..evals import EvalConfig, EvalMetric, MetricInfo
from ..evals._custom import CustomFunctionEvaluator, Evaluator
from ..evals._metrics import use_default_registry
from ..evals._models import Interval, MetricValueInfo
from ..evals._vertex import (
    RESPONSE_EVALUATION,
)
from ._metric_evaluators import EFFICIENCY_EVALUATORS, VertexOnlyEvaluator
from .final_response_match_v2 import FinalResponseMatchV2Evaluator
from .hallucinations_v1 import HallucinationsV1Evaluator
from .metric_info_providers import (
    FinalResponseMatchV2EvaluatorMetricInfoProvider,
    HallucinationsV1EvaluatorMetricInfoProvider,
    InferenceCallCountV1MetricInfoProvider,
    InvocationDurationV1MetricInfoProvider,
    MultiTurnTaskSuccessV1MetricInfoProvider,
    MultiTurnToolUseQualityV1MetricInfoProvider,
    MultiTurnTrajectoryQualityV1MetricInfoProvider,
    PerTurnUserSimulatorQualityV1MetricInfoProvider,
    ResponseEvaluatorMetricInfoProvider,
    RubricBasedFinalResponseQualityV1EvaluatorMetricInfoProvider,
    RubricBasedMultiTurnTrajectoryMetricInfoProvider,
    RubricBasedToolUseV1EvaluatorMetricInfoProvider,
    SafetyEvaluatorV1MetricInfoProvider,
    TokenUsageV1MetricInfoProvider,
    ToolCallCountV1MetricInfoProvider,
    TrajectoryEvaluatorMetricInfoProvider,
)
from .response_evaluator import ResponseEvaluator
from .rubric_based_final_response_quality_v1 import RubricBasedFinalResponseQualityV1Evaluator
from .rubric_based_multi_turn_trajectory_evaluator import RubricBasedMultiTurnTrajectoryEvaluator
from .rubric_based_tool_use_quality_v1 import RubricBasedToolUseV1Evaluator
from .simulation.per_turn_user_simulator_quality_v1 import PerTurnUserSimulatorQualityV1
from .trajectory_evaluator import TrajectoryEvaluator

__all__ = ["DEFAULT_METRIC_EVALUATOR_REGISTRY", "MetricEvaluatorRegistry", "register_custom_metrics_from_config"]

logger = logging.getLogger(__name__)


class MetricEvaluatorRegistry:
    """Metric names mapped to evaluator classes and the metrics' info (see the
    module). Each registry has its own mappings; a new one holds the built-in
    metrics."""

    def __init__(self) -> None:
        self._registry: dict[str, tuple[type[Evaluator], MetricInfo]] = {}
        #: the function path of each metric registered from an eval config's custom_metrics
        self._custom_function_paths: dict[str, str] = {}
        _register_standard_metrics(self)
        #: the built-in entries as first registered (what :meth:`user_registered_metrics` leaves out)
        self._standard = dict(self._registry)

    def get_evaluator(self, eval_metric: EvalMetric) -> Evaluator:
        """A new evaluator of ``eval_metric``, in order: NotFoundError when no class is
        registered for its name; for a metric registered from an eval config, the
        evaluator of that config's function (else of the function ``eval_metric``'s
        own config declared; NotFoundError when there is neither); otherwise
        ``cls(eval_metric=eval_metric)``, which raises what that class raises."""
        entry = self._registry.get(eval_metric.metric_name)
        if entry is None:
            raise NotFoundError(f"no evaluator is registered for metric {eval_metric.metric_name!r}")
        evaluator_type = entry[0]
        if issubclass(evaluator_type, CustomFunctionEvaluator):
            path = self._custom_function_paths.get(eval_metric.metric_name) or eval_metric._config_custom_function_path
            if path is None:
                raise NotFoundError(f"custom metric {eval_metric.metric_name!r} has no function registered for it")
            return evaluator_type(eval_metric=eval_metric, custom_function_path=path)
        return evaluator_type(eval_metric=eval_metric)  # type: ignore[call-arg]

    def register_evaluator(self, metric_info: MetricInfo, evaluator: type[Evaluator]) -> None:
        """Map ``metric_info.metric_name`` to ``evaluator`` (replacing, and logging, an
        earlier class for that name); TypeError when ``metric_info`` is not a
        MetricInfo or ``evaluator`` not an Evaluator subclass."""
        self._register(metric_info, evaluator, None)

    def _register(self, metric_info: MetricInfo, evaluator: type[Evaluator], custom_function_path: str | None) -> None:
        """:meth:`register_evaluator`, keeping ``custom_function_path`` (an eval config's
        function) for the metric when one is given; a path recorded earlier stays when
        none is."""
        if not isinstance(metric_info, MetricInfo):
            raise TypeError(f"metric_info must be a MetricInfo, got {type(metric_info).__name__}")
        if not (isinstance(evaluator, type) and issubclass(evaluator, Evaluator)):
            raise TypeError(f"metric {metric_info.metric_name!r}: the evaluator must be a subclass of Evaluator "
                            f"(adk_actors.evaluation.evaluator), got {evaluator!r}")
        name = str(metric_info.metric_name)
        if name in self._registry:
            logger.info("metric %r: evaluator %s replaced by %s", name, self._registry[name][0].__name__,
                        evaluator.__name__)
        self._registry[name] = (evaluator, metric_info)
        if custom_function_path is not None:
            self._custom_function_paths[name] = custom_function_path

    def get_registered_metrics(self) -> list[MetricInfo]:
        """A copy of the info of each metric registered, in the order registered."""
        return [info.model_copy(deep=True) for _, info in self._registry.values()]

    def user_registered_metrics(self) -> list[MetricInfo]:
        """A copy of the info of each metric registered after the built-in ones (a new
        name, or a built-in name registered again), in the order registered: what
        ``adk_actors.evals.metrics_info`` adds to its list, as google-adk's
        ``metrics-info`` lists every registered metric."""
        return [entry[1].model_copy(deep=True) for name, entry in self._registry.items()
                if entry is not self._standard.get(name)]

    def fork(self) -> MetricEvaluatorRegistry:
        """A new registry with this one's mappings; what either registers afterwards
        the other does not see."""
        forked = copy.copy(self)
        forked._registry = dict(self._registry)
        forked._custom_function_paths = dict(self._custom_function_paths)
        return forked

    # -- what scoring asks (adk_actors.evals._metrics.EvaluatorLookup) ---------------------------

    def registered_class(self, metric_name: str) -> type[Evaluator] | None:
        """The class registered for ``metric_name``; None when there is none."""
        entry = self._registry.get(metric_name)
        return entry[0] if entry is not None else None

    def registered_function_path(self, metric_name: str) -> str | None:
        """The function an eval config declared for ``metric_name``, when it was
        registered from one."""
        return self._custom_function_paths.get(metric_name)


def _register_standard_metrics(registry: MetricEvaluatorRegistry) -> None:
    """Register the built-in metrics, in google-adk's order."""
    standard: list[tuple[MetricInfo, type[Evaluator]]] = [
        (TrajectoryEvaluatorMetricInfoProvider().get_metric_info(), TrajectoryEvaluator),
        (ResponseEvaluatorMetricInfoProvider(RESPONSE_EVALUATION).get_metric_info(), VertexOnlyEvaluator),
        (ResponseEvaluatorMetricInfoProvider("response_match_score").get_metric_info(), ResponseEvaluator),
        (SafetyEvaluatorV1MetricInfoProvider().get_metric_info(), VertexOnlyEvaluator),
        (MultiTurnTaskSuccessV1MetricInfoProvider().get_metric_info(), VertexOnlyEvaluator),
        (MultiTurnTrajectoryQualityV1MetricInfoProvider().get_metric_info(), VertexOnlyEvaluator),
        (MultiTurnToolUseQualityV1MetricInfoProvider().get_metric_info(), VertexOnlyEvaluator),
        (FinalResponseMatchV2EvaluatorMetricInfoProvider().get_metric_info(), FinalResponseMatchV2Evaluator),
        (RubricBasedFinalResponseQualityV1EvaluatorMetricInfoProvider().get_metric_info(),
         RubricBasedFinalResponseQualityV1Evaluator),
        (HallucinationsV1EvaluatorMetricInfoProvider().get_metric_info(), HallucinationsV1Evaluator),
        (RubricBasedToolUseV1EvaluatorMetricInfoProvider().get_metric_info(), RubricBasedToolUseV1Evaluator),
        (PerTurnUserSimulatorQualityV1MetricInfoProvider().get_metric_info(), PerTurnUserSimulatorQualityV1),
        (RubricBasedMultiTurnTrajectoryMetricInfoProvider().get_metric_info(),
         RubricBasedMultiTurnTrajectoryEvaluator),
    ]
    efficiency = (ToolCallCountV1MetricInfoProvider(), InferenceCallCountV1MetricInfoProvider(),
                  TokenUsageV1MetricInfoProvider(), InvocationDurationV1MetricInfoProvider())
    standard += [(provider.get_metric_info(), evaluator)
                 for provider, evaluator in zip(efficiency, EFFICIENCY_EVALUATORS, strict=True)]
    for info, evaluator in standard:
        registry.register_evaluator(info, evaluator)


DEFAULT_METRIC_EVALUATOR_REGISTRY = MetricEvaluatorRegistry()
use_default_registry(DEFAULT_METRIC_EVALUATOR_REGISTRY)


def register_custom_metrics_from_config(eval_config: EvalConfig,
                                        metric_evaluator_registry: MetricEvaluatorRegistry | None = None
                                        ) -> MetricEvaluatorRegistry:
    """Register each of ``eval_config.custom_metrics`` in ``metric_evaluator_registry``
    (default: :data:`DEFAULT_METRIC_EVALUATOR_REGISTRY`), and answer that registry. In
    order, per entry: its info is the entry's ``metric_info`` under the config's name
    for the metric, else its ``description`` with a value range of [0, 1]; the
    metric is mapped to the evaluator of the entry's function
    (``code_config.name``), which is imported when the metric is scored (a
    CustomMetricError then when it cannot be had). A config without custom metrics
    registers nothing."""
    registry = metric_evaluator_registry if metric_evaluator_registry is not None else \
        DEFAULT_METRIC_EVALUATOR_REGISTRY
    for name, config in (eval_config.custom_metrics or {}).items():
        if config.metric_info is not None:
            info = config.metric_info.model_copy(update={"metric_name": name})
        else:
            info = MetricInfo(metric_name=name, description=config.description,
                              metric_value_info=MetricValueInfo(interval=Interval(min_value=0.0, max_value=1.0)))
        registry._register(info, CustomFunctionEvaluator, config.code_config.name)
    return registry
