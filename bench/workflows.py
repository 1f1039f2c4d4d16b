"""Workflows benchmark (issue 55): a CPU-bound fan-out through a ``Workflow``, its items
in threads (google-adk's way: ``node(fn, parallel_worker=True)``) and in processes
(ours: ``node(fn, parallel_worker=True, processes=True)``), same run, same machine.

Run::

    python bench/workflows.py [--items 8] [--item-seconds 0.2] [--repeats 5]

The graph: START -> ``make_items`` (the list of ``--items`` work sizes) -> ``burn`` as a
parallel worker (one pure-Python loop per item, bench/_cpu_items.py, sized at start
so that one item takes about ``--item-seconds`` of CPU on this machine) -> ``total``. Each graph run is a whole
invocation in this process (``run_invocation``, no host), and a run in processes
starts its own pool (one process per core, started as items need them) and ends it:
its time includes the processes' start (each imports the function's module, here
one that imports nothing). Also measured: the same graph with items of
no work, in processes, which is that start's cost alone. Medians of ``--repeats``
runs of each; the machine is shared and noisy, so compare the ratio from the same
run. In threads the items share one interpreter lock, so the fan-out takes about the
sum of its items; in processes about that sum divided by the cores, plus the start.

Two more measures (issue 55), before the fan-out:

- **A 10-node graph against google-adk's, same run.** bench/workflow_graph.py's
  ``ten`` (nine function nodes and a join around one LlmAgent node, one Gemini
  request per run) and bench/_google_adk_workflow.py's, the same nodes, both against
  one Gemini REST stand-in on 127.0.0.1 (``adk_actors.testing.StubServer``, named
  to both by ``GOOGLE_GEMINI_BASE_URL``). Each run is a new session's first turn,
  from the request to its last event. google-adk's half runs as its users run it
  (bench/_peer.py's ``run_side``: a folder of its own, ``python -s -E``, nothing of
  this repository on its path, and it fails the bench if it loaded a file of it), by
  ``--google-adk-python`` (a venv with ``pip install google-adk``) or else by this
  interpreter. Ours twice: in process (``InMemoryRunner``, as google-adk's) and on a
  host (two partitions, every node's events committed to SQLite before the next node
  starts). ``--rounds`` rounds of ``--runs`` runs on each side (after 5 warm-up runs):
  the median of each round, their median and their spread (min-max). Both sides'
  last runs must end with the same output and state, or the bench exits 1.
- **A partition's restart to a resumed graph's next node.** On the same host,
  bench/workflow_graph.py's ``resuming`` app (``App(resume_interrupted=1)``): while
  its ``hold`` node runs, kill -9 of the session's partition; the supervisor restarts
  it, the restarted partition resumes the run on its own, and the caller's one
  ``run`` call ends with the whole graph's output. Measured ``--restarts`` times: from
  the kill, and from the partition seen running again (its supervisor polled every
  2 ms), to the start of the resumed run's first node (``hold`` again: nodes stamp
  their start with ``time.monotonic()``, one clock for every process), p50 and p99
  (nearest rank).

On the host, the CPU time each kind of process spent per run of the 10-node graph is
printed too (read from ``/proc`` before and after the measured runs; the machine is
often shared, and CPU time moves less with the load than wall time): the session
partitions, the run workers, the host's other processes by name, and the caller (this
process, which also serves the Gemini stand-in).

``--skip-fanout`` leaves the fan-out out; ``--only-fanout`` the two above;
``--host-only`` runs only our host half of the 10-node graph (no google-adk, no run in
process, no restarts, no fan-out): for comparing two versions of the code, run after run.
"""

from __future__ import annotations

import argparse
import asyncio
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

