"""The shared part of google-adk's rubric evaluator classes at their paths
(``rubric_based_final_response_quality_v1``, ``rubric_based_tool_use_quality_v1``,
``rubric_based_multi_turn_trajectory_evaluator``): each scores one of our rubric
metrics (``adk_actors.evals._rubrics``, ``_multi_turn``) on given invocations.

As in google-adk, an evaluator called on its own reads each rubric from its criterion
and from the *actual* invocation's ``rubrics`` of the metric's type (an eval service
copies the case's and the expected invocation's rubrics there first); an expected
invocation's own rubrics are not read.

google-adk's ``RubricBasedEvaluator`` base class, with its pluggable answer parser,
per-invocation aggregator and summarizer (``AutoRaterResponseParser``,
``MajorityVotePerInvocationResultsAggregator``, ...), is not offered: the parsing,
majority vote and mean are our scorer's, fixed.
"""

from __future__ import annotations

from ..evals import ConversationScenario, EvaluationResult, Invocation
from ..evals._judge import criterion_of
from ..evals._rubrics import RubricsBasedCriterion, effective_rubrics
from ._metric_evaluators import JudgedMetricEvaluator

__all__ = ["RubricInvocationsEvaluator"]


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
