"""``rubric_based_multi_turn_trajectory_quality_v1``: a judge model reads a whole
conversation once and says, rubric by rubric, whether the agent's work across all its
turns has a property (google-adk 2.13's metric, scored as it scores it).

In order:

1. the rubrics: the criterion's ``rubrics``, then those of the case and of the last
   expected invocation whose ``type`` is ``TRAJECTORY_QUALITY`` (a rubric id given
   twice, or no rubric at all, leaves the metric not evaluated, and says why);
2. the conversation, a line per step and turn (numbered from 1): the user's message,
   each event's text, its tool calls (``name({json args})``) and their answers
   (``name -> {json}``), then the agent's final response; with what the agents were
   told (their instructions and tools, from the invocations' ``app_details``, as
   google-adk's prompt has them: ``agents_told``) and the rubrics, each as
   ``[id: <id>] <property>``, it makes one prompt asking, per rubric, for lines
   ``ID:``, ``Property:``, ``Rationale:`` and ``Verdict: yes|no``;
3. ``num_samples`` answers of the judge model (resolved by name from our registry),
   voted per rubric as in the other rubric metrics (``_rubrics``);
4. every invocation but the last is not evaluated (no score); the last has the mean of
   its rubrics' scores, which is also the overall score.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ._errors import EvalError
from ._judge import JudgeOutcome, criterion_of, joined_text
from ._models import EvalCase, EvalMetric, Invocation, InvocationEvents, Rubric
from ._rubrics import RubricsBasedCriterion, effective_rubrics, rubric_outcome, vote_rubrics

__all__ = ["RUBRIC_MULTI_TURN_TRAJECTORY", "TRAJECTORY_QUALITY", "agents_told", "dialogue",
           "multi_turn_trajectory_score"]

RUBRIC_MULTI_TURN_TRAJECTORY = "rubric_based_multi_turn_trajectory_quality_v1"
#: the rubric type this metric reads from cases and invocations
TRAJECTORY_QUALITY = "TRAJECTORY_QUALITY"


def _texts(parts_text: list[str]) -> str:
    return " ".join(parts_text)


def dialogue(invocations: list[Invocation]) -> str:
    """The conversation as the judge reads it (step 2), a line per step."""
    lines: list[str] = []
    for turn, invocation in enumerate(invocations, 1):
        said = [part.text for part in invocation.user_content.parts if part.text]
        if said:
            lines.append(f"USER, turn {turn}: {_texts(said)}")
        author = "agent"
        data = invocation.intermediate_data
        if isinstance(data, InvocationEvents):
            if data.invocation_events:
                author = data.invocation_events[0].author
            for event in data.invocation_events:
                who = "USER" if event.author.lower() == "user" else f"AGENT {event.author}"
                if event.content is None:
                    continue
                texts = [part.text for part in event.content.parts if part.text]
                if texts:
                    lines.append(f"{who}, turn {turn}: {_texts(texts)}")
                for part in event.content.parts:
                    if part.function_call is not None:
                        args = json.dumps(dict(part.function_call.args or {}), default=str)
                        lines.append(f"{who}, turn {turn}, calls a tool: {part.function_call.name}({args})")
                    if part.function_response is not None:
                        said_back = json.dumps(dict(part.function_response.response or {}), default=str)
                        lines.append(f"{who}, turn {turn}, a tool answers: {part.function_response.name} -> "
                                     f"{said_back}")
        elif data is not None:
            for call in data.tool_uses:
                lines.append(f"AGENT {author}, turn {turn}, calls a tool: {call.name}"
                             f"({json.dumps(dict(call.args or {}), default=str)})")
            for response in data.tool_responses:
                lines.append(f"AGENT {author}, turn {turn}, a tool answers: {response.name} -> "
                             f"{json.dumps(dict(response.response or {}), default=str)}")
        final = joined_text(invocation.final_response)
        if final:
            lines.append(f"AGENT {author}, turn {turn}: {final.replace(chr(10), ' ')}")
    return "\n".join(lines)


def agents_told(invocations: list[Invocation]) -> tuple[str, str]:
    """What the agents were told across the conversation (step 2): each agent's
    instructions (``Agent <name> instructions:`` and the text), and its tools (an
    ``Agent: <name>`` line, then ``- <tool>: <description>`` a line each), from the
    invocations' ``app_details``, each block once, in the order first seen."""
    instructions: dict[str, None] = {}
    tools: dict[str, None] = {}
    for invocation in invocations:
        details = invocation.app_details
        for name, agent in (details.agent_details.items() if details is not None else ()):
            instructions[f"Agent {name} instructions:\n{agent.instructions}"] = None
            tools[f"Agent: {name}"] = None
            for tool in agent.tool_declarations:
                for declared in (tool.get("function_declarations") or []) if isinstance(tool, dict) else []:
                    tools[f"- {declared.get('name', '')}: {declared.get('description') or ''}"] = None
    return "\n\n".join(instructions), "\n".join(tools)


def _prompt(conversation: str, rubrics: list[Rubric], told: tuple[str, str] = ("", "")) -> str:
    listed = "\n".join(f"*  [id: {r.rubric_id}] {r.rubric_content.text_property}" for r in rubrics)
    instructions, tools = told
    return "\n\n".join([
        "You check a whole conversation between a user and an AI agent, and say whether the agent's work across "
        "all its turns has each property listed below. A mistake in one turn that the agent put right in a later "
        "turn counts as put right. A property that does not apply to this conversation holds. Judge every "
        "property, each on its own, from the conversation only (trust the tools' answers shown); where a "
        "property does not hold, name the turn that breaks it. What the agents were told to do and the tools "
        "they had are given for reference.",
        f"<agent_instructions>\n{instructions}\n</agent_instructions>",
        f"<agent_tools>\n{tools}\n</agent_tools>",
        f"<conversation>\n{conversation}\n</conversation>",
        f"<properties>\n{listed}\n</properties>",
        "For every property, in order, answer with these lines and a blank line after them:\n"
        "ID: <the id in the property's [id: ...] tag>\n"
        "Property: <the property's text after the tag, exactly as written>\n"
        "Rationale: <why, naming the turns you looked at>\n"
        "Verdict: <yes or no>\n"
        "Plain text, no JSON, no markdown.",
    ])


async def multi_turn_trajectory_score(metric: EvalMetric, pairs: list[tuple[Invocation, Invocation | None]],
                                      resolve: Callable[[str], Any], case: EvalCase | None = None) -> JudgeOutcome:
    """The metric over one case's (actual, expected) invocations (see the module)."""
    criterion = criterion_of(metric, RubricsBasedCriterion)
    if not pairs:
        return JudgeOutcome([], [])
    judge = resolve(criterion.judge_model_options.judge_model)
    earlier: list[tuple[float | None, str, list[dict[str, Any]]]] = [(None, "", []) for _ in pairs[:-1]]
    try:
        rubrics = effective_rubrics(criterion, TRAJECTORY_QUALITY, case, pairs[-1][1])
    except EvalError as exc:
        last: tuple[float | None, str, list[dict[str, Any]]] = (None, str(exc), [])
    else:
        actual = [a for a, _ in pairs]
        last = await vote_rubrics(judge, criterion, _prompt(dialogue(actual), rubrics, agents_told(actual)), rubrics)
    return rubric_outcome([*earlier, last])
