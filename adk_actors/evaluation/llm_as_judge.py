"""google-adk's ``google.adk.evaluation.llm_as_judge`` path: :class:`LlmAsJudge`, the
base of an evaluator whose scores a judge model gives, and :class:`AutoRaterScore`,
what one judge answer scores.

A subclass writes the prompt (:meth:`~LlmAsJudge.format_auto_rater_prompt`), reads
an answer (:meth:`~LlmAsJudge.convert_auto_rater_response_to_score`), and says how
the samples of one invocation, and then the invocations, make one result
(:meth:`~LlmAsJudge.aggregate_per_invocation_samples`,
:meth:`~LlmAsJudge.aggregate_invocation_results`). The judge is resolved by name from
our model registry (:func:`adk_actors.models.resolve_model`: ``gemini-*``,
``claude-*``, ``openai/...``, or a model registered with ``LLMRegistry``) and asked
as our judge metrics ask it (``adk_actors.evals._judge.answer_of``: not streamed,
the final answer; an error answer is a failed sample).

What the judge is given, in order, per invocation: the prompt as the user's message,
with the model's name and the criterion's ``judge_model_config``. Unlike google-adk,
no default retry options are added to the request (our connectors have their own
retry policy).
"""

from __future__ import annotations

import asyncio
import logging
from abc import abstractmethod
from typing import Any, Generic, TypeVar

from .. import models
from .._types import Content, LlmRequest, LlmResponse
from ..evals import ConversationScenario, EvalMetric, EvalStatus, Invocation
from ..evals._judge import LlmAsAJudgeCriterion, answer_of, criterion_of
from ..evals._rubrics import RubricsBasedCriterion
from ..types import GenerateContentConfig
from .common import EvalBaseModel
from .eval_rubrics import RubricScore
from .evaluator import EvaluationResult, Evaluator, PerInvocationResult
from .llm_as_judge_utils import build_judge_request_config, get_eval_status

__all__ = ["AutoRaterScore", "LlmAsJudge"]

logger = logging.getLogger(__name__)


class AutoRaterScore(EvalBaseModel):
    """What one judge answer scores: the invocation's ``score`` (None: none could be
    read) and, for a rubric judge, each rubric's."""

    score: float | None = None
    rubric_scores: list[RubricScore] | None = None


_CriterionT = TypeVar("_CriterionT", LlmAsAJudgeCriterion, RubricsBasedCriterion)


