"""google-adk's ``ModelConsultObservabilityPlugin`` and its report types: what
consulting an advisor costs a run.

Per invocation (from ``before_run_callback`` to ``after_run_callback`` or
``on_run_error_callback``) the plugin counts the :class:`ModelConsultTool` calls by
the status of their result (``ok``, ``limit_reached``, ``invalid_request``; any other
status, or a call that raised, is a failure; a call :class:`ForceEscalationPlugin`
refused, ``consult_required``, is not counted), the advisor tokens and latency each
successful consult reports (by advisor model), the tokens of every other model call
(by the model's reported version, else the model the agent asked for; one count per
call, its newest usage report), and the wall-clock time. When the invocation ends
its counters go into the cumulative :attr:`ModelConsultObservabilityPlugin.stats` and
a :class:`ModelConsultReport` goes to ``on_report`` (its exceptions are logged, never
raised). With a ``prices`` table a cost is estimated: each model takes the price of
the longest key its name contains; prompt tokens at the input price, output and
thought tokens at the output price, per million tokens.

At most 10,000 invocations are followed at once (the oldest is dropped, with a
warning). The advisor's own call goes through no model callback, so advisor and
executor tokens never mix.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import logging
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from ...plugins._force_escalation_plugin import CONSULT_REQUIRED_STATUS
from ...plugins.base_plugin import BasePlugin
from ._advisor import AdvisorUsage, model_label
from ._model_consult_tool import ModelConsultTool

__all__ = ["ModelConsultObservabilityPlugin", "ModelConsultReport", "ModelConsultStats", "ModelConsultUsage"]

_log = logging.getLogger("adk_actors.tools.model_consult")

_DEFAULT_NAME = "model_consult_observability"
_PER = 1_000_000
_UNKNOWN = "unknown"
_MAX_FOLLOWED = 10_000
_MAX_COUNT = 2**63 - 1


@dataclasses.dataclass(kw_only=True)
class ModelConsultUsage:
    """One model's tokens over the calls counted (``cached_tokens`` are part of
    ``prompt_tokens`` too; ``total_tokens`` as reported, else the sum)."""

    calls: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    thoughts_tokens: int = 0
    cached_tokens: int = 0
    total_tokens: int = 0

    def to_dict(self) -> dict[str, int]:
        """The counts by name, JSON-ready."""
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens, "output_tokens": self.output_tokens,
                "thoughts_tokens": self.thoughts_tokens, "cached_tokens": self.cached_tokens,
                "total_tokens": self.total_tokens}


@dataclasses.dataclass(kw_only=True)
class ModelConsultStats:
    """The counters of one invocation (a report's) or of many (the plugin's totals)."""

    invocations: int = 0
    failed_invocations: int = 0
    tool_calls: int = 0
    successful_consults: int = 0
    limited_consults: int = 0
    failed_consults: int = 0
    invalid_consults: int = 0
    advisor_latency_ms: float = 0.0
    wall_clock_ms: float = 0.0
    advisor_usage: dict[str, ModelConsultUsage] = dataclasses.field(default_factory=dict)
    executor_usage: dict[str, ModelConsultUsage] = dataclasses.field(default_factory=dict)

    @property
    def advisor_tokens(self) -> int:
        """All advisor models' total tokens."""
        return sum(u.total_tokens for u in self.advisor_usage.values())

    @property
    def executor_tokens(self) -> int:
        """All executor models' total tokens."""
        return sum(u.total_tokens for u in self.executor_usage.values())

    @property
    def total_tokens(self) -> int:
        """Advisor and executor tokens together."""
        return self.advisor_tokens + self.executor_tokens

    @property
    def executor_calls(self) -> int:
        """Executor model calls, all models."""
        return sum(u.calls for u in self.executor_usage.values())

    @property
    def escalation_rate(self) -> float:
        """Successful consults per executor model call (0.0 with no call; above 1.0
        when one answer asked for several)."""
        calls = self.executor_calls
        return self.successful_consults / calls if calls else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The counters and the derived totals, JSON-ready."""
        return {"invocations": self.invocations, "failed_invocations": self.failed_invocations,
                "tool_calls": self.tool_calls, "successful_consults": self.successful_consults,
                "limited_consults": self.limited_consults, "failed_consults": self.failed_consults,
                "invalid_consults": self.invalid_consults, "advisor_latency_ms": self.advisor_latency_ms,
                "wall_clock_ms": self.wall_clock_ms, "executor_calls": self.executor_calls,
                "advisor_tokens": self.advisor_tokens, "executor_tokens": self.executor_tokens,
                "total_tokens": self.total_tokens, "escalation_rate": self.escalation_rate,
                "advisor_usage": {m: u.to_dict() for m, u in self.advisor_usage.items()},
                "executor_usage": {m: u.to_dict() for m, u in self.executor_usage.items()}}


@dataclasses.dataclass(kw_only=True)
class ModelConsultReport:
    """One finished invocation, as ``on_report`` gets it (``agent_name`` is "" when it
    began with no agent; ``estimated_cost_usd`` None when no price matched;
    ``error_type`` the class name of what ended it, or None)."""

    invocation_id: str
    app_name: str
    user_id: str
    session_id: str
    agent_name: str
    stats: ModelConsultStats
    estimated_cost_usd: float | None = None
    error_type: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The report, JSON-ready."""
        return {"invocation_id": self.invocation_id, "app_name": self.app_name, "user_id": self.user_id,
                "session_id": self.session_id, "agent_name": self.agent_name,
                "estimated_cost_usd": self.estimated_cost_usd, "error_type": self.error_type,
                "stats": self.stats.to_dict()}


