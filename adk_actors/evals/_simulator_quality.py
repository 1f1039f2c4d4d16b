"""``per_turn_user_simulator_quality_v1``: whether the user simulator kept to its
conversation scenario, turn by turn (google-adk 2.13's metric, scored as it scores it).

For a ``conversation_scenario`` case, in order:

1. the first invocation: 1.0 when the user's message is the scenario's
   ``starting_prompt`` (both stripped), else 0.0; no judge is asked;
2. each later invocation: a prompt with the scenario's plan (and persona, when it has
   one), the conversation before it (``user: <text>`` and ``<role>: <text>`` of each
   final response, a blank line between them) and the simulated user's message; it
   asks for JSON ``{"criteria": [...], "is_valid": true|false}``. The judge model
   (resolved by name from our registry) is asked ``num_samples`` times; an answer's
   ``is_valid`` of ``valid``/``true`` is 1.0, ``invalid``/``false``/``almost``/
   ``partially valid`` 0.0, anything else no score; the samples vote (more 1.0 than
   0.0 gives 1.0; a tie 0.0; no score at all: not evaluated);
3. the end: the same question for the criterion's ``stop_signal`` (default
   ``</finished>``) as the user's message after the whole conversation; when that
   fails, the last invocation's result is that failure;
4. each invocation passes when its score reaches the threshold; overall, the sum of
   the scores of the passing invocations over the number of invocations.

A case without a scenario (a fixed conversation) is not evaluated, and says so; a
failed judge call leaves its invocation not evaluated.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ._judge import JudgeOutcome, JudgeVoter, LlmAsAJudgeCriterion, criterion_of, joined_text
from ._models import EvalCase, EvalMetric, Invocation
from ._simulator import STOP_SIGNAL, per_turn_quality_prompt

__all__ = ["PER_TURN_USER_SIMULATOR_QUALITY", "LlmBackedUserSimulatorCriterion", "simulator_quality_score",
           "validity"]

PER_TURN_USER_SIMULATOR_QUALITY = "per_turn_user_simulator_quality_v1"


class LlmBackedUserSimulatorCriterion(LlmAsAJudgeCriterion):
    """google-adk's criterion of the metric: a judge criterion with the ``stop_signal``
    the user simulator ends a conversation with."""

    stop_signal: str = STOP_SIGNAL


_IS_VALID = re.compile(r'"is_valid":\s*\[*[\n\s]*"*([^"\]]*)"*[\n\s]*\]*\s*[,\n}]')
_YES, _NO = {"valid", "true"}, {"invalid", "almost", "false", "partially_valid", "partially valid", "partially"}


def validity(answer: str) -> float | None:
    """1.0, 0.0 or None (no verdict) from a judge's answer (step 2)."""
    found = _IS_VALID.search(answer)
    if found is None:
        return None
    label = found.group(1).strip("}").replace(",", "").strip().lower()
    return 1.0 if label in _YES else 0.0 if label in _NO else None


def _history(invocations: list[Invocation]) -> str:
    said = []
    for invocation in invocations:
        if invocation.user_content.parts:
            said.append(f"user: {joined_text(invocation.user_content) or ''}")
        if invocation.final_response is not None:
            said.append(f"{invocation.final_response.role}: {joined_text(invocation.final_response) or ''}")
    return "\n\n".join(said)


async def simulator_quality_score(metric: EvalMetric, pairs: list[tuple[Invocation, Invocation | None]],
                                  resolve: Callable[[str], Any], case: EvalCase | None = None) -> JudgeOutcome:
    """The metric over one case's invocations (see the module)."""
    criterion = criterion_of(metric, LlmBackedUserSimulatorCriterion)
    actual = [one for one, _ in pairs]
    scenario = case.conversation_scenario if case is not None else None
    if scenario is None or not actual:
        why = ("the metric needs a conversation_scenario case (one the user simulator plays)" if scenario is None
               else "the conversation has no invocation")
        return JudgeOutcome([None] * len(actual), [why] * len(actual))
    options = criterion.judge_model_options
    voter = JudgeVoter(resolve(options.judge_model), options, validity, "is_valid")

    async def judged(before: list[Invocation], message: str) -> tuple[float | None, str]:
        return await voter.vote(per_turn_quality_prompt(scenario.conversation_plan, _history(before), message,
                                                        criterion.stop_signal, scenario.user_persona))

    first = joined_text(actual[0].user_content)
    results: list[tuple[float | None, str]] = [
        (None, "the first message has no text") if first is None
        else (1.0 if first.strip() == scenario.starting_prompt.strip() else 0.0, "")]
    for index in range(1, len(actual)):
        results.append(await judged(actual[:index], joined_text(actual[index].user_content) or ""))
    ending = await judged(actual, criterion.stop_signal)
    if ending[0] is not None and ending[0] < criterion.threshold:
        results[-1] = ending
    passed = sum(score for score, _ in results if score is not None and score >= criterion.threshold)
    return JudgeOutcome([score for score, _ in results], [why for _, why in results], overall=passed / len(results))

