"""What a brutal kill costs the runs that share the killed run's worker (issue 53).

Run: ``python bench/kill_cost.py [--rounds 5] [--bystanders 4] [--grace 2] [--nap 4]``.
A host with one partition and one run worker. Each round starts ``--bystanders`` turns
of an app that resumes crashed runs (a ``--nap`` s nap, idempotent: longer than the
grace, so that it still runs when the worker is killed), each on its own session, and,
in the "kill" rounds, a turn whose tool blocks for 30 s (no step boundary to stop at),
killed 0.3 s later with ``Runner.kill_run``: it does not stop in its grace, so its
worker is killed, and the bystanders end ``interrupted`` and are resumed (their Runner
follows resumes: one run each). Prints p50 and max of:

* a bystander's turn, start to end, with no kill (the baseline) and with the kill;
* the killed run: from the kill request to its caller's ``killed`` end (the grace,
  then SIGKILL and the worker's line ending).

google-adk has no counterpart (it cannot kill a run), so there is no side-by-side
column. The machine is shared: quote medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adk_actors import LlmAgent, LlmRequest, RunFailedError
from adk_actors.engine import App
from adk_actors.models import ScriptedModel, call
from adk_actors.runtime import Host, HostConfig
from adk_actors.tools import idempotent
from supervision.testing import running_actor_system, wait_until


def block(seconds: float) -> str:
    """Block the tool's thread for ``seconds``."""
    time.sleep(seconds)
    return "done"


@idempotent
def nap(seconds: float) -> str:
    """Sleep for ``seconds`` (safe to run again)."""
    time.sleep(seconds)
    return "rested"


def _model(tool: str) -> Any:
    def answer(request: LlmRequest) -> Any:
        if request.contents[-1].function_responses:
            return "finished"
        return call(tool, seconds=float(request.contents[-1].text))
    return answer


blocker = LlmAgent(name="blocker", model=ScriptedModel(fallback=_model("block")), tools=[block])
napper = App(root_agent=LlmAgent(name="napper", model=ScriptedModel(fallback=_model("nap")), tools=[nap]),
             resume_interrupted=3)


def one_round(host: Host, number: int, bystanders: int, nap_for: float,
              kill: bool) -> tuple[list[float], float | None]:
    naps, blocks = host.runner("napper"), host.runner("blocker")
    took: list[float] = []
    failures: list[Exception] = []

    def bystander(session: str) -> None:
        began = time.monotonic()
        try:
            list(naps.run("bench", session, f"{nap_for}"))
            took.append(time.monotonic() - began)
        except Exception as exc:
            failures.append(exc)

    threads = []
    for index in range(bystanders):
        session = f"r{number}-b{index}"
        naps.create_session("bench", session)
        threads.append(threading.Thread(target=bystander, args=(session,)))
    for thread in threads:
        thread.start()
    ended: float | None = None
    if kill:
        victim = f"r{number}-v"
        blocks.create_session("bench", victim)
        run_id = f"run-kill-{number}"
        victim_end: list[float] = []

        def blocked() -> None:
            try:
                list(blocks.run("bench", victim, "30", run_id=run_id))
            except RunFailedError:
                victim_end.append(time.monotonic())

        caller = threading.Thread(target=blocked)
        caller.start()
        time.sleep(0.3)
        asked = time.monotonic()
        blocks.kill_run("bench", victim, run_id)
        caller.join(60)
        wait_until(lambda: bool(victim_end), timeout=60)
        ended = victim_end[0] - asked
    for thread in threads:
        thread.join(60)
    if failures:
        raise failures[0]
    return took, ended


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--bystanders", type=int, default=4)
    parser.add_argument("--grace", type=float, default=2.0)
    parser.add_argument("--nap", type=float, default=4.0)
    args = parser.parse_args()
    baseline: list[float] = []
    killed: list[float] = []
    ends: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, running_actor_system() as system:
        config = HostConfig(apps={"napper": "bench.kill_cost:napper", "blocker": "bench.kill_cost:blocker"},
                            data_dir=str(Path(tmp) / "data"), partitions=1, run_workers=1,
                            run_stop_grace=args.grace)
        with Host(config, system=system) as host:
            for number in range(args.rounds):
                baseline.extend(one_round(host, 2 * number, args.bystanders, args.nap, kill=False)[0])
                took, ended = one_round(host, 2 * number + 1, args.bystanders, args.nap, kill=True)
                killed.extend(took)
                assert ended is not None
                ends.append(ended)
    print(f"| measure ({args.rounds} rounds, {args.bystanders} bystanders, grace {args.grace:g} s) | p50 ms | max ms |")
    print("|---|---|---|")
    for name, values in ((f"bystander's {args.nap:g} s turn, no kill", baseline),
                         (f"bystander's {args.nap:g} s turn, its worker killed", killed),
                         ("kill request -> killed run's end", ends)):
        print(f"| {name} | {statistics.median(values) * 1000:.0f} | {max(values) * 1000:.0f} |")


if __name__ == "__main__":
    main()