from adk_actors import Content, types  # noqa: E402
from adk_actors.engine import SessionView, run_invocation  # noqa: E402
from adk_actors.runners import InMemoryRunner  # noqa: E402
from adk_actors.runtime import Host, HostConfig  # noqa: E402
from adk_actors.testing import StubServer, gemini_response  # noqa: E402
from adk_actors.workflow import START, Workflow, node  # noqa: E402
from bench import workflow_graph  # noqa: E402
from bench._cpu_items import burn  # noqa: E402
from bench._peer import describe, run_side  # noqa: E402
from bench.turns import percentile  # noqa: E402
from supervision import SupervisorClient  # noqa: E402
from supervision.testing import running_actor_system, wait_until  # noqa: E402

QUESTION = "the quick brown fox"
WARM_RUNS = 5


def total(node_input: list[int]) -> int:
    return sum(node_input)


def _graph(items: list[int], processes: bool) -> Workflow:
    def make_items() -> list[int]:
        return items

    return Workflow(name="fan", edges=[
        (START, node(make_items), node(burn, parallel_worker=True, processes=processes), total)])


def rounds_for(seconds: float) -> int:
    """How many rounds of ``burn`` take about ``seconds`` of CPU here (the fastest of
    five probes, timed in CPU time: on a busy machine the wall time of a probe counts
    its waits for a core too, and would size the items smaller than said)."""
    probe = 200_000
    took = []
    for _ in range(5):
        started = time.process_time()
        burn(probe)
        took.append(time.process_time() - started)
    return max(1, int(probe * seconds / max(min(took), 1e-6)))


def _cpu_seconds() -> float:
    """CPU time of this process and of its children that ended (the pool's processes,
    reaped when the run closes its pool)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def run_once(graph: Workflow) -> tuple[float, float, Any]:
    """One run: its wall time, the CPU time it took (this process and its pool's), its result."""
    async def go() -> Any:
        session = SessionView()
        outputs = [e.output async for e in run_invocation(graph, session, Content.user("go"), invocation_id="b-1")
                   if e.node_info is not None and e.node_info.path == "fan@1/total@1"]
        return outputs[-1] if outputs else None

    cpu, started = _cpu_seconds(), time.perf_counter()
    result = asyncio.run(asyncio.wait_for(go(), timeout=600))
    return time.perf_counter() - started, _cpu_seconds() - cpu, result


def measure(graph: Workflow, repeats: int) -> tuple[float, Any, float]:
    """The median wall time of ``repeats`` runs, their result, and the cores they kept
    busy (CPU seconds over wall seconds, summed over the runs)."""
    times, cpus, results = [], [], set()
    for _ in range(repeats):
        took, cpu, result = run_once(graph)
        times.append(took)
        cpus.append(cpu)
        results.add(result)
    if len(results) != 1:
        raise SystemExit(f"runs disagree: {results}")
    return statistics.median(times), results.pop(), sum(cpus) / sum(times)


def _final_output(events: list[Any], path: str) -> Any:
    found = [e.output for e in events if e.node_info is not None and e.node_info.path == path
             and e.output is not None]
    return found[-1] if found else None


def peer_ten(python: str, rounds: int, runs: int, stand_in: StubServer) -> dict[str, Any]:
    """google-adk's half of the 10-node graph (bench/_google_adk_workflow.py), isolated
    (bench/_peer.py's ``run_side``), against ``stand_in``."""
    return run_side(python, [str(rounds), str(runs)], script="_google_adk_workflow.py", files=("_ten_node_graph.py",),
                    env={"GOOGLE_GEMINI_BASE_URL": stand_in.url, "GOOGLE_API_KEY": "bench-key-not-a-secret",
                         "ADK_DISABLE_TELEMETRY": "1"})


def ours_in_process(rounds: int, runs: int) -> dict[str, Any]:
    """The 10-node graph on our ``InMemoryRunner``, timed as google-adk's half times its own."""

    async def one_run(runner: InMemoryRunner, index: int) -> tuple[float, Any, dict[str, Any]]:
        session = await runner.session_service.create_session(app_name="ten", user_id="u", session_id=f"s{index}")
        message = types.Content(role="user", parts=[types.Part(text=QUESTION)])
        began = time.perf_counter()
        events = [e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=message)]
        took = time.perf_counter() - began
        ended = await runner.session_service.get_session(app_name="ten", user_id="u", session_id=session.id)
        return took, _final_output(events, "ten@1/finish@1"), dict(ended.state) if ended is not None else {}

    async def go() -> dict[str, Any]:
        runner = InMemoryRunner(agent=workflow_graph.ten, app_name="ten")
        for index in range(WARM_RUNS):
            await one_run(runner, index)
        rounds_ms: list[list[float]] = []
        output: Any = None
        state: dict[str, Any] = {}
        index = WARM_RUNS
        for _ in range(rounds):
            times = []
            for _ in range(runs):
                took, output, state = await one_run(runner, index)
                index += 1
                times.append(took * 1000)
            rounds_ms.append(times)
        await runner.close()
        return {"rounds_ms": rounds_ms, "output": output, "state": state}

    return asyncio.run(asyncio.wait_for(go(), timeout=600))


