"""``M``: middleware chains, adk-fluent's names (``builder.middleware(M.retry(3) | M.log())``).

Each factory gives an :class:`MComposite`, a chain that ``|`` extends (with another
chain or a middleware object of your own). ``M.scope`` limits a chain's agent, model
and tool hooks to some agents; ``M.when`` and ``M.sample`` decide at each hook call
whether it runs. Not here: the A2A and A2UI middlewares.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from ._middleware import TraceContext, call_hook, in_dispatched_task
from ._middleware_kit import (
    CircuitBreakerMiddleware,
    CostTracker,
    DedupMiddleware,
    DispatchLogMiddleware,
    FallbackModelMiddleware,
    LatencyMiddleware,
    ModelCacheMiddleware,
    RateLimitMiddleware,
    RetryMiddleware,
    StructuredLogMiddleware,
    TimeoutMiddleware,
    TopologyLogMiddleware,
)
from ._middleware_otel import MetricsMiddleware, TraceMiddleware

__all__ = ["M", "MComposite"]

#: ``M.when``'s names for how a run goes: streamed (SSE) or not
_MODES = ("stream", "pipeline", "dispatched")


class MComposite:
    """A chain of middlewares, in the order they run; ``a | b`` appends."""

    def __init__(self, items: list[Any], kind: str = "chain") -> None:
        self._items = list(items)
        self.kind = kind

    def __or__(self, other: Any) -> MComposite:
        return MComposite([*self._items, *(other.to_stack() if isinstance(other, MComposite) else [other])])

    def __ror__(self, other: Any) -> MComposite:
        return MComposite([other, *self._items])

    def to_stack(self) -> list[Any]:
        """The middleware objects, in order."""
        return list(self._items)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"MComposite({self._items!r})"


def _stack(mw: Any) -> list[Any]:
    return mw.to_stack() if isinstance(mw, MComposite) else [mw]


class _Scoped:
    """``inner``'s hooks, with an ``agents`` scope (see ``_middleware.agent_matches``)."""

    def __init__(self, agents: Any, inner: Any) -> None:
        self.agents = agents
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Guarded:
    """``inner``'s hooks, each called only when ``allowed(ctx)`` holds at that moment."""

    def __init__(self, allowed: Callable[[TraceContext], bool], inner: Any) -> None:
        self._allowed = allowed
        self._inner = inner
        if getattr(inner, "agents", None) is not None:
            self.agents = inner.agents

    def __getattr__(self, name: str) -> Any:
        hook = getattr(self._inner, name)
        if not callable(hook):
            return hook

        async def guarded(ctx: TraceContext, *args: Any) -> Any:
            return await call_hook(hook, ctx, *args) if self._allowed(ctx) else None

        return guarded


def _mode_of(ctx: TraceContext) -> str:
    if in_dispatched_task():
        return "dispatched"
    run_config = getattr(ctx.invocation_context, "run_config", None)
    mode = getattr(getattr(run_config, "streaming_mode", None), "value", None)
    return "stream" if mode == "sse" else "pipeline"


class _Hook:
    """One function as one hook."""

    def __init__(self, hook: str, fn: Callable[..., Any]) -> None:
        self.hook = hook
        setattr(self, hook, fn)

    def __repr__(self) -> str:
        return f"M.{self.hook}({getattr(self, self.hook)!r})"


