"""google-adk's ``ForceEscalationPlugin`` (``google.adk.tools.model_consult``, also
``google.adk.plugins``): makes an agent consult its advisor tool (``model_consult``,
google-adk's ``ModelConsultTool``, or any tool of that name) where a weak model would
skip it, by three rules of its own:

* ``force_first_consult``: the first model call of an invocation by an agent that
  has the tool (and has not made a model turn in this invocation yet) must call it:
  the request gets ``tool_config`` ``FunctionCallingConfig(mode=ANY,
  allowed_function_names=[tool_name])`` (sent to Gemini as ``toolConfig``);
* ``force_on_repeat``: once the agent made the same tool call (name and arguments)
  that many times without a consult in between, its next model call is forced so;
* ``require_consult_before``: those tools are refused (their result is
  ``{"status": "consult_required", "message": ...}``, they do not run) until a consult
  succeeded in the session (the session's ``model_consult:<tool>:session_uses`` state,
  or a consult result ``ok`` or ``error`` of this invocation), at most
  ``max_refusals`` times per invocation (then they run: an agent cannot get stuck).

At most ``max_forced`` calls are forced per invocation; none once the advisor's
budget is spent (a consult answered ``limit_reached``, or said none ``remaining``).
What it counts lives per invocation (rebuilt from the session's events of that
invocation the first time it is needed; at most 1,024 invocations at once, the
oldest forgotten first) and is dropped when the run ends.

Where this engine differs: a request here has no ``tools_dict``, so whether the agent
has the advisor tool is read from the request's function declarations (where
google-adk reads its tool map: the same names, as an agent's tools are declared).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from ..types import FunctionCallingConfig, FunctionCallingConfigMode, ToolConfig
from .base_plugin import BasePlugin

__all__ = ["CONSULT_REQUIRED_STATUS", "DEFAULT_TOOL_NAME", "ForceEscalationPlugin"]

logger = logging.getLogger("adk_actors.plugins.force_escalation")

#: the ``status`` of a refused call of a tool that needs a consult first
CONSULT_REQUIRED_STATUS = "consult_required"
#: the advisor tool's name unless it was given another (google-adk's ``ModelConsultTool``'s)
DEFAULT_TOOL_NAME = "model_consult"
_SESSION_USES_KEY = "model_consult:{name}:session_uses"
_DEFAULT_NAME = "model_consult_force_escalation"
_MAX_TRACKED_INVOCATIONS = 1024


@dataclasses.dataclass
class _Counts:
    """What one invocation did, as the rules need it."""

    model_calls: int = 0
    consults: int = 0
    forced: int = 0
    refusals: int = 0
    pending_refusals: int = 0
    pending_force: bool = False
    budget_exhausted: bool = False
    active_agent_has_tool: bool = True
    turn_consulted: bool = False
    consulted_before_turn: bool = False
    agent_has_tool: dict[str, bool] = dataclasses.field(default_factory=dict)
    repeats: dict[str, int] = dataclasses.field(default_factory=dict)


def _count(value: Any, name: str, *, least: int) -> None:
    """A ``ValueError`` unless ``value`` is None or an int (not a bool) >= ``least``."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        kind = "positive" if least > 0 else "non-negative"
        raise ValueError(f"{name} must be {kind} or None, got {value}")


def _signature(name: str, args: Mapping[str, Any] | None) -> str:
    """A call as text: its name and its arguments (sorted keys)."""
    try:
        rendered = json.dumps(dict(args) if args else {}, sort_keys=True, default=str)
    except (TypeError, ValueError):
        rendered = str(args)
    return f"{name}:{rendered}"


def _has_tool(llm_request: Any, name: str) -> bool:
    tools = getattr(llm_request, "tools_dict", None)
    if isinstance(tools, Mapping):
        return name in tools
    return any(getattr(declaration, "name", None) == name for declaration in llm_request.tools or ())


