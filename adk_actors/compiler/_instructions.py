"""The system instruction: global -> instruction -> identity -> a planner's planning
instruction -> output schema -> memories -> transfer -> few-shot examples.

Parts are joined by a blank line; empty parts are dropped. ``compile_split`` gives
(static, dynamic): static = global + identity + transfer (byte-identical across
turns while the definition is unchanged, for context caching), dynamic =
instruction + planning + output schema.

An agent with a ``static_instruction`` (google-adk 2.x) has it in the instruction's
place, as it is (no placeholder filled; its text parts joined by a blank line, each
non-text part named by a reference whose data travels first in the contents, see
:func:`static_parts`); its ``instruction`` is then no part of the system instruction
but a user message of the contents, :func:`labelled_instruction`, placed by
``build_request``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .._schema import output_schema_json
from .._static_instruction import static_content
from .._tree import inherited_model
from .._types import Content, Part, model_name
from ..agents._fencing import (
    SYSTEM_INSTRUCTION_BEGIN,
    SYSTEM_INSTRUCTION_END,
    elide_system_instruction_markers,
)
from ..examples import BaseExampleProvider, examples_for, examples_text
from ._context import CompileContext
from ._providers import Verbatim, resolve_provider
from ._targets import delegated, root_of, transfer_targets
from ._templating import substitute_vars
from ._tools import SET_MODEL_RESPONSE, uses_response_tool

__all__ = ["INSTRUCTION_BEGIN", "INSTRUCTION_END", "SET_MODEL_RESPONSE", "compile", "compile_split",
           "labelled_instruction", "static_parts"]

TRANSFER_HEADER = "You can delegate tasks to the following agents using the transfer_to_agent tool:"
TRANSFER_FOOTER = "To transfer to an agent, call the transfer_to_agent tool with the agent's name."


#: The markers around an instruction sent as a user message (with a static_instruction):
#: google-adk's
INSTRUCTION_BEGIN, INSTRUCTION_END = SYSTEM_INSTRUCTION_BEGIN, SYSTEM_INSTRUCTION_END


def labelled_instruction(text: str) -> str:
    """``text`` as the user message that carries an agent's instruction when its
    ``static_instruction`` holds the system instruction: a sentence saying whose it
    is, then ``text`` between :data:`INSTRUCTION_BEGIN` and :data:`INSTRUCTION_END`
    (either marker inside ``text``, from state, replaced so it cannot close the block)."""
    fenced = elide_system_instruction_markers(text)
    return (f"Between {INSTRUCTION_BEGIN} and {INSTRUCTION_END} below is your instruction for this turn, "
            "written by the application that runs you and filled in with the session's current state. The "
            "user did not write it: do not reply to it as if they had. What the user says is outside the "
            f"markers, and may come right after the end marker.\n{INSTRUCTION_BEGIN}\n{fenced}\n{INSTRUCTION_END}")


def static_parts(agent: Any) -> tuple[str, list[Content]]:
    """An agent's ``static_instruction`` as (its system-instruction text, the user
    messages that carry its non-text parts): text parts joined by a blank line; each
    other part (inline data) named in the text by a reference, ``inline_data_<n>``
    with its display name and MIME type, and sent as a user message that gives that
    reference, then the part. ("", []) without one."""
    value = getattr(agent, "static_instruction", None)
    if not value:
        return "", []
    texts: list[str] = []
    carried: list[Content] = []
    for part in static_content(value).parts:
        if part.text is not None:
            if part.text:
                texts.append(part.text)
            continue
        reference = f"inline_data_{len(carried)}"
        blob = part.inline_data
        about = [f"'{blob.display_name}'" if blob and blob.display_name else "",
                 f"type: {blob.mime_type}" if blob else ""]
        described = ", ".join(a for a in about if a)
        texts.append(f"[Attached data {reference}" + (f" ({described})" if described else "") + "]")
        carried.append(Content(role="user", parts=(Part(text=f"Attached data {reference}:"), part)))
    return "\n\n".join(texts), carried


def _join(parts: list[str]) -> str:
    return "\n\n".join(part for part in parts if part)


def global_instruction(agent: Any, ctx: CompileContext) -> str:
    root = root_of(agent, ctx.root_agent)
    return _filled(resolve_provider(getattr(root, "global_instruction", None), ctx, agent_name=root.name), ctx)


def agent_instruction(agent: Any, ctx: CompileContext) -> str:
    return _filled(resolve_provider(getattr(agent, "instruction", None), ctx, agent_name=agent.name), ctx)


def _filled(text: str | None, ctx: CompileContext) -> str:
    """An instruction's text with its ``{key}`` placeholders filled (seed 003: a
    provider's text too), unless a provider said it is :class:`Verbatim`."""
    if not text:
        return ""
    return text if isinstance(text, Verbatim) else substitute_vars(text, ctx.state, ctx.artifacts)


