"""The rubric metrics: a judge model says, rubric by rubric, whether an invocation has
a property (google-adk 2.13's ``rubric_based_final_response_quality_v1`` and
``rubric_based_tool_use_quality_v1``, scored as it scores them).

Per invocation, in order:

1. its rubrics: the criterion's ``rubrics``, then those of the case and of the
   expected invocation whose ``type`` is the metric's (``FINAL_RESPONSE_QUALITY``,
   ``TOOL_USE_QUALITY``); a rubric id given twice, or no rubric at all, leaves the
   metric not evaluated (``details["error"]`` says why);
2. a prompt with, where google-adk's has them, from the invocation's ``app_details``
   (``_app_details``): the instructions of the agent that answered (the final-response
   metric only) and every agent's tool declarations (both metrics); then the user's
   message, the tool calls and their answers in order, the grounding of Gemini's own
   search or retrieval in the invocation's events (the final-response metric,
   ``_grounding_text``), the final response (the final-response metric; with
   ``include_intermediate_responses_in_final`` the earlier texts too) and the rubrics,
   each as ``[id: <id>] <property>``; it asks, per rubric, for lines ``ID:``,
   ``Property:``, ``Rationale:`` and ``Verdict: yes|no``;
3. ``num_samples`` answers of the judge model (resolved by name from our registry,
   at most ``parallelism_limit`` at once); in each, a verdict with "yes" in it is
   1.0, else one with "no" in it 0.0, else no score; an answer whose Property,
   Rationale and Verdict lines do not pair up counts no rubric; a block is matched
   to its rubric by its ID, else by its property text (compared without case,
   markdown and typographic decoration);
4. per rubric, the samples vote: more 1.0 than 0.0 gives 1.0, else 0.0; no score in
   any sample leaves that rubric unscored; the invocation's score is the mean of its
   rubrics' scores (none scored: not evaluated). A failed judge call leaves the
   invocation not evaluated.

Overall: the mean of every rubric score of every invocation (google-adk's), each
rubric's mean in ``details["rubric_scores"]``; a verdict per invocation in its
``details["rubric_scores"]`` too.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import unicodedata
from collections.abc import Callable
from typing import Any

from pydantic import Field

from .._exceptions import AdkError
from .._types import Content, LlmRequest
from ._app_details import NO_TOOLS, instructions_of_responder, tool_declarations_text
from ._errors import EvalError
from ._grounding_text import grounding_text
from ._judge import (
    JudgeOutcome,
    LlmAsAJudgeCriterion,
    ask,
    criterion_of,
    joined_text,
    response_text,
)
from ._models import EvalCase, EvalMetric, Invocation, Rubric

__all__ = ["RUBRIC_FINAL_RESPONSE", "RUBRIC_METRICS", "RUBRIC_TOOL_USE", "RubricsBasedCriterion", "effective_rubrics",
           "majority_rubric_scores", "match_rubrics", "mean_rubric_scores", "parse_rubric_answer", "plain_text",
           "rubric_outcome", "rubric_score", "vote_rubrics"]

RUBRIC_FINAL_RESPONSE = "rubric_based_final_response_quality_v1"
RUBRIC_TOOL_USE = "rubric_based_tool_use_quality_v1"
_TYPES = {RUBRIC_FINAL_RESPONSE: "FINAL_RESPONSE_QUALITY", RUBRIC_TOOL_USE: "TOOL_USE_QUALITY"}
RUBRIC_METRICS = tuple(_TYPES)


class RubricsBasedCriterion(LlmAsAJudgeCriterion):
    rubrics: list[Rubric] = Field(default_factory=list)


_ID = re.compile(r"(?m)^\s*ID: (.*)$")
_PROPERTY = re.compile(r"(?m)^\s*Property: (.*)$")
_RATIONALE = re.compile(r"Rationale: (.*)")
_VERDICT = re.compile(r"Verdict: (.*)")
_TYPOGRAPHY = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-",
                             "\u2014": "-"})


def _plain(text: str | None) -> str:
    if not text:
        return ""
    text = unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHY)
    return re.sub(r"\s+", " ", text).strip(" *_`#>-\u2022\"'").lower()


def parse_rubric_answer(answer: str) -> list[tuple[str | None, str, str, float | None]]:
    """The (id, property, rationale, score) blocks of a judge's answer (step 3); none
    when its Property, Rationale and Verdict lines do not pair up."""
    properties = list(_PROPERTY.finditer(answer))
    ids = list(_ID.finditer(answer))
    rationales = _RATIONALE.findall(answer)
    scores: list[float | None] = []
    for said in _VERDICT.findall(answer):
        said = said.lower()
        scores.append(1.0 if "yes" in said else 0.0 if "no" in said else None)
    if not len(properties) == len(rationales) == len(scores):
        return []
    blocks = []
    for index, found in enumerate(properties):
        after = properties[index - 1].start() if index else -1
        rubric_id = None
        for id_line in ids:
            if after < id_line.start() < found.start():
                rubric_id = id_line.group(1).strip() or None
        blocks.append((rubric_id, found.group(1).strip(), rationales[index].strip(), scores[index]))
    return blocks


def plain_text(text: object) -> str:
    """``text`` as rubric texts are compared: NFKC, typographic quotes and dashes made
    plain, spaces collapsed, markdown and quote decoration stripped, lower case; ""
    for what is not a text."""
    return _plain(text) if isinstance(text, str) else ""


def match_rubrics(blocks: list[tuple[str | None, str, str, float | None]], rubrics: list[Rubric]
                  ) -> list[dict[str, Any]]:
    """One judge answer's (id, property, rationale, score) blocks as rubric scores
    (``{"rubric_id", "rationale", "score"}``), in the answer's order: each block
    matched to its rubric by its id, else by its property text (:func:`plain_text`);
    a block that matches no rubric is left out."""
    by_id = {r.rubric_id: r for r in rubrics}
    by_text = {_plain(r.rubric_content.text_property): r for r in rubrics}
    scored = []
    for rubric_id, said, why, value in blocks:
        rubric = by_id.get(rubric_id or "") or by_text.get(_plain(said))
        if rubric is not None:
            scored.append({"rubric_id": rubric.rubric_id, "rationale": why, "score": value})
    return scored


def majority_rubric_scores(samples: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The samples' rubric scores voted per rubric, in the order rubrics first appear:
    more 1.0 than other scores gives the first 1.0 sample's score, else the first
    other one's; a rubric no sample scored keeps its first unscored entry."""
    votes: dict[str, list[dict[str, Any]]] = {}
    for sample in samples:
        for one in sample:
            votes.setdefault(one["rubric_id"], []).append(one)
    voted = []
    for cast in votes.values():
        yes = [v for v in cast if v["score"] == 1.0]
        no = [v for v in cast if v["score"] is not None and v["score"] != 1.0]
        voted.append(dict(cast[0] if not yes and not no else yes[0] if len(yes) > len(no) else no[0]))
    return voted


