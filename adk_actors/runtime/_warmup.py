"""Warming a pooled pair: a turn's first-time costs paid when it is started, not on its first turn.

A session actor started ahead of need (and the blank run actor it forks) shares its
parent's memory copy-on-write and has run none of a turn's code. Its first turn pays
for both: about 800 page faults and cold code paths, about twice the CPU of a later
turn. Under a burst of new sessions every first turn pays it at once, on a CPU the
burst already saturates, and the first turns were the burst's slowest (bench/turns.py).

In order, when the partition prepares a pooled pair:

1. :func:`warm_session_process` (in the session actor): a turn's store work on a
   scratch in-memory store (create, start a run, commit two events with the run's
   end, read back), and the pickling of a turn's messages. (The store the session
   will use is opened at activation, off the first turn's path, with its writers'
   queue: see ``SQLiteSessionStore``.)
2. :func:`warm_run_process` (in the run actor): one invocation of a built-in agent
   with a scripted model over a scratch session, and the pickling of its output. No
   app code runs and nothing leaves the process: the app's own agent may call a paid
   model or tools with side effects; telemetry handlers (inherited from the host
   process) see none of it.

A warm-up that fails is logged and otherwise ignored: the process is as usable as an
unwarmed one. The cost: ~13-15 ms of CPU per pair at pool time (measured in forked
children: ~5 ms in the session actor, ~8.5 ms in the run actor), and the pages the
first turn would have copied are copied now (PSS per pair 9.5 -> 14.1 MB in a pool
of 32 x 4, 14.9 -> 19.1 MB in one of 2 x 4).
"""

from __future__ import annotations

import asyncio
import logging
import pickle

from .. import telemetry
from .._types import Content, Event, RunConfig
from ..agents import LlmAgent
from ..engine import SessionView, run_invocation
from ..messages import AdkEvent, RunDone, RunMessages, RunRequest
from ..models import ScriptedModel
from ..store import SQLiteSessionStore
from ._run_protocol import RunOutcome, RunOutput, StartRun

__all__ = ["warm_run_process", "warm_session_process"]

_log = logging.getLogger("adk_actors.warmup")
_APP, _USER, _SESSION = "warm-up", "warm-up", "warm-up"


def warm_session_process() -> None:
    """A turn's store writes and message pickling, on scratch data (see the module)."""
    try:
        store = SQLiteSessionStore(":memory:")
        try:
            store.create_session(_APP, _USER, _SESSION)
            request = RunRequest(_APP, _USER, _SESSION, new_message=Content.user("hello"), batched=True)
            pickle.loads(pickle.dumps(request))
            store.start_run(_APP, _USER, _SESSION, request.run_id, None)
            pickle.dumps(StartRun(run_id=request.run_id, invocation_id="warm-up", base_count=0, extra_events=[],
                                  state={}, new_message=request.new_message, run_config=RunConfig()))
            events = [Event(author="user", invocation_id="warm-up", content=Content.user("hello")),
                      Event(author="warm_up", invocation_id="warm-up", content=Content.model("hello"))]
            stored = store.append_events(_APP, _USER, _SESSION, events, end_run=(request.run_id, "done"))
            store.get_session(_APP, _USER, _SESSION)
            messages = tuple(AdkEvent(request.run_id, event, seq) for seq, event in enumerate(stored) if event)
            pickle.loads(pickle.dumps(RunMessages(request.run_id, (*messages, RunDone(request.run_id, None, 2)))))
        finally:
            store.close()
    except Exception:
        _log.warning("warming a pooled session actor failed (it serves all the same)", exc_info=True)


_AGENT = LlmAgent(name="warm_up", model=ScriptedModel(fallback=lambda request: "hello"))


def warm_run_process() -> None:
    """One scripted invocation over a scratch session, and its output pickled (see the module)."""
    async def invoke() -> list[Event]:
        view = SessionView(app_name=_APP, user_id=_USER, session_id=_SESSION, state={}, events=[])
        return [event async for event in run_invocation(_AGENT, view, Content.user("hello"), run_config=RunConfig())]

    try:
        loop = asyncio.new_event_loop()
        try:
            with telemetry.muted():  # the host's handlers (metrics, traces) are inherited
                events = loop.run_until_complete(invoke())
        finally:
            loop.close()
        output = RunOutput("warm-up", events, RunOutcome("warm-up", True))
        pickle.loads(pickle.dumps(output))
    except Exception:
        _log.warning("warming a pooled run actor failed (it serves all the same)", exc_info=True)
