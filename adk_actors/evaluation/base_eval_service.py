"""google-adk's ``google.adk.evaluation.base_eval_service`` path: the interface of an eval
service, and its requests and results, in google-adk's shapes (camelCase on the wire,
snake_case in Python, as google-adk's).

An eval is two steps: :meth:`BaseEvalService.perform_inference` runs the agent on each
case of an eval set and yields an :class:`InferenceResult` per case (the invocations it
made), then :meth:`BaseEvalService.evaluate` scores those with the metrics of an
:class:`EvaluateConfig` and yields an :class:`~adk_actors.evals.EvalCaseResult` per
case. ``LocalEvalService`` (``adk_actors.evaluation.local_eval_service``) runs both in
this process."""

from __future__ import annotations

import abc
import enum
from collections.abc import AsyncGenerator

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from ..evals import EvalCaseResult, EvalMetric, Invocation
from .eval_config import DEFAULT_LIVE_TIMEOUT_SECONDS

__all__ = ["BaseEvalService", "EvaluateConfig", "EvaluateRequest", "InferenceConfig", "InferenceRequest",
           "InferenceResult", "InferenceStatus"]


class _Request(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class EvaluateConfig(_Request):
    """The metrics to score, and how many cases are scored at once (a judge model's
    quota is what limits it)."""

    eval_metrics: list[EvalMetric]
    parallelism: int = 4


class InferenceConfig(_Request):
    """How the cases are run: how many at once (the model's and the tools' quotas limit
    it), google-adk's billing ``labels`` (kept; no model here reads them), and
    google-adk's live mode (``use_live``, ``live_timeout_seconds``), which
    ``LocalEvalService`` refuses."""

    labels: dict[str, str] | None = None
    parallelism: int = 4
    use_live: bool = False
    live_timeout_seconds: int = DEFAULT_LIVE_TIMEOUT_SECONDS


class InferenceRequest(_Request):
    """Run the cases ``eval_case_ids`` (all of the set when None or empty) of eval set
    ``eval_set_id`` of app ``app_name``."""

    app_name: str
    eval_set_id: str
    eval_case_ids: list[str] | None = None
    inference_config: InferenceConfig


class InferenceStatus(enum.Enum):
    UNKNOWN = 0
    SUCCESS = 1
    FAILURE = 2


class InferenceResult(_Request):
    """One case's run: the invocations the agent made (None when the run failed, with
    ``error_message`` saying why), and the session it ran in."""

    app_name: str
    eval_set_id: str
    eval_case_id: str
    inferences: list[Invocation] | None = None
    session_id: str | None
    status: InferenceStatus = InferenceStatus.UNKNOWN
    error_message: str | None = None


class EvaluateRequest(_Request):
    """Score ``inference_results`` with ``evaluate_config``'s metrics."""

    inference_results: list[InferenceResult]
    evaluate_config: EvaluateConfig


class BaseEvalService(abc.ABC):
    """An eval service for an agent (see the module)."""

    @abc.abstractmethod
    def perform_inference(self, inference_request: InferenceRequest) -> AsyncGenerator[InferenceResult, None]:
        """Yield each requested case's :class:`InferenceResult` as it is ready."""

    @abc.abstractmethod
    def evaluate(self, evaluate_request: EvaluateRequest) -> AsyncGenerator[EvalCaseResult, None]:
        """Yield each inference result's :class:`EvalCaseResult` as it is ready."""
