"""``final_response_match_v2``: a judge model says whether the agent's final response
is as good as the expected one (google-adk 2.13's metric, scored as it scores it).

Per invocation, in order:

1. a prompt is written with the user's message, the agent's final response and the
   expected one (with ``include_intermediate_responses_in_final``, the texts of the
   events before the final response too, a line each before it); it asks for a JSON
   verdict ``{"reasoning": ..., "is_the_agent_response_valid": "valid"|"invalid"}``;
2. the judge model, resolved by name from our model registry
   (:func:`adk_actors.models.resolve_model`: ``gemini-*``, ``claude-*``,
   ``openai/<model>``, or a model registered with ``LLMRegistry``), is asked
   ``num_samples`` times, at most ``parallelism_limit`` calls at once;
3. each answer's verdict is read: ``valid`` / ``true`` count 1.0; ``invalid``,
   ``false``, ``almost``, ``partially valid`` count 0.0 (an
   ``is_the_agent_response_invalid`` key reads the other way); an answer with no
   verdict counts nothing;
4. the samples vote: more 1.0 than 0.0 gives 1.0, else 0.0 (a tie is invalid); no
   sample with a verdict leaves the invocation not evaluated, and so does a judge
   call that failed (a model error): ``details["error"]`` says which.

Overall: the mean of the evaluated invocations, passing at the threshold; not
evaluated when none was. The criterion is google-adk's ``LlmAsAJudgeCriterion``
(``threshold``, ``judge_model_options``: ``judge_model`` default
``gemini-2.5-flash``, ``num_samples`` default 5, ``judge_model_config``,
``parallelism_limit`` default 1). A criterion that is not one (a ``num_samples`` of
0, a threshold missing) is an :class:`EvalError` before any call is made.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from .._exceptions import AdkError
from .._types import Content, LlmRequest, LlmResponse
from ._errors import EvalError
from ._models import EvalMetric, Invocation, InvocationEvents

__all__ = ["FINAL_RESPONSE_MATCH_V2", "JudgeModelOptions", "JudgeOutcome", "JudgeVoter", "LlmAsAJudgeCriterion",
           "answer_of", "ask",
           "criterion_of", "joined_text", "judge_score", "response_text", "verdict"]

FINAL_RESPONSE_MATCH_V2 = "final_response_match_v2"


class JudgeModelOptions(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    judge_model: str = "gemini-2.5-flash"
    judge_model_config: dict[str, Any] | None = None
    num_samples: int = Field(default=5, ge=1)
    parallelism_limit: int = Field(default=1, ge=1)


class LlmAsAJudgeCriterion(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    threshold: float
    include_intermediate_responses_in_final: bool = False
    judge_model_options: JudgeModelOptions = Field(default_factory=JudgeModelOptions)


_Criterion = TypeVar("_Criterion", bound=LlmAsAJudgeCriterion)


def criterion_of(metric: EvalMetric, kind: type[_Criterion]) -> _Criterion:
    """The metric's judge criterion as ``kind`` (its ``threshold`` filled in from the
    metric's when the criterion has none); EvalError when it is not a valid one."""
    body = dict(metric.criterion or {})
    if "threshold" not in body and metric.threshold is not None:
        body["threshold"] = metric.threshold
    try:
        return kind.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise EvalError(f"metric {metric.metric_name!r} needs a judge criterion ({where}: {first['msg']})") from None


def joined_text(content: Content | None) -> str | None:
    """A content's text parts, a line each (google-adk's reading of a response); None
    when it has none."""
    texts = [part.text for part in content.parts if part.text] if content is not None else []
    return "\n".join(texts) if texts else None


def response_text(invocation: Invocation, with_intermediate: bool) -> str | None:
    if not with_intermediate:
        return joined_text(invocation.final_response)
    texts: list[str] = []
    data = invocation.intermediate_data
    if isinstance(data, InvocationEvents):
        texts += [text for event in data.invocation_events if (text := joined_text(event.content))]
    elif data is not None:
        texts += [text for _, parts in data.intermediate_responses
                  if (text := "\n".join(part.text for part in parts if part.text))]
    final = joined_text(invocation.final_response)
    if final:
        texts.append(final)
    return "\n".join(texts) if texts else None


def _prompt(user: str, response: str, reference: str) -> str:
    data = json.dumps({"user_prompt": user, "agent_response": response, "reference_response": reference},
                      ensure_ascii=False, indent=2)
    return (
        "You grade the answer an AI agent gave to a user. A reference answer, written by a person, is "
        "correct; decide whether the agent's answer is correct too.\n"
        "Judge the substance, not the form: the agent may say more than the reference, order or format "
        "things differently (lists or sentences, 'TX' or 'Texas', 1000000 or 1,000,000), as long as what "
        "the reference says is there and nothing contradicts it. Units matter (100 miles is not 100 km). "
        "Trust the reference for figures, dates and data that would need computing or reading tables. An "
        "agent that says it cannot answer, where the reference could, is not correct. A question back to "
        "the user is correct only where the reference also asks one.\n\n"
        f"{data}\n\n"
        "Answer with JSON alone, in this shape:\n"
        '{"reasoning": "<why, briefly>", "is_the_agent_response_valid": "valid" or "invalid"}\n')


