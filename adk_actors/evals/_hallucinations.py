"""``hallucinations_v1``: the share of the agent's sentences that what it was told and
what its tools answered support (google-adk 2.13's metric, scored as it scores it).

Per invocation, in order:

1. the texts to check: the final response's; with the criterion's
   ``evaluate_intermediate_nl_responses``, each text part of the events before it
   too, each checked against what came before it;
2. for each text, the judge model (resolved by name from our registry) is asked to
   cut it into sentences, each answered as ``<sentence>...</sentence>``; no sentence
   leaves that text unscored;
3. it is then asked to label each sentence against the context (where google-adk
   puts them: every agent's instructions, the user's message, the agents' tool
   declarations, from the invocation's ``app_details``: ``_app_details``; the
   grounding of Gemini's own search or retrieval in the events before it (and of the
   text's own event), ``_grounding_text``; then the earlier texts, the tool calls and
   the tools' answers, as JSON), in blocks of
   ``sentence:``, ``label:``, ``rationale:``, ``supporting_excerpt:`` and
   ``contradicting_excerpt:`` lines; ``supported`` and ``not_applicable`` count 1,
   ``unsupported``, ``contradictory`` and ``disputed`` count 0, any other label
   nothing; the text's score is the mean (no counted label: unscored). A judge call
   that fails leaves that text unscored;
4. the invocation's score is the mean of its texts' scores (none: not evaluated).

Overall: the mean of the evaluated invocations. The criterion is google-adk's
``HallucinationsCriterion`` (``threshold``, ``judge_model_options``: only the judge
model and its config are used, one sample per question as in google-adk).
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable
from typing import Any

from .._exceptions import AdkError
from .._types import Content, LlmRequest
from ._app_details import NO_TOOLS, instructions_of_agents, tool_declarations_text
from ._grounding_text import grounding_text
from ._judge import JudgeOutcome, LlmAsAJudgeCriterion, ask, criterion_of, joined_text
from ._models import EvalMetric, Invocation, InvocationEvent, InvocationEvents

__all__ = ["HALLUCINATIONS_V1", "HallucinationsCriterion", "hallucinations_score", "parse_labels",
           "parse_sentences"]

HALLUCINATIONS_V1 = "hallucinations_v1"
_SENTENCE = re.compile(r"<sentence>(.*?)</sentence>", re.DOTALL)
_BLOCK = re.compile(r"sentence:(.*?)\nlabel:(.*?)\nrationale:(.*?)\nsupporting_excerpt:(.*?)\n"
                    r"contradicting_excerpt:(.*?)(?=\nsentence:|\Z)", re.DOTALL | re.IGNORECASE)
_YES, _NO = {"supported", "not_applicable"}, {"unsupported", "contradictory", "disputed"}


class HallucinationsCriterion(LlmAsAJudgeCriterion):
    evaluate_intermediate_nl_responses: bool = False


def parse_sentences(answer: str) -> list[str]:
    """The sentences of a judge's ``<sentence>`` answer (step 2)."""
    return _SENTENCE.findall(answer)


def parse_labels(answer: str) -> list[tuple[str, str]]:
    """The (sentence, label) of each block of a judge's answer (step 3)."""
    return [(found.group(1).strip(), found.group(2).strip()) for found in _BLOCK.finditer(answer.strip())]


def _context(invocation: Invocation, events: list[InvocationEvent]) -> str:
    """What the agent had when it wrote (step 3), in google-adk's order: every agent's
    instructions, the user's message, the agents' tool declarations, the grounding of
    ``events`` (``_grounding_text``), then the events."""
    tools = tool_declarations_text(invocation.app_details)
    parts = [f"developer_instructions:\n{instructions_of_agents(invocation.app_details)}\n",
             f"user_prompt:\n{joined_text(invocation.user_content) or ''}\n",
             f"tool_declarations:\n{tools if tools is not None else NO_TOOLS}\n",
             f"grounding_metadata:\n{grounding_text(InvocationEvents(invocation_events=events))}\n"]
    for event in events:
        if event.content is None:
            continue
        texts = [part.text for part in event.content.parts if part.text]
        if texts:
            parts.append("\n".join(texts) + "\n")
        calls = [{"name": call.name, "args": dict(call.args)} for call in event.content.function_calls]
        answers = [{"name": answer.name, "response": dict(answer.response)}
                   for answer in event.content.function_responses]
        if calls:
            parts.append("tool_calls:\n" + json.dumps(calls, indent=2, default=str) + "\n")
        if answers:
            parts.append("tool_outputs:\n" + json.dumps(answers, indent=2, default=str) + "\n")
    return "\n".join(parts)


