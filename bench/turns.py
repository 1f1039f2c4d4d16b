"""Turns benchmark: adk-actors and google-adk side by side, same run, same machine.

Run (ours only)::

    python bench/turns.py

Side by side, with google-adk in its own environment (this script installs nothing)::

    python3 -m venv /tmp/gadk && /tmp/gadk/bin/pip install google-adk
    python bench/turns.py --google-adk-python /tmp/gadk/bin/python

google-adk's half (bench/_google_adk_side.py) runs as its users run it: copied into a
folder of its own, ``python -s -E``, no PYTHONPATH, nothing of this repository on its
path; it fails the bench if it loaded a file of the repository. The bench prints the
peer's setup and a sanity row: google-adk's text turn from a standalone script
(bench/_google_adk_standalone.py, run as a user runs one) against its in-bench text
turn (medians and fastest turns; fastest turns more than 1.5x apart are flagged and
the bench exits 1: bench/_peer.py's ``sanity`` says why those).

Both sides run the same turns against equivalent scripted models (echo for text
turns, one tool call then an answer for tool turns), no network. Measures (issue 5):
(1) per-turn latency, text and tool turn, short sessions; (2) per-turn latency when
the session holds 1,000 events; (3) N new concurrent sessions x M turns, then the same sessions again:
throughput and p50/p99 latency; (4) the host's PSS growth per session of (3), and
bytes per stored session; (5) restart latency of a killed session of 1,000 events
(kill -9 of the partition holding it -> the session answers again). Medians; the machine is
shared and noisy, so compare ratios from the same run. The burst of (3) is run
``--bursts`` times on each side (new sessions each time): the table gives the median
of each figure over the bursts, and the p99 of every burst is printed below it.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from adk_actors import Content, Event  # noqa: E402
from adk_actors.messages import LiveWorkers  # noqa: E402
from adk_actors.runtime import Host, HostConfig  # noqa: E402
from adk_actors.store import SQLiteSessionStore  # noqa: E402
from bench._peer import describe, run_side, sanity, standalone_text_turn  # noqa: E402
from supervision import call  # noqa: E402
from supervision.protocol import OsPid  # noqa: E402
from supervision.testing import find_marked_processes, running_actor_system, wait_until  # noqa: E402


def pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as smaps:
            for line in smaps:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def system_pss_kb(system: Any) -> int:
    """PSS of every process of the actor system (found by its marker file)."""
    return sum(pss_kb(pid) for pid in find_marked_processes(system.test_marker))


def ours(turns: int, concurrent: int, per_session: int, bursts: int, runs_per_worker: int = 0) -> dict[str, Any]:
    """Every figure of the table on the default host (2 partitions, 2 run workers each),
    at rest before the serial turns (its workers up)."""
    work = Path(tempfile.mkdtemp(prefix="bench-turns-"))
    out: dict[str, Any] = {}
    Host.load_tree_code()  # before the system starts, as serve's Host does (its actors share it)
    with running_actor_system(work / "logs") as system:
        config = HostConfig(apps={"bench": "bench.bench_agent:agent"}, data_dir=str(work / "data"),
                            runs_per_worker=runs_per_worker)
        store = SQLiteSessionStore(config.store_path)
        store.create_session("bench", "u", "long")
        for i in range(1000):
            author = "user" if i % 2 == 0 else "bench"
            store.append_event("bench", "u", "long", Event(author=author, invocation_id=f"e-{i // 2}",
                               content=Content(role="user" if author == "user" else "model",
                                               parts=(Content.user(f"old message {i}").parts))))
        store.close()
        with Host(config, system=system) as host:
            runner = host.runner("bench")
            for partition in host.partitions():
                wait_until(lambda p=partition: len(call(system, p, LiveWorkers(), timeout=5)) >= config.run_workers,
                           timeout=120, interval=0.1)

            def turn(user: str, sid: str, text: str) -> float:
                return timed_turn(runner, user, sid, text)

            first_turns = []
            firsts: dict[str, list[float]] = {}
            for kind in ("text", "tool", "charge"):
                samples = []
                for i in range(turns):
                    if i % 10 == 0:
                        sid = f"{kind}-{i}"
                        runner.create_session("u", sid)
                        first = turn("u", sid, f"{kind} warm-up")
                        if kind != "charge":  # google-adk's side has text and tool turns
                            first_turns.append(first)
                            firsts.setdefault(kind, []).append(first)
                    samples.append(turn("u", sid, f"{kind} {i}"))
                out[f"{kind}_turn_ms"] = statistics.median(samples) * 1000
            out["first_turn_ms"] = statistics.median(first_turns) * 1000
            for kind, times in firsts.items():  # apart: a first tool turn costs more than a first text turn
                out[f"first_{kind}_turn_ms"] = statistics.median(times) * 1000
            turn("u", "long", "text warm-up")
            samples = [turn("u", "long", f"text {i}") for i in range(max(10, turns // 2))]
            out["text_turn_1000_events_ms"] = statistics.median(samples) * 1000

            before = system_pss_kb(system)
            runs = []
            for r in range(bursts):
                result = concurrent_phase(runner, "c", concurrent, per_session, "", sessions=f"r{r}-c")
                # The same sessions again: every one held by its partition, past its first turn.
                result.update(concurrent_phase(runner, "c", concurrent, per_session, "again_", create=False,
                                               sessions=f"r{r}-c"))
                runs.append(result)
            out.update(repeated(runs))
            out["pss_kb_per_active_session"] = (system_pss_kb(system) - before) / (concurrent * bursts)
            sessions = len(runner.list_sessions("c")) + len(runner.list_sessions("u"))
            db = Path(config.store_path)
            size = sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file())
            out["bytes_per_stored_session_db"] = size / max(sessions, 1)

            # kill -9 of the process holding the 1,000-event session -> it answers again
            # (its partition restarted by the supervisor, the session loaded from the store).
            restarts = []
            for _ in range(5):
                runner.get_state("u", "long")
                partition = host.partition_for("bench", "u", "long", refresh=True)
                pid = call(system, partition, OsPid(), timeout=5)
                began = time.perf_counter()
                os.kill(pid, signal.SIGKILL)
                runner.get_state("u", "long")
                restarts.append(time.perf_counter() - began)
            out["restart_1000_events_ms"] = statistics.median(restarts) * 1000
    return out


def timed_turn(runner: Any, user: str, sid: str, text: str) -> float:
    """Seconds for one turn, from the request to its last event."""
    began = time.perf_counter()
    for _ in runner.run(user, sid, text):
        pass
    return time.perf_counter() - began


def concurrent_phase(runner: Any, user: str, concurrent: int, per_session: int, prefix: str,
                     create: bool = True, sessions: str = "c") -> dict[str, float]:
    """``concurrent`` sessions named ``sessions`` + a number (created just before,
    unless ``create`` is false), one thread each, ``per_session`` turns each:
    throughput and latency percentiles, of all turns and of each session's first turn
    of the burst (on new sessions, those that wait for their session's activation) apart."""
    for i in range(concurrent if create else 0):
        runner.create_session(user, f"{sessions}{i}")
    latencies: list[float] = []
    first_turns: list[float] = []
    lock = threading.Lock()

    def session_turns(i: int) -> None:
        mine = [timed_turn(runner, user, f"{sessions}{i}", f"text {j}") for j in range(per_session)]
        with lock:
            latencies.extend(mine)
            first_turns.append(mine[0])

    wall = wall_time_of(session_turns, concurrent)
    return {f"{prefix}concurrent_turns_per_s": len(latencies) / wall,
            f"{prefix}concurrent_p50_ms": percentile(latencies, 0.50) * 1000,
            f"{prefix}concurrent_p99_ms": percentile(latencies, 0.99) * 1000,
            f"{prefix}concurrent_first_p50_ms": percentile(first_turns, 0.50) * 1000,
            f"{prefix}concurrent_first_p99_ms": percentile(first_turns, 0.99) * 1000}


def repeated(runs: list[dict[str, float]]) -> dict[str, Any]:
    """The median of each figure over ``runs`` (bursts), and the list of every run's
    value under ``<key>_runs`` (bench/_google_adk_side.py does the same)."""
    out: dict[str, Any] = {}
    for key in runs[0]:
        values = [run[key] for run in runs]
        out[key] = statistics.median(values)
        out[f"{key}_runs"] = values
    return out


def wall_time_of(work: Any, count: int) -> float:
    """Seconds from starting ``count`` threads running ``work(i)`` to the end of the last."""
    threads = [threading.Thread(target=work, args=(i,)) for i in range(count)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - began


def percentile(samples: list[float], share: float) -> float:
    """Nearest rank (bench/_google_adk_side.py computes it the same way)."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(len(ordered) * share) - 1)]


ROWS = [
    ("first turn of a new session (ms, median)", "first_turn_ms", "lower"),
    ("  of those, text turns", "first_text_turn_ms", "lower"),
    ("  of those, tool turns", "first_tool_turn_ms", "lower"),
    ("text turn, short session (ms, median)", "text_turn_ms", "lower"),
    ("tool turn, short session (ms, median)", "tool_turn_ms", "lower"),
    ("  a tool not declared idempotent (its call stored first)", "charge_turn_ms", "lower", "tool_turn_ms"),
    ("text turn, session of 1,000 events (ms)", "text_turn_1000_events_ms", "lower"),
    ("new concurrent sessions, default host: turns/s", "concurrent_turns_per_s", "higher"),
    ("  default host: p50 latency (ms)", "concurrent_p50_ms", "lower"),
    ("  default host: p99 latency (ms)", "concurrent_p99_ms", "lower"),
    ("  default host: first turns only: p50 (ms)", "concurrent_first_p50_ms", "lower"),
    ("  default host: first turns only: p99 (ms)", "concurrent_first_p99_ms", "lower"),
    ("  the same sessions again (all active): turns/s", "again_concurrent_turns_per_s", "higher"),
    ("  the same sessions again: p50 (ms)", "again_concurrent_p50_ms", "lower"),
    ("  the same sessions again: p99 (ms)", "again_concurrent_p99_ms", "lower"),
    ("host PSS growth per active session (KB)", "pss_kb_per_active_session", "lower"),
    ("bytes per stored session (SQLite file)", "bytes_per_stored_session_db", "lower"),
    ("google-adk: bytes per in-memory session (6 events)", "bytes_per_session_6_events", "lower"),
    ("restart of a killed session of 1,000 events (ms)", "restart_1000_events_ms", "lower"),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--google-adk-python", help="an interpreter where google-adk is installed")
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--concurrent", type=int, default=100)
    parser.add_argument("--per-session", type=int, default=10)
    parser.add_argument("--bursts", type=int, default=3, help="repetitions of the concurrent burst, on each side")
    parser.add_argument("--runs-per-worker", type=int, default=0,
                        help="the host's [host] runs_per_worker (0: no limit; 1: a process per turn)")
    args = parser.parse_args()
    if min(args.turns, args.concurrent, args.per_session, args.bursts) < 1:
        parser.error("--turns, --concurrent, --per-session and --bursts must be at least 1")
    theirs: dict[str, Any] = {}
    standalone: dict[str, float] = {}
    if args.google_adk_python:
        theirs = run_side(args.google_adk_python, ["turns", str(args.turns), str(args.concurrent),
                                                   str(args.per_session), str(args.bursts)])
        standalone = standalone_text_turn(args.google_adk_python, args.turns)  # as many turns as in the bench
    mine = ours(args.turns, args.concurrent, args.per_session, args.bursts, args.runs_per_worker)
    print(f"\nturns benchmark: adk-actors vs google-adk ({os.cpu_count()} cores, same run; "
          f"{args.concurrent} concurrent sessions x {args.per_session} turns, median of {args.bursts} bursts)\n")
    width = max(len(row[0]) for row in ROWS)
    print(f"| {'measure':<{width}} | {'adk-actors':>11} | {'google-adk':>11} | {'ratio':>14} |")
    print(f"|{'-' * (width + 2)}|{'-' * 13}|{'-' * 13}|{'-' * 16}|")
    for label, key, better, *same_as in ROWS:
        a, b = mine.get(key), theirs.get(same_as[0] if same_as else key)
        ratio = ""
        if a and b:
            ours_better = a < b if better == "lower" else a > b
            ratio = f"{a / b:.2f}x " + ("better" if ours_better else "worse")
        fa = f"{a:.1f}" if isinstance(a, (int, float)) else "-"
        fb = f"{b:.1f}" if isinstance(b, (int, float)) else "-"
        print(f"| {label:<{width}} | {fa:>11} | {fb:>11} | {ratio:>14} |")
    print("\np99 of each burst (ms):")
    for label, key, theirs_key in (("new sessions, default host", "concurrent_p99_ms", "concurrent_p99_ms"),
                                   ("the same sessions again", "again_concurrent_p99_ms", "again_concurrent_p99_ms")):
        line = f"  {label}: adk-actors " + " ".join(f"{v:.0f}" for v in mine.get(f"{key}_runs", []))
        if theirs_key and theirs:
            line += ", google-adk " + " ".join(f"{v:.0f}" for v in theirs.get(f"{theirs_key}_runs", []))
        print(line)
    short = mine["text_turn_ms"]
    print(f"\nadk-actors: 1,000-event turn / short turn = {mine['text_turn_1000_events_ms'] / short:.2f}x (target <= 1.2x)")
    if theirs:
        print(f"google-adk: 1,000-event turn / short turn = "
              f"{theirs['text_turn_1000_events_ms'] / theirs['text_turn_ms']:.2f}x")
        print(f"\npeer: {describe(theirs['setup'])}")
        line, ok = sanity(standalone, theirs)
        print(line)
        if not ok:
            sys.exit(1)


if __name__ == "__main__":
    main()