def _host_processes(host: Host) -> dict[int, str]:
    """pid -> kind of each process of ``host``'s supervision tree: ``partition``, ``run
    worker`` (the processes a run pool started), else the child's name."""
    kinds: dict[int, str] = {}

    def walk(address: Any, depth: int) -> None:
        for child in SupervisorClient(host.system, address).which_children():
            if child.pid is None:
                continue
            kinds[child.pid] = "partition" if child.id.startswith("sessions-") else child.id
            if child.id.startswith("pool-"):
                for pid in Path(f"/proc/{child.pid}/task/{child.pid}/children").read_text().split():
                    kinds[int(pid)] = "run worker"
            elif depth < 3 and child.type == "supervisor" and child.address is not None:
                walk(child.address, depth + 1)

    assert host.root is not None
    walk(host.root.address, 0)
    return kinds


def _cpu_ms(pids: dict[int, str]) -> dict[int, float]:
    """CPU milliseconds (user and system) each of ``pids`` has used; a process gone is left out."""
    tick = os.sysconf("SC_CLK_TCK")
    used = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used[pid] = (int(fields[11]) + int(fields[12])) * 1000 / tick
    return used


def cpu_per_run(before: dict[int, float], after: dict[int, float], kinds: dict[int, str], caller_ms: float,
                runs: int) -> dict[str, float]:
    """CPU milliseconds per run by kind of process (the caller's given), and their sum."""
    per_kind: dict[str, float] = {"caller (and the stand-in)": caller_ms / runs}
    for pid, ms in after.items():
        if pid in before:
            kind = kinds[pid]
            per_kind[kind] = per_kind.get(kind, 0.0) + (ms - before[pid]) / runs
    per_kind["all"] = sum(per_kind.values())
    return per_kind


def ours_on_host(rounds: int, runs: int, restarts: int) -> dict[str, Any]:
    """On a host (defaults: two partitions, SQLite): the 10-node graph's runs, then
    ``restarts`` kills of a resumable graph's partition (see the module)."""
    work = Path(tempfile.mkdtemp(prefix="bench-workflows-"))
    Host.load_tree_code()  # before the system starts, as serve's Host does (its actors share it)
    out: dict[str, Any] = {}
    with running_actor_system(work / "logs") as system:
        config = HostConfig(apps=workflow_graph.APPS, data_dir=str(work / "data"))
        with Host(config, system=system) as host:
            runner = host.runner("ten")

            def one_run(index: int) -> tuple[float, Any, dict[str, Any]]:
                user = f"u{index // 500}"  # a user has at most 1000 sessions
                runner.create_session(user, f"s{index}")
                began = time.perf_counter()
                events = list(runner.run(user, f"s{index}", QUESTION))
                took = time.perf_counter() - began
                return took, _final_output(events, "ten@1/finish@1"), runner.get_state(user, f"s{index}")

            for index in range(WARM_RUNS):
                one_run(index)
            kinds = _host_processes(host)
            before, caller = _cpu_ms(kinds), time.process_time()
            rounds_ms: list[list[float]] = []
            index = WARM_RUNS
            for _ in range(rounds):
                times = []
                for _ in range(runs):
                    took, out["output"], out["state"] = one_run(index)
                    index += 1
                    times.append(took * 1000)
                rounds_ms.append(times)
            out["cpu"] = cpu_per_run(before, _cpu_ms(kinds), kinds, (time.process_time() - caller) * 1000,
                                     rounds * runs)
            out["rounds_ms"] = rounds_ms
            out["restarts"] = [restart_once(host, work / f"restart-{i}", f"r{i}") for i in range(restarts)]
    return out


