"""The shared part of google-adk's rubric evaluator classes at their paths
(``rubric_based_final_response_quality_v1``, ``rubric_based_tool_use_quality_v1``,
``rubric_based_multi_turn_trajectory_evaluator``): each scores one of our rubric
metrics (``adk_actors.evals._rubrics``, ``_multi_turn``) on given invocations.

As in google-adk, an evaluator called on its own reads each rubric from its criterion
and from the *actual* invocation's ``rubrics`` of the metric's type (an eval service
copies the case's and the expected invocation's rubrics there first); an expected
invocation's own rubrics are not read.

Here too, google-adk's :class:`RubricBasedEvaluator`, the base of a rubric evaluator
of your own (an :class:`~.llm_as_judge.LlmAsJudge`), with its parts: the answer parser
(:class:`DefaultAutoRaterResponseParser`), the per-invocation aggregator
(:class:`MajorityVotePerInvocationResultsAggregator`) and the summarizer
(:class:`MeanInvocationResultsSummarizer`). The defaults are our rubric metrics' own
rules (``adk_actors.evals._rubrics``: one reading, one vote, one mean). The built-in
rubric evaluators above score with those rules through our scorer; they are not
subclasses of :class:`RubricBasedEvaluator`.
"""

from __future__ import annotations

import abc
import logging
import statistics
from typing import Any

from .._types import Content, LlmResponse
from ..evals import (
    ConversationScenario,
    EvalMetric,
    EvaluationResult,
    Invocation,
    PerInvocationResult,
    Rubric,
)
from ..evals._judge import criterion_of
from ..evals._rubrics import (
    RubricsBasedCriterion,
    effective_rubrics,
    majority_rubric_scores,
    match_rubrics,
    mean_rubric_scores,
    parse_rubric_answer,
    plain_text,
)
from ._metric_evaluators import JudgedMetricEvaluator
from .common import EvalBaseModel
from .eval_rubrics import RubricScore
from .llm_as_judge import AutoRaterScore, LlmAsJudge
from .llm_as_judge_utils import get_average_rubric_score, get_eval_status, get_text_from_content

__all__ = ["AutoRaterResponseParser", "DefaultAutoRaterResponseParser", "InvocationResultsSummarizer",
           "MajorityVotePerInvocationResultsAggregator", "MeanInvocationResultsSummarizer",
           "PerInvocationResultsAggregator", "RubricBasedEvaluator", "RubricInvocationsEvaluator", "RubricResponse"]

logger = logging.getLogger(__name__)


class RubricInvocationsEvaluator(JudgedMetricEvaluator):
    """A rubric metric on given invocations (see the module). Subclasses name the
    metric (``metric_name``) and the rubric type read from invocations
    (``RUBRIC_TYPE``)."""

    criterion_type = RubricsBasedCriterion
    RUBRIC_TYPE = ""
    #: only the last invocation is judged (the multi-turn metric)
    _last_only = False

    async def evaluate_invocations(self, actual_invocations: list[Invocation],
                                   expected_invocations: list[Invocation] | None = None,
                                   conversation_scenario: ConversationScenario | None = None) -> EvaluationResult:
        """In order: a ValueError when both lists are given and their lengths differ;
        an EvalError (a ValueError) when an invocation that is judged (every one; the
        last only for the multi-turn metric) has no rubric, or one rubric id twice,
        among its criterion's and its own rubrics of the metric's type, before any
        judge call; then the judge's verdicts (``num_samples`` answers per judged
        invocation, voted per rubric), each invocation's score the mean of its rubric
        scores (``rubric_scores``), overall the mean over every rubric score
        (``overall_rubric_scores``: each rubric's mean, with no rationale where
        google-adk writes a fixed sentence). A failed judge call does not raise: that
        invocation is not evaluated, as in google-adk. Each invocation's verdicts are
        read against its own rubrics (google-adk 2.13 reads every invocation's
        against the last invocation's, dropping the others' own rubrics).
        The rubric scores are dicts (our ``EvaluationResult``'s), read with
        ``RubricScore.model_validate``."""
        if expected_invocations is not None and len(expected_invocations) != len(actual_invocations):
            raise ValueError(f"{len(actual_invocations)} actual invocations and {len(expected_invocations)} "
                             "expected ones: they must match")
        criterion = criterion_of(self._eval_metric, RubricsBasedCriterion)
        judged = actual_invocations[-1:] if self._last_only else actual_invocations
        for invocation in judged:
            effective_rubrics(criterion, self.RUBRIC_TYPE, None, invocation)
        # our scorer reads per-invocation rubrics from the expected side: give it the
        # actual invocations there, then put the caller's expected ones back
        result = await super().evaluate_invocations(actual_invocations, actual_invocations, None)
        for index, row in enumerate(result.per_invocation_results):
            row.expected_invocation = None if expected_invocations is None else expected_invocations[index]
        return result


