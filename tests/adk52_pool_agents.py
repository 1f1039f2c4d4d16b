"""The agent of tests/test_adk52_tool_thread_pool.py's host test (imported by path in
the run workers): one model turn calls ``hold`` 4 times at once; each call counts the
calls of its invocation running with it and waits, at most ``HOLD`` seconds, for all 4
to be running, then answers what it saw and the run's ``tool_thread_pool_config``."""

from __future__ import annotations

import threading
from typing import Any

from adk_actors import LlmAgent, LlmRequest
from adk_actors.models import ScriptedModel, call
from adk_actors.tools import ToolContext

CALLS = 4
HOLD = 0.5
_lock = threading.Condition()
_running: dict[str, list[int]] = {}  # invocation id -> [running, peak]


def hold(n: int, tool_context: ToolContext) -> dict[str, Any]:
    """Hold a while with the other calls of this turn."""
    config = tool_context.run_config.tool_thread_pool_config
    me = threading.current_thread()
    with _lock:
        counts = _running.setdefault(tool_context.invocation_id, [0, 0])
        counts[0] += 1
        counts[1] = max(counts[1], counts[0])
        _lock.notify_all()
        _lock.wait_for(lambda: counts[0] >= CALLS, timeout=HOLD)
        counts[0] -= 1
        peak = counts[1]
    return {"n": n, "peak": peak, "max_workers": config.max_workers if config else None,
            "daemon": me.daemon, "thread": me.name}


def _pooled(request: LlmRequest) -> Any:
    if request.contents and request.contents[-1].function_responses:
        return "held"
    return [call("hold", n=n) for n in range(CALLS)]


pooled_agent = LlmAgent(name="pooled", model=ScriptedModel(fallback=_pooled), tools=[hold])