def mean_rubric_scores(per_invocation: list[list[dict[str, Any]]]) -> tuple[float | None, list[dict[str, Any]]]:
    """Over every invocation's rubric scores: the mean of every score (None when none
    has one), and each rubric's mean (``{"rubric_id", "score"}``, in first-seen
    order)."""
    every = [s for scored in per_invocation for s in scored]
    means = []
    for rubric_id in dict.fromkeys(s["rubric_id"] for s in every):
        values = [s["score"] for s in every if s["rubric_id"] == rubric_id and s["score"] is not None]
        means.append({"rubric_id": rubric_id, "score": statistics.fmean(values) if values else None})
    known = [s["score"] for s in every if s["score"] is not None]
    return (statistics.fmean(known) if known else None), means


def effective_rubrics(criterion: RubricsBasedCriterion, kind: str | None, case: EvalCase | None,
                      expected: Invocation | None) -> list[Rubric]:
    """The rubrics an invocation is judged by (see the module, step 1): the
    criterion's, then the case's and ``expected``'s of type ``kind`` (of any type for
    None); EvalError (a ValueError) for a rubric id given twice, or no rubric."""
    chosen: dict[str, Rubric] = {}
    attached = [*((case.rubrics or []) if case is not None else []),
                *((expected.rubrics or []) if expected is not None else [])]
    given = [*criterion.rubrics, *[r for r in attached if kind is None or r.type == kind]]
    for rubric in given:
        if rubric.rubric_id in chosen:
            raise EvalError(f"rubric {rubric.rubric_id!r} is given twice")
        chosen[rubric.rubric_id] = rubric
    if not chosen:
        raise EvalError("the metric has no rubric (give them in its criterion, or as the case's or "
                        f"invocation's rubrics of type {kind})")
    return list(chosen.values())


def _steps(invocation: Invocation) -> str:
    calls, answers = invocation.tool_calls(), invocation.tool_responses()
    if not calls:
        return "(no tool was called)"
    by_id = {answer.id: answer for answer in answers if answer.id}
    steps = []
    for index, call in enumerate(calls):
        answer = by_id.get(call.id) if call.id else None
        if answer is None:
            answer = next((a for a in answers if a.name == call.name), None)
        steps.append({"step": index, "tool_call": {"name": call.name, "args": dict(call.args)},
                      "tool_response": dict(answer.response) if answer is not None else None})
    return json.dumps(steps, ensure_ascii=False, indent=2, default=str)