class M:
    """Middleware factories (adk-fluent's ``M``)."""

    @staticmethod
    def retry(max_attempts: int = 3, backoff: float = 1.0) -> MComposite:
        """Failed model and tool calls made again (see :class:`RetryMiddleware`)."""
        return MComposite([RetryMiddleware(max_attempts=max_attempts, backoff_base=backoff)], kind="retry")

    @staticmethod
    def log() -> MComposite:
        """Agent, model and tool hooks recorded in ``.log`` (:class:`StructuredLogMiddleware`)."""
        return MComposite([StructuredLogMiddleware()], kind="log")

    @staticmethod
    def cost() -> MComposite:
        """Model calls and tokens counted (:class:`CostTracker`)."""
        return MComposite([CostTracker()], kind="cost")

    @staticmethod
    def latency() -> MComposite:
        """Each agent's run times (:class:`LatencyMiddleware`)."""
        return MComposite([LatencyMiddleware()], kind="latency")

    @staticmethod
    def topology_log() -> MComposite:
        """Loops, fan-outs, routes, fallbacks and time limits recorded (:class:`TopologyLogMiddleware`)."""
        return MComposite([TopologyLogMiddleware()], kind="topology_log")

    @staticmethod
    def dispatch_log() -> MComposite:
        """Tasks dispatched, completed, failed and joined recorded (:class:`DispatchLogMiddleware`)."""
        return MComposite([DispatchLogMiddleware()], kind="dispatch_log")

    @staticmethod
    def scope(agents: Any, mw: Any) -> MComposite:
        """``mw``'s agent, model and tool hooks only for ``agents`` (a name, a tuple of
        names, a compiled pattern or a predicate of the name)."""
        return MComposite([_Scoped(agents, m) for m in _stack(mw)])

    @staticmethod
    def when(condition: str | Callable[[], bool], mw: Any) -> MComposite:
        """``mw``'s hooks only while ``condition`` holds, asked at each call: a function
        of no argument, or ``"dispatched"`` (in a task ``dispatch`` started),
        ``"stream"`` (else, the run streams its answer: SSE) or ``"pipeline"`` (else)."""
        allowed: Callable[[TraceContext], bool]
        if isinstance(condition, str):
            if condition not in _MODES:
                raise ValueError(f"M.when: a mode is one of {', '.join(_MODES)}, got {condition!r}")
            allowed = lambda ctx: _mode_of(ctx) == condition  # noqa: E731
        elif callable(condition):
            allowed = lambda ctx: bool(condition())  # noqa: E731
        else:
            raise TypeError(f"M.when takes a mode name or a function of no argument, got {condition!r}")
        return MComposite([_Guarded(allowed, m) for m in _stack(mw)])

    @staticmethod
    def sample(rate: float, mw: Any, *, chance: Callable[[], float] = random.random) -> MComposite:
        """``mw``'s hooks at each call with probability ``rate`` (0 to 1)."""
        if not 0 <= rate <= 1:
            raise ValueError(f"M.sample: rate is between 0 and 1, got {rate}")
        return MComposite([_Guarded(lambda ctx: chance() < rate, m) for m in _stack(mw)])

    # -- one hook from a function ------------------------------------------------
    @staticmethod
    def before_agent(fn: Callable[..., Any]) -> MComposite:
        return MComposite([_Hook("before_agent", fn)])

    @staticmethod
    def after_agent(fn: Callable[..., Any]) -> MComposite:
        return MComposite([_Hook("after_agent", fn)])

    @staticmethod
    def before_model(fn: Callable[..., Any]) -> MComposite:
        return MComposite([_Hook("before_model", fn)])

    @staticmethod
    def after_model(fn: Callable[..., Any]) -> MComposite:
        return MComposite([_Hook("after_model", fn)])

    @staticmethod
    def on_loop(fn: Callable[..., Any]) -> MComposite:
        """``fn(ctx, loop_name, iteration)`` at each loop iteration (a
        ``LoopDirective(break_loop=True)`` from it ends the loop)."""
        return MComposite([_Hook("on_loop_iteration", fn)])

    @staticmethod
    def on_timeout(fn: Callable[..., Any]) -> MComposite:
        return MComposite([_Hook("on_timeout", fn)])

    @staticmethod
    def on_route(fn: Callable[..., Any]) -> MComposite:
        return MComposite([_Hook("on_route_selected", fn)])

    @staticmethod
    def on_fallback(fn: Callable[..., Any]) -> MComposite:
        return MComposite([_Hook("on_fallback_attempt", fn)])

    # -- control -----------------------------------------------------------------
    @staticmethod
    def circuit_breaker(threshold: int = 5, reset_after: float = 60) -> MComposite:
        return MComposite([CircuitBreakerMiddleware(threshold=threshold, reset_after=reset_after)],
                          kind="circuit_breaker")

    @staticmethod
    def timeout(seconds: float = 30) -> MComposite:
        return MComposite([TimeoutMiddleware(seconds=seconds)], kind="timeout")

    @staticmethod
    def cache(ttl: float = 300, key_fn: Callable[[Any], Any] | None = None) -> MComposite:
        return MComposite([ModelCacheMiddleware(ttl=ttl, key_fn=key_fn)], kind="cache")

    @staticmethod
    def fallback_model(model: Any = "gemini-2.0-flash") -> MComposite:
        return MComposite([FallbackModelMiddleware(model)], kind="fallback_model")

    @staticmethod
    def dedup(window: int = 10) -> MComposite:
        return MComposite([DedupMiddleware(window=window)], kind="dedup")

    @staticmethod
    def trace(exporter: Any = None, *, tracer: Any = None) -> MComposite:
        """OpenTelemetry spans per agent and per model call (:class:`TraceMiddleware`)."""
        return MComposite([TraceMiddleware(exporter, tracer=tracer)], kind="trace")

    @staticmethod
    def metrics(collector: Any = None, *, meter: Any = None) -> MComposite:
        """OpenTelemetry counters and a latency histogram per agent (:class:`MetricsMiddleware`)."""
        return MComposite([MetricsMiddleware(collector, meter=meter)], kind="metrics")

    @staticmethod
    def rate_limit(rate: float, *, time_period: float = 1.0) -> MComposite:
        return MComposite([RateLimitMiddleware(rate, time_period=time_period)], kind="rate_limit")

