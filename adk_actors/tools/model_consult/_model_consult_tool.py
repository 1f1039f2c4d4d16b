"""google-adk's ``ModelConsultTool``: an executor agent asks a stronger advisor model
for guidance in the middle of its task, through a tool call.

The tool is declared as ``name`` (``model_consult``) with a required string
``question`` and an optional string ``context``; before each model call of its agent
it adds its escalation policy to the system instruction (unless that text is there
already, or ``executor_instruction=""``).

A call, in order:

1. an empty ``question`` returns ``{"status": "invalid_request", "message": ...}``;
2. the budget: consults used this turn (``temp:model_consult:<name>:<invocation
   id>:uses``) and in the session (``model_consult:<name>:session_uses``), both read
   from the state, and those in flight beside it (parallel calls in this process wait
   for a slot): at ``session_max_uses`` or ``max_uses`` it returns ``{"status":
   "limit_reached", "message": ..., "consults": ...}``;
3. the advisor's request: the agent's own instruction (static and dynamic, its state
   placeholders filled, this tool's policy taken out; with
   ``include_agent_instruction``), its other tools with their descriptions (with
   ``include_tool_inventory``), the session as :func:`build_advisor_contents` renders it
   (this call and other unanswered consults left out) and the question, all in one
   user message; the advisor's system instruction; no tools;
4. the advisor is asked (:func:`call_advisor`; a model given by name is resolved by the
   run's model resolver when it has one, else by ``LLMRegistry``); when it fails the
   call returns ``{"status": "error", "error": ..., "message": ..., "advisor_model":
   ..., "consults": ...}`` and counts nothing;
5. on success both counters go up by one in the state (and in the state changes of
   every call of this invocation still in flight, so parallel calls agree) and it
   returns ``{"status": "ok", "guidance", "advisor_model", "thinking_level",
   "consults", "usage", "latency_ms"}``.

A call never raises. ``consults`` is ``{"used_this_turn", "max_uses",
"used_this_session", "session_max_uses", "remaining"}`` (``remaining``: the smaller
of what is left of each limit set, None with no limit).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Any

from ..._static_instruction import static_content
from ..._types import Content, Event, FunctionDeclaration, Part
from ...compiler._context import CompileContext
from ...compiler._instructions import agent_instruction
from ...compiler._tools import _declared, canonical_tools, is_toolset
from .._base import ToolContext
from .._classes import BaseTool
from ._advisor import (
    AdvisorError,
    AdvisorResult,
    call_advisor,
    model_label,
    resolve_advisor_llm,
    resolve_thinking_level,
)
from ._context import ModelConsultContextConfig, build_advisor_contents
from ._prompts import (
    ADVISOR_HANDOFF,
    ADVISOR_INSTRUCTION,
    CONTEXT_BLOCK,
    CONTEXT_DESCRIPTION,
    EXECUTOR_INSTRUCTION,
    QUESTION_DESCRIPTION,
    TOOL_DESCRIPTION,
)

__all__ = ["DEFAULT_ADVISOR_MODEL", "DEFAULT_TOOL_NAME", "ModelConsultTool"]

_log = logging.getLogger("adk_actors.tools.model_consult")

DEFAULT_ADVISOR_MODEL = "gemini-3.1-pro-preview"
DEFAULT_TOOL_NAME = "model_consult"
_TURN_KEY = "temp:model_consult:{name}:{invocation_id}:uses"
_SESSION_KEY = "model_consult:{name}:session_uses"
_DESCRIPTION_CAP = 300

_TURN_SPENT = ("No advisor consults are left for this turn ({n} of {n} used): go on by your own judgment and "
               "the advice you already have.")
_SESSION_SPENT = ("No advisor consults are left for this session ({n} of {n} used): go on by your own judgment "
                  "and the advice you already have.")
_UNREACHABLE = ("The advisor could not be reached: go on by your own judgment, and do not ask it the same "
                "question again.")
_EMPTY_QUESTION = "A `question` is needed: say which decision or obstacle you want reviewed."


@dataclasses.dataclass
class _Burst:
    """The calls of one session in flight at once (dropped when the last ends)."""

    cond: asyncio.Condition = dataclasses.field(default_factory=asyncio.Condition)
    active: int = 0
    reserved_session: int = 0
    reserved_turn: dict[str, int] = dataclasses.field(default_factory=dict)
    #: counts recorded by calls of this burst, not yet in the session's state
    recorded: dict[str, int] = dataclasses.field(default_factory=dict)
    #: invocation id -> the state changes of its calls in flight
    deltas: dict[str, list[dict[str, Any]]] = dataclasses.field(default_factory=dict)


def _positive(name: str, value: int | float | None) -> None:
    if value is not None and value <= 0:
        raise ValueError(f"{name} must be above zero or None, not {value}")


class ModelConsultTool(BaseTool):
    """An advisor model the executor agent consults through a tool call (google-adk's
    signature and defaults; see the module for a call).

    ``model``: a name (resolved as the module says; one no model class serves is a
    ValueError here) or a ``BaseLlm``. ``max_uses`` / ``session_max_uses``: consults per
    turn / per session (None: no limit). ``thinking_level``: ``"minimal"``, ``"low"``,
    ``"medium"``, ``"high"`` or an enum member of those (None, ``"off"``: the config's
    own). ``max_output_tokens``: the advisor's output cap (with
    ``generate_content_config``'s, the two must agree). ``timeout_seconds``: the
    advisor's time. A limit, cap or timeout not above zero is a ValueError."""

    def __init__(self, *, model: Any = DEFAULT_ADVISOR_MODEL, max_uses: int | None = None,
                 session_max_uses: int | None = None, thinking_level: Any = "high",
                 max_output_tokens: int | None = None, name: str = DEFAULT_TOOL_NAME,
                 description: str | None = None, executor_instruction: str | None = None,
                 advisor_instruction: str | None = None, include_agent_instruction: bool = True,
                 include_tool_inventory: bool = True, context_config: ModelConsultContextConfig | None = None,
                 generate_content_config: Any = None, timeout_seconds: float | None = None) -> None:
        super().__init__(name=name, description=description or TOOL_DESCRIPTION)
        _positive("max_uses", max_uses)
        _positive("session_max_uses", session_max_uses)
        configured = getattr(generate_content_config, "max_output_tokens", None) \
            if not isinstance(generate_content_config, dict) else generate_content_config.get("max_output_tokens")
        _positive("max_output_tokens", max_output_tokens)
        _positive("generate_content_config.max_output_tokens", configured)
        if max_output_tokens is not None and configured is not None and max_output_tokens != configured:
            raise ValueError(f"max_output_tokens ({max_output_tokens}) and generate_content_config.max_output_tokens "
                             f"({configured}) disagree")
        _positive("timeout_seconds", timeout_seconds)
        self._model_name = model.strip() if isinstance(model, str) else None
        self.advisor_model = resolve_advisor_llm(model)
        self.max_output_tokens = max_output_tokens if max_output_tokens is not None else configured
        self.max_uses = max_uses
        self.session_max_uses = session_max_uses
        self._thinking_level = resolve_thinking_level(thinking_level)
        self.thinking_level: str | None = self._thinking_level.lower() if self._thinking_level else None
        self._advisor_instruction = advisor_instruction or ADVISOR_INSTRUCTION
        self._include_agent_instruction = include_agent_instruction
        self._include_tool_inventory = include_tool_inventory
        self._context_config = context_config or ModelConsultContextConfig()
        self._generate_content_config = generate_content_config
        self._timeout_seconds = timeout_seconds
        if executor_instruction is not None:
            self._executor_system_instruction = executor_instruction.strip()
        else:
            self._executor_system_instruction = EXECUTOR_INSTRUCTION.replace(f"`{DEFAULT_TOOL_NAME}`",
                                                                             f"`{self.name}`")
        self._bursts: dict[tuple[str, str, str], _Burst] = {}

    def _get_declaration(self) -> FunctionDeclaration:
        return FunctionDeclaration(name=self.name, description=self.description, parameters={
            "type": "object",
            "properties": {"question": {"type": "string", "description": QUESTION_DESCRIPTION},
                           "context": {"type": "string", "description": CONTEXT_DESCRIPTION}},
            "required": ["question"]})

    async def process_llm_request(self, *, tool_context: ToolContext, llm_request: Any) -> None:
        """Add the escalation policy to the request's system instruction, unless it is
        empty or there already."""
        policy = self._executor_system_instruction
        if policy and policy not in (llm_request.system_instruction or ""):
            llm_request.append_instructions([policy])

    # -- the budget ---------------------------------------------------------------------

    def _turn_key(self, context: Any) -> str:
        return _TURN_KEY.format(name=self.name, invocation_id=context.invocation_id or "unknown")

    def _session_key(self) -> str:
        return _SESSION_KEY.format(name=self.name)

    def _read(self, context: Any, key: str) -> int:
        try:
            stored = max(int(context.state.get(key, 0) or 0), 0)
        except (TypeError, ValueError):
            stored = 0
        burst = self._bursts.get(self._where(context))
        return max(stored, burst.recorded.get(key, 0)) if burst is not None else stored

    def _where(self, context: Any) -> tuple[str, str, str]:
        session = context.session
        return (str(getattr(session, "app_name", "")), str(getattr(session, "user_id", "")),
                str(getattr(session, "id", "")))

    def has_remaining_budget(self, context: Any) -> bool:
        """Whether a consult is left in both the turn and the session of ``context`` (a
        tool's or a callback's)."""
        if self.session_max_uses is not None and self._read(context, self._session_key()) >= self.session_max_uses:
            return False
        return self.max_uses is None or self._read(context, self._turn_key(context)) < self.max_uses

    def _stats(self, turn: int, session: int) -> dict[str, Any]:
        left = [limit - used for limit, used in ((self.max_uses, turn), (self.session_max_uses, session))
                if limit is not None]
        return {"used_this_turn": turn, "max_uses": self.max_uses, "used_this_session": session,
                "session_max_uses": self.session_max_uses, "remaining": max(min(left), 0) if left else None}

    def _spent(self, context: ToolContext) -> dict[str, Any] | None:
        turn, session = self._read(context, self._turn_key(context)), self._read(context, self._session_key())
        if self.session_max_uses is not None and session >= self.session_max_uses:
            message = _SESSION_SPENT.format(n=self.session_max_uses)
        elif self.max_uses is not None and turn >= self.max_uses:
            message = _TURN_SPENT.format(n=self.max_uses)
        else:
            return None
        return {"status": "limit_reached", "message": message, "consults": self._stats(turn, session)}

    async def _reserve(self, context: ToolContext, burst: _Burst) -> dict[str, Any] | None:
        """Wait for a free slot and take it (None), or the limit_reached result."""
        invocation = context.invocation_id or "unknown"
        async with burst.cond:
            while True:
                spent = self._spent(context)
                if spent is not None:
                    return spent
                turn = self._read(context, self._turn_key(context)) + burst.reserved_turn.get(invocation, 0)
                session = self._read(context, self._session_key()) + burst.reserved_session
                if not ((self.max_uses is not None and turn >= self.max_uses)
                        or (self.session_max_uses is not None and session >= self.session_max_uses)):
                    burst.reserved_session += 1
                    burst.reserved_turn[invocation] = burst.reserved_turn.get(invocation, 0) + 1
                    return None
                await burst.cond.wait()

    def _record(self, context: ToolContext, burst: _Burst) -> tuple[int, int]:
        turn_key, session_key = self._turn_key(context), self._session_key()
        turn, session = self._read(context, turn_key) + 1, self._read(context, session_key) + 1
        burst.recorded[turn_key], burst.recorded[session_key] = turn, session
        for delta in burst.deltas.get(context.invocation_id or "unknown", []):
            delta[turn_key] = max(int(delta.get(turn_key, 0) or 0), turn)
            delta[session_key] = max(int(delta.get(session_key, 0) or 0), session)
        return turn, session

    # -- what the advisor reads ---------------------------------------------------------

    def _without_policy(self, text: str) -> str:
        for policy in (self._executor_system_instruction, EXECUTOR_INSTRUCTION):
            if policy:
                text = text.replace(policy, "")
        return text.strip()

    def _agent_instruction(self, context: ToolContext) -> str | None:
        """The executor agent's own instruction, best effort (see the module)."""
        if not self._include_agent_instruction:
            return None
        agent = context.invocation.agent
        pieces: list[str] = []
        static = getattr(agent, "static_instruction", None)
        try:
            if static:
                lines = [self._without_policy(p.text) for p in static_content(static).parts if p.text]
                if any(lines):
                    pieces.append("\n".join(line for line in lines if line))
            if getattr(agent, "instruction", None) is not None:
                compiled = CompileContext(state=dict(context.state), events=tuple(context.session.events),
                                          root_agent=getattr(context.invocation, "root_agent", None),
                                          invocation_id=context.invocation_id)
                own = self._without_policy(agent_instruction(agent, compiled))
                if own:
                    pieces.append(own)
        except Exception:
            _log.debug("model_consult could not read the agent's instruction", exc_info=True)
        return "\n\n".join(pieces) or None

    async def _inventory(self, context: ToolContext) -> str | None:
        """The executor's other tools, ``- name: description`` a line."""
        if not self._include_tool_inventory:
            return None
        agent = context.invocation.agent
        lines: list[str] = []
        try:
            for tool in canonical_tools(agent, getattr(context.invocation, "root_agent", None)):
                listed = list(await tool.get_tools_with_prefix(context)) if is_toolset(tool) and hasattr(
                    tool, "get_tools_with_prefix") else [tool]
                for one in listed:
                    declared = _declared(one)
                    if declared is None or declared.name == self.name:
                        continue
                    about = " ".join((declared.description or "").split())
                    if len(about) > _DESCRIPTION_CAP:
                        about = about[:_DESCRIPTION_CAP] + "..."
                    lines.append(f"- {declared.name}: {about}" if about else f"- {declared.name}")
        except Exception:
            _log.debug("model_consult could not list the agent's tools", exc_info=True)
            return None
        return "\n".join(lines) or None

    def _open_consults(self, events: list[Event]) -> list[str]:
        answered: set[str] = set()
        asked: list[str] = []
        for event in events:
            for part in event.content.parts if event.content is not None else ():
                if part.function_response is not None and part.function_response.id:
                    answered.add(part.function_response.id)
                if part.function_call is not None and part.function_call.name == self.name and part.function_call.id:
                    asked.append(part.function_call.id)
        return [i for i in asked if i not in answered]

    async def _contents(self, context: ToolContext, question: str, extra: str | None) -> list[Content]:
        raw = getattr(context, "agent_name", None)
        agent = raw.strip() if isinstance(raw, str) and raw.strip() and raw.strip() != "unknown" else None
        parts: list[Part] = []
        instruction = self._agent_instruction(context)
        if instruction:
            parts.append(Part(text=f"=== the executor's instruction ({agent or 'the executor'}) ===\nYour advice "
                                   f"must keep within it.\n\n{instruction}"))
        inventory = await self._inventory(context)
        if inventory:
            parts.append(Part(text="=== the executor's tools ===\nThe only tools it can call: name them in your "
                                   f"plan, with their arguments, and plan nothing that needs another.\n\n{inventory}"))
        events = list(context.session.events)
        skipped = [i for i in (context.function_call_id, *self._open_consults(events)) if i]
        for content in build_advisor_contents(events, config=self._context_config, skip_function_call_ids=skipped):
            parts.extend(content.parts)
        block = CONTEXT_BLOCK.format(context=extra) if extra else ""
        parts.append(Part(text=ADVISOR_HANDOFF.format(agent=f" ({agent})" if agent else "", question=question,
                                                      context=block)))
        return [Content(role="user", parts=parts)]

    def _advisor(self, context: ToolContext) -> Any:
        """The advisor to ask: a name through the run's resolver when it has one."""
        resolve = getattr(context.invocation, "resolve_model", None)
        if self._model_name is not None and resolve is not None:
            try:
                return resolve(self._model_name)
            except Exception:
                _log.debug("the run's resolver has no %r; LLMRegistry's model asked", self._model_name,
                           exc_info=True)
        return self.advisor_model

    # -- a call -------------------------------------------------------------------------

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> dict[str, Any]:
        """One consult (see the module); never raises."""
        raw = args.get("question")
        question = (raw if isinstance(raw, str) else str(raw or "")).strip()
        if not question:
            return {"status": "invalid_request", "message": _EMPTY_QUESTION}
        where = self._where(tool_context)
        burst = self._bursts.setdefault(where, _Burst())
        invocation = tool_context.invocation_id or "unknown"
        burst.active += 1
        mine = burst.deltas.setdefault(invocation, [])
        if all(d is not tool_context.actions.state_delta for d in mine):
            mine.append(tool_context.actions.state_delta)
        reserved = False
        try:
            refused = await self._reserve(tool_context, burst)
            if refused is not None:
                return refused
            reserved = True
            extra = args.get("context")
            extra_text = (extra if isinstance(extra, str) else str(extra)).strip() if extra is not None else None
            contents = await self._contents(tool_context, question, extra_text)
            try:
                result = await call_advisor(self._advisor(tool_context), contents,
                                            system_instruction=self._advisor_instruction,
                                            thinking_level=self._thinking_level,
                                            max_output_tokens=self.max_output_tokens,
                                            generate_content_config=self._generate_content_config,
                                            timeout_seconds=self._timeout_seconds, agent_name=self.name)
            except AdvisorError as exc:
                _log.warning("model_consult: %s", exc)
                return {"status": "error", "error": str(exc), "message": _UNREACHABLE,
                        "advisor_model": model_label(self.advisor_model),
                        "consults": self._stats(self._read(tool_context, self._turn_key(tool_context)),
                                                self._read(tool_context, self._session_key()))}
            turn, session = self._record(tool_context, burst)
            return self._ok(result, turn, session)
        finally:
            async with burst.cond:
                if reserved:
                    burst.reserved_session = max(burst.reserved_session - 1, 0)
                    left = burst.reserved_turn.get(invocation, 1) - 1
                    if left > 0:
                        burst.reserved_turn[invocation] = left
                    else:
                        burst.reserved_turn.pop(invocation, None)
                burst.cond.notify_all()
            burst.active -= 1
            if burst.active <= 0 and self._bursts.get(where) is burst:
                del self._bursts[where]

    def _ok(self, result: AdvisorResult, turn: int, session: int) -> dict[str, Any]:
        return {"status": "ok", "guidance": result.text, "advisor_model": result.model_version or result.model,
                "thinking_level": self.thinking_level, "consults": self._stats(turn, session),
                "usage": result.usage.to_dict(), "latency_ms": result.latency_ms}
