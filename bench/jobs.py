"""Background jobs benchmark (issue 34): throughput and scheduling delay of the host's
``jobs`` actor, on the default host (an embedded Host, its default ``[jobs]``: one
queue of 4).

Run: ``python bench/jobs.py [--jobs 2000] [--runs 300] [--scheduled 200]``. Prints one
table:

1. no-op function jobs: ``--jobs`` enqueued as fast as one caller can, one call each,
   then 500 a call (``enqueue_many``); jobs/s from the first enqueue to the last
   completion;
2. agent jobs (a scripted echo run each, a new session per job): the same, ``--runs``;
3. scheduling delay on an idle host: ``--scheduled`` jobs each due 50-250 ms after it
   is enqueued, one at a time: its start (``attempted_at``) minus its due time, p50/p99.

google-adk has no job system to compare with. Targets: >= 2,000 no-op jobs/s, p99
delay < 50 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adk_actors.jobs import JobSpec
from adk_actors.runtime import Host, HostConfig
from supervision.lowlevel import free_port
from supervision.testing import wait_until


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def drain(host: Host, ids: list[str], timeout: float) -> float:
    """When the last of ``ids`` completed (perf_counter); then every one is checked."""
    wait_until(lambda: host.jobs.get(ids[-1]).state == "completed", timeout=timeout, interval=0.01,
               message="the last job completed")
    finished = time.perf_counter()
    for job_id in ids:
        wait_until(lambda job_id=job_id: host.jobs.get(job_id).state == "completed", timeout=timeout)
    return finished


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--scheduled", type=int, default=200)
    args = parser.parse_args()
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp, \
            Host(HostConfig(apps={"echo": "bench.bench_agent:agent"}, data_dir=tmp, port=free_port())) as host:
        host.jobs.enqueue_function("bench.bench_jobs:noop")  # the first executor started
        time.sleep(1.0)
        began = time.perf_counter()
        ids = [host.jobs.enqueue_function("bench.bench_jobs:noop").id for _ in range(args.jobs)]
        enqueued = time.perf_counter()
        took = drain(host, ids, 300) - began
        rows.append(("no-op function jobs, one enqueue each: jobs/s", f"{args.jobs / took:,.0f}",
                     f"the enqueues alone: {args.jobs / (enqueued - began):,.0f}/s"))
        noop = JobSpec(kind="function", function="bench.bench_jobs:noop", user_id="bench")
        began = time.perf_counter()
        ids = [job.id for start in range(0, args.jobs, 500)
               for job in host.jobs.enqueue_many([noop] * min(500, args.jobs - start))]
        took = drain(host, ids, 300) - began
        rows.append(("no-op function jobs, enqueue_many: jobs/s", f"{args.jobs / took:,.0f}", "500 a call"))
        began = time.perf_counter()
        ids = [host.jobs.enqueue_run("echo", f"job {i}", user_id="bench").id for i in range(args.runs)]
        took = drain(host, ids, 300) - began
        rows.append(("agent jobs (echo run, new session each): jobs/s", f"{args.runs / took:,.0f}", ""))
        delays: list[float] = []
        rng = random.Random(1)
        for _ in range(args.scheduled):
            job = host.jobs.enqueue_function("bench.bench_jobs:noop", schedule_in=rng.uniform(0.05, 0.25))
            wait_until(lambda job=job: host.jobs.get(job.id).state == "completed", timeout=10, interval=0.01)
            done = host.jobs.get(job.id)
            assert done.attempted_at is not None
            delays.append((done.attempted_at - done.scheduled_at) * 1000)
        rows.append(("scheduling delay, idle host: p50 / p99 ms",
                     f"{statistics.median(delays):.1f} / {pct(delays, 0.99):.1f}", f"n = {len(delays)}"))
    print("| measure | adk-actors | note |\n|---|---|---|")
    for name, value, note in rows:
        print(f"| {name} | {value} | {note} |")


if __name__ == "__main__":
    main()
