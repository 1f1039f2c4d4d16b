"""google-adk's ``google.adk.evaluation.local_eval_service`` path: :class:`LocalEvalService`,
an eval service that runs an agent on the cases of an eval set in this process and
scores what it did.

``perform_inference(request)``, an async generator, in order:

1. the eval set, from the eval sets manager (NotFoundError when it has none of that
   id), and its cases named by ``eval_case_ids`` (all when None or empty);
2. a ValueError when the request asks for live mode (not offered here) or a
   ``parallelism`` below 1, before any case runs;
3. each case run, at most ``parallelism`` at once, as :class:`AgentEvaluator` runs one
   (``adk_actors.evals._agent_evaluator``): a session of the case's app and user
   (``EvaluationGenerator`` and ``test_user_id`` when the case has no
   ``session_input``) with the case's state, whose id is the case's own
   (``session_input.session_id``; a session of that id already there is used as it
   is) or else the ``session_id_supplier``'s (``adk-eval-session-<uuid>``); the case's
   user messages, or for a ``conversation_scenario`` case those of the simulator
   registered for the type of the provider's config (the llm-backed one by default, a
   ``register_user_simulator`` one of the user's for its own config type), sent one
   after the other by our in-process Runner, each turn making one invocation;
4. each case's :class:`InferenceResult` yielded as its run ends (not in the set's
   order): ``SUCCESS`` with the invocations, or ``FAILURE`` with ``error_message``
   when the run raised (logged; the other cases go on) or the case has both or
   neither of ``conversation`` and ``conversation_scenario``.

``evaluate(request)``, an async generator, in order:

1. a ValueError for a ``parallelism`` below 1, and an ``EvalError`` for a metric that is
   not offered (by the service's metric evaluator registry, see below) or not valid (the Vertex AI ones: ``VertexEvalRequired``), before any
   case is scored; google-adk reports such a metric as not evaluated instead;
2. each inference result scored, at most ``parallelism`` at once: its case from the
   eval sets manager (NotFoundError when it is gone); a failed inference is a
   ``FAILED`` case result without metric results; a case with a conversation must have
   as many invocations as it has turns (ValueError); otherwise each metric is scored
   on the (actual, expected) pairs by our metrics (``_metrics``, as AgentEvaluator
   scores one run), or by the evaluator class of the user's the service's registry
   maps the metric's name to, the case's and each expected invocation's rubrics going with the
   actual invocation. A metric whose judge model cannot be had is not evaluated;
3. each :class:`EvalCaseResult` yielded as it is scored: ``FAILED`` when a metric
   failed, else ``PASSED`` when one passed, else ``NOT_EVALUATED`` (informational
   metrics never decide it);
4. when all are yielded and the service has an eval set results manager, the results
   of each eval set saved as one result of that set.

The service's ``metric_evaluator_registry`` (google-adk's ``MetricEvaluatorRegistry``;
default :data:`~.metric_evaluator_registry.DEFAULT_METRIC_EVALUATOR_REGISTRY`) is
the one consulted while it scores.

Not offered: a ``memory_service`` of the caller's (each run's Runner has an in-memory one), and live mode; each is a ValueError
when asked for. Results carry no ``session_details`` (our ``EvalCaseResult`` has no
such field; the session stays in the session service)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from .._exceptions import NotFoundError
from ..artifacts import InMemoryArtifactService
from ..evals import AgentEvaluator, EvalCase, EvalCaseResult, EvalMetric, SessionInput
from ..evals._agent_evaluator import _Run
from ..evals._metrics import check_metric, registry_in_use
from ..evals._simulator import user_simulator_config_of
from ..sessions import InMemorySessionService
from .base_eval_service import (
    BaseEvalService,
    EvaluateRequest,
    InferenceRequest,
    InferenceResult,
    InferenceStatus,
)
from .eval_set_results_manager import EvalSetResultsManager
from .eval_sets_manager import EvalSetsManager
from .metric_evaluator_registry import DEFAULT_METRIC_EVALUATOR_REGISTRY, MetricEvaluatorRegistry

__all__ = ["EVAL_SESSION_ID_PREFIX", "LocalEvalService"]

logger = logging.getLogger(__name__)

EVAL_SESSION_ID_PREFIX = "adk-eval-session-"
#: google-adk's defaults of a case without ``session_input``
_APP, _USER = "EvaluationGenerator", "test_user_id"

_T = TypeVar("_T")


def _get_session_id() -> str:
    return f"{EVAL_SESSION_ID_PREFIX}{uuid.uuid4()}"


def _semaphore(parallelism: int) -> asyncio.Semaphore:
    """A semaphore of ``parallelism`` places; ValueError below 1 (0 would wait forever)."""
    if parallelism < 1:
        raise ValueError(f"parallelism must be at least 1, got {parallelism}")
    return asyncio.Semaphore(parallelism)


async def _as_completed(jobs: list[Awaitable[_T]]) -> AsyncGenerator[_T, None]:
    """Each job's value as it is ready; the jobs not yet done are cancelled when the
    caller stops early (or a job raises)."""
    tasks = [asyncio.ensure_future(job) for job in jobs]
    try:
        for done in asyncio.as_completed(tasks):
            yield await done
    finally:
        for task in tasks:
            task.cancel()


def _simulator_of(provider: Any) -> BaseModel:
    """The user simulator's config, which picks the simulator of each scenario case
    (``_simulator.provide_user_simulator``, as ``UserSimulatorProvider.provide``
    picks it): that of a provider (ours, or an object holding one as google-adk's
    ``UserSimulatorProvider`` does), or the config or dict given itself; read by
    ``user_simulator_config_of`` (None: the llm-backed defaults; a config whose type
    has a registered simulator, as it is; an EvalError for one that is not a valid
    llm_backed one). A ValueError when it is none of these."""
    config = getattr(provider, "user_simulator_config", getattr(provider, "_user_simulator_config", provider))
    if config is None or isinstance(config, dict | BaseModel):
        return user_simulator_config_of(config)
    raise ValueError(f"user_simulator_provider gives no user simulator config: {provider!r}")


class LocalEvalService(BaseEvalService):
    """Runs and scores eval cases in this process (see the module)."""

    def __init__(self, root_agent: Any, eval_sets_manager: EvalSetsManager,
                 metric_evaluator_registry: MetricEvaluatorRegistry | None = None,
                 session_service: Any = None, artifact_service: Any = None,
                 eval_set_results_manager: EvalSetResultsManager | None = None,
                 session_id_supplier: Callable[[], str] = _get_session_id, user_simulator_provider: Any = None,
                 memory_service: Any = None, *, app: Any = None) -> None:
        """Keep the agent, the metric evaluator registry (the default one unless given)
        and the services (in-memory sessions and artifacts unless given); ValueError
        for what is not offered here (see the module), EvalError for a user simulator
        config that is not valid, TypeError for a registry that is not a
        MetricEvaluatorRegistry."""
        if metric_evaluator_registry is not None and not isinstance(metric_evaluator_registry,
                                                                    MetricEvaluatorRegistry):
            raise TypeError(f"metric_evaluator_registry must be a MetricEvaluatorRegistry, got "
                            f"{type(metric_evaluator_registry).__name__}")
        if memory_service is not None:
            raise ValueError("a memory_service is not offered here: each case's Runner has an in-memory one")
        self._root_agent = root_agent
        self._metric_evaluator_registry = (metric_evaluator_registry if metric_evaluator_registry is not None
                                           else DEFAULT_METRIC_EVALUATOR_REGISTRY)
        self._app = app
        self._eval_sets_manager = eval_sets_manager
        self._session_service = session_service if session_service is not None else InMemorySessionService()
        self._artifact_service = artifact_service if artifact_service is not None else InMemoryArtifactService()
        self._eval_set_results_manager = eval_set_results_manager
        self._session_id_supplier = session_id_supplier
        self._simulator = _simulator_of(user_simulator_provider)

    async def perform_inference(self, inference_request: InferenceRequest) -> AsyncGenerator[InferenceResult, None]:
        """Run the requested cases; yield each one's result as it ends (see the module)."""
        request = inference_request
        eval_set = self._eval_sets_manager.get_eval_set(app_name=request.app_name, eval_set_id=request.eval_set_id)
        if eval_set is None:
            raise NotFoundError(f"eval set {request.eval_set_id!r} not found for app {request.app_name!r}")
        wanted = request.eval_case_ids
        cases = [case for case in eval_set.eval_cases if not wanted or case.eval_id in wanted]
        if request.inference_config.use_live:
            raise ValueError("live (bidirectional streaming) inference is not offered by LocalEvalService here")
        semaphore = _semaphore(request.inference_config.parallelism)

        async def run(case: EvalCase) -> InferenceResult:
            async with semaphore:
                return await self._infer(request.app_name, request.eval_set_id, case)

        async for result in _as_completed([run(case) for case in cases]):
            yield result

    async def _infer(self, app_name: str, eval_set_id: str, case: EvalCase) -> InferenceResult:
        """One case's run (see the module, step 3)."""
        given = case.session_input
        session_id = (given.session_id if given else None) or self._session_id_supplier()
        result = InferenceResult(app_name=app_name, eval_set_id=eval_set_id, eval_case_id=case.eval_id,
                                 session_id=session_id)
        if (case.conversation is None) == (case.conversation_scenario is None):
            result.status = InferenceStatus.FAILURE
            result.error_message = (f"eval case {case.eval_id!r} must have exactly one of conversation and "
                                    f"conversation_scenario")
            logger.error("inference failed for eval case %r: %s", case.eval_id, result.error_message)
            return result
        session = (given.model_copy(update={"session_id": session_id}) if given is not None
                   else SessionInput(app_name=_APP, user_id=_USER, session_id=session_id))
        run = await AgentEvaluator._infer(self._root_agent, self._app, case.model_copy(update={"session_input": session}),
                                          self._session_service, self._artifact_service, self._simulator)
        if run.actual is None:
            result.status = InferenceStatus.FAILURE
            result.error_message = run.error
        else:
            result.status = InferenceStatus.SUCCESS
            result.inferences = run.actual
        return result

    async def evaluate(self, evaluate_request: EvaluateRequest) -> AsyncGenerator[EvalCaseResult, None]:
        """Score the inference results; yield each case's result as it is scored, then
        save them (see the module)."""
        config = evaluate_request.evaluate_config
        semaphore = _semaphore(config.parallelism)
        with registry_in_use(self._metric_evaluator_registry):
            for metric in config.eval_metrics:
                check_metric(metric)

        async def score(inference: InferenceResult) -> tuple[InferenceResult, EvalCaseResult]:
            async with semaphore:
                with registry_in_use(self._metric_evaluator_registry):  # in this task's own context
                    return inference, await self._score(inference, config.eval_metrics)

        by_set: dict[tuple[str, str], list[EvalCaseResult]] = {}
        async for inference, case_result in _as_completed([score(one) for one in evaluate_request.inference_results]):
            by_set.setdefault((inference.app_name, inference.eval_set_id), []).append(case_result)
            yield case_result
        if self._eval_set_results_manager is not None:
            for (app_name, eval_set_id), results in by_set.items():
                self._eval_set_results_manager.save_eval_set_result(app_name=app_name, eval_set_id=eval_set_id,
                                                                    eval_case_results=results)

    async def _score(self, inference: InferenceResult, metrics: list[EvalMetric]) -> EvalCaseResult:
        """One inference result's case result (see the module, step 2)."""
        case = self._eval_sets_manager.get_eval_case(app_name=inference.app_name, eval_set_id=inference.eval_set_id,
                                                     eval_case_id=inference.eval_case_id)
        if case is None:
            raise NotFoundError(f"eval case {inference.eval_case_id!r} not found in eval set "
                                f"{inference.eval_set_id!r} of app {inference.app_name!r}")
        given = case.session_input
        user_id = given.user_id if given is not None and given.user_id else _USER
        failed = inference.inferences is None or inference.status == InferenceStatus.FAILURE
        actual = None if failed else list(inference.inferences or [])
        if actual is not None and case.conversation_scenario is None:
            if case.conversation is None:
                raise ValueError(f"eval case {case.eval_id!r} has neither a conversation nor a scenario")
            if len(actual) != len(case.conversation):
                raise ValueError(f"eval case {case.eval_id!r} has {len(case.conversation)} invocations, its "
                                 f"inference result {len(actual)}: they must match")
        run = _Run(case=case, session_id=inference.session_id or "", user_id=user_id, actual=actual)
        return await AgentEvaluator._score(inference.eval_set_id, run, metrics)
