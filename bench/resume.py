"""Durable-run benchmark: how soon a run cut by a crash goes on (issue 36).

Run: ``python bench/resume.py [--rounds 20]``. Each round starts a turn whose tool
waits (the first time only) and kills with SIGKILL, mid-call, either the session's
partition or the turn's run worker. The app resumes crashed runs on its own
(``App(resume_interrupted=...)``): the tool runs again (it is idempotent) and the run
commits its next event. Prints p50, p99 and max of:

* partition killed: from the kill, and from the moment the restarted partition runs
  (its supervisor reports a new process), to the resumed run's next committed event;
* run worker killed: from the kill to that event (the partition resumes it at once).

google-adk has no counterpart (a killed process's run is lost there), so there is no
side-by-side column. The machine is shared: quote medians.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adk_actors import LlmAgent, LlmRequest
from adk_actors.engine import App
from adk_actors.models import ScriptedModel, call
from adk_actors.runtime import Host, HostConfig
from adk_actors.tools import ToolContext, idempotent
from supervision import SupervisorClient
from supervision.testing import running_actor_system, wait_until


@idempotent
def slow_step(tool_context: ToolContext) -> dict[str, Any]:
    """A step that waits a minute the first time (the marker file the state names is missing)."""
    marker = Path(tool_context.state["marker"])
    if not marker.exists():
        marker.write_text(str(os.getpid()))
        time.sleep(60)
    return {"done": True}


def _answer(request: LlmRequest) -> Any:
    return "finished" if request.contents[-1].function_responses else call("slow_step")


app = App(root_agent=LlmAgent(name="resumer", model=ScriptedModel(fallback=_answer), tools=[slow_step]),
          resume_interrupted=3)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _partition_pid(host: Host, session: str) -> tuple[str, int]:
    address = host.partition_for("resume", "bench", session, refresh=True)
    sessions = SupervisorClient(host.system, host.root.child("sessions").address)  # type: ignore[union-attr]
    info = next(i for i in sessions.which_children() if i.address == address)
    assert info.pid is not None
    return info.id, info.pid


def _next_event_after(host: Host, session: str, count: int, timeout: float = 30.0) -> float:
    runner = host.runner("resume")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if len(runner.get_session("bench", session).events) > count:
                return time.monotonic()
        except Exception:
            pass  # restarting
        time.sleep(0.002)
    raise TimeoutError("no resumed event")


def one_round(host: Host, folder: Path, number: int, victim: str) -> tuple[float, float | None]:
    runner = host.runner("resume")
    session = f"{victim}-{number}"
    marker = folder / f"{session}.marker"
    runner.create_session("bench", session, state={"marker": str(marker)})
    threading.Thread(target=lambda: _swallow(lambda: list(runner.run("bench", session, "go"))), daemon=True).start()
    wait_until(marker.exists, timeout=20)
    time.sleep(0.05)  # the model's call event is committed before the tool runs
    committed = len(runner.get_session("bench", session).events)
    if victim == "worker":
        killed = time.monotonic()
        os.kill(int(marker.read_text()), signal.SIGKILL)
        return _next_event_after(host, session, committed) - killed, None
    child, pid = _partition_pid(host, session)
    sessions = SupervisorClient(host.system, host.root.child("sessions").address)  # type: ignore[union-attr]
    killed = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    restarted = wait_until(lambda: sessions.child(child).pid not in (None, pid) and time.monotonic(),
                           timeout=20, interval=0.002)
    event = _next_event_after(host, session, committed)
    host.partitions(refresh=True)
    return event - killed, event - restarted


def _swallow(work: Any) -> None:
    try:
        work()
    except Exception:
        pass  # the interrupted turn's failure: expected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    results: dict[str, list[float]] = {"partition: kill -> next event": [], "partition: restart -> next event": [],
                                       "worker: kill -> next event": []}
    with tempfile.TemporaryDirectory() as tmp, running_actor_system() as system:
        folder = Path(tmp)
        config = HostConfig(apps={"resume": "bench.resume:app"}, data_dir=str(folder / "data"))
        with Host(config, system=system) as host:
            for number in range(args.rounds):
                from_kill, from_restart = one_round(host, folder, number, "partition")
                results["partition: kill -> next event"].append(from_kill * 1000)
                results["partition: restart -> next event"].append((from_restart or 0) * 1000)
                results["worker: kill -> next event"].append(one_round(host, folder, number, "worker")[0] * 1000)
    print(f"| measure ({args.rounds} rounds) | p50 ms | p99 ms | max ms |")
    print("|---|---|---|---|")
    for name, values in results.items():
        print(f"| {name} | {statistics.median(values):.0f} | {pct(values, 0.99):.0f} | {max(values):.0f} |")


if __name__ == "__main__":
    main()