_VALID_KEY = re.compile(r'"is_the_agent_response_valid"\s*:\s*\[?\s*"?([^"\],}\s]*)"?\s*\]?\s*[,\n}]')
_INVALID_KEY = re.compile(r'"is_the_agent_response_invalid"\s*:\s*\[?\s*"?([^"\],}\s]*)"?\s*\]?\s*[,\n}]')
_YES, _NO = {"valid", "true"}, {"invalid", "false", "almost", "partially_valid", "partially valid", "partially"}


def verdict(answer: str) -> float | None:
    """1.0 (valid), 0.0 (invalid) or None (no verdict) read from a judge's answer
    (see the module, step 3)."""
    found = _VALID_KEY.search(answer)
    if found is not None:
        label = found.group(1).strip().lower()
        return 1.0 if label in _YES else 0.0 if label in _NO else None
    found = _INVALID_KEY.search(answer)
    if found is not None:
        return 0.0 if found.group(1).strip().lower() in {"true", "invalid"} else 1.0
    return None


async def answer_of(model: Any, request: LlmRequest) -> LlmResponse:
    """The judge's final (not partial) answer to a copy of ``request``, asked without
    streaming; EvalError when it gave none or answered an error."""
    final: LlmResponse | None = None
    async for response in model.generate(request.model_copy(deep=True), stream=False):
        if not response.partial:
            final = response
    if final is None:
        raise EvalError("the judge model gave no answer")
    if final.error_code:
        raise EvalError(f"the judge model answered an error: {final.error_code} {final.error_message or ''}")
    return final


async def ask(model: Any, request: LlmRequest) -> str:
    """The text of the judge's final answer to ``request`` (:func:`answer_of`)."""
    return joined_text((await answer_of(model, request)).content) or ""


class JudgeVoter:
    """Asks one judge model for a verdict ``num_samples`` times per prompt, at most
    ``parallelism_limit`` calls at once across every prompt it is given, and takes the
    majority of the answers ``parse`` reads as 1.0 or 0.0.

    ``vote`` gives ``(score, "")``, or ``(None, why)`` when a call failed (its error
    named) or no answer held a verdict (``verdict_field`` named)."""

    def __init__(self, judge: Any, options: JudgeModelOptions, parse: Callable[[str], float | None],
                 verdict_field: str) -> None:
        self._judge = judge
        self._options = options
        self._parse = parse
        self._verdict_field = verdict_field
        self._gate = asyncio.Semaphore(options.parallelism_limit)

    async def _sample(self, request: LlmRequest) -> float | BaseException | None:
        async with self._gate:
            try:
                return self._parse(await ask(self._judge, request))
            except (AdkError, OSError, ValueError) as exc:
                return exc

    async def vote(self, prompt: str) -> tuple[float | None, str]:
        """The majority verdict on ``prompt`` (see the class)."""
        request = LlmRequest(model=self._options.judge_model, contents=[Content.user(prompt)],
                             config=dict(self._options.judge_model_config or {}))
        samples = await asyncio.gather(*(self._sample(request) for _ in range(self._options.num_samples)))
        failed = [s for s in samples if isinstance(s, BaseException)]
        if failed:
            return None, f"the judge call failed: {type(failed[0]).__name__}: {failed[0]}"
        yes, no = samples.count(1.0), samples.count(0.0)
        if not yes and not no:
            return None, f"the judge's answers had no verdict ({self._verdict_field})"
        return (1.0 if yes > no else 0.0), ""


@dataclass
class JudgeOutcome:
    """A judge metric's scores per invocation, why one has none ("" when it has one),
    what else it says per invocation (``details``), and the overall score when it is
    not the mean of the invocations' (``overall``; the rubric metrics)."""

    scores: list[float | None]
    reasons: list[str]
    details: list[dict[str, Any]] = field(default_factory=list)
    overall: float | None = None
    overall_details: dict[str, Any] = field(default_factory=dict)


async def judge_score(metric: EvalMetric, pairs: list[tuple[Invocation, Invocation | None]],
                      resolve: Callable[[str], Any]) -> JudgeOutcome:
    """``final_response_match_v2`` per (actual, expected) pair (see the module);
    ``resolve`` turns the judge model's name into a model."""
    criterion = criterion_of(metric, LlmAsAJudgeCriterion)
    options = criterion.judge_model_options
    judge = resolve(options.judge_model)
    voter = JudgeVoter(judge, options, verdict, "is_the_agent_response_valid")

    async def one(actual: Invocation, expected: Invocation | None) -> tuple[float | None, str]:
        if expected is None:
            return None, "no expected invocation to compare with"
        both = criterion.include_intermediate_responses_in_final
        return await voter.vote(_prompt(joined_text(expected.user_content) or "", response_text(actual, both) or "",
                                         response_text(expected, both) or ""))

    results = [await one(actual, expected) for actual, expected in pairs]
    return JudgeOutcome([score for score, _ in results], [why for _, why in results])

