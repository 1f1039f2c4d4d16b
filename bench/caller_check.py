"""The cost of a partition's caller check (issue 59), on this machine.

A write (a turn, a state update) that reaches a session's partition through Thespian is
taken only while its caller takes a TCP connection (``SessionPartition._check_caller_lives``):
one connect and close to the caller's port per turn, on the partition's main thread.
This bench times serial text turns that go through Thespian (the path of a turn sent
from another host's front door; the Runner's direct line, which needs no connection,
is turned off in this process), on a real host (2 partitions, their run workers, SQLite),
with the check and without it (``takes_connection`` of the partition's homes module replaced by
one that says yes, before the actor system forks its processes: they inherit it).

Run::

    python bench/caller_check.py [--turns 300]

Both modes run at once, each in a process with a host of its own, and take their turns
in turn (one turn of one, then one of the other; who goes first alternates), so that
both see the same load on a shared machine. It prints each mode's median turn (and
quartiles), the ratio of the medians and the median of the paired ratios, the check's
own cost (a connect and close to a listening actor on this machine, median), and the
connections the callers' ports saw per turn (TIME_WAIT sockets left towards them: about
one per turn with the check, none without, which shows each mode did what it says).
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
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import adk_actors.runtime._partition_homes as partition_module  # noqa: E402
from adk_actors.messages import LiveWorkers  # noqa: E402
from adk_actors.runtime import Host, HostConfig  # noqa: E402
from adk_actors.runtime._direct_route import DirectRoute  # noqa: E402
from supervision import call  # noqa: E402
from supervision.lowlevel import takes_connection  # noqa: E402
from supervision.testing import running_actor_system, wait_until  # noqa: E402

MODES = ("with the check", "without it")
#: Turns per session (a new session after these: its events do not pile up).
PER_SESSION = 20


def listening_ports() -> set[int]:
    """The TCP ports this process listens on (its Thespian endpoints among them)."""
    inodes = set()
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
            ports.add(int(fields[1].split(":")[1], 16))
    return ports


def closed_towards(ports: set[int]) -> int:
    """TCP sockets in TIME_WAIT whose peer is one of ``ports`` (connections to them closed
    first by their other end: the partition's checks)."""
    return sum(1 for line in Path("/proc/net/tcp").read_text().splitlines()[1:]
               if line.split()[3] == "06" and int(line.split()[2].split(":")[1], 16) in ports)


def timed_turn(runner: Any, session: str, text: str) -> float:
    began = time.perf_counter()
    for _ in runner.run("u", session, text):
        pass
    return time.perf_counter() - began


def serve_turns(check: bool) -> None:
    """A host of this process, with the caller check or without, its turns through
    Thespian; then, on stdin: ``turn`` (a turn is timed: its seconds printed), ``end``
    (the check's own cost and the connections this process's ports saw per timed turn,
    printed as JSON; then the host stops). Prints ``ready`` once warmed up."""
    if not check:
        setattr(partition_module, "takes_connection", lambda address, wait=0.25: True)  # noqa: B010
    DirectRoute.line = lambda self, endpoint, address: None  # type: ignore[method-assign]
    work = Path(tempfile.mkdtemp(prefix="bench-caller-check-"))
    Host.load_tree_code()
    with running_actor_system(work / "logs") as system:
        config = HostConfig(apps={"bench": "bench.bench_agent:agent"}, data_dir=str(work / "data"))
        with Host(config, system=system) as host:
            runner = host.runner("bench")
            for partition in host.partitions():
                wait_until(lambda: len(call(system, partition, LiveWorkers(), timeout=5)) >= config.run_workers,
                           timeout=120, interval=0.1)
            runner.create_session("u", "warm")
            for i in range(PER_SESSION):
                timed_turn(runner, "warm", f"warm-up {i}")
            ports = listening_ports()
            closed_before = closed_towards(ports)
            print("ready", flush=True)
            turns = 0
            session = ""
            for command in sys.stdin:
                if command.strip() != "turn":
                    break
                if turns % PER_SESSION == 0:
                    session = f"s{turns}"
                    runner.create_session("u", session)
                print(timed_turn(runner, session, f"text {turns}"), flush=True)
                turns += 1
            closed = closed_towards(ports) - closed_before
            partition = host.partitions(refresh=True)[0]
            connects = []
            for _ in range(100):  # (paced: a burst of them fills the partition's backlog of 100)
                began = time.perf_counter()
                answered = takes_connection(partition, 5.0)
                connects.append(time.perf_counter() - began)
                if answered is not True:
                    raise SystemExit(f"the partition at {partition} took no connection")
                time.sleep(0.005)
            print(json.dumps({"connect": statistics.median(connects), "closed_per_turn": closed / max(turns, 1)}),
                  flush=True)


def answer(host: subprocess.Popen[str], what: str) -> str:
    """The next line ``host`` prints (it failed: the bench exits with its error)."""
    assert host.stdout is not None
    line = host.stdout.readline()
    if not line:
        host.wait(30)
        assert host.stderr is not None
        sys.exit(f"a host process failed while {what} ({host.returncode})\n{host.stderr.read()[-3000:]}")
    return line.strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=300, help="timed turns per mode")
    parser.add_argument("--mode", choices=("check", "no-check"), help=argparse.SUPPRESS)  # a host's process
    args = parser.parse_args()
    if args.turns < 1:
        parser.error("--turns must be at least 1")
    if args.mode:
        serve_turns(args.mode == "check")
        return
    hosts = {mode: subprocess.Popen([sys.executable, __file__, "--mode", flag], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for mode, flag in zip(MODES, ("check", "no-check"), strict=True)}
    try:
        for mode, host in hosts.items():
            if answer(host, "starting") != "ready":
                sys.exit(f"{mode}: no ready")
        samples: dict[str, list[float]] = {mode: [] for mode in MODES}
        for i in range(args.turns):  # one turn each in turn, first one then the other: the same load on both
            for mode in (MODES if i % 2 == 0 else MODES[::-1]):
                host = hosts[mode]
                assert host.stdin is not None
                host.stdin.write("turn\n")
                host.stdin.flush()
                samples[mode].append(float(answer(host, "turning")))
        stats = {}
        for mode, host in hosts.items():
            assert host.stdin is not None
            host.stdin.write("end\n")
            host.stdin.flush()
            stats[mode] = json.loads(answer(host, "ending"))
            host.stdin.close()
            host.wait(120)
    finally:
        for host in hosts.values():
            if host.poll() is None:
                host.kill()
                host.wait(30)
    print(f"\ncaller check: serial text turns through Thespian, two hosts side by side, turns taken in "
          f"turn ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}), {args.turns} turns each\n")
    print(f"| {'mode':<15} | {'p50 (ms)':>8} | {'p25 (ms)':>8} | {'p75 (ms)':>8} | {'connections to callers/turn':>27} |")
    print(f"|{'-' * 17}|{'-' * 10}|{'-' * 10}|{'-' * 10}|{'-' * 29}|")
    medians = {}
    for mode in MODES:
        q1, _, q3 = (v * 1000 for v in statistics.quantiles(samples[mode], n=4))
        medians[mode] = statistics.median(samples[mode]) * 1000
        print(f"| {mode:<15} | {medians[mode]:>8.2f} | {q1:>8.2f} | {q3:>8.2f} | "
              f"{stats[mode]['closed_per_turn']:>27.2f} |")
    paired = statistics.median(a / b for a, b in zip(samples[MODES[0]], samples[MODES[1]], strict=True))
    connect = statistics.median(stats[mode]["connect"] for mode in MODES) * 1e6
    print(f"\nratio of the medians (with / without): {medians[MODES[0]] / medians[MODES[1]]:.3f} "
          f"({medians[MODES[0]] - medians[MODES[1]]:+.3f} ms per turn); median of the paired ratios: {paired:.3f}; "
          f"the check alone (connect + close on loopback, median): {connect:.0f} us")


if __name__ == "__main__":
    main()
