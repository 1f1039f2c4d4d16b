"""The partition's checkout of run workers (``runtime._run_workers.RunWorkers``) in
process, with real lines (socket pairs) and a fake partition: no actor system.

A dead worker found while the backlog is handed out is removed, and its removal hands
out the backlog itself (``_remove``): the outer hand-out then goes on from the backlog
as it now is, never with the turn it had looked at (given twice, or a deque emptied
under it: an IndexError out of the partition's handler). And the run actor's answers
of host services (``runtime._run``): one that comes after its caller gave up is
dropped."""

from __future__ import annotations

import os
import subprocess
from collections import deque
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from adk_actors.runtime._link import RunLink
from adk_actors.runtime._run_protocol import StartRun
from adk_actors.runtime._run_workers import RunWorkers
from adk_actors.runtime._worker_state import Worker, WorkerLimits


class _Host:
    """A partition as the checkout sees it (``WorkerHost``)."""

    myAddress = "partition"
    slog = SimpleNamespace(info=lambda *a, **k: None, warning=lambda *a, **k: None)
    stopping = False

    def clock(self) -> float:
        return 0.0

    def send(self, address: Any, message: Any) -> None:
        pass

    def send_after(self, seconds: float, payload: Any = None) -> None:
        pass

    def lines_changed(self) -> None:
        pass

    def run_output(self, session: Any, run: Any, output: Any) -> None:
        pass


def _turn(n: int) -> tuple[Any, Any]:
    session = SimpleNamespace(key=f"s{n}", app_name="app", user_id="ann", session_id=f"s{n}", events=[],
                              fresh_state=dict)
    run = SimpleNamespace(run_id=f"run-{n}", invocation_id=f"inv-{n}", turn=None, outcome=None, worker=None, live_inputs=[],
                          request=SimpleNamespace(run_config=None))
    return session, run


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_a_dead_worker_found_while_the_backlog_is_handed_out_gives_each_turn_once(tmp_path: Path) -> None:
    workers = RunWorkers(_Host(), str(tmp_path / "line"), WorkerLimits())
    try:
        dead_end, dead_peer = RunLink.pair()
        dead_peer.close()  # its process is gone: its line's end not read yet
        alive_end, alive_peer = RunLink.pair()
        dead = Worker("dead", dead_end, _dead_pid(), "pool")
        alive = Worker("alive", alive_end, os.getpid(), "pool")
        workers.workers = [dead, alive]  # the dead one is chosen first (both idle)
        turns = [_turn(1), _turn(2)]
        for session, run in turns:
            workers.runs[run.run_id] = (session, run)
        workers.backlog = deque(turns)

        workers._dispatch_backlog()

        started = [m.run_id for m in alive_peer.receive() if isinstance(m, StartRun)]
        assert started == ["run-1", "run-2"]  # each once, in order
        assert not workers.backlog and workers.workers == [alive] and alive.runs == {"run-1", "run-2"}
        alive_peer.close()
    finally:
        workers.close()


def test_a_service_answer_that_comes_after_its_caller_gave_up_is_dropped() -> None:
    """A run's service call whose caller cancelled its future (its wait gave up) and
    whose answer comes later: the answer is dropped; the run actor does not die of it."""
    import concurrent.futures

    from adk_actors.runtime._run import RunActor
    from adk_actors.runtime._run_services import ServiceError
    from supervision.protocol import ErrorReply, Reply

    actor = RunActor.__new__(RunActor)  # no actor system: only its service answers are handled
    gave_up: concurrent.futures.Future[Any] = concurrent.futures.Future()
    failed: concurrent.futures.Future[Any] = concurrent.futures.Future()
    waiting: concurrent.futures.Future[Any] = concurrent.futures.Future()
    gave_up.cancel()
    actor._lookups, actor._waiting = {}, {}
    actor._service_calls = {"late": gave_up, "late-error": failed, "on-time": waiting}
    failed.cancel()
    actor.handle_info(Reply("late", 1), None)
    actor.handle_info(ErrorReply("late-error", "not_running"), None)
    actor.handle_info(ErrorReply("on-time", "not_running", "gone"), None)
    assert gave_up.cancelled() and failed.cancelled() and actor._service_calls == {}
    assert isinstance(waiting.exception(timeout=0), ServiceError)