# -- google-adk's RubricBasedEvaluator and its parts --------------------------------------------


class RubricResponse(EvalBaseModel):
    """One rubric's block of a judge's answer, as a parser reads it."""

    rubric_id: str | None = None
    property_text: str | None = None
    rationale: str | None = None
    score: float | None = None


class AutoRaterResponseParser(abc.ABC):
    """Reads a judge's answer text into rubric blocks."""

    @abc.abstractmethod
    def parse(self, auto_rater_response: str) -> list[RubricResponse]:
        """The answer's rubric blocks, in order."""
        raise NotImplementedError


class DefaultAutoRaterResponseParser(AutoRaterResponseParser):
    """Our rubric metrics' reading of an answer (``adk_actors.evals._rubrics.
    parse_rubric_answer``): ``ID:`` / ``Property:`` / ``Rationale:`` / ``Verdict:``
    lines, a verdict with "yes" in it 1.0, else with "no" 0.0, else no score; no block
    at all when the Property, Rationale and Verdict lines do not pair up."""

    def parse(self, auto_rater_response: str) -> list[RubricResponse]:
        """The answer's rubric blocks (see the class)."""
        return [RubricResponse(rubric_id=rubric_id, property_text=said, rationale=why, score=value)
                for rubric_id, said, why, value in parse_rubric_answer(auto_rater_response)]


def _scores_of(result: PerInvocationResult) -> list[dict[str, Any]]:
    return [RubricScore.model_validate(one).model_dump() for one in result.rubric_scores or []]


class PerInvocationResultsAggregator(abc.ABC):
    """Makes one invocation's result from its judge samples' results."""

    @abc.abstractmethod
    def aggregate(self, per_invocation_samples: list[PerInvocationResult], threshold: float) -> PerInvocationResult:
        """The invocation's result."""
        raise NotImplementedError


class MajorityVotePerInvocationResultsAggregator(PerInvocationResultsAggregator):
    """Each rubric's verdict is the majority of the samples' (our rubric metrics' vote,
    ``_rubrics.majority_rubric_scores``: a tie is the "no"); the invocation's score is
    the mean of the voted rubric scores, its status against ``threshold``."""

    def aggregate(self, per_invocation_samples: list[PerInvocationResult], threshold: float) -> PerInvocationResult:
        """The voted result of the first sample's invocation (see the class)."""
        voted = majority_rubric_scores([_scores_of(sample) for sample in per_invocation_samples])
        known = [one["score"] for one in voted if one["score"] is not None]
        value = statistics.fmean(known) if known else None
        first = per_invocation_samples[0]
        return PerInvocationResult(actual_invocation=first.actual_invocation,
                                   expected_invocation=first.expected_invocation, score=value,
                                   eval_status=get_eval_status(value, threshold), rubric_scores=voted)


class InvocationResultsSummarizer(abc.ABC):
    """Makes the metric's result from each invocation's."""

    @abc.abstractmethod
    def summarize(self, per_invocation_results: list[PerInvocationResult], threshold: float) -> EvaluationResult:
        """The metric's result."""
        raise NotImplementedError


class MeanInvocationResultsSummarizer(InvocationResultsSummarizer):
    """Our rubric metrics' overall rule (``_rubrics.mean_rubric_scores``): the mean of
    every rubric score of every invocation, its status against ``threshold``, and each
    rubric's mean in ``overall_rubric_scores`` (without a rationale: google-adk writes
    a fixed sentence there)."""

    def summarize(self, per_invocation_results: list[PerInvocationResult], threshold: float) -> EvaluationResult:
        """The metric's result (see the class); the invocations' results kept as given."""
        overall, means = mean_rubric_scores([_scores_of(result) for result in per_invocation_results])
        return EvaluationResult(overall_score=overall, overall_eval_status=get_eval_status(overall, threshold),
                                per_invocation_results=per_invocation_results, overall_rubric_scores=means)


