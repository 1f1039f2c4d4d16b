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

5. a cluster (Thespian's convention, ``[cluster] join``) of one, two and three hosts
   (``--hosts``) on one PostgreSQL database, each ``adk-actors serve`` on its own
   loopback address: ``--concurrent`` sessions x ``--per-session`` turns over HTTP
   ``/run``, each session's turns sent to one host chosen round-robin ("any host": a
   load balancer without affinity, so most turns take a hop to their session's home)
   or to its home ("at home": with affinity): turns/s, p50, p99. Then a member is
   killed with SIGKILL: how long each of its sessions takes to be served again by
   the others (p50/p99; its floor is the lease).

6. ``--failover-at-load BURNERS``: a cluster of three, kill -9 of a member and (on a
   new cluster) of the leader, idle and with BURNERS CPU burners beside the hosts:
   failover p50/p99 and how many actors of the surviving hosts were restarted.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from adk_actors import SessionElsewhereError  # noqa: E402
from adk_actors.messages import LiveWorkers  # noqa: E402
from adk_actors.runtime import Host, HostConfig, Member, ranked  # noqa: E402
from adk_actors.testing import TemporaryPostgres  # noqa: E402
from bench._peer import describe, run_side, sanity, standalone_text_turn  # noqa: E402
from bench.turns import concurrent_phase, percentile, timed_turn, wall_time_of  # noqa: E402
from supervision import call  # noqa: E402
from supervision.lowlevel import free_port  # noqa: E402
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
                wait_until(lambda p=partition: len(call(system, p, LiveWorkers(), timeout=5)) >= config.run_workers,
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


def google_adk(db_url: str, turns: int, concurrent: int, per_session: int, python: str,
               setups: list[dict[str, Any]] | None = None) -> dict[str, float]:
    """google-adk's half (bench/_google_adk_side.py ``store``) on ``db_url``, run by
    ``python`` as its users run it (bench/_peer.py): its measures; its setup appended
    to ``setups``. Raises if it failed or loaded a file of this repository."""
    result = run_side(python, ["store", db_url, str(turns), str(concurrent), str(per_session)])
    if setups is not None:
        setups.append(result["setup"])
    return {key: value for key, value in result.items() if isinstance(value, float)}


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


@contextmanager
def cluster_of(count: int, store_url: str, lease: float, work: Path) -> Iterator[list[dict[str, Any]]]:
    """``count`` hosts (``adk-actors serve``, each on 127.0.0.<n>) in one convention led by
    the first, on ``store_url``: per host its name, HTTP URL and process marker, once every
    host has the whole view; every process killed at the end."""
    ports = [free_port() for _ in range(count)]
    leader = f"127.0.0.1:{ports[0]}"
    hosts: list[dict[str, Any]] = []
    processes = []
    try:
        for i in range(count):
            folder = work / f"host-{i}"
            folder.mkdir(parents=True)
            http = free_port()
            (folder / "host.toml").write_text(
                f'[host]\nport = {ports[i]}\naddress = "127.0.0.{i + 1}"\ndata_dir = "{folder / "data"}"\n'
                f'[http]\nport = {http}\n[store]\nurl = "{store_url}"\nlease_seconds = {lease}\n'
                f'[cluster]\njoin = "{leader}"\ncheckin_seconds = 1\nrefresh_seconds = 0.3\n'
                f'[apps]\nbench = "{APPS["bench"]}"\n')
            marker_cm = process_marker(folder)
            marker, fd = marker_cm.__enter__()
            with open(folder / "out", "w") as out:
                processes.append(subprocess.Popen(
                    [sys.executable, "-m", "adk_actors.cli", "serve", "--config", str(folder / "host.toml")],
                    cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, pass_fds=(fd,),
                    env={**os.environ, "PYTHONPATH": str(ROOT)}))
            marker_cm.__exit__(None, None, None)
            wait_until(lambda f=folder: "listening" in (f / "out").read_text(), timeout=60, interval=0.1)
            hosts.append({"name": f"127.0.0.{i + 1}:{ports[i]}", "url": f"http://127.0.0.1:{http}", "marker": marker})
        for entry in hosts:
            wait_until(lambda e=entry: len(httpx.get(f"{e['url']}/console/api/tree", timeout=10).json()["others"])
                       == count - 1, timeout=30, interval=0.2)
        yield hosts
    finally:
        for entry in hosts:
            kill_marked_processes(entry["marker"], grace=0)
        for process in processes:
            process.wait(10)


def _http_turn(client: httpx.Client, session: str, text: str) -> float:
    began = time.perf_counter()
    client.post("/run", json={"appName": "bench", "userId": "u", "sessionId": session,
                              "newMessage": {"role": "user", "parts": [{"text": text}]}}).raise_for_status()
    return time.perf_counter() - began


def cluster_burst(hosts: list[dict[str, Any]], concurrent: int, per_session: int, prefix: str,
                  at_home: bool) -> dict[str, float]:
    """``concurrent`` new sessions x ``per_session`` turns over HTTP, one thread each;
    a session's requests go to its home host (``at_home``) or to host i % N."""
    members = [Member(h["name"]) for h in hosts]
    by_name = {h["name"]: h for h in hosts}

    def entry(i: int) -> str:
        session = f"{prefix}{i}"
        return str(by_name[ranked(f"bench/u/{session}", members)[0].name]["url"] if at_home
                   else hosts[i % len(hosts)]["url"])

    for i in range(concurrent):
        httpx.post(f"{entry(i)}/apps/bench/users/u/sessions", json={"sessionId": f"{prefix}{i}"},
                   timeout=30).raise_for_status()
    latencies: list[float] = []
    lock = threading.Lock()

    def session_turns(i: int) -> None:
        with httpx.Client(base_url=entry(i), timeout=60) as client:
            mine = [_http_turn(client, f"{prefix}{i}", f"text {j}") for j in range(per_session)]
        with lock:
            latencies.extend(mine)

    wall = wall_time_of(session_turns, concurrent)
    return {"turns_per_s": len(latencies) / wall, "p50_ms": percentile(latencies, 0.5) * 1000,
            "p99_ms": percentile(latencies, 0.99) * 1000}


def cluster_failover(hosts: list[dict[str, Any]], lease: float, sessions: int = 30, victim_index: int = -1,
                     prefix: str = "f") -> list[float]:
    """Kill -9 of host ``victim_index`` (the last: a member; 0: the leader): seconds
    until each of its sessions answers again through another host."""
    members = [Member(h["name"]) for h in hosts]
    victim = hosts[victim_index]
    entry = hosts[1] if victim is hosts[0] else hosts[0]
    theirs = [f"{prefix}{i}" for i in range(sessions * len(hosts) * 3)
              if ranked(f"bench/u/{prefix}{i}", members)[0].name == victim["name"]][:sessions]
    with httpx.Client(base_url=entry["url"], timeout=30) as client:
        for session in theirs:
            client.post("/apps/bench/users/u/sessions", json={"sessionId": session}).raise_for_status()
            _http_turn(client, session, "text hi")
        kill_marked_processes(victim["marker"], grace=0)
        killed = time.perf_counter()
        took: dict[str, float] = {}
        while len(took) < len(theirs) and time.perf_counter() - killed < lease + 60:
            for session in theirs:
                if session not in took and client.get(f"/apps/bench/users/u/sessions/{session}").status_code == 200:
                    took[session] = time.perf_counter() - killed
            time.sleep(0.02)
    return list(took.values())


@contextmanager
def burning(count: int) -> Iterator[None]:
    """``count`` processes that spin on a core each (a loaded machine), killed after."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
               for _ in range(count)]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait(10)


def restarts_of(hosts: list[dict[str, Any]]) -> int:
    """Restarts counted in the trees of ``hosts`` (each actor's, as its console shows)."""
    total = 0
    for entry in hosts:
        rows = httpx.get(f"{entry['url']}/console/api/tree", timeout=60).json()["rows"]
        total += sum(int(row.get("restarts") or 0) for row in rows if row.get("type") != "session")
    return total


def failover_at_load(store: TemporaryPostgres, lease: float, burners: int, sessions: int) -> dict[str, dict[str, float]]:
    """Section 6 (issue 59): a cluster of three, kill -9 of a member and then, on a new
    cluster, of the leader, idle and with ``burners`` CPU burners beside the hosts: each
    dead host's sessions served again elsewhere (p50/p99 s), and how many actors of the
    surviving hosts were restarted meanwhile (a health check that took busy for dead)."""
    results: dict[str, dict[str, float]] = {}
    for load in (0, burners):
        for victim_index, victim in ((-1, "member"), (0, "leader")):
            work = Path(tempfile.mkdtemp(prefix=f"bench-failover-{victim}-{load}-"))
            with cluster_of(3, store.new_database(f"failover_{victim}_{load}"), lease, work) as hosts, burning(load):
                survivors = [h for i, h in enumerate(hosts) if i != victim_index % 3]
                before = restarts_of(survivors)
                took = cluster_failover(hosts, lease, sessions, victim_index, prefix=f"{victim[0]}{load}-")
                time.sleep(2 * lease)  # (a survivor killed for being busy shows in its tree once restarted)
                results[f"{victim}, {load} burners"] = {
                    "p50": statistics.median(took) if took else math.nan,
                    "p99": percentile(took, 0.99) if took else math.nan, "served": len(took),
                    "of": sessions, "survivor_restarts": restarts_of(survivors) - before}
    return results


def clusters(store: TemporaryPostgres, counts: list[int], concurrent: int, per_session: int,
             lease: float) -> dict[int, dict[str, float]]:
    """Section 5, per cluster size."""
    results: dict[int, dict[str, float]] = {}
    for count in counts:
        work = Path(tempfile.mkdtemp(prefix=f"bench-cluster-{count}-"))
        with cluster_of(count, store.new_database(f"cluster{count}"), lease, work) as hosts:
            cluster_burst(hosts, 10, 2, "warm", at_home=False)
            row = {f"any_{k}": v for k, v in cluster_burst(hosts, concurrent, per_session, "a", False).items()}
            row.update({f"home_{k}": v for k, v in cluster_burst(hosts, concurrent, per_session, "h", True).items()})
            if count > 1:
                took = cluster_failover(hosts, lease)
                row.update(failover_p50=statistics.median(took), failover_p99=percentile(took, 0.99),
                           failover_sessions=len(took))
            results[count] = row
    return results


#: Printed by google-adk's interpreter: the database drivers its half needs that it lacks.
PEER_DRIVERS = ("import importlib.util as u\n"
                "print(' '.join(m for m in ('sqlalchemy', 'aiosqlite', 'psycopg') if u.find_spec(m) is None))")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--google-adk-python", default=sys.executable,
                        help="an interpreter where google-adk is installed with what its users install for "
                             "DatabaseSessionService on SQLite and PostgreSQL: pip install 'google-adk[db]' "
                             "aiosqlite 'psycopg[binary]' (default: this one)")
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--concurrent", type=int, default=50)
    parser.add_argument("--per-session", type=int, default=5)
    parser.add_argument("--failovers", type=int, default=5)
    parser.add_argument("--lease", type=float, default=3.0, help="[store] lease_seconds of both hosts")
    parser.add_argument("--hosts", default="1,2,3", help="cluster sizes for section 5 (empty: skip it)")
    parser.add_argument("--only-clusters", action="store_true", help="section 5 only")
    parser.add_argument("--failover-at-load", type=int, metavar="BURNERS", default=0,
                        help="section 6 only: failover of a member and of the leader, idle and beside BURNERS "
                             "CPU burners (issue 59 asks for 4 on 2 cores)")
    args = parser.parse_args()
    counts = [int(n) for n in args.hosts.split(",") if n.strip()]
    if args.failover_at_load:
        with TemporaryPostgres() as server:
            rows = failover_at_load(server, args.lease, args.failover_at_load, 30)
        print(f"failover of a cluster of 3 (one machine, {os.cpu_count()} cores), lease {args.lease} s, 30 sessions:")
        print(f"{'':24}{'p50 (s)':>10}{'p99 (s)':>10}{'served':>10}{'survivor restarts':>20}")
        for label, row in rows.items():
            print(f"{label:24}{row['p50']:10.2f}{row['p99']:10.2f}{int(row['served']):>7}/{int(row['of'])}"
                  f"{int(row['survivor_restarts']):>20}")
        return
    if args.only_clusters:
        with TemporaryPostgres() as server:
            print_clusters(clusters(server, counts, args.concurrent, args.per_session, args.lease), args)
        return
    missing = subprocess.run([args.google_adk_python, "-c", PEER_DRIVERS], capture_output=True, text=True).stdout
    if missing.strip():
        sys.exit(f"google-adk's interpreter {args.google_adk_python} lacks {missing.strip()}: DatabaseSessionService "
                 "on SQLite and PostgreSQL needs pip install 'google-adk[db]' aiosqlite 'psycopg[binary]'")
    Host.load_tree_code()
    with TemporaryPostgres() as server:
        work = Path(tempfile.mkdtemp(prefix="bench-gadk-"))
        setups: list[dict[str, Any]] = []
        pg_url = server.new_database("ours")
        adk_pg = server.new_database("google_adk").replace("postgresql://", "postgresql+psycopg://")
        sides = {
            "ours, SQLite": ours("", args.turns, args.concurrent, args.per_session),
            "ours, PostgreSQL": ours(pg_url, args.turns, args.concurrent, args.per_session),
            "google-adk, SQLite": google_adk(f"sqlite+aiosqlite:///{work / 'adk.db'}", args.turns, args.concurrent,
                                             args.per_session, args.google_adk_python, setups),
            "google-adk, PostgreSQL": google_adk(adk_pg, args.turns, args.concurrent, args.per_session,
                                                 args.google_adk_python, setups),
        }
        standalone = standalone_text_turn(args.google_adk_python, args.turns,  # as many turns as in the bench
                                             "sqlite+aiosqlite:///{folder}/adk.db")
        hop = hops(server.new_database("hops"), args.turns, args.concurrent, args.per_session)
        took = failovers(server.new_database("failover"), args.failovers, args.lease) if args.failovers else []
        sized = clusters(server, counts, args.concurrent, args.per_session, args.lease) if counts else {}
    rows = [("serial text turn (ms, median)", "text_turn_ms"),
            (f"burst {args.concurrent}x{args.per_session}: turns/s", "concurrent_turns_per_s"),
            ("  p50 latency (ms)", "concurrent_p50_ms"), ("  p99 latency (ms)", "concurrent_p99_ms")]
    print(f"{'':40}" + "".join(f"{name:>24}" for name in sides) + f"{'ours/g-adk SQLite':>20}{'ours/g-adk PG':>16}")
    for label, key in rows:
        values = [sides[name][key] for name in sides]
        ratio_sqlite = values[0] / values[2]
        ratio_pg = values[1] / values[3]
        print(f"{label:40}" + "".join(f"{v:24.1f}" for v in values) + f"{ratio_sqlite:19.2f}x{ratio_pg:15.2f}x")
    for name, side in sides.items():
        if side.get("concurrent_failed_turns"):
            print(f"{name}: {side['concurrent_failed_turns']} of the burst's {args.concurrent * args.per_session} "
                  f"turns failed (not timed; turns/s counts those served): {'; '.join(side['concurrent_failures'])}")
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
    if sized:
        print_clusters(sized, args)
    print(f"\npeer: {describe(setups[0])}")
    line, ok = sanity(standalone, sides["google-adk, SQLite"])
    print(line + " (both on google-adk's DatabaseSessionService, SQLite)")
    if not ok:
        sys.exit(1)


def print_clusters(sized: dict[int, dict[str, float]], args: argparse.Namespace) -> None:
    """Section 5's table: one column per cluster size."""
    print(f"\na cluster of N hosts (one machine, {os.cpu_count()} cores), burst {args.concurrent}x{args.per_session} "
          "over HTTP /run:")
    print(f"{'':44}" + "".join(f"{f'{n} host' + ('s' if n > 1 else ''):>14}" for n in sized))
    rows = [("any host (round-robin): turns/s", "any_turns_per_s"), ("  p50 (ms)", "any_p50_ms"),
            ("  p99 (ms)", "any_p99_ms"), ("at home (affinity): turns/s", "home_turns_per_s"),
            ("  p50 (ms)", "home_p50_ms"), ("  p99 (ms)", "home_p99_ms"),
            (f"failover, lease {args.lease} s: p50 (s)", "failover_p50"), ("  p99 (s)", "failover_p99")]
    for label, key in rows:
        print(f"{label:44}" + "".join(f"{row[key]:14.2f}" if key in row else f"{'-':>14}" for row in sized.values()))


if __name__ == "__main__":
    main()