class LlmAsJudge(Evaluator, Generic[_CriterionT]):
    """An evaluator a judge model scores (see the module)."""

    def __init__(self, eval_metric: EvalMetric, criterion_type: type[_CriterionT],
                 expected_invocations_required: bool = False) -> None:
        """In order: keep the metric; read its criterion as ``criterion_type`` (its
        threshold the metric's when it has none), a ValueError when the metric has no
        criterion or it is not one; keep the judge's options, its request config
        (:func:`build_judge_request_config`) and the metric's threshold; resolve the
        judge model by name (what our model registry raises when it cannot)."""
        self._eval_metric = eval_metric
        self._expected_invocations_required = expected_invocations_required
        if eval_metric.criterion is None:
            raise ValueError(f"metric {eval_metric.metric_name!r} needs a criterion of type "
                             f"{criterion_type.__name__}")
        self._criterion: _CriterionT = criterion_of(eval_metric, criterion_type)
        self._judge_model_options = self._criterion.judge_model_options
        given = self._judge_model_options.judge_model_config
        self._judge_model_config = build_judge_request_config(
            GenerateContentConfig.model_validate(given) if given else None)
        self._threshold = self._criterion.threshold
        self._judge_model = self._setup_auto_rater()

    @abstractmethod
    def format_auto_rater_prompt(self, actual: Invocation, expected: Invocation | None) -> str:
        """The prompt that asks the judge about ``actual`` (against ``expected``)."""

    @abstractmethod
    def convert_auto_rater_response_to_score(self, auto_rater_response: LlmResponse) -> AutoRaterScore:
        """What one judge answer scores (a None score when none can be read)."""

    @abstractmethod
    def aggregate_per_invocation_samples(self, per_invocation_samples: list[PerInvocationResult]
                                         ) -> PerInvocationResult:
        """One invocation's result from the results of its samples."""

    @abstractmethod
    def aggregate_invocation_results(self, per_invocation_results: list[PerInvocationResult]) -> EvaluationResult:
        """The metric's result from each invocation's."""

    def _setup_auto_rater(self) -> Any:
        """The judge model, by its name (see the module)."""
        return models.resolve_model(self._judge_model_options.judge_model)

    def _request(self, prompt: str) -> LlmRequest:
        return LlmRequest(model=self._judge_model_options.judge_model, contents=[Content.user(prompt)],
                          config=dict(self._judge_model_options.judge_model_config or {}))

    def _prompt_state(self) -> Any:
        """What a subclass keeps of formatting one invocation's prompt, given back to it
        while that invocation's answers are read (:meth:`_read_with`); None here."""
        return None

    def _read_with(self, state: Any, answer: LlmResponse) -> AutoRaterScore:
        """One answer read, with what formatting its invocation's prompt left
        (:meth:`_prompt_state`)."""
        del state
        return self.convert_auto_rater_response_to_score(answer)

    async def _sample(self, gate: asyncio.Semaphore, request: LlmRequest, state: Any, actual: Invocation,
                      expected: Invocation | None) -> PerInvocationResult:
        """One sample: the judge's answer (at most ``parallelism_limit`` calls at once),
        read and scored against the threshold."""
        async with gate:
            answer = await answer_of(self._judge_model, request)
        scored = self._read_with(state, answer)
        return PerInvocationResult(actual_invocation=actual, expected_invocation=expected, score=scored.score,
                                   eval_status=get_eval_status(scored.score, self._threshold),
                                   rubric_scores=None if scored.rubric_scores is None else
                                   [one.model_dump(mode="json") for one in scored.rubric_scores])

    async def evaluate_invocations(self, actual_invocations: list[Invocation],
                                   expected_invocations: list[Invocation] | None = None,
                                   conversation_scenario: ConversationScenario | None = None) -> EvaluationResult:
        """In order: a ValueError when expected invocations are required and not given,
        or given in another number than the actual ones; each invocation's prompt,
        formatted in order; ``num_samples`` samples per invocation, all at once up to
        ``parallelism_limit`` judge calls; per invocation, NOT_EVALUATED with no score
        when any of its samples failed (logged), else its samples aggregated; then the
        invocations' results aggregated (an empty EvaluationResult when there are
        none). ``conversation_scenario`` is not read."""
        del conversation_scenario
        if self._expected_invocations_required and expected_invocations is None:
            raise ValueError(f"metric {self._eval_metric.metric_name!r} needs the expected invocations")
        if expected_invocations is not None and len(expected_invocations) != len(actual_invocations):
            raise ValueError(f"{len(actual_invocations)} actual invocations and {len(expected_invocations)} "
                             "expected ones: they must match")
        expected: list[Invocation | None] = (list(expected_invocations) if expected_invocations is not None
                                             else [None] * len(actual_invocations))
        gate = asyncio.Semaphore(self._judge_model_options.parallelism_limit)
        jobs = []
        for actual, wanted in zip(actual_invocations, expected, strict=True):
            request = self._request(self.format_auto_rater_prompt(actual, wanted))
            state = self._prompt_state()
            jobs.append([self._sample(gate, request, state, actual, wanted)
                         for _ in range(self._judge_model_options.num_samples)])
        done = await asyncio.gather(*(job for samples in jobs for job in samples), return_exceptions=True)
        results: list[PerInvocationResult] = []
        at = 0
        for index, samples in enumerate(jobs):
            mine, at = done[at:at + len(samples)], at + len(samples)
            failed = [one for one in mine if isinstance(one, BaseException)]
            for one in failed:
                logger.warning("a judge sample of invocation %d failed: %s", index, one, exc_info=one)
            if failed:
                results.append(PerInvocationResult(actual_invocation=actual_invocations[index],
                                                   expected_invocation=expected[index], score=None,
                                                   eval_status=EvalStatus.NOT_EVALUATED))
            elif mine:
                results.append(self.aggregate_per_invocation_samples(
                    [one for one in mine if isinstance(one, PerInvocationResult)]))
        return self.aggregate_invocation_results(results) if results else EvaluationResult()
