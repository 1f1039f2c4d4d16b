"""Store and failover benchmark (issue 35): SQLite against PostgreSQL for one host, side
by side with google-adk's DatabaseSessionService on the same databases, and the time a
surviving host takes to serve the sessions of a host killed with kill -9.

Run::

    python bench/cluster.py                      # a PostgreSQL server of its own (Debian's postgresql)
    python bench/cluster.py --failovers 10 --lease 3

Measures, each side on the same machine in the same run (medians; the machine is
shared and noisy, so compare ratios):

1. serial text turns on a short session (ms, median);
2. a burst of ``--concurrent`` new sessions x ``--per-session`` turns: turns/s, p50, p99;
   for our host on SQLite, ours on PostgreSQL, google-adk (its ``Runner`` with
   ``DatabaseSessionService``) on SQLite (aiosqlite) and on the same PostgreSQL server
   (``postgresql+psycopg``);
3. failover: a host (``adk-actors serve``, its own processes) holds a session; all its
   processes are killed with SIGKILL; a second host on the same store serves that
   session again after ... (p50/p99 over ``--failovers`` kills). Its floor is the
   lease: a killed holder's lease runs out ``lease_seconds`` after its last renewal.

4. two hosts on one PostgreSQL database: turns from one host's Runner on sessions it
   holds, and on sessions the other host holds (forwarded there, events streamed back:
   the cost of one hop), serial and in a burst.

Not measured yet: three hosts (docs/scaling.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from adk_actors import SessionElsewhereError  # noqa: E402
from adk_actors.runtime import Host, HostConfig  # noqa: E402
from adk_actors.testing import TemporaryPostgres  # noqa: E402
from bench.turns import concurrent_phase, percentile, timed_turn  # noqa: E402
from supervision import call, free_port  # noqa: E402
from supervision.testing import (  # noqa: E402
    kill_marked_processes,
    process_marker,
    running_actor_system,
    wait_until,
)

APPS = {"bench": "bench.bench_agent:agent"}


def ours(store_url: str, turns: int, concurrent: int, per_session: int) -> dict[str, float]:
    """Our host (2 partitions, 2 run workers each) on ``store_url`` (empty: SQLite)."""
    work = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    with running_actor_system(work / "logs") as system:
        config = HostConfig(apps=APPS, data_dir=str(work / "data"), store_url=store_url)
        with Host(config, system=system) as host:
            runner = host.runner("bench")
            for partition in host.partitions():
                wait_until(lambda p=partition: len(call(system, p, "workers", timeout=5)) >= config.run_workers,
                           timeout=120, interval=0.1)
            samples = []
            for i in range(turns):
                if i % 10 == 0:
                    sid = f"text-{i}"
                    runner.create_session("u", sid)
                    timed_turn(runner, "u", sid, "text warm-up")
                samples.append(timed_turn(runner, "u", sid, f"text {i}"))
            out = {"text_turn_ms": statistics.median(samples) * 1000}
            burst = concurrent_phase(runner, "c", concurrent, per_session, "")
            out.update({key: burst[key] for key in ("concurrent_turns_per_s", "concurrent_p50_ms", "concurrent_p99_ms")})
    return out


def google_adk(db_url: str, turns: int, concurrent: int, per_session: int, python: str) -> dict[str, float]:
    done = subprocess.run([python, str(HERE / "_google_adk_store_side.py"), db_url, str(turns), str(concurrent),
                           str(per_session)], capture_output=True, text=True, timeout=1800, cwd=HERE)
    if done.returncode != 0:
        raise RuntimeError(f"google-adk's side failed: {done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@contextmanager
def other_host(folder: Path, store_url: str, lease: float) -> Iterator[tuple[str, Path]]:
    """``adk-actors serve`` on ``store_url`` in its own processes (every one marked):
    its HTTP URL and its marker; killed with SIGKILL at the end."""
    folder.mkdir(parents=True)
    http = free_port()
    (folder / "host.toml").write_text(
        f'[host]\nport = {free_port()}\ndata_dir = "{folder / "data"}"\n[http]\nport = {http}\n'
        f'[store]\nurl = "{store_url}"\nlease_seconds = {lease}\n[apps]\nbench = "{APPS["bench"]}"\n')
    with process_marker(folder) as (marker, fd), open(folder / "out", "w") as out:
        process = subprocess.Popen([sys.executable, "-m", "adk_actors.cli", "serve", "--config",
                                    str(folder / "host.toml")], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                   pass_fds=(fd,), env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        wait_until(lambda: "listening" in (folder / "out").read_text(), timeout=60, interval=0.1)
        yield f"http://127.0.0.1:{http}", marker
    finally:
        kill_marked_processes(marker, grace=0)
        process.wait(10)


def hold_there(url: str, session_id: str) -> None:
    """Create a session through the other host and run a turn there: it holds it."""
    httpx.post(f"{url}/apps/bench/users/u/sessions", json={"sessionId": session_id}, timeout=30)
    httpx.post(f"{url}/run", timeout=30, json={"appName": "bench", "userId": "u", "sessionId": session_id,
                                               "newMessage": {"role": "user", "parts": [{"text": "text hi"}]}}
               ).raise_for_status()


def hops(store_url: str, turns: int, concurrent: int, per_session: int) -> dict[str, float]:
    """Turns from this host's Runner on sessions this host holds, and on sessions the
    other host holds (each request forwarded there, each event streamed back: one hop)."""
    work = Path(tempfile.mkdtemp(prefix="bench-hops-"))
    out: dict[str, float] = {}
    with running_actor_system(work / "logs") as system, other_host(work / "other", store_url, 15.0) as (url, _):
        config = HostConfig(apps=APPS, data_dir=str(work / "here"), store_url=store_url)
        with Host(config, system=system) as host:
            runner = host.runner("bench")
            for name, prefix in (("here", "near"), ("there", "far")):
                for i in range(concurrent):
                    if name == "there":
                        hold_there(url, f"{prefix}{i}")
                    else:
                        runner.create_session("c", f"{prefix}{i}")
                sid = f"{prefix}0"
                user = "u" if name == "there" else "c"
                timed_turn(runner, user, sid, "text warm-up")
                out[f"{name}_turn_ms"] = statistics.median(
                    timed_turn(runner, user, sid, f"text {i}") for i in range(turns)) * 1000
            burst_here = concurrent_phase(runner, "c", concurrent, per_session, "", create=False, sessions="near")
            burst_there = concurrent_phase(runner, "u", concurrent, per_session, "", create=False, sessions="far")
            out["here_turns_per_s"] = burst_here["concurrent_turns_per_s"]
            out["there_turns_per_s"] = burst_there["concurrent_turns_per_s"]
            out["there_p99_ms"] = burst_there["concurrent_p99_ms"]
            out["here_p99_ms"] = burst_here["concurrent_p99_ms"]
    return out


def failovers(store_url: str, rounds: int, lease: float) -> list[float]:
    """Seconds from a kill -9 of every process of the host holding a session to the
    session's first answer from the surviving host, once per round."""
    work = Path(tempfile.mkdtemp(prefix="bench-failover-"))
    took: list[float] = []
    with running_actor_system(work / "logs") as system:
        config = HostConfig(apps=APPS, data_dir=str(work / "survivor"), store_url=store_url, lease_seconds=lease)
        with Host(config, system=system) as survivor:
            runner = survivor.runner("bench")
            for round_ in range(rounds):
                sid = f"held-{round_}"
                with other_host(work / f"victim-{round_}", store_url, lease) as (url, marker):
                    hold_there(url, sid)
                    kill_marked_processes(marker, grace=0)
                    killed = time.perf_counter()
                    while True:
                        try:
                            runner.get_session("u", sid)
                            break
                        except SessionElsewhereError:
                            time.sleep(0.01)
                    took.append(time.perf_counter() - killed)
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--google-adk-python", default=sys.executable,
                        help="an interpreter where google-adk is installed (default: this one)")
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--concurrent", type=int, default=50)
    parser.add_argument("--per-session", type=int, default=5)
    parser.add_argument("--failovers", type=int, default=5)
    parser.add_argument("--lease", type=float, default=3.0, help="[store] lease_seconds of both hosts")
    args = parser.parse_args()
    Host.load_tree_code()
    with TemporaryPostgres() as server:
        work = Path(tempfile.mkdtemp(prefix="bench-gadk-"))
        pg_url = server.new_database("ours")
        adk_pg = server.new_database("google_adk").replace("postgresql://", "postgresql+psycopg://")
        sides = {
            "ours, SQLite": ours("", args.turns, args.concurrent, args.per_session),
            "ours, PostgreSQL": ours(pg_url, args.turns, args.concurrent, args.per_session),
            "google-adk, SQLite": google_adk(f"sqlite+aiosqlite:///{work / 'adk.db'}", args.turns, args.concurrent,
                                             args.per_session, args.google_adk_python),
            "google-adk, PostgreSQL": google_adk(adk_pg, args.turns, args.concurrent, args.per_session,
                                                 args.google_adk_python),
        }
        hop = hops(server.new_database("hops"), args.turns, args.concurrent, args.per_session)
        took = failovers(server.new_database("failover"), args.failovers, args.lease) if args.failovers else []
    rows = [("serial text turn (ms, median)", "text_turn_ms"),
            (f"burst {args.concurrent}x{args.per_session}: turns/s", "concurrent_turns_per_s"),
            ("  p50 latency (ms)", "concurrent_p50_ms"), ("  p99 latency (ms)", "concurrent_p99_ms")]
    print(f"{'':40}" + "".join(f"{name:>24}" for name in sides) + f"{'ours/g-adk SQLite':>20}{'ours/g-adk PG':>16}")
    for label, key in rows:
        values = [sides[name][key] for name in sides]
        ratio_sqlite = values[0] / values[2]
        ratio_pg = values[1] / values[3]
        print(f"{label:40}" + "".join(f"{v:24.1f}" for v in values) + f"{ratio_sqlite:19.2f}x{ratio_pg:15.2f}x")
    pg_over_sqlite = sides["ours, PostgreSQL"]["text_turn_ms"] / sides["ours, SQLite"]["text_turn_ms"]
    print(f"\nours: a serial turn on PostgreSQL takes {pg_over_sqlite:.2f}x its time on SQLite")
    print(f"\ntwo hosts on PostgreSQL, turns from one host's Runner: serial turn {hop['here_turn_ms']:.1f} ms on a "
          f"session it holds, {hop['there_turn_ms']:.1f} ms on one the other host holds (one hop: "
          f"{hop['there_turn_ms'] / hop['here_turn_ms']:.2f}x); burst {hop['here_turns_per_s']:.0f} turns/s here, "
          f"{hop['there_turns_per_s']:.0f} turns/s through the other host (p99 {hop['here_p99_ms']:.0f} / "
          f"{hop['there_p99_ms']:.0f} ms)")
    if took:
        p99 = percentile(took, 0.99)
        print(f"failover (kill -9 of the holding host -> the survivor serves the session), lease {args.lease} s, "
              f"{len(took)} kills: p50 {statistics.median(took):.2f} s, p99 {p99:.2f} s, "
              f"all: {', '.join(f'{t:.2f}' for t in took)}")


if __name__ == "__main__":
    main()