@dataclasses.dataclass(kw_only=True)
class _Call:
    """One executor model call: keyed by its callback context's actions (kept alive)."""

    actions: object
    requested: str | None = None
    version: str | None = None
    done: bool = False
    usage: AdvisorUsage | None = None


@dataclasses.dataclass(kw_only=True)
class _Followed:
    started: float = dataclasses.field(default_factory=time.perf_counter)
    stats: ModelConsultStats = dataclasses.field(default_factory=lambda: ModelConsultStats(invocations=1))
    calls: dict[int, _Call] = dataclasses.field(default_factory=dict)
    requested: dict[str, str] = dataclasses.field(default_factory=dict)
    #: tool contexts of consults that raised (counted then; a result put in their place is not counted again)
    raised: dict[int, object] = dataclasses.field(default_factory=dict)


def _number(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0 <= value <= sys.float_info.max


def _prices(table: Mapping[str, tuple[float, float]] | None) -> dict[str, tuple[float, float]]:
    checked: dict[str, tuple[float, float]] = {}
    for key, value in (table or {}).items():
        if not isinstance(key, str) or not key.strip():
            raise ValueError(f"a prices key must be a non-empty string, not {key!r}")
        if not isinstance(value, (tuple, list)) or len(value) != 2 or not all(_number(v) for v in value):
            raise ValueError(f"prices[{key!r}] must be two non-negative numbers (input and output US dollars "
                             f"per million tokens), not {value!r}")
        checked[key] = (float(value[0]), float(value[1]))
    return checked


def _tokens(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= _MAX_COUNT:
        return 0
    return int(value)


def _millis(value: object) -> float:
    return float(value) if _number(value) else 0.0  # type: ignore[arg-type]


def _reported(raw: object) -> AdvisorUsage:
    fields = raw if isinstance(raw, Mapping) else {}
    prompt, output, thoughts = (_tokens(fields.get(k)) for k in ("prompt_tokens", "output_tokens", "thoughts_tokens"))
    return AdvisorUsage(prompt_tokens=prompt, output_tokens=output, thoughts_tokens=thoughts,
                        cached_tokens=_tokens(fields.get("cached_tokens")),
                        total_tokens=_tokens(fields.get("total_tokens")) or prompt + output + thoughts)


def _add(table: dict[str, ModelConsultUsage], model: str, usage: AdvisorUsage | ModelConsultUsage,
         calls: int = 1) -> None:
    bucket = table.setdefault(model, ModelConsultUsage())
    bucket.calls += calls
    bucket.prompt_tokens += usage.prompt_tokens
    bucket.output_tokens += usage.output_tokens
    bucket.thoughts_tokens += usage.thoughts_tokens
    bucket.cached_tokens += usage.cached_tokens
    bucket.total_tokens += usage.total_tokens


def _merge(into: ModelConsultStats, other: ModelConsultStats) -> None:
    for name in ("invocations", "failed_invocations", "tool_calls", "successful_consults", "limited_consults",
                 "failed_consults", "invalid_consults", "advisor_latency_ms", "wall_clock_ms"):
        setattr(into, name, getattr(into, name) + getattr(other, name))
    for mine, theirs in ((into.advisor_usage, other.advisor_usage), (into.executor_usage, other.executor_usage)):
        for model, usage in theirs.items():
            _add(mine, model, usage, calls=usage.calls)


class ModelConsultObservabilityPlugin(BasePlugin):
    """Counts advisor consults, tokens, latency and cost per invocation and in all (see
    the module). ``name`` must not be blank and ``prices`` (model-name substring ->
    (input, output) US dollars per million tokens) must hold non-negative numbers: a
    ValueError otherwise. ``on_report``: a function or coroutine function given each
    invocation's :class:`ModelConsultReport`. Register it before plugins that answer
    model or tool callbacks: a plugin that answers first hides the call from it."""

    def __init__(self, *, name: str = _DEFAULT_NAME, prices: Mapping[str, tuple[float, float]] | None = None,
                 on_report: Callable[[ModelConsultReport], object] | None = None) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ValueError("the plugin's name must be a non-empty string")
        super().__init__(name=name)
        self._prices = _prices(prices)
        self._on_report = on_report
        self._followed: dict[str, _Followed] = {}
        self._lock = threading.Lock()
        self._totals = ModelConsultStats()
        self._unpriced_told: set[str] = set()

    @property
    def stats(self) -> ModelConsultStats:
        """A copy of the totals over the invocations finished so far."""
        with self._lock:
            return copy.deepcopy(self._totals)

    def reset(self) -> ModelConsultStats:
        """Take the totals and start new ones, in one step (an invocation finishing
        meanwhile lands in exactly one of the two); invocations in flight are kept."""
        with self._lock:
            taken, self._totals = self._totals, ModelConsultStats()
        return taken

    def _price(self, model: str) -> tuple[float, float] | None:
        key = max((k for k in self._prices if k in model), key=len, default=None)
        return None if key is None else self._prices[key]

    def _cost(self, stats: ModelConsultStats) -> tuple[float | None, list[str]]:
        if not self._prices:
            return None, []
        total, priced, unpriced = 0.0, False, []
        for table in (stats.advisor_usage, stats.executor_usage):
            for model, usage in table.items():
                price = self._price(model)
                if price is None:
                    unpriced.append(model)
                    continue
                priced = True
                total += (usage.prompt_tokens * price[0]
                          + (usage.output_tokens + usage.thoughts_tokens) * price[1]) / _PER
        return (total if priced else None), unpriced

    def estimate_cost(self, stats: ModelConsultStats | None = None) -> float | None:
        """The cost of ``stats`` (default: the totals) in US dollars by the price table,
        or None when no price matches any of its models."""
        return self._cost(self.stats if stats is None else stats)[0]

    def summary(self) -> str:
        """The totals as lines of text for a person."""
        s = self.stats
        lines = ["Model consult summary",
                 f"  invocations          : {s.invocations} (failed: {s.failed_invocations})",
                 f"  consult tool calls   : {s.tool_calls}",
                 f"  successful consults  : {s.successful_consults} (limited: {s.limited_consults}, failed: "
                 f"{s.failed_consults}, invalid: {s.invalid_consults})",
                 f"  escalation rate      : {s.escalation_rate:.2%} of {s.executor_calls} executor calls",
                 f"  advisor tokens       : {s.advisor_tokens}",
                 f"  executor tokens      : {s.executor_tokens}",
                 f"  total tokens         : {s.total_tokens}",
                 f"  total advisor ms     : {s.advisor_latency_ms:.0f}",
                 f"  total e2e ms         : {s.wall_clock_ms:.0f}"]
        cost = self.estimate_cost(s)
        if cost is not None:
            lines.append(f"  estimated cost (USD) : {cost:.6f}")
        for role, table in (("advisor", s.advisor_usage), ("executor", s.executor_usage)):
            for model, u in sorted(table.items()):
                lines.append(f"  {role:<8} {model}: calls={u.calls} prompt={u.prompt_tokens} output={u.output_tokens}"
                             f" thoughts={u.thoughts_tokens} cached={u.cached_tokens} total={u.total_tokens}")
        return "\n".join(lines)

    async def before_run_callback(self, *, invocation_context: Any) -> None:
        """Start following the invocation (a resumed one starts over, as the newest)."""
        dropped: list[str] = []
        with self._lock:
            self._followed.pop(invocation_context.invocation_id, None)
            self._followed[invocation_context.invocation_id] = _Followed()
            while len(self._followed) > _MAX_FOLLOWED:
                oldest = next(iter(self._followed))
                del self._followed[oldest]
                dropped.append(oldest)
        for oldest in dropped:
            _log.warning("over %d invocations followed at once: the counters of invocation %s, the oldest, are "
                         "dropped", _MAX_FOLLOWED, oldest)
        return None

    async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
        """Remember the model the agent asks for (for answers that name no version)."""
        followed = self._followed.get(callback_context.invocation_id)
        if followed is not None and getattr(llm_request, "model", None):
            followed.requested[callback_context.agent_name] = llm_request.model
        return None

    async def after_model_callback(self, *, callback_context: Any, llm_response: Any) -> None:
        """Count an executor call's usage (its newest report; partial chunks only until a
        final answer came; output transcriptions are not answers)."""
        if getattr(llm_response, "output_transcription", None) is not None:
            return None
        followed = self._followed.get(callback_context.invocation_id)
        if followed is None:
            return None
        key = id(callback_context.actions)
        call = followed.calls.get(key)
        if call is None:
            call = followed.calls[key] = _Call(actions=callback_context.actions,
                                               requested=followed.requested.get(callback_context.agent_name))
        if llm_response.partial and call.done:
            return None
        if not llm_response.partial:
            call.done = True
        if llm_response.model_version:
            call.version = llm_response.model_version
        if llm_response.usage_metadata is not None:
            call.usage = AdvisorUsage.from_metadata(llm_response.usage_metadata)
        return None

    async def after_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                  result: Any) -> None:
        """Count a ModelConsultTool call by its result's status (see the module)."""
        if not isinstance(tool, ModelConsultTool):
            return None
        followed = self._followed.get(tool_context.invocation_id)
        if followed is None or followed.raised.pop(id(tool_context), None) is not None:
            return None
        payload: Mapping[str, Any] = result if isinstance(result, Mapping) else {}
        status = payload.get("status")
        if status == CONSULT_REQUIRED_STATUS:
            return None
        stats = followed.stats
        stats.tool_calls += 1
        if status == "ok":
            stats.successful_consults += 1
            stats.advisor_latency_ms += _millis(payload.get("latency_ms"))
            model = payload.get("advisor_model")
            if not isinstance(model, str) or not model:
                model = model_label(tool.advisor_model) or _UNKNOWN
            _add(stats.advisor_usage, model, _reported(payload.get("usage")))
        elif status == "limit_reached":
            stats.limited_consults += 1
        elif status == "invalid_request":
            stats.invalid_consults += 1
        else:
            stats.failed_consults += 1
        return None

    async def on_tool_error_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                     error: Exception) -> None:
        """Count a ModelConsultTool call that raised as a failed consult."""
        if not isinstance(tool, ModelConsultTool):
            return None
        followed = self._followed.get(tool_context.invocation_id)
        if followed is not None:
            followed.stats.tool_calls += 1
            followed.stats.failed_consults += 1
            followed.raised[id(tool_context)] = tool_context
        return None

    async def after_run_callback(self, *, invocation_context: Any) -> None:
        """Report the invocation and add it to the totals."""
        await self._finish(invocation_context, None)

    async def on_run_error_callback(self, *, invocation_context: Any, error: Exception) -> None:
        """Report the failed invocation (its error's class) and add it to the totals."""
        await self._finish(invocation_context, error)

    async def _finish(self, invocation_context: Any, error: Exception | None) -> None:
        with self._lock:
            followed = self._followed.pop(invocation_context.invocation_id, None)
        if followed is None:
            return
        stats = followed.stats
        stats.wall_clock_ms = (time.perf_counter() - followed.started) * 1000
        if error is not None:
            stats.failed_invocations = 1
        for call in followed.calls.values():
            _add(stats.executor_usage, call.version or call.requested or _UNKNOWN, call.usage or AdvisorUsage())
        cost, unpriced = self._cost(stats)
        with self._lock:
            _merge(self._totals, stats)
            new = sorted(set(unpriced) - self._unpriced_told)
            self._unpriced_told.update(new)
        for model in new:
            _log.warning("no price in the table matches model %r: its tokens are not in the estimated cost", model)
        session = invocation_context.session
        report = ModelConsultReport(
            invocation_id=invocation_context.invocation_id,
            app_name=str(getattr(invocation_context, "app_name", None) or getattr(session, "app_name", "")),
            user_id=str(getattr(invocation_context, "user_id", None) or getattr(session, "user_id", "")),
            session_id=str(getattr(session, "id", "")),
            agent_name=getattr(invocation_context.agent, "name", None) or "",
            stats=stats, estimated_cost_usd=cost, error_type=None if error is None else type(error).__name__)
        if self._on_report is None:
            return
        try:
            outcome = self._on_report(report)
            if inspect.isawaitable(outcome):
                await outcome
        except Exception:
            _log.warning("on_report failed for invocation %s", report.invocation_id, exc_info=True)