def restart_once(host: Host, work: Path, session: str) -> tuple[float, float]:
    """One kill -9 of the partition holding a ``resuming`` run in its ``hold`` node:
    (seconds from the kill, seconds from the partition seen running again) to the start
    of the resumed run's first node. Fails (SystemExit) if the caller's run does not end
    with the whole graph's output within 60 s."""
    work.mkdir()
    runner = host.runner("resuming")
    runner.create_session("u", session, state={"work_dir": str(work)})
    (work / "arm").write_text("hold")
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["events"] = list(runner.run("u", session, "go"))
        except Exception as exc:  # reported below
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    wait_until(lambda: (work / "pid").exists() and (work / "pid").read_text().strip(), timeout=30,
               message="the hold node never started")
    sessions = SupervisorClient(host.system, host.root.child("sessions").address)  # type: ignore[union-attr]
    address = host.partition_for("resuming", "u", session, refresh=True)
    owner = next(i for i in sessions.which_children() if i.address == address)
    assert owner.pid is not None
    killed = time.monotonic()
    os.kill(owner.pid, signal.SIGKILL)
    up = None
    deadline = killed + 30
    while up is None and time.monotonic() < deadline:
        child = sessions.child(owner.id)
        if child.status == "running" and child.pid not in (None, owner.pid):
            up = time.monotonic()
        else:
            time.sleep(0.002)
    thread.join(60)
    if thread.is_alive() or "error" in box or up is None:
        raise SystemExit(f"the resumed run of {session} did not end well: {box.get('error')!r}, partition up: {up}")
    output = _final_output(box["events"], "resuming@1/step_c@1")
    if output != "ahbc":
        raise SystemExit(f"the resumed run of {session} ended with {output!r}, not 'ahbc'")
    starts = [float(line.split()[1]) for line in (work / "starts.txt").read_text().split("\n") if line.strip()]
    resumed = min(t for t in starts if t > killed)
    return resumed - killed, resumed - up


def spread(rounds_ms: list[list[float]]) -> tuple[float, float, float]:
    """(median of the rounds' medians, lowest and highest round median)."""
    medians = [statistics.median(times) for times in rounds_ms]
    return statistics.median(medians), min(medians), max(medians)


def print_ten(theirs: dict[str, Any] | None, in_process: dict[str, Any] | None, on_host: dict[str, Any],
              rounds: int, runs: int) -> None:
    print(f"\n10-node graph (9 function nodes and a join around one LlmAgent node on a Gemini stand-in "
          f"on 127.0.0.1), a new session's first turn; {rounds} rounds of {runs} runs, {os.cpu_count()} cores\n")
    rows = [("google-adk (InMemoryRunner)", theirs), ("adk-actors in process (InMemoryRunner)", in_process),
            ("adk-actors on a host (every node committed)", on_host)]
    width = max(len(label) for label, _ in rows)
    base = spread(theirs["rounds_ms"])[0] if theirs else None
    print(f"| {'side':<{width}} | {'median ms':>9} | {'round medians ms':>22} | {'vs google-adk':>13} |")
    print(f"|{'-' * (width + 2)}|{'-' * 11}|{'-' * 24}|{'-' * 15}|")
    for label, side in rows:
        if side is None:
            continue
        mid, low, high = spread(side["rounds_ms"])
        each = " / ".join(f"{statistics.median(t):.1f}" for t in side["rounds_ms"])
        ratio = f"{mid / base:.2f}x" if base else "-"
        print(f"| {label:<{width}} | {mid:>9.1f} | {each:>22} | {ratio:>13} |")
        print(f"| {'  spread (min-max of round medians)':<{width}} | {'':>9} | {f'{low:.1f}-{high:.1f}':>22} | "
              f"{'':>13} |")
    print("\ntarget (issue 55): <= 0.5x google-adk's run time")
    print("\non the host, CPU ms per run by process: " + ", ".join(
        f"{kind} {ms:.2f}" for kind, ms in sorted(on_host["cpu"].items(), key=lambda item: -item[1]) if ms >= 0.05))