def _prompt(metric: str, invocation: Invocation, rubrics: list[Rubric], with_intermediate: bool) -> str:
    listed = "\n".join(f"*  [id: {r.rubric_id}] {r.rubric_content.text_property}" for r in rubrics)
    tools = tool_declarations_text(invocation.app_details)
    final = metric == RUBRIC_FINAL_RESPONSE
    parts = [
        "You check whether an AI agent's work on one request has each of the properties listed below. "
        "Judge each property on its own, from what is shown here only: "
        + ("what the agent's developer told it, " if final else "")
        + "the tools the agent had, the user's request, the tools the agent called with what they answered "
        "(trust these answers), " + ("what the model's own search or retrieval found (grounding_metadata: trust "
                                     "it too) and the agent's final answer." if final else "and nothing else."),
    ]
    if final:
        parts.append(f"<agent_instructions>\n{instructions_of_responder(invocation)}\n</agent_instructions>")
    parts += [
        f"<agent_tools>\n{tools if tools is not None else NO_TOOLS}\n</agent_tools>",
        f"<user_request>\n{joined_text(invocation.user_content) or ''}\n</user_request>",
        f"<tool_steps>\n{_steps(invocation)}\n</tool_steps>",
    ]
    if metric == RUBRIC_FINAL_RESPONSE:
        parts.append(f"<grounding_metadata>\n{grounding_text(invocation.intermediate_data)}\n</grounding_metadata>")
        parts.append(f"<final_answer>\n{response_text(invocation, with_intermediate) or ''}\n</final_answer>")
    parts.append(f"<properties>\n{listed}\n</properties>")
    parts.append(
        "For every property, in order, answer with these lines and a blank line after them:\n"
        "ID: <the id in the property's [id: ...] tag>\n"
        "Property: <the property's text after the tag, exactly as written>\n"
        "Rationale: <why, from the request, the tool steps and the answer>\n"
        "Verdict: <yes or no>\n"
        "Plain text, no JSON, no markdown.")
    return "\n\n".join(parts)


async def vote_rubrics(judge: Any, criterion: RubricsBasedCriterion, prompt: str, rubrics: list[Rubric]
                       ) -> tuple[float | None, str, list[dict[str, Any]]]:
    """Steps 3 and 4 for one prompt: ``num_samples`` answers of ``judge`` (at most
    ``parallelism_limit`` at once), each parsed into rubric verdicts, voted per rubric.
    Answers (score, why not scored, the rubric scores); a failed judge call gives no
    score and says why."""
    options = criterion.judge_model_options
    gate = asyncio.Semaphore(options.parallelism_limit)
    request = LlmRequest(model=options.judge_model, contents=[Content.user(prompt)],
                         config=dict(options.judge_model_config or {}))

    async def sample() -> str | BaseException:
        async with gate:
            try:
                return await ask(judge, request)
            except (AdkError, OSError, ValueError) as exc:
                return exc

    answers = await asyncio.gather(*(sample() for _ in range(options.num_samples)))
    failed = [a for a in answers if isinstance(a, BaseException)]
    if failed:
        return None, f"the judge call failed: {type(failed[0]).__name__}: {failed[0]}", []
    samples: list[list[dict[str, Any]]] = []
    for answer in answers:
        assert isinstance(answer, str)
        samples.append(match_rubrics(parse_rubric_answer(answer), rubrics))
    scored = majority_rubric_scores(samples)
    known = [s["score"] for s in scored if s["score"] is not None]
    if not known:
        return None, "the judge's answers gave no verdict on any rubric (ID/Property/Rationale/Verdict)", scored
    return statistics.fmean(known), "", scored


def rubric_outcome(results: list[tuple[float | None, str, list[dict[str, Any]]]]) -> JudgeOutcome:
    """The outcome of a rubric metric from each invocation's (score, why, rubric
    scores): overall, the mean of every rubric score, and each rubric's mean."""
    overall, means = mean_rubric_scores([scored for _, _, scored in results])
    return JudgeOutcome(scores=[score for score, _, _ in results], reasons=[why for _, why, _ in results],
                        details=[{"rubric_scores": scored} if scored else {} for _, _, scored in results],
                        overall=overall, overall_details={"rubric_scores": means} if means else {})


async def rubric_score(metric: EvalMetric, pairs: list[tuple[Invocation, Invocation | None]],
                       resolve: Callable[[str], Any], case: EvalCase | None = None) -> JudgeOutcome:
    """A rubric metric over one case's (actual, expected) invocations (see the module)."""
    criterion = criterion_of(metric, RubricsBasedCriterion)
    kind = _TYPES[metric.metric_name]
    judge = resolve(criterion.judge_model_options.judge_model)

    async def one(actual: Invocation, expected: Invocation | None) -> tuple[float | None, str, list[dict[str, Any]]]:
        try:
            rubrics = effective_rubrics(criterion, kind, case, expected)
        except EvalError as exc:
            return None, str(exc), []
        prompt = _prompt(metric.metric_name, actual, rubrics, criterion.include_intermediate_responses_in_final)
        return await vote_rubrics(judge, criterion, prompt, rubrics)

    return rubric_outcome([await one(actual, expected) for actual, expected in pairs])
