"""The middlewares ``M`` makes (adk-fluent's names), each a plain object with hooks.

What each keeps is its own and bounded: a log keeps its last :data:`KEPT` entries.
Clocks and sleeps are passed in, so tests run them exactly and fast.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from cachetools import LRUCache, TTLCache

from .._types import LlmResponse
from ..engine import Retry
from ..models import BreakerConfig, CircuitBreaker, Rejected, outcome_of
from ._middleware import TraceContext

__all__ = ["KEPT", "CircuitBreakerMiddleware", "CostTracker", "DedupMiddleware", "DispatchLogMiddleware",
           "FallbackModelMiddleware",
           "LatencyMiddleware", "ModelCacheMiddleware", "RateLimitMiddleware", "RetryMiddleware",
           "StructuredLogMiddleware", "TimeoutMiddleware", "TopologyLogMiddleware"]

#: how many entries a log keeps (the oldest go first)
KEPT = 10_000
_log = logging.getLogger("adk_actors.fluent.middleware")
Sleep = Callable[[float], Awaitable[Any]]


def _request_key(request: Any) -> str:
    """A model request as a stable text: equal requests, equal keys."""
    dump = getattr(request, "model_dump_json", None)
    return dump() if callable(dump) else repr(request)


class RetryMiddleware:
    """Model and tool calls that fail are made again, up to ``max_attempts`` in all,
    after ``min(backoff_base * 2**(n-1), max_backoff)`` plus up to ``jitter`` seconds
    (tenacity's ``wait_exponential_jitter``, as adk-fluent's). The last failure stands."""

    def __init__(self, max_attempts: int = 3, backoff_base: float = 1.0, *, max_backoff: float = 60.0,
                 jitter: float = 1.0, sleep: Sleep = asyncio.sleep) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.max_backoff = max_backoff
        self.jitter = jitter
        self._sleep = sleep

    def delay(self, attempt: int) -> float:
        """The wait after failed attempt ``attempt`` (from 1)."""
        return float(min(self.backoff_base * 2 ** (attempt - 1), self.max_backoff)) + random.uniform(0, self.jitter)

    async def _again(self, ctx: TraceContext, key: str) -> Retry | None:
        failed = ctx.get(key, 0) + 1
        ctx[key] = failed
        if failed >= self.max_attempts:
            return None
        await self._sleep(self.delay(failed))
        return Retry(max_attempts=self.max_attempts)

    async def on_model_error(self, ctx: TraceContext, request: Any, error: BaseException) -> Retry | None:
        return await self._again(ctx, f"_retry_model_{ctx.agent_name}_{id(request)}")

    async def on_tool_error(self, ctx: TraceContext, tool_name: str, args: Any, error: BaseException) -> Retry | None:
        return await self._again(ctx, f"_retry_tool_{ctx.agent_name}_{tool_name}_{id(args)}")


class StructuredLogMiddleware:
    """``log``: one dict per agent, model and tool hook (``event``, ``timestamp``, and
    what it is about), also logged at DEBUG to ``adk_actors.fluent.middleware``."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.log: deque[dict[str, Any]] = deque(maxlen=KEPT)
        self._clock = clock

    def _record(self, event: str, **details: Any) -> None:
        self.log.append({"event": event, "timestamp": self._clock(), **details})
        _log.debug("%s %s", event, details)

    def before_agent(self, ctx: TraceContext, agent_name: str) -> None:
        self._record("before_agent", agent_name=agent_name)

    def after_agent(self, ctx: TraceContext, agent_name: str) -> None:
        self._record("after_agent", agent_name=agent_name)

    def before_model(self, ctx: TraceContext, request: Any) -> None:
        self._record("before_model", agent_name=ctx.agent_name, request=str(request)[:200])

    def after_model(self, ctx: TraceContext, response: Any) -> None:
        self._record("after_model", agent_name=ctx.agent_name, response=str(response)[:200])

    def on_model_error(self, ctx: TraceContext, request: Any, error: BaseException) -> None:
        self._record("on_model_error", agent_name=ctx.agent_name, error=str(error))

    def before_tool(self, ctx: TraceContext, tool_name: str, args: Any) -> None:
        self._record("before_tool", agent_name=ctx.agent_name, tool_name=tool_name)

    def after_tool(self, ctx: TraceContext, tool_name: str, args: Any, result: Any) -> None:
        self._record("after_tool", agent_name=ctx.agent_name, tool_name=tool_name)

    def on_tool_error(self, ctx: TraceContext, tool_name: str, args: Any, error: BaseException) -> None:
        self._record("on_tool_error", agent_name=ctx.agent_name, tool_name=tool_name, error=str(error))