def print_restarts(samples: list[tuple[float, float]]) -> None:
    from_kill = [a * 1000 for a, _ in samples]
    from_up = [b * 1000 for _, b in samples]
    print(f"\npartition restart -> resumed graph's next node ({len(samples)} kills of the partition, "
          f"App(resume_interrupted=1)), ms\n")
    print(f"| {'from':<44} | {'p50':>7} | {'p99':>7} |")
    print(f"|{'-' * 46}|{'-' * 9}|{'-' * 9}|")
    print(f"| {'kill -9 of the partition':<44} | {percentile(from_kill, 0.5):>7.1f} | "
          f"{percentile(from_kill, 0.99):>7.1f} |")
    print(f"| {'the partition seen running again (2 ms poll)':<44} | {percentile(from_up, 0.5):>7.1f} | "
          f"{percentile(from_up, 0.99):>7.1f} |")
    print(f"(p99 by nearest rank: with {len(samples)} samples, the "
          f"{'largest' if len(samples) < 100 else '99th'} one)")


def _asked(stand_in: StubServer) -> Any:
    """What the last request the stand-in received asked, as tests/google_adk_harness.py's
    ``request_rows`` compares it: its contents, and its system instruction's text up to
    our identity line (``You are <name>.``, which google-adk 2.13 leaves out of a workflow's
    agent node); the stand-in's record of requests emptied."""
    with stand_in._lock:
        body = stand_in.requests[-1].body
        stand_in.requests.clear()
    instruction = "".join(p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts", []))
    return {"contents": body.get("contents"), "instruction": instruction.split("\n\nYou are ")[0]}


def ten_and_restarts(args: argparse.Namespace) -> None:
    """The 10-node graph on both sides and the restarts (see the module), printed."""
    with StubServer() as stand_in:
        per_side = WARM_RUNS + args.rounds * args.runs
        stand_in.add(*[gemini_response(text="A fox, loudly.") for _ in range(3 * per_side + 10)])
        os.environ["GOOGLE_GEMINI_BASE_URL"] = stand_in.url
        os.environ["GOOGLE_API_KEY"] = "bench-key-not-a-secret"
        os.environ["ADK_DISABLE_TELEMETRY"] = "1"
        if args.host_only:
            print_ten(None, None, ours_on_host(args.rounds, args.runs, 0), args.rounds, args.runs)
            return
        theirs = peer_ten(args.google_adk_python or sys.executable, args.rounds, args.runs, stand_in)
        asked = [_asked(stand_in)]
        in_process = ours_in_process(args.rounds, args.runs)
        asked.append(_asked(stand_in))
        on_host = ours_on_host(args.rounds, args.runs, args.restarts)
        asked.append(_asked(stand_in))
    if asked[1] != asked[0] or asked[2] != asked[0]:
        print(f"the model was asked differently: google-adk {asked[0]}, ours {asked[1]} and {asked[2]}",
              file=sys.stderr)
        sys.exit(1)
    for label, side in (("in process", in_process), ("on a host", on_host)):
        if (side["output"], side["state"]) != (theirs["output"], theirs["state"]):
            print(f"ours {label} ended with {side['output']!r} {side['state']!r}, google-adk with "
                  f"{theirs['output']!r} {theirs['state']!r}", file=sys.stderr)
            sys.exit(1)
    print_ten(theirs, in_process, on_host, args.rounds, args.runs)
    print(f"same final output on every side: {theirs['output']!r}")
    print(f"peer: {describe(theirs['setup'])}")
    print_restarts(on_host["restarts"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=8)
    parser.add_argument("--item-seconds", type=float, default=0.2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--google-adk-python", help="an interpreter where google-adk is installed "
                        "(default: this one, still run in a folder of its own)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the 10-node graph, on each side")
    parser.add_argument("--runs", type=int, default=20, help="runs of the 10-node graph per round")
    parser.add_argument("--restarts", type=int, default=20, help="kills of a resumable graph's partition")
    parser.add_argument("--skip-fanout", action="store_true")
    parser.add_argument("--only-fanout", action="store_true")
    parser.add_argument("--host-only", action="store_true", help="only our host half of the 10-node graph")
    args = parser.parse_args()
    if args.items < 1 or args.repeats < 1 or args.item_seconds <= 0:
        parser.error("--items and --repeats must be at least 1, --item-seconds above 0")
    if min(args.rounds, args.runs, args.restarts) < 1:
        parser.error("--rounds, --runs and --restarts must be at least 1")
    load_before = os.getloadavg()[0]
    if not args.only_fanout:
        ten_and_restarts(args)
    if args.skip_fanout or args.host_only:
        print(f"\nmachine load (1-minute average) before: {load_before:.1f}, after: {os.getloadavg()[0]:.1f}")
        return
    fanout(args, load_before)


def fanout(args: argparse.Namespace, load_before: float) -> None:
    """The fan-out of CPU-bound items, in threads and in processes (see the module), printed."""
    rounds = rounds_for(args.item_seconds)
    work = [rounds] * args.items
    threads, in_threads, threads_cores = measure(_graph(work, processes=False), args.repeats)
    processes, in_processes, processes_cores = measure(_graph(work, processes=True), args.repeats)
    if in_threads != in_processes:
        raise SystemExit(f"threads gave {in_threads}, processes {in_processes}")
    start_cost, _, _ = measure(_graph([0] * args.items, processes=True), args.repeats)

    print(f"\nworkflows benchmark: a fan-out of {args.items} CPU-bound items (~{args.item_seconds:.2f} s each "
          f"alone, {rounds:,} rounds) through a Workflow's parallel worker; {os.cpu_count()} cores, "
          f"median of {args.repeats} runs\n")
    rows = [("items in threads (google-adk's way)", threads, f"{threads_cores:.2f}"),
            ("items in processes (processes=True)", processes, f"{processes_cores:.2f}"),
            ("  of which the pool's start (items of no work)", start_cost, "")]
    width = max(len(label) for label, _, _ in rows)
    print(f"| {'measure':<{width}} | {'median s':>9} | {'cores busy':>10} |")
    print(f"|{'-' * (width + 2)}|{'-' * 11}|{'-' * 12}|")
    for label, value, cores in rows:
        print(f"| {label:<{width}} | {value:>9.3f} | {cores:>10} |")
    print(f"\nspeed-up, processes vs threads: {threads / processes:.2f}x "
          f"(ideal here: {min(args.items, os.cpu_count() or 1)}x, less the pool's start)")
    # The cores a run kept busy: its CPU seconds (this process's and its pool's) over its
    # wall seconds. On an idle machine, threads keep 1 busy and processes min(items, cores);
    # on a shared one each gets its share of the cores, and the speed-up is at most the
    # ratio of what they got.
    print(f"cores kept busy: threads {threads_cores:.2f}, processes {processes_cores:.2f}: "
          f"the speed-up those shares allow is {processes_cores / max(threads_cores, 1e-9):.2f}x")
    print(f"sum of the items alone: {args.items * args.item_seconds:.2f} s; same results both ways: {in_threads}")
    print(f"machine load (1-minute average) before: {load_before:.1f}, after: {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores (a busy machine leaves the processes no idle core to scale onto)")

if __name__ == "__main__":
    main()