class ForceEscalationPlugin(BasePlugin):
    """Forces calls of the advisor tool ``tool_name`` by the rules of the module.

    Bad settings are a ``ValueError``, as in google-adk: an empty ``name`` or
    ``tool_name``, ``force_on_repeat`` not positive, ``max_forced`` or
    ``max_refusals`` negative, ``require_consult_before`` a string or not a collection
    of non-empty names, or naming ``tool_name`` itself."""

    def __init__(self, *, name: str = _DEFAULT_NAME, tool_name: str = DEFAULT_TOOL_NAME,
                 force_first_consult: bool = True, force_on_repeat: int | None = 3, max_forced: int | None = 2,
                 require_consult_before: Collection[str] | None = None, max_refusals: int | None = 2) -> None:
        if not name or not name.strip():
            raise ValueError("name must be a non-empty string")
        if not tool_name or not tool_name.strip():
            raise ValueError("tool_name must be a non-empty string")
        _count(force_on_repeat, "force_on_repeat", least=1)
        _count(max_forced, "max_forced", least=0)
        if isinstance(require_consult_before, (str, bytes, bytearray)) or (
                require_consult_before is not None and not isinstance(require_consult_before, Iterable)):
            raise ValueError("require_consult_before must be a collection of tool names, not a string")
        gated: set[str] = set()
        for item in require_consult_before or ():
            if not isinstance(item, str) or not item.strip():
                raise ValueError("require_consult_before entries must be non-empty strings")
            if item == tool_name:
                raise ValueError(f"require_consult_before cannot contain tool_name {tool_name!r}")
            gated.add(item)
        _count(max_refusals, "max_refusals", least=0)
        super().__init__(name=name)
        self.tool_name = tool_name
        self._force_first_consult = force_first_consult
        self._force_on_repeat = force_on_repeat
        self._max_forced = max_forced
        self._require_consult_before = frozenset(gated)
        self._max_refusals = max_refusals
        self._states: dict[str, _Counts] = {}
        self._lock = threading.Lock()

    # -- what an invocation did --------------------------------------------------------

    def _state(self, context: Any) -> _Counts:
        """The invocation's counts; the first time, rebuilt from its events in the
        session (consults answered, refusals made)."""
        invocation = context.invocation_id
        with self._lock:
            found = self._states.get(invocation)
        if found is not None:
            return found
        counts = _Counts()
        for event in context.session.events:
            if event.invocation_id != invocation or event.content is None or not event.content.parts:
                continue
            for part in event.content.parts:
                response = part.function_response
                if response is None or not isinstance(response.response, Mapping):
                    continue
                status = response.response.get("status")
                if response.name == self.tool_name:
                    if status in ("ok", "error"):
                        counts.consults += 1
                        budget = response.response.get("consults")
                        if isinstance(budget, Mapping) and budget.get("remaining") == 0:
                            counts.budget_exhausted = True
                    elif status == "limit_reached":
                        counts.budget_exhausted = True
                elif response.name in self._require_consult_before and status == CONSULT_REQUIRED_STATUS:
                    counts.refusals += 1
        with self._lock:
            if invocation in self._states:
                return self._states[invocation]
            if len(self._states) >= _MAX_TRACKED_INVOCATIONS:
                self._states.pop(next(iter(self._states)))
            self._states[invocation] = counts
        return counts

    def _session_uses(self, context: Any) -> int:
        """How many consults the session's state says succeeded (0 when unreadable)."""
        try:
            return max(int(context.state.get(_SESSION_USES_KEY.format(name=self.tool_name), 0) or 0), 0)
        except Exception:
            return 0

    @staticmethod
    def _made_a_model_turn(context: Any) -> bool:
        """Whether the agent already answered as the model in this invocation."""
        return any(event.invocation_id == context.invocation_id and event.author == context.agent_name
                   and event.content is not None and event.content.role == "model"
                   for event in context.session.events)

    # -- google-adk's hooks -------------------------------------------------------------

    async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
        """Forces the advisor call on this request when a rule says so (the request's
        ``config.tool_config`` is set in place); answers None."""
        counts = self._state(callback_context)
        has_tool = _has_tool(llm_request, self.tool_name)
        counts.active_agent_has_tool = has_tool
        counts.agent_has_tool[callback_context.agent_name] = has_tool
        if not has_tool:
            return None
        counts.turn_consulted = False
        counts.consulted_before_turn = counts.consults > 0 or self._session_uses(callback_context) > 0
        first = counts.model_calls == 0 and not self._made_a_model_turn(callback_context)
        counts.model_calls += 1
        if counts.budget_exhausted or (self._max_forced is not None and counts.forced >= self._max_forced):
            return None
        wants_first = self._force_first_consult and first and counts.consults == 0
        if not (wants_first or counts.pending_force):
            return None
        calling = FunctionCallingConfig(mode=FunctionCallingConfigMode.ANY, allowed_function_names=[self.tool_name])
        current = llm_request.config.tool_config
        llm_request.config.tool_config = (ToolConfig(function_calling_config=calling) if current is None
                                          else current.model_copy(update={"function_calling_config": calling}))
        counts.forced += 1
        counts.pending_force = False
        logger.info("[model_consult] forcing %s (invocation=%s, reason=%s)", self.tool_name,
                    callback_context.invocation_id, "first_consult" if wants_first else "repeated_tool_call")
        return None

    async def before_tool_callback(self, *, tool: Any, tool_args: dict[str, Any],
                                   tool_context: Any) -> dict[str, Any] | None:
        """Refuses a gated tool until a consult succeeded (see the module); else None."""
        if (tool.name not in self._require_consult_before
                or getattr(tool_context, "tool_confirmation", None) is not None):
            return None
        counts = self._state(tool_context)
        if not counts.agent_has_tool.get(tool_context.agent_name, counts.active_agent_has_tool) \
                or counts.budget_exhausted:
            return None
        consulted = (counts.consulted_before_turn if counts.model_calls > 0
                     else counts.consults > 0 or self._session_uses(tool_context) > 0)
        if consulted or (self._max_refusals is not None and counts.refusals >= self._max_refusals):
            return None
        counts.refusals += 1
        counts.pending_refusals += 1
        logger.info("[model_consult] refusing %s before %s (invocation=%s, refusal=%d/%s)", tool.name,
                    self.tool_name, tool_context.invocation_id, counts.refusals, self._max_refusals)
        return {"status": CONSULT_REQUIRED_STATUS,
                "message": f"Tool `{tool.name}` requires consulting `{self.tool_name}` at least once in this "
                           f"session before use. Call `{self.tool_name}` first, then retry `{tool.name}`."}

    async def after_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                  result: Any) -> dict[str, Any] | None:
        """Counts consults and their budget, and repeated calls of other tools (a
        repeat past ``force_on_repeat`` forces the next model call); answers None."""
        counts = self._state(tool_context)
        if tool.name == self.tool_name:
            payload = result if isinstance(result, Mapping) else {}
            status = payload.get("status")
            if status in ("ok", "error"):
                counts.consults += 1
                budget = payload.get("consults")
                if status == "ok" and isinstance(budget, Mapping) and budget.get("remaining") == 0:
                    counts.budget_exhausted = True
            elif status == "limit_reached":
                counts.budget_exhausted = True
            if status != "invalid_request":
                counts.repeats.clear()
                counts.turn_consulted = counts.model_calls > 0
            counts.pending_force = False
            return None
        if counts.pending_refusals > 0 and isinstance(result, Mapping) \
                and result.get("status") == CONSULT_REQUIRED_STATUS:
            counts.pending_refusals -= 1
            return None
        has_tool = counts.agent_has_tool.get(tool_context.agent_name, counts.active_agent_has_tool)
        if not self._force_on_repeat or not has_tool or counts.turn_consulted:
            return None
        signature = _signature(tool.name, tool_args)
        seen = counts.repeats.get(signature, 0) + 1
        counts.repeats[signature] = seen
        if seen >= self._force_on_repeat:
            counts.pending_force = True
            counts.repeats[signature] = 0
            logger.info("[model_consult] loop detected: %s called %d times identically", tool.name, seen)
        return None

    async def after_run_callback(self, *, invocation_context: Any) -> None:
        """The invocation ended: its counts are dropped."""
        with self._lock:
            self._states.pop(invocation_context.invocation_id, None)

    async def on_run_error_callback(self, *, invocation_context: Any, error: Exception) -> None:
        with self._lock:
            self._states.pop(invocation_context.invocation_id, None)