class TopologyLogMiddleware:
    """``log``: one dict per loop iteration, fan-out start and end, route chosen,
    fallback attempt and time limit met or passed (adk-fluent's entries)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.log: deque[dict[str, Any]] = deque(maxlen=KEPT)
        self._clock = clock

    def _record(self, event: str, **details: Any) -> None:
        self.log.append({"event": event, **details, "time": self._clock()})

    def on_loop_iteration(self, ctx: TraceContext, loop_name: str, iteration: int) -> None:
        self._record("loop_iteration", loop=loop_name, iteration=iteration)

    def on_fanout_start(self, ctx: TraceContext, fanout_name: str, branch_names: list[str]) -> None:
        self._record("fanout_start", fanout=fanout_name, branches=list(branch_names))

    def on_fanout_complete(self, ctx: TraceContext, fanout_name: str, branch_names: list[str]) -> None:
        self._record("fanout_complete", fanout=fanout_name, branches=list(branch_names))

    def on_route_selected(self, ctx: TraceContext, route_name: str, selected_agent: str) -> None:
        self._record("route_selected", route=route_name, selected=selected_agent)

    def on_fallback_attempt(self, ctx: TraceContext, fallback_name: str, agent_name: str, attempt: int,
                            error: BaseException | None) -> None:
        self._record("fallback_attempt", fallback=fallback_name, agent=agent_name, attempt=attempt,
                     error=str(error) if error else None)

    def on_timeout(self, ctx: TraceContext, timeout_name: str, seconds: float, timed_out: bool) -> None:
        self._record("timeout", timeout=timeout_name, seconds=seconds, timed_out=timed_out)


class DispatchLogMiddleware:
    """``log``: one dict per task dispatched, completed or failed, and per join
    (adk-fluent's entries)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.log: deque[dict[str, Any]] = deque(maxlen=KEPT)
        self._clock = clock

    def on_dispatch(self, ctx: TraceContext, task_name: str, agent_name: str) -> None:
        self.log.append({"event": "dispatch", "task": task_name, "agent": agent_name, "time": self._clock()})

    def on_task_complete(self, ctx: TraceContext, task_name: str, result: str) -> None:
        self.log.append({"event": "task_complete", "task": task_name, "result_len": len(result or ""),
                         "time": self._clock()})

    def on_task_error(self, ctx: TraceContext, task_name: str, error: BaseException) -> None:
        self.log.append({"event": "task_error", "task": task_name, "error": str(error), "time": self._clock()})

    def on_join(self, ctx: TraceContext, joined: list[str], timed_out: list[str]) -> None:
        self.log.append({"event": "join", "joined": list(joined), "timed_out": list(timed_out), "time": self._clock()})


class LatencyMiddleware:
    """``latencies``: agent name -> the seconds each of its runs took (its last :data:`KEPT`)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.latencies: dict[str, deque[float]] = {}
        self._clock = clock

    def before_agent(self, ctx: TraceContext, agent_name: str) -> None:
        ctx[f"_latency_{agent_name}"] = self._clock()

    def after_agent(self, ctx: TraceContext, agent_name: str) -> None:
        began = ctx.get(f"_latency_{agent_name}")
        if began is not None:
            self.latencies.setdefault(agent_name, deque(maxlen=KEPT)).append(self._clock() - began)


class CostTracker:
    """Model calls answered (``calls``) and their tokens (``total_input_tokens``,
    ``total_output_tokens``, from each answer's usage metadata)."""

    def __init__(self) -> None:
        self.calls = 0
        self.total_input_tokens = 0
        self.total_output_tokens = 0

    def after_model(self, ctx: TraceContext, response: Any) -> None:
        self.calls += 1
        usage = getattr(response, "usage_metadata", None)
        if usage is not None:
            self.total_input_tokens += usage.prompt_token_count or 0
            self.total_output_tokens += usage.candidates_token_count or 0


class CircuitBreakerMiddleware:
    """Per agent: after ``threshold`` model failures in a row its model calls are not
    made for ``reset_after`` seconds (answered ``circuit_open`` at once); then one call
    is let through, and its success closes the breaker again. The rules are the
    host's :class:`~adk_actors.models.CircuitBreaker`'s."""

    def __init__(self, threshold: int = 5, reset_after: float = 60, clock: Callable[[], float] = time.monotonic) -> None:
        self._config = BreakerConfig(consecutive_failures=threshold, failure_rate=1.0, minimum_calls=2**31,
                                     open_seconds=reset_after, max_open_seconds=reset_after)
        self._clock = clock
        self.breakers: dict[str, CircuitBreaker] = {}

    def _breaker(self, agent: str | None) -> CircuitBreaker:
        name = agent or "?"
        if name not in self.breakers:
            self.breakers[name] = CircuitBreaker(name=f"agent:{name}", config=self._config)
        return self.breakers[name]

    def before_model(self, ctx: TraceContext, request: Any) -> LlmResponse | None:
        permit = self._breaker(ctx.agent_name).acquire(self._clock())
        if isinstance(permit, Rejected):
            return LlmResponse(error_code="circuit_open",
                               error_message=f"Circuit open for agent '{ctx.agent_name}': {permit.retry_after:.1f} s "
                                             f"until a model call is tried again")
        ctx[f"_breaker_{ctx.agent_name}"] = permit
        return None

    def after_model(self, ctx: TraceContext, response: Any) -> None:
        self._settle(ctx, "failure" if getattr(response, "error_code", None) else "success")

    def on_model_error(self, ctx: TraceContext, request: Any, error: BaseException) -> None:
        self._settle(ctx, outcome_of(error))

    def _settle(self, ctx: TraceContext, outcome: str) -> None:
        permit = ctx.pop(f"_breaker_{ctx.agent_name}", None)
        if permit is not None:
            self._breaker(ctx.agent_name).record(permit, outcome, self._clock())


class TimeoutMiddleware:
    """Per agent run: a model call asked for more than ``seconds`` after the agent
    began is not made; it is answered ``timeout`` at once, which ends the agent."""

    def __init__(self, seconds: float = 30, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock

    def before_agent(self, ctx: TraceContext, agent_name: str) -> None:
        ctx[f"_deadline_{agent_name}"] = self._clock() + self.seconds

    def after_agent(self, ctx: TraceContext, agent_name: str) -> None:
        ctx.pop(f"_deadline_{agent_name}", None)

    def before_model(self, ctx: TraceContext, request: Any) -> LlmResponse | None:
        deadline = ctx.get(f"_deadline_{ctx.agent_name}")
        if deadline is not None and self._clock() > deadline:
            return LlmResponse(error_code="timeout",
                               error_message=f"Agent '{ctx.agent_name}' exceeded {self.seconds}s timeout")
        return None


class _Answered:
    """Answers a model request from ``cache`` (request key -> the answer it had), and
    keeps each new answer that is not an error."""

    def __init__(self, cache: Any, key_fn: Callable[[Any], Any] | None = None) -> None:
        self._key = key_fn or _request_key
        self.cache = cache

    def before_model(self, ctx: TraceContext, request: Any) -> Any:
        key = self._key(request)
        if key in self.cache:
            return self.cache[key]
        ctx[f"_answered_{ctx.agent_name}"] = key
        return None

    def after_model(self, ctx: TraceContext, response: Any) -> None:
        key = ctx.pop(f"_answered_{ctx.agent_name}", None)
        if key is not None and not getattr(response, "error_code", None):
            self.cache[key] = response


class ModelCacheMiddleware(_Answered):
    """An answer to a request asked before (``key_fn(request)``; by default the whole
    request) within ``ttl`` seconds is given again without calling the model; at most
    ``max_size`` answers are kept (cachetools' TTLCache)."""

    def __init__(self, ttl: float = 300, key_fn: Callable[[Any], Any] | None = None, *, max_size: int = 1024,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(TTLCache(maxsize=max_size, ttl=ttl, timer=clock), key_fn)


class DedupMiddleware(_Answered):
    """A request equal to one of the last ``window`` this middleware saw answered (in
    any run of this process) is given that answer again instead of a new model call
    (cachetools' LRUCache)."""

    def __init__(self, window: int = 10) -> None:
        super().__init__(LRUCache(maxsize=max(1, window)))


class RateLimitMiddleware:
    """At most ``rate`` model calls per ``time_period`` seconds through this
    middleware (every run of this process): a call over it waits for its turn."""

    def __init__(self, rate: float, time_period: float = 1.0, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Sleep = asyncio.sleep) -> None:
        if rate < 1:
            raise ValueError(f"rate must allow at least one call per period, got {rate}")
        self.rate = int(rate)
        self.time_period = time_period
        self._clock = clock
        self._sleep = sleep
        self._calls: deque[float] = deque()

    async def before_model(self, ctx: TraceContext, request: Any) -> None:
        while True:
            now = self._clock()
            while self._calls and now - self._calls[0] >= self.time_period:
                self._calls.popleft()
            if len(self._calls) < self.rate:
                self._calls.append(now)
                return
            await self._sleep(self.time_period - (now - self._calls[0]))


class FallbackModelMiddleware:
    """A failed model call is made once more on ``model`` (a model object, or a name
    the run resolves): its answer stands for the failed one."""

    def __init__(self, model: Any) -> None:
        self.model = model

    async def on_model_error(self, ctx: TraceContext, request: Any, error: BaseException) -> LlmResponse | None:
        model = self.model
        if not hasattr(model, "generate"):
            resolve = getattr(ctx.invocation_context, "resolve_model", None)
            if resolve is None:
                _log.warning("M.fallback_model(%r): the run resolves no model names", model)
                return None
            model = resolve(model)
        final = None
        async for response in model.generate(request, stream=False):
            if not response.partial:
                final = response
        return final
