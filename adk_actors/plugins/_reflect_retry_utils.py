"""What google-adk's reflect-and-retry plugins share (its private
``google.adk.plugins._reflect_retry_utils``): the scope a failure count lives in, the
marker of a result such a plugin made, and a per-scope, per-name failure counter."""

from __future__ import annotations

import enum
import threading

__all__ = ["GLOBAL_SCOPE_KEY", "REFLECT_AND_RETRY_RESPONSE_TYPE", "PerItemFailuresCounter", "ScopedFailureTracker",
           "TrackingScope", "resolve_scope_key"]

#: the ``response_type`` of every result a reflect-and-retry plugin makes (google-adk's value)
REFLECT_AND_RETRY_RESPONSE_TYPE = "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"
#: the one scope of ``TrackingScope.GLOBAL`` counting (google-adk's value)
GLOBAL_SCOPE_KEY = "__global_reflect_and_retry_scope__"

#: a tool's (or model's) name -> its consecutive failures
PerItemFailuresCounter = dict[str, int]


class TrackingScope(enum.Enum):
    """How long a failure count lives: one invocation (a user's turn), or the plugin's life."""

    INVOCATION = "invocation"
    GLOBAL = "global"


def resolve_scope_key(scope: TrackingScope, invocation_id: str | None) -> str:
    """The key failures are counted under: the invocation's id for ``INVOCATION`` (a
    ``ValueError`` without one), :data:`GLOBAL_SCOPE_KEY` for ``GLOBAL``; a
    ``ValueError`` for anything else."""
    if scope is TrackingScope.INVOCATION:
        if not invocation_id:
            raise ValueError("counting failures per invocation needs an invocation_id")
        return invocation_id
    if scope is TrackingScope.GLOBAL:
        return GLOBAL_SCOPE_KEY
    raise ValueError(f"unknown tracking scope: {scope!r}")


class ScopedFailureTracker:
    """Consecutive failures by scope key and name. Each change is made whole under one
    lock (a thread lock, held for no await: one plugin may serve runs on several event
    loops and threads, where google-adk's asyncio lock serves one loop), so calls
    running at once (parallel tool calls, concurrent runs) never lose a count."""

    def __init__(self) -> None:
        self._scoped_failure_counters: dict[str, PerItemFailuresCounter] = {}
        self._lock = threading.Lock()

    async def increment(self, scope_key: str, item_name: str) -> int:
        """One more failure of ``item_name`` in ``scope_key``: the count now."""
        with self._lock:
            counter = self._scoped_failure_counters.setdefault(scope_key, {})
            counter[item_name] = counter.get(item_name, 0) + 1
            return counter[item_name]

    async def reset(self, scope_key: str, item_name: str) -> None:
        """``item_name`` succeeded: its count in ``scope_key`` is gone (a scope left
        with no count is dropped)."""
        with self._lock:
            counter = self._scoped_failure_counters.get(scope_key)
            if counter is None:
                return
            counter.pop(item_name, None)
            if not counter:
                del self._scoped_failure_counters[scope_key]