def _steps(invocation: Invocation, intermediate: bool) -> list[tuple[str, str]]:
    """(text, context) to check, in order (step 1)."""
    data = invocation.intermediate_data
    events = list(data.invocation_events) if isinstance(data, InvocationEvents) else []
    steps = []
    if intermediate:
        for index, event in enumerate(events):
            texts = [part.text for part in event.content.parts if part.text] if event.content is not None else []
            # a text's own grounding is context for it (its event without content, as google-adk adds it)
            before = events[:index] + ([event.model_copy(update={"content": None})]
                                       if event.grounding_metadata is not None else [])
            steps += [(text, _context(invocation, before)) for text in texts]
    final = joined_text(invocation.final_response)
    if final:
        steps.append((final, _context(invocation, events)))
    return steps


def _segment_prompt(text: str) -> str:
    return ("Cut the response below into its sentences, for checking one by one. Copy every sentence exactly, "
            "word for word, with its punctuation; leave none out and add none. Each item of a bulleted or "
            "numbered list is a sentence of its own (and a list's heading too); a table is one sentence.\n"
            "Answer with one line per sentence, each as <sentence>the sentence</sentence>, and nothing else.\n\n"
            f"<response>\n{text}\n</response>")


def _label_prompt(context: str, sentences: list[str]) -> str:
    listed = "\n".join(f"<sentence>{sentence}</sentence>" for sentence in sentences)
    return ("Check each sentence an AI agent wrote against the context it had, and label it:\n"
            "- supported: the context plainly says it (give the words of the context that do);\n"
            "- unsupported: the context does not say it (world knowledge does not count, unless trivial);\n"
            "- contradictory: the context says otherwise (give those words);\n"
            "- disputed: the context says it and also says otherwise (give both);\n"
            "- not_applicable: it asserts no fact (a greeting, a question, an opinion, a plan, a disclaimer).\n"
            "The context starts with what the agent's developer told it and the tools it was given. Tool outputs "
            "are the answers of the tool calls just above them; trust them when the call fits the request. "
            "Grounding metadata is what the model's own search or retrieval found: a sentence its "
            "grounding_supports tie to its sources is supported.\n"
            "Answer one block per sentence, in order, with exactly these lines (null where there is no excerpt):\n"
            "sentence: <the sentence>\nlabel: <the label>\nrationale: <why>\nsupporting_excerpt: <words or null>\n"
            "contradicting_excerpt: <words or null>\n\n"
            f"<context>\n{context}\n</context>\n\n<sentences>\n{listed}\n</sentences>")


async def hallucinations_score(metric: EvalMetric, pairs: list[tuple[Invocation, Invocation | None]],
                               resolve: Callable[[str], Any]) -> JudgeOutcome:
    """``hallucinations_v1`` over one case's invocations (see the module)."""
    criterion = criterion_of(metric, HallucinationsCriterion)
    options = criterion.judge_model_options
    judge = resolve(options.judge_model)

    def request(prompt: str) -> LlmRequest:
        return LlmRequest(model=options.judge_model, contents=[Content.user(prompt)],
                          config=dict(options.judge_model_config or {}))

    async def check(text: str, context: str) -> tuple[float | None, str]:
        try:
            sentences = parse_sentences(await ask(judge, request(_segment_prompt(text))))
            if not sentences:
                return None, "the judge cut the response into no <sentence>"
            labels = parse_labels(await ask(judge, request(_label_prompt(context, sentences))))
        except (AdkError, OSError, ValueError) as exc:
            return None, f"the judge call failed: {type(exc).__name__}: {exc}"
        counted = [1.0 if label.lower() in _YES else 0.0 for _, label in labels if label.lower() in _YES | _NO]
        if not counted:
            return None, "the judge labelled no sentence (sentence/label/rationale/... blocks)"
        return statistics.fmean(counted), ""

    scores: list[float | None] = []
    reasons: list[str] = []
    for actual, _ in pairs:
        steps = _steps(actual, criterion.evaluate_intermediate_nl_responses)
        if not steps:
            scores.append(None)
            reasons.append("the invocation has no text to check")
            continue
        checked = [await check(text, context) for text, context in steps]
        known = [value for value, _ in checked if value is not None]
        scores.append(statistics.fmean(known) if known else None)
        reasons.append("" if known else "; ".join(sorted({why for _, why in checked if why})))
    return JudgeOutcome(scores, reasons)