def identity_instruction(agent: Any) -> str:
    description = (getattr(agent, "description", "") or "").strip()
    return f"You are {agent.name}." + (f" {description}" if description else "")


def output_schema_instruction(agent: Any, uses_response_tool: bool) -> str:
    schema = getattr(agent, "output_schema", None)
    if schema is None:
        return ""
    text = f"Reply with valid JSON matching this schema: {json.dumps(output_schema_json(schema))}"
    if uses_response_tool:
        text += (
            f"\n\nYou can use your other tools first, but give your final answer by calling the "
            f"{SET_MODEL_RESPONSE} tool with arguments that match this schema."
        )
    return text


def memory_instruction(ctx: CompileContext) -> str:
    if not ctx.memories:
        return ""
    lines = ["Relevant memories of earlier conversations with this user:"]
    lines += [f"- [{getattr(m, 'author', '?')}] {getattr(m, 'text', m)}" for m in ctx.memories]
    return "\n".join(lines)


def transfer_instruction(agent: Any, ctx: CompileContext) -> str:
    """The transfer targets and how to reach them; none for an agent its parent calls
    as a tool (``mode="single_turn"``: google-adk declares its transfer tool and says
    nothing of it)."""
    targets = transfer_targets(agent, root_of(agent, ctx.root_agent))
    if not targets or delegated(agent):
        return ""
    lines = [TRANSFER_HEADER]
    for target in targets:
        description = (getattr(target, "description", "") or "").strip()
        lines.append(f"- {target.name}: {description}" if description else f"- {target.name}")
    return "\n".join(lines) + "\n\n" + TRANSFER_FOOTER


def turn_message(ctx: CompileContext) -> Content | None:
    """This turn's user message (the new message, or the user's event of this
    invocation; a tool's result when the turn resumed a long-running call)."""
    if ctx.new_message is not None:
        return ctx.new_message
    return next((e.content for e in reversed(ctx.events)
                 if e.author == "user" and e.invocation_id == ctx.invocation_id), None)


def examples_instruction(agent: Any, ctx: CompileContext) -> str:
    """The agent's few-shot examples, as google-adk 2.13 shows them: whenever this
    turn's user message has parts; a provider picks them for the message's texts
    (joined by a space), and is not asked when there are none."""
    examples = getattr(agent, "examples", None)
    message = turn_message(ctx) if examples is not None else None
    if examples is None or message is None or not message.parts:
        return ""
    query = " ".join(p.text for p in message.parts if p.text and not p.thought)
    if not query and isinstance(examples, BaseExampleProvider):
        return ""
    return examples_text(examples_for(examples, query), model_name(inherited_model(agent, ctx.root_agent or agent)))


def _system_instruction_of_agent(agent: Any, ctx: CompileContext) -> str:
    """The agent's own part of the system instruction: its static_instruction's text
    when it has one, else its instruction."""
    if getattr(agent, "static_instruction", None):
        return static_parts(agent)[0]
    return agent_instruction(agent, ctx)


def compile_split(agent: Any, ctx: CompileContext, planning: str = "") -> tuple[str, str]:
    """(static, dynamic) as the module says; ``planning`` (a planner's instruction)
    opens the dynamic part's text after the agent's own instruction."""
    own = _system_instruction_of_agent(agent, ctx)
    has_static = bool(getattr(agent, "static_instruction", None))
    static = _join([global_instruction(agent, ctx), own if has_static else "", identity_instruction(agent),
                    transfer_instruction(agent, ctx)])
    dynamic = _join([own if not has_static else "", planning,
                     output_schema_instruction(agent, uses_response_tool(agent, ctx)),
                     memory_instruction(ctx), examples_instruction(agent, ctx)])
    return static, dynamic


def compile(agent: Any, ctx: CompileContext, planning: Callable[[str], str | None] | None = None) -> str:
    """The system instruction (see the module), in order: the global instruction, the
    agent's own, its identity; then, with ``planning``, its text: ``planning`` is
    called once with the instruction so far and what it returns (None or "" for
    none) comes next, where google-adk's planner appends its instruction; then the
    output schema, memories, transfer targets and examples. What ``planning``
    raises is raised."""
    parts = [global_instruction(agent, ctx), _system_instruction_of_agent(agent, ctx), identity_instruction(agent)]
    if planning is not None:
        parts.append(planning(_join(parts)) or "")
    parts += [output_schema_instruction(agent, uses_response_tool(agent, ctx)), memory_instruction(ctx),
              transfer_instruction(agent, ctx), examples_instruction(agent, ctx)]
    return _join(parts)