class RubricBasedEvaluator(LlmAsJudge[RubricsBasedCriterion]):
    """A judge evaluator that scores rubrics (google-adk's base of its rubric
    evaluators): a subclass writes the prompt (calling
    :meth:`create_effective_rubrics_list` with the invocation's rubrics first, and
    listing :meth:`get_effective_rubrics_list`); the answers are read by the parser,
    matched to those rubrics (by id, else by text: ``_rubrics.match_rubrics``),
    voted per invocation by the aggregator, summarized by the summarizer.

    Each invocation's answers are matched against that invocation's rubrics (google-adk
    2.13 matches every invocation's against the list made for the last prompt)."""

    def __init__(self, eval_metric: EvalMetric, criterion_type: type[RubricsBasedCriterion],
                 auto_rater_response_parser: AutoRaterResponseParser | None = None,
                 per_invocation_results_aggregator: PerInvocationResultsAggregator | None = None,
                 invocation_results_summarizer: InvocationResultsSummarizer | None = None,
                 rubric_type: str | None = None) -> None:
        """:class:`LlmAsJudge`'s (a ValueError for a criterion that is not a
        ``criterion_type``), then keep the parts (ours by default) and the criterion's
        rubrics; ``rubric_type`` filters the invocations' rubrics (None: all)."""
        super().__init__(eval_metric, criterion_type=criterion_type)
        self._rubric_type = rubric_type
        self._auto_rater_prompt_template = ""
        self._auto_rater_response_parser = auto_rater_response_parser or DefaultAutoRaterResponseParser()
        self._per_invocation_results_aggregator = (per_invocation_results_aggregator
                                                   or MajorityVotePerInvocationResultsAggregator())
        self._invocation_results_summarizer = invocation_results_summarizer or MeanInvocationResultsSummarizer()
        self._rubrics: list[Rubric] = list(self._criterion.rubrics or [])
        self._effective_rubrics_list: list[Rubric] | None = None
        self._normalized_rubric_to_id_map = {plain_text(r.rubric_content.text_property): r.rubric_id
                                             for r in self._rubrics}

    def create_effective_rubrics_list(self, invocation_rubrics: list[Rubric] | None) -> None:
        """The rubrics the next prompt is about: the criterion's, then
        ``invocation_rubrics`` of the evaluator's rubric type; a ValueError (an
        EvalError) for an id given twice or no rubric at all."""
        invocation = Invocation(user_content=Content.user(""), rubrics=list(invocation_rubrics or []))
        self._effective_rubrics_list = effective_rubrics(self._criterion, self._rubric_type, None, invocation)

    def get_effective_rubrics_list(self) -> list[Rubric]:
        """The rubrics made by :meth:`create_effective_rubrics_list`; a ValueError
        before it was called."""
        if self._effective_rubrics_list is None:
            raise ValueError("no effective rubrics yet: call create_effective_rubrics_list() first")
        return self._effective_rubrics_list

    def _prompt_state(self) -> Any:
        return self._effective_rubrics_list

    def _read_with(self, state: Any, answer: LlmResponse) -> AutoRaterScore:
        self._effective_rubrics_list = state
        return self.convert_auto_rater_response_to_score(answer)

    def convert_auto_rater_response_to_score(self, auto_rater_response: LlmResponse) -> AutoRaterScore:
        """One answer's rubric scores and their mean (None when no block matched a
        rubric with a score); an answer with no text, or that does not parse, scores
        nothing (logged)."""
        text = get_text_from_content(auto_rater_response.content)
        blocks = self._auto_rater_response_parser.parse(text) if text else []
        if not blocks:
            logger.warning("the judge's answer gave no rubric verdict (ID/Property/Rationale/Verdict): %r", text)
        rubrics = self.get_effective_rubrics_list()
        scored = match_rubrics([(b.rubric_id, b.property_text or "", b.rationale or "", b.score) for b in blocks],
                               rubrics)
        if len(scored) < len(blocks):
            logger.warning("%d of the judge's rubric blocks match no rubric of the metric", len(blocks) - len(scored))
        rubric_scores = [RubricScore.model_validate(one) for one in scored]
        return AutoRaterScore(score=get_average_rubric_score(rubric_scores), rubric_scores=rubric_scores)

    def aggregate_per_invocation_samples(self, per_invocation_samples: list[PerInvocationResult]
                                         ) -> PerInvocationResult:
        """The aggregator's result of one invocation's samples."""
        return self._per_invocation_results_aggregator.aggregate(per_invocation_samples, self._threshold)

    def aggregate_invocation_results(self, per_invocation_results: list[PerInvocationResult]) -> EvaluationResult:
        """The summarizer's result of the invocations'."""
        return self._invocation_results_summarizer.summarize(per_invocation_results, self._threshold)
