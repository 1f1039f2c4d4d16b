"""Workflows benchmark (issue 55): a CPU-bound fan-out through a ``Workflow``, its items
in threads (google-adk's way: ``node(fn, parallel_worker=True)``) and in processes
(ours: ``node(fn, parallel_worker=True, processes=True)``), same run, same machine.

Run::

    python bench/workflows.py [--items 8] [--item-seconds 0.2] [--repeats 5]

The graph: START -> ``make_items`` (the list of ``--items`` work sizes) -> ``burn`` as a
parallel worker (one pure-Python loop per item, bench/_cpu_items.py, sized at start
so that one item takes about ``--item-seconds`` alone on this machine) -> ``total``. Each graph run is a whole
invocation in this process (``run_invocation``, no host), and a run in processes
starts its own pool (one process per core, started as items need them) and ends it:
its time includes the processes' start (each imports the function's module, here
one that imports nothing). Also measured: the same graph with items of
no work, in processes, which is that start's cost alone. Medians of ``--repeats``
runs of each; the machine is shared and noisy, so compare the ratio from the same
run. In threads the items share one interpreter lock, so the fan-out takes about the
sum of its items; in processes about that sum divided by the cores, plus the start.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from adk_actors import Content  # noqa: E402
from adk_actors.engine import SessionView, run_invocation  # noqa: E402
from adk_actors.workflow import START, Workflow, node  # noqa: E402
from bench._cpu_items import burn  # noqa: E402


def total(node_input: list[int]) -> int:
    return sum(node_input)


def _graph(items: list[int], processes: bool) -> Workflow:
    def make_items() -> list[int]:
        return items

    return Workflow(name="fan", edges=[
        (START, node(make_items), node(burn, parallel_worker=True, processes=processes), total)])


def rounds_for(seconds: float) -> int:
    """How many rounds of ``burn`` take about ``seconds`` here, alone (the fastest of
    five probes: on a busy machine the slower ones waited for a core)."""
    probe = 200_000
    took = []
    for _ in range(5):
        started = time.perf_counter()
        burn(probe)
        took.append(time.perf_counter() - started)
    return max(1, int(probe * seconds / max(min(took), 1e-6)))


def run_once(graph: Workflow) -> tuple[float, Any]:
    async def go() -> Any:
        session = SessionView()
        outputs = [e.output async for e in run_invocation(graph, session, Content.user("go"), invocation_id="b-1")
                   if e.node_info is not None and e.node_info.path == "fan@1/total@1"]
        return outputs[-1] if outputs else None

    started = time.perf_counter()
    result = asyncio.run(asyncio.wait_for(go(), timeout=600))
    return time.perf_counter() - started, result


def measure(graph: Workflow, repeats: int) -> tuple[float, Any]:
    times, results = [], set()
    for _ in range(repeats):
        took, result = run_once(graph)
        times.append(took)
        results.add(result)
    if len(results) != 1:
        raise SystemExit(f"runs disagree: {results}")
    return statistics.median(times), results.pop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=8)
    parser.add_argument("--item-seconds", type=float, default=0.2)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if args.items < 1 or args.repeats < 1 or args.item_seconds <= 0:
        parser.error("--items and --repeats must be at least 1, --item-seconds above 0")
    load_before = os.getloadavg()[0]
    rounds = rounds_for(args.item_seconds)
    work = [rounds] * args.items
    threads, in_threads = measure(_graph(work, processes=False), args.repeats)
    processes, in_processes = measure(_graph(work, processes=True), args.repeats)
    if in_threads != in_processes:
        raise SystemExit(f"threads gave {in_threads}, processes {in_processes}")
    start_cost, _ = measure(_graph([0] * args.items, processes=True), args.repeats)

    print(f"\nworkflows benchmark: a fan-out of {args.items} CPU-bound items (~{args.item_seconds:.2f} s each "
          f"alone, {rounds:,} rounds) through a Workflow's parallel worker; {os.cpu_count()} cores, "
          f"median of {args.repeats} runs\n")
    rows = [("items in threads (google-adk's way)", threads),
            ("items in processes (processes=True)", processes),
            ("  of which the pool's start (items of no work)", start_cost)]
    width = max(len(label) for label, _ in rows)
    print(f"| {'measure':<{width}} | {'median s':>9} |")
    print(f"|{'-' * (width + 2)}|{'-' * 11}|")
    for label, value in rows:
        print(f"| {label:<{width}} | {value:>9.3f} |")
    print(f"\nspeed-up, processes vs threads: {threads / processes:.2f}x "
          f"(ideal here: {min(args.items, os.cpu_count() or 1)}x, less the pool's start)")
    print(f"sum of the items alone: {args.items * args.item_seconds:.2f} s; same results both ways: {in_threads}")
    print(f"machine load (1-minute average) before: {load_before:.1f}, after: {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores (a busy machine leaves the processes no idle core to scale onto)")


if __name__ == "__main__":
    main()
