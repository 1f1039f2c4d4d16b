"""Faults as they happen: several at once, during a restart or a shutdown, while turns
run. Real processes, real signals (kill -9, SIGSTOP, SIGTERM), real turns on real run
workers.

What each test checks is exact, not timed: every event a caller received is in the
store afterwards, every caller's turn ended once, with events or a typed error
(never an untyped exception, never a hang), the tree is reported whole again, each
session's next turn works, and no process of the host is left behind. The waits are
deadlines stretched by the machine's load (``load_scaled``); none is a budget.

Existing fault tests and what they cover alone: one actor killed or stopped
(test_liveness, test_run_pool, test_runner_liveness), several long-lived actors killed
with no turn in flight (test_tree_recovery), a soak of one fault at a time
(test_chaos_soak), kills during ``Host.stop`` with no turn (test_tree_recovery), a pool
and its partition together (test_run_pool), escalation of idle probes
(test_supervisor), a run that cannot stop on an intact tree (test_kill_is_kill). Here
the combinations, each while turns run:

1. a partition with a service, the services' supervisor, the other partition or a pool;
2. a run worker, and every worker its pool forks, killed while their partition restarts;
3. SIGTERM of ``serve`` while a partition restarts;
4. a stopped actor (partition, service, run worker, the sessions supervisor) and a
   killed one at once, under two CPU burners;
5. simultaneous crashes past ``sessions_intensity`` (escalation), and past every
   intensity (the host stops);
6. ``Host.stop`` while a partition restarts and a worker and a pool are killed;
7. a partition killed three times mid-turn (its pool must not count its workers);
8. a run that cannot stop killed while its pool is stopped or killed;
9. SIGTERM of ``serve`` in the instant its root gives up;
10. ``Host.stop`` in the middle of an escalation;
11. every run worker killed at once past the pools' intensity;
12. a group restart of the root while a member of the group is stopped;
13. runs resumed (``resume_interrupted``) through simultaneous kills;
14. a service killed while a tool's call waits on it: the tool is told at once;
15. a background job's run: the jobs actor and the run's partition or pool at once.
"""

from __future__ import annotations

import inspect
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import runtime_agents
from conftest import run_worker, serving
from kept_host import KeptHost, kept_hosts

from adk_actors import AdkError, InvalidRequestError, RunFailedError
from adk_actors.chaos import tree_rows
from adk_actors.messages import LiveWorkers, WorkerRuns, session_key
from adk_actors.runtime import Host, HostConfig
from supervision import SupervisorClient, call
from supervision.lowlevel import HealthCheck, load_scaled, partition_index
from supervision.testing import find_marked_processes, pid_alive, wait_until

USER = "ann"


def scaled(seconds: float) -> float:
    """A deadline of ``seconds`` stretched by the machine's load (never a budget)."""
    return load_scaled(seconds)


def session_on(app: str, partition: int, partitions: int, prefix: str, taken: set[str] | None = None) -> str:
    """A session id of ``app`` (user ``USER``) that partition ``partition`` owns."""
    for i in range(10_000):
        sid = f"{prefix}{i}"
        if partition_index(session_key(app, USER, sid), partitions) == partition and sid not in (taken or set()):
            return sid
    raise AssertionError("no session id found")  # pragma: no cover


def talkers_on(specs: list[tuple[str, str, int]], tag: str = "") -> list[Talker]:
    """A talker for each (app, what it says, partition of two), each on a session id of
    its own that the partition owns (its id starts with ``tag``: a test's own, on a kept host)."""
    taken: set[str] = set()
    talkers = []
    for app, say, partition in specs:
        sid = session_on(app, partition, 2, f"{tag}{app}-", taken)
        taken.add(sid)
        talkers.append(Talker(app, sid, say))
    return talkers


def kill_together(pids: list[int], sig: int = signal.SIGKILL) -> None:
    """``sig`` to every pid, one right after the other; one already gone is passed over."""
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def rows_by_path(host: Host) -> dict[str, dict[str, Any]]:
    """The tree's processes (no sessions), by path, asked patiently."""
    return {row["path"]: row for row in tree_rows(host, 2.0, sessions=0)}


def pid_of(rows: dict[str, dict[str, Any]], name: str) -> int:
    """The pid of the actor at path ``name``; ``.../worker``: the first run worker of that pool."""
    if name.endswith("/worker"):
        return int(next(r["pid"] for path, r in sorted(rows.items()) if path.startswith(f"{name}-")))
    return int(rows[name]["pid"])


def tree_whole(host: Host, killed: set[int]) -> bool:
    """Every actor of the tree reported running in a live process none of ``killed``,
    and each partition's connected run workers exactly its pool's (none of ``killed``)."""
    assert host.root is not None
    try:
        rows = rows_by_path(host)
        pools = SupervisorClient(host.system, host.root.child("run_pools").address, timeout=2.0)
        for index, partition in enumerate(host.partitions(refresh=True)):
            connected = call(host.system, partition, LiveWorkers(), timeout=2)
            started = call(host.system, pools.child(f"pool-{index}").address, LiveWorkers(), timeout=2)
            if not connected or sorted(connected) != sorted(started) or set(connected) & killed:
                return False
    except Exception:  # a supervisor restarting
        return False
    return all(r["status"] == "running" and r["pid"] and r["pid"] not in killed and pid_alive(r["pid"])
               for r in rows.values())


def texts(events: list[Any]) -> list[str]:
    return [p.text for e in events if e.content for p in e.content.parts if p.text]


#: A host kept from one parametrized case to the next (:class:`KeptHost`): each case ends with its own check that
#: the tree is whole again after its faults, and the next is handed the host only once :func:`tree_whole` holds
#: again.
kept = kept_hosts("kept", whole=lambda host: tree_whole(host, set()))


@pytest.fixture(autouse=True)
def no_kept_host_beside(request: pytest.FixtureRequest, kept: KeptHost) -> None:
    """A test that does not use the kept host runs without it: the kept one (if any) is
    stopped first, its system with it (no idle tree of ~23 processes beside the test's
    own host, its faults, its burners)."""
    if "kept" not in inspect.signature(request.function).parameters:
        kept.close()


@dataclass
class Talker:
    """One session's turns, back to back on a thread of its own, and what came back."""

    app: str
    session: str
    say: str  # the message, ``{n}``: the turn's number
    acknowledged: set[str] = field(default_factory=set)
    ends: list[str] = field(default_factory=list)  # "ok", a RunFailedError's reason, or a typed error's name
    untyped: list[str] = field(default_factory=list)
    ok_at: list[float] = field(default_factory=list)  # when each turn that ended well ended
    busy_since: float | None = None


class Talkers:
    """Sessions talking to a host while faults are dealt (see :class:`Talker`)."""

    def __init__(self, host: Host, talkers: list[Talker], call_timeout: float | None = None) -> None:
        self.host, self.talkers = host, talkers
        self.stop_event = threading.Event()
        self.threads: list[threading.Thread] = []
        self.runners = {app: host.runner(app, timeout=120.0, **({"call_timeout": call_timeout} if call_timeout else {}))
                        for app in {t.app for t in talkers}}
        for talker in talkers:
            self.runners[talker.app].create_session(USER, talker.session)

    def one_turn(self, talker: Talker, number: int) -> None:
        runner = self.runners[talker.app]
        talker.busy_since = time.monotonic()
        try:
            for event in runner.run(USER, talker.session, talker.say.format(n=number)):
                if not event.partial:
                    talker.acknowledged.add(event.id)
            talker.ends.append("ok")
            talker.ok_at.append(time.monotonic())
        except RunFailedError as exc:
            talker.ends.append(exc.reason)
        except AdkError as exc:
            talker.ends.append(type(exc).__name__)
        except Exception as exc:  # an untyped end: what these tests exist to find
            talker.untyped.append(f"{type(exc).__name__}: {exc}")
            talker.ends.append("untyped")
        finally:
            talker.busy_since = None

    def talk(self, talker: Talker) -> None:
        number = 0
        while not self.stop_event.is_set():
            number += 1
            self.one_turn(talker, number)

    def __enter__(self) -> Talkers:
        self.threads = [threading.Thread(target=self.talk, args=(t,), daemon=True) for t in self.talkers]
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop_event.set()
        deadline = time.monotonic() + scaled(60.0)
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def hung(self) -> list[str]:
        """The sessions whose thread still runs a turn."""
        return [t.session for t, thread in zip(self.talkers, self.threads, strict=True) if thread.is_alive()]

    def untyped(self) -> dict[str, list[str]]:
        """The untyped ends, by session."""
        return {t.session: t.untyped for t in self.talkers if t.untyped}

    def every_one_ended_well_since(self, moment: float) -> bool:
        return all(any(at > moment for at in t.ok_at) for t in self.talkers)

    def check(self) -> None:
        """No turn hung, none ended untyped, every acknowledged event is stored, no tool
        result was committed twice, and each session's next turn works."""
        assert not self.hung(), f"turns still running after the faults: {self.hung()}"
        assert not self.untyped(), f"untyped ends: {self.untyped()}"
        for talker in self.talkers:
            runner = self.runners[talker.app]
            stored = runner.get_session(USER, talker.session).events
            lost = talker.acknowledged - {e.id for e in stored}
            assert not lost, f"{talker.session}: {len(lost)} acknowledged events not in the store"
            answered = Counter(p.function_response.id for e in stored if e.content is not None
                               for p in e.content.parts if p.function_response is not None
                               and p.function_response.id)
            assert not [i for i, n in answered.items() if n > 1], f"{talker.session}: a tool result stored twice"
            assert texts(list(runner.run(USER, talker.session, "and now?")))[-1]


def wait_in_tool(host: Host, marker: Path) -> None:
    wait_until(marker.exists, timeout=scaled(30.0), message=f"the turn in its tool ({marker.name})")


def one_turn_in_background(runner: Any, session: str, text: str,
                           run_id: str | None = None) -> tuple[threading.Thread, list[Any]]:
    """A turn on a thread (its run id ``run_id``, if given); the list gets ("ok",
    events) or ("failed", the typed error) or ("untyped", the exception)."""
    outcome: list[Any] = []

    def turn() -> None:
        try:
            outcome.append(("ok", list(runner.run(USER, session, text, **({"run_id": run_id} if run_id else {})))))
        except AdkError as exc:
            outcome.append(("failed", exc))
        except Exception as exc:
            outcome.append(("untyped", exc))

    thread = threading.Thread(target=turn, daemon=True)
    thread.start()
    return thread, outcome


def typed_end(thread: threading.Thread, outcome: list[Any], deadline: float) -> tuple[str, Any]:
    """The turn's one end, once it came (AssertionError if it hung, or ended untyped)."""
    thread.join(deadline)
    assert not thread.is_alive(), "the turn in flight never ended"
    assert len(outcome) == 1, outcome
    kind, value = outcome[0]
    assert kind != "untyped", f"the turn ended untyped: {value!r}"
    return kind, value


# -- 1. a partition and the services, in the same instant, while turns run ---------------------------------


@pytest.mark.parametrize("victims", [
    ("sessions/sessions-0", "services/artifacts"),
    ("sessions/sessions-0", "services", "services/memory"),
    ("sessions/sessions-0", "sessions/sessions-1", "run_pools/pool-1", "services/artifacts"),
    ("sessions/sessions-0", "sessions", "services", "run_pools/pool-0"),
], ids=["partition+artifacts", "partition+services-supervisor", "both-partitions+pool+artifacts",
        "partition+both-supervisors+pool"])
def test_partitions_and_services_killed_in_the_same_instant_while_turns_run_lose_nothing(
        kept: KeptHost, tmp_path: Path, victims: tuple[str, ...]) -> None:
    """kill -9 of ``victims`` one right after the other while six sessions run turns
    (sleepy tools, artifact saves) and one turn naps in its tool on partition 0: that
    turn's caller gets one typed end (``killed`` or ``interrupted``), every other turn
    ends once, well or typed; the tree is whole again; every session then completes
    turns; every acknowledged event is stored; nothing is left running afterwards (the
    host, kept for the next case once whole again, is stopped after the last)."""
    tag = f"{kept.tag()}-"
    with kept.host("two-partitions", lambda data: HostConfig(apps=runtime_agents.APPS, data_dir=str(data),
                                                             partitions=2, root_intensity=1000)) as host:
        talkers = talkers_on([("sleepy", "sleep 0.2 t{n}", 0), ("sleepy", "sleep 0.2 t{n}", 1),
                              ("notes", "save note {n}", 0), ("notes", "save note {n}", 1),
                              ("counter", "count {n}", 0), ("counter", "count {n}", 1)], tag)
        sleepy = host.runner("sleepy", timeout=120.0)
        napper = session_on("sleepy", 0, 2, f"{tag}napper-")
        sleepy.create_session(USER, napper)
        marker = tmp_path / "in-tool"
        with Talkers(host, talkers) as running:
            wait_until(lambda: sum(t.ends.count("ok") for t in talkers) >= 6, timeout=scaled(30.0))
            nap, outcome = one_turn_in_background(sleepy, napper, f"sleep 60 {marker}")
            wait_in_tool(host, marker)
            rows = rows_by_path(host)
            pids = [rows[v]["pid"] for v in victims]
            kill_together(pids)
            killed = set(pids)
            kind, value = typed_end(nap, outcome, scaled(30.0))
            assert kind == "failed" and isinstance(value, RunFailedError), value
            assert value.reason in ("killed", "interrupted"), value.reason
            wait_until(lambda: tree_whole(host, killed), timeout=scaled(45.0), message=f"the tree whole after {victims}")
            back = time.monotonic()
            wait_until(lambda: running.every_one_ended_well_since(back), timeout=scaled(45.0),
                       message="every session's turns end well again")
        running.check()
        assert texts(list(sleepy.run(USER, napper, "hello")))[-1] == "awake: hello"


# -- 2. a run worker killed while its partition restarts --------------------------------------------------


def pool_children(pool_pid: int) -> list[int]:
    """The live child processes of the pool (its run workers), from /proc."""
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pool_pid}/task"):
            with open(f"/proc/{pool_pid}/task/{task}/children") as children:
                found.extend(int(p) for p in children.read().split())
    except OSError:
        return []
    return [p for p in found if pid_alive(p)]


def test_a_run_worker_killed_while_its_partition_restarts_ends_its_turns_typed_and_the_tree_comes_back(
        actor_system: Any, tmp_path: Path) -> None:
    """A turn naps in its tool on a worker of partition 0; kill -9 the partition, then,
    before its restart is done, that worker and every other process its pool has (the
    old workers and the ones just forked for the new partition). The turn in flight
    ends once, typed; a turn asked during the restart ends once (well, or typed); the
    pool replaces its workers (their deaths within its intensity), they connect to
    the new partition, and the session's next turn works with its history."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1,
                        root_intensity=1000, worker_intensity=20)
    with Host(config, system=actor_system) as host:
        runner = host.runner("sleepy", timeout=120.0)
        runner.create_session(USER, "s1")
        runner.create_session(USER, "s2")
        assert texts(list(runner.run(USER, "s1", "hello")))[-1] == "awake: hello"
        wait_until(lambda: tree_whole(host, set()), timeout=scaled(30.0))
        rows = rows_by_path(host)
        partition_pid, pool_pid = rows["sessions/sessions-0"]["pid"], rows["run_pools/pool-0"]["pid"]
        marker = tmp_path / "in-tool"
        nap, napped = one_turn_in_background(runner, "s1", f"sleep 60 {marker}", run_id="run-nap")
        wait_in_tool(host, marker)
        worker = run_worker(host, "sleepy", USER, "s1", "run-nap")
        os.kill(partition_pid, signal.SIGKILL)
        os.kill(worker, signal.SIGKILL)
        killed = {partition_pid, worker}
        asked, answered = one_turn_in_background(runner, "s2", "hello again")  # during the restart
        # Every worker of the pool, old or just forked, for a moment while the partition comes back.
        until = time.monotonic() + 0.5
        while time.monotonic() < until:
            others = [p for p in pool_children(pool_pid) if p not in killed]
            kill_together(others)
            killed.update(others)
            time.sleep(0.02)
        kind, value = typed_end(nap, napped, scaled(30.0))
        assert kind == "failed" and isinstance(value, RunFailedError) and value.reason in ("killed", "interrupted")
        kind, value = typed_end(asked, answered, scaled(60.0))
        assert kind == "ok" or isinstance(value, AdkError)
        wait_until(lambda: tree_whole(host, killed), timeout=scaled(45.0), message="the tree whole")
        assert rows_by_path(host)["sessions/sessions-0"]["pid"] != partition_pid
        assert texts(list(runner.run(USER, "s1", "still there?")))[-1] == "awake: still there?"
        assert texts(runner.get_session(USER, "s1").events)[:2] == ["hello", "awake: hello"]


# -- 3. SIGTERM of the host while a partition restarts and turns are in flight ----------------------------


SLEEPY_APP = 'sleepy = "runtime_agents:sleepy_agent"\necho = "runtime_agents:echo_agent"\n'


def stored_event_ids(data_dir: Path, app: str, session: str) -> set[str]:
    """The ids of the events the store in ``data_dir`` holds for a session (read from the
    stopped host's SQLite file itself)."""
    from adk_actors.store import open_session_store

    store = open_session_store(str(data_dir / "sessions.db"))
    try:
        return {e.id for e in store.get_session(app, USER, session).events}
    finally:
        store.close()


def assert_stored(talkers: list[Talker], data_dir: Path) -> None:
    """Every event each talker was acknowledged is in the stopped host's store."""
    for talker in talkers:
        lost = talker.acknowledged - stored_event_ids(data_dir, talker.app, talker.session)
        assert not lost, f"{talker.session}: {len(lost)} acknowledged events not in the store"


def test_sigterm_of_serve_while_a_partition_restarts_and_turns_run_stops_cleanly_and_loses_nothing(
        tmp_path: Path) -> None:
    """``serve`` (2 partitions) with sessions talking on both and a turn napping in its
    tool on each partition; kill -9 partition 1, then SIGTERM ``serve`` at once, while
    that partition restarts. ``serve`` exits 0 within its stop's deadline (its
    ``shutdown_timeout``, stretched by the load), no process of the host is left, each
    caller's turn in flight ended once, typed, and every event any caller received is
    in the store (read from the stopped host's store file)."""
    with serving(tmp_path, "partitions = 2\n", apps=SLEEPY_APP) as served:
        serve = served["process"]
        host = Host.connect(served["port"])
        try:
            talkers = talkers_on([("echo", "hi {n}", 0), ("echo", "hi {n}", 1),
                                  ("sleepy", "sleep 0.1 t{n}", 0), ("sleepy", "sleep 0.1 t{n}", 1)])
            sleepy = host.runner("sleepy", timeout=120.0, call_timeout=5.0)
            naps: list[str] = []
            for partition in (0, 1):
                sid = session_on("sleepy", partition, 2, "napper-", set(naps))
                sleepy.create_session(USER, sid)
                naps.append(sid)
            # (A call that finds the host gone is asked again until its call_timeout: short here.)
            with Talkers(host, talkers, call_timeout=5.0) as running:
                wait_until(lambda: all("ok" in t.ends for t in talkers), timeout=scaled(30.0))
                markers = [tmp_path / f"in-tool-{i}" for i in (0, 1)]
                in_flight = [one_turn_in_background(sleepy, sid, f"sleep 60 {marker}")
                             for sid, marker in zip(naps, markers, strict=True)]
                for marker in markers:
                    wait_in_tool(host, marker)
                partition_pid = rows_by_path(host)["sessions/sessions-1"]["pid"]
                os.kill(partition_pid, signal.SIGKILL)
                serve.send_signal(signal.SIGTERM)
                running.stop_event.set()  # no new turn: those in flight end
                try:
                    code = serve.wait(scaled(10.0 + 30.0))  # its shutdown_timeout, then the system's
                except subprocess.TimeoutExpired:
                    pytest.fail("serve did not exit after SIGTERM while a partition restarted")
                assert code == 0, served["err"].read_text()[-2000:]
                left = find_marked_processes(served["marker"])
                assert left == [], f"processes of the host left after serve exited: {left}"
                for thread, outcome in in_flight:
                    kind, value = typed_end(thread, outcome, scaled(30.0))
                    assert kind == "failed", value
            assert not running.hung(), f"turns still running after the host stopped: {running.hung()}"
            assert not running.untyped(), running.untyped()
        finally:
            host.disconnect()
    assert_stored(talkers, tmp_path / "data")


# -- 4. a stopped actor and a killed one at once, under CPU burners -----------------------------------------


@contextmanager
def cpu_burners(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` processes spinning on a CPU each, killed on the way out."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield burners
    finally:
        for burner in burners:
            burner.kill()
            burner.wait(10)


@contextmanager
def continued_on_exit(pids: list[int]) -> Iterator[None]:
    """SIGCONT each pid still alive on the way out (no stopped process left for the
    teardown to wait on)."""
    try:
        yield
    finally:
        kill_together([p for p in pids if pid_alive(p)], signal.SIGCONT)


FAST = HealthCheck(interval=0.5, timeout=2.0)


@pytest.mark.parametrize("stop, kill", [
    ("sessions/sessions-1", "sessions/sessions-0"),
    ("services/artifacts", "run_pools/pool-0"),
    ("run_pools/pool-0/worker", "sessions/sessions-0"),
    ("sessions", "run_pools/pool-1"),
], ids=["stop-partition+kill-partition", "stop-artifacts+kill-pool", "stop-worker+kill-its-partition",
        "stop-sessions-supervisor+kill-pool"])
def test_a_stopped_actor_and_a_killed_one_at_once_under_cpu_burners_lose_nothing(
        kept: KeptHost, stop: str, kill: str) -> None:
    """Two CPU burners; sessions run turns on both partitions; SIGSTOP ``stop`` and kill -9
    ``kill`` in the same instant. The health checks find the stopped actor and kill it,
    both are restarted (new pids, the tree whole), every turn ended once (well or
    typed), every acknowledged event is stored, and every session's turns end well
    again (the host, kept for the next case once whole again, is stopped after the last)."""
    tag = f"{kept.tag()}-"
    with kept.host("fast-health", lambda data: HostConfig(apps=runtime_agents.APPS, data_dir=str(data), partitions=2,
                                                          health=FAST, root_intensity=1000)) as host, cpu_burners(2):
        talkers = talkers_on([("sleepy", "sleep 0.1 t{n}", 0), ("sleepy", "sleep 0.1 t{n}", 1),
                              ("notes", "save note {n}", 0), ("notes", "save note {n}", 1),
                              ("counter", "count {n}", 0), ("counter", "count {n}", 1)], tag)
        with Talkers(host, talkers) as running:
            wait_until(lambda: all("ok" in t.ends for t in talkers), timeout=scaled(30.0))
            rows = rows_by_path(host)
            stopped, killed = pid_of(rows, stop), pid_of(rows, kill)
            with continued_on_exit([stopped]):
                os.kill(stopped, signal.SIGSTOP)
                os.kill(killed, signal.SIGKILL)
                wait_until(lambda: not pid_alive(stopped), timeout=scaled(30.0),
                           message=f"the stopped {stop} found and killed by its health check")
            wait_until(lambda: tree_whole(host, {stopped, killed}), timeout=scaled(45.0), message="the tree whole")
            back = time.monotonic()
            wait_until(lambda: running.every_one_ended_well_since(back), timeout=scaled(45.0),
                       message="every session's turns end well again")
        running.check()


# -- 5. a restart intensity spent by simultaneous crashes, with a turn in flight ------------------------------


def test_simultaneous_partition_crashes_past_the_intensity_escalate_and_the_tree_comes_back(
        actor_system: Any, tmp_path: Path) -> None:
    """``sessions_intensity = 1``: both partitions killed in the same instant are two
    restarts within the period, one more than allowed; the ``sessions`` supervisor
    gives up and the root restarts it and everything after it (rest_for_one). The turn
    napping in its tool meanwhile ends once, typed; the other sessions' turns end well
    or typed; the tree is whole again, every acknowledged event is stored, and every
    session's turns end well again."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=2,
                        sessions_intensity=1, sessions_period=30.0)
    with Host(config, system=actor_system) as host:
        talkers = talkers_on([("echo", "hi {n}", 0), ("echo", "hi {n}", 1),
                              ("counter", "count {n}", 0), ("counter", "count {n}", 1)])
        sleepy = host.runner("sleepy", timeout=120.0)
        napper = session_on("sleepy", 0, 2, "napper-")
        sleepy.create_session(USER, napper)
        marker = tmp_path / "in-tool"
        with Talkers(host, talkers) as running:
            wait_until(lambda: all("ok" in t.ends for t in talkers), timeout=scaled(30.0))
            nap, outcome = one_turn_in_background(sleepy, napper, f"sleep 60 {marker}")
            wait_in_tool(host, marker)
            rows = rows_by_path(host)
            before = rows["sessions"]["pid"]
            pids = [rows["sessions/sessions-0"]["pid"], rows["sessions/sessions-1"]["pid"]]
            kill_together(pids)
            kind, value = typed_end(nap, outcome, scaled(30.0))
            assert kind == "failed" and isinstance(value, RunFailedError), value
            wait_until(lambda: tree_whole(host, {*pids, before}), timeout=scaled(45.0),
                       message="the tree whole after the escalation")
            after = rows_by_path(host)
            assert after["sessions"]["restarts"] >= 1 and after["services"]["restarts"] >= 1  # escalated: rest_for_one
            back = time.monotonic()
            wait_until(lambda: running.every_one_ended_well_since(back), timeout=scaled(45.0),
                       message="every session's turns end well again")
        running.check()
        assert texts(list(sleepy.run(USER, napper, "hello")))[-1] == "awake: hello"


def test_simultaneous_crashes_past_every_intensity_stop_the_host_and_end_the_turn_in_flight(
        actor_system: Any, tmp_path: Path) -> None:
    """``sessions_intensity = 1`` and ``root_intensity = 0``: both partitions killed in
    the same instant escalate to the root, which gives up. The turn napping in its tool
    ends once, typed; the host says it is not alive; every process of its tree is gone
    (only the actor system's own processes are left, as before the host started), and
    every event a caller received is in the store."""
    marker = actor_system.test_marker
    system_only = set(find_marked_processes(marker))
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=2,
                        sessions_intensity=1, sessions_period=30.0, root_intensity=0)
    host = Host(config, system=actor_system).start()
    try:
        talkers = [Talker("echo", session_on("echo", p, 2, "echo-"), "hi {n}") for p in (0, 1)]
        sleepy = host.runner("sleepy", timeout=120.0, call_timeout=5.0)
        napper = session_on("sleepy", 0, 2, "napper-")
        sleepy.create_session(USER, napper)
        in_tool = tmp_path / "in-tool"
        with Talkers(host, talkers, call_timeout=5.0) as running:
            wait_until(lambda: all("ok" in t.ends for t in talkers), timeout=scaled(30.0))
            nap, outcome = one_turn_in_background(sleepy, napper, f"sleep 60 {in_tool}")
            wait_in_tool(host, in_tool)
            rows = rows_by_path(host)
            tree = {int(r["pid"]) for r in rows.values() if r["pid"]}
            kill_together([pid_of(rows, "sessions/sessions-0"), pid_of(rows, "sessions/sessions-1")])
            kind, value = typed_end(nap, outcome, scaled(30.0))
            assert kind == "failed", value
            wait_until(lambda: not host.alive(), timeout=scaled(30.0), message="the root gave up")
            running.stop_event.set()
        wait_until(lambda: not any(pid_alive(p) for p in tree) and set(find_marked_processes(marker)) <= system_only,
                   timeout=scaled(30.0), message="every process of the tree gone")
        assert not running.hung() and not running.untyped()
    finally:
        host.stop(timeout=10)
    assert_stored(talkers, tmp_path / "data")


# -- 6. a stop of the host while a partition restarts and a worker and a pool are killed ------------------


def test_host_stop_while_a_partition_restarts_and_a_worker_and_a_pool_are_killed_returns_and_leaves_nothing(
        actor_system: Any, tmp_path: Path) -> None:
    """Turns run on both partitions, one naps in its tool on partition 0; in the same
    instant: kill -9 of partition 1, of the run worker holding the nap, of pool 1, and
    ``Host.stop`` on a thread. ``stop`` returns within its deadline (its timeout,
    stretched by the load), no process of the tree is left, every turn in flight ended
    once, typed, and every acknowledged event is in the store."""
    marker = actor_system.test_marker
    system_only = set(find_marked_processes(marker))
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=2,
                        root_intensity=1000)
    host = Host(config, system=actor_system).start()
    stopper = threading.Thread(target=host.stop, kwargs={"timeout": 10.0})
    try:
        talkers = talkers_on([("echo", "hi {n}", 0), ("echo", "hi {n}", 1),
                              ("counter", "count {n}", 0), ("counter", "count {n}", 1)])
        sleepy = host.runner("sleepy", timeout=120.0, call_timeout=5.0)
        napper = session_on("sleepy", 0, 2, "napper-")
        sleepy.create_session(USER, napper)
        in_tool = tmp_path / "in-tool"
        with Talkers(host, talkers, call_timeout=5.0) as running:
            wait_until(lambda: all("ok" in t.ends for t in talkers), timeout=scaled(30.0))
            nap, outcome = one_turn_in_background(sleepy, napper, f"sleep 60 {in_tool}", run_id="run-nap")
            wait_in_tool(host, in_tool)
            rows = rows_by_path(host)
            tree = {int(r["pid"]) for r in rows.values() if r["pid"]}
            worker = run_worker(host, "sleepy", USER, napper, "run-nap")
            kill_together([pid_of(rows, "sessions/sessions-1"), worker, pid_of(rows, "run_pools/pool-1")])
            stopper.start()
            running.stop_event.set()
            stopper.join(scaled(10.0 + 20.0))
            assert not stopper.is_alive(), "Host.stop() did not return"
            kind, value = typed_end(nap, outcome, scaled(30.0))
            assert kind == "failed", value
        wait_until(lambda: not any(pid_alive(p) for p in tree) and set(find_marked_processes(marker)) <= system_only,
                   timeout=scaled(30.0), message="every process of the tree gone")
        assert not running.hung() and not running.untyped()
    finally:
        if not stopper.is_alive() and host.root is not None:
            host.stop(timeout=10)
    assert_stored(talkers, tmp_path / "data")


# -- 7. a partition killed again and again while its workers run turns ------------------------------------


def test_a_partition_killed_three_times_mid_turn_costs_its_pool_nothing(actor_system: Any, tmp_path: Path) -> None:
    """``worker_intensity = 1``: three kills -9 of the one partition, each while turns run
    on its workers (and each time also while its workers of the previous round may still
    be connecting). Workers that leave because their partition died are not counted:
    the pool is never restarted, the partition is restarted three times, every turn
    ended once, every acknowledged event is stored, and the sessions serve again."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1,
                        worker_intensity=1, worker_period=60.0, root_intensity=1000)
    with Host(config, system=actor_system) as host:
        talkers = [Talker("sleepy", f"s{i}", "sleep 0.2 t{n}") for i in range(3)]
        talkers.append(Talker("counter", "c0", "count {n}"))
        with Talkers(host, talkers) as running:
            killed: set[int] = set()
            for round_ in range(3):
                wait_until(lambda: tree_whole(host, killed), timeout=scaled(45.0), message=f"round {round_}: whole")
                mark = time.monotonic()
                wait_until(lambda: running.every_one_ended_well_since(mark), timeout=scaled(45.0),
                           message=f"round {round_}: turns end well")
                wait_until(lambda: any(call(host.system, host.partitions()[0], WorkerRuns(), timeout=2).values()),
                           timeout=scaled(10.0), message="a turn on a worker")
                pid = pid_of(rows_by_path(host), "sessions/sessions-0")
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            wait_until(lambda: tree_whole(host, killed), timeout=scaled(45.0), message="whole at the end")
            mark = time.monotonic()
            wait_until(lambda: running.every_one_ended_well_since(mark), timeout=scaled(45.0))
        rows = rows_by_path(host)
        assert rows["sessions/sessions-0"]["restarts"] == 3
        assert rows["run_pools/pool-0"]["restarts"] == 0, rows["run_pools/pool-0"]
        running.check()


# -- 8. a run killed while its pool is stopped, or killed ----------------------------------------------------


def marks_size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


@pytest.mark.parametrize("pool_fault", [signal.SIGSTOP, signal.SIGKILL], ids=["pool-stopped", "pool-killed"])
def test_a_run_that_cannot_stop_killed_while_its_pool_is_stopped_or_killed_ends_only_once_its_work_stopped(
        actor_system: Any, tmp_path: Path, pool_fault: int) -> None:
    """A run whose tool blocks its thread (it appends a mark every 100 ms) is killed
    (``Runner.kill_run``) in the same instant as its pool gets ``pool_fault``: the pool
    cannot retire and kill the worker past the grace (stopped), or is gone with it
    (killed). The caller gets one end, ``killed``; no mark is written after it (the
    worker is dead when the caller is told); the pool is found (the stopped one by its
    health check), restarted, its new worker connects, and the next turn works."""
    import kill_agents

    config = HostConfig(apps=kill_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1, run_workers=1,
                        run_stop_grace=1.0, health=FAST, root_intensity=1000)
    with Host(config, system=actor_system) as host:
        marker = host.runner("marker", timeout=120.0)
        marker.create_session(USER, "m")
        marks = tmp_path / "marks"
        ended: list[Any] = []

        def turn() -> None:
            try:
                ended.append(("ok", list(marker.run(USER, "m", f"mark {marks} 60", run_id="run-victim"))))
            except AdkError as exc:
                ended.append(("failed", exc))
            except Exception as exc:
                ended.append(("untyped", exc))
            ended.append(marks_size(marks))  # at the very moment the caller was told

        caller = threading.Thread(target=turn, daemon=True)
        caller.start()
        wait_until(lambda: marks_size(marks) > 0, timeout=scaled(30.0), message="the first mark")
        rows = rows_by_path(host)
        pool, partition = pid_of(rows, "run_pools/pool-0"), pid_of(rows, "sessions/sessions-0")
        with continued_on_exit([pool]):
            os.kill(pool, pool_fault)
            try:
                marker.kill_run(USER, "m", "run-victim")
                ends: tuple[str, ...] = ("killed",)
            except InvalidRequestError:
                # the killed pool's worker died with it (its parent) and the partition saw the
                # run end before the kill came: it was not running any more
                assert pool_fault == signal.SIGKILL
                ends = ("killed", "interrupted")
            caller.join(scaled(30.0))
            assert not caller.is_alive(), "the killed run's caller was never told"
            kind, value = ended[0]
            assert kind == "failed" and isinstance(value, RunFailedError) and value.reason in ends, value
            writers = {int(line.split()[0]) for line in marks.read_text().splitlines()}
            wait_until(lambda: not any(pid_alive(p) for p in writers), timeout=scaled(10.0),
                       message="the marks' writer gone")
            assert marks_size(marks) == ended[1], "a mark was written after the caller heard its run was killed"
            wait_until(lambda: not pid_alive(pool), timeout=scaled(30.0), message="the pool found and killed")
        wait_until(lambda: tree_whole(host, {pool, *writers}), timeout=scaled(45.0), message="the tree whole")
        assert pid_of(rows_by_path(host), "sessions/sessions-0") == partition  # the partition went on
        assert texts(list(marker.run(USER, "m", "hello")))[-1] == "idle"



# -- 9. SIGTERM of serve in the instant its root gives up, with a turn in flight ----------------------------


def test_sigterm_of_serve_as_its_root_gives_up_with_a_turn_in_flight_leaves_nothing(tmp_path: Path) -> None:
    """``restart_intensity = 0``: kill -9 of the registry makes the root give up; SIGTERM
    reaches ``serve`` in the same instant, so its own stop and the stop after the give-up
    race. ``serve`` exits (0 or 1: either path may win) within its deadline, no process
    of the host is left, the turn napping in its tool ended once, typed, and every
    event a caller received is in the store."""
    with serving(tmp_path, "restart_intensity = 0\npartitions = 1\n", apps=SLEEPY_APP) as served:
        serve = served["process"]
        host = Host.connect(served["port"])
        try:
            talkers = [Talker("echo", "e1", "hi {n}"), Talker("sleepy", "s1", "sleep 0.1 t{n}")]
            sleepy = host.runner("sleepy", timeout=120.0, call_timeout=5.0)
            sleepy.create_session(USER, "napper")
            with Talkers(host, talkers, call_timeout=5.0) as running:
                wait_until(lambda: all("ok" in t.ends for t in talkers), timeout=scaled(30.0))
                in_tool = tmp_path / "in-tool"
                nap, outcome = one_turn_in_background(sleepy, "napper", f"sleep 60 {in_tool}")
                wait_in_tool(host, in_tool)
                os.kill(pid_of(rows_by_path(host), "registry"), signal.SIGKILL)
                serve.send_signal(signal.SIGTERM)
                running.stop_event.set()
                try:
                    code = serve.wait(scaled(10.0 + 30.0))
                except subprocess.TimeoutExpired:
                    pytest.fail("serve did not exit")
                assert code in (0, 1), served["err"].read_text()[-2000:]
                left = find_marked_processes(served["marker"])
                assert left == [], f"processes of the host left after serve exited: {left}"
                kind, value = typed_end(nap, outcome, scaled(30.0))
                assert kind == "failed", value
            assert not running.hung() and not running.untyped()
        finally:
            host.disconnect()
    assert_stored(talkers, tmp_path / "data")


# -- 10. Host.stop in the middle of an escalation, with a turn in flight -------------------------------------


def test_host_stop_in_the_middle_of_an_escalation_returns_and_leaves_nothing(actor_system: Any, tmp_path: Path) -> None:
    """``sessions_intensity = 1``: both partitions killed at once make the ``sessions``
    supervisor give up and the root restart it and what follows it; ``Host.stop`` is
    called in the same instant, on a thread. It returns within its deadline, no process
    of the tree is left, and the turn napping in its tool ended once, typed."""
    marker = actor_system.test_marker
    system_only = set(find_marked_processes(marker))
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=2,
                        sessions_intensity=1, sessions_period=30.0)
    host = Host(config, system=actor_system).start()
    stopper = threading.Thread(target=host.stop, kwargs={"timeout": 10.0})
    try:
        talkers = [Talker("echo", session_on("echo", p, 2, "echo-"), "hi {n}") for p in (0, 1)]
        sleepy = host.runner("sleepy", timeout=120.0, call_timeout=5.0)
        napper = session_on("sleepy", 1, 2, "napper-")
        sleepy.create_session(USER, napper)
        in_tool = tmp_path / "in-tool"
        with Talkers(host, talkers, call_timeout=5.0) as running:
            wait_until(lambda: all("ok" in t.ends for t in talkers), timeout=scaled(30.0))
            nap, outcome = one_turn_in_background(sleepy, napper, f"sleep 60 {in_tool}")
            wait_in_tool(host, in_tool)
            rows = rows_by_path(host)
            tree = {int(r["pid"]) for r in rows.values() if r["pid"]}
            kill_together([pid_of(rows, "sessions/sessions-0"), pid_of(rows, "sessions/sessions-1")])
            stopper.start()
            running.stop_event.set()
            stopper.join(scaled(10.0 + 20.0))
            assert not stopper.is_alive(), "Host.stop() did not return"
            kind, value = typed_end(nap, outcome, scaled(30.0))
            assert kind == "failed", value
        wait_until(lambda: not any(pid_alive(p) for p in tree) and set(find_marked_processes(marker)) <= system_only,
                   timeout=scaled(30.0), message="every process of the tree gone")
        assert not running.hung() and not running.untyped()
    finally:
        if not stopper.is_alive() and host.root is not None:
            host.stop(timeout=10)
    assert_stored(talkers, tmp_path / "data")


# -- 11. every run worker killed in the same instant, past the pools' intensity ------------------------------


def test_every_run_worker_killed_at_once_past_the_pools_intensity_restarts_the_pools_alone(
        actor_system: Any, tmp_path: Path) -> None:
    """``worker_intensity = 1``, two workers per pool: kill -9 of all four workers of
    both pools in the same instant, while turns run on them and one naps in its tool.
    Two deaths within the period are one more than a pool allows: each pool exits and
    is restarted once; the partitions go on (never restarted) and keep their sessions.
    The nap's caller gets one typed end (``killed``), every other turn ends once, every
    acknowledged event is stored, and every session's turns end well again."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=2,
                        worker_intensity=1, worker_period=60.0, root_intensity=1000)
    with Host(config, system=actor_system) as host:
        talkers = talkers_on([("sleepy", "sleep 0.2 t{n}", 0), ("sleepy", "sleep 0.2 t{n}", 1),
                              ("counter", "count {n}", 0), ("counter", "count {n}", 1)])
        sleepy = host.runner("sleepy", timeout=120.0)
        napper = session_on("sleepy", 1, 2, "napper-")
        sleepy.create_session(USER, napper)
        in_tool = tmp_path / "in-tool"
        with Talkers(host, talkers) as running:
            wait_until(lambda: tree_whole(host, set()), timeout=scaled(30.0))
            wait_until(lambda: all("ok" in t.ends for t in talkers), timeout=scaled(30.0))
            nap, outcome = one_turn_in_background(sleepy, napper, f"sleep 60 {in_tool}")
            wait_in_tool(host, in_tool)
            rows = rows_by_path(host)
            workers = [int(r["pid"]) for path, r in rows.items() if "/worker-" in path]
            assert len(workers) == 4, workers
            partitions = [pid_of(rows, f"sessions/sessions-{i}") for i in (0, 1)]
            kill_together(workers)
            kind, value = typed_end(nap, outcome, scaled(30.0))
            assert kind == "failed" and isinstance(value, RunFailedError) and value.reason == "killed", value
            wait_until(lambda: tree_whole(host, set(workers)), timeout=scaled(45.0), message="the tree whole")
            back = time.monotonic()
            wait_until(lambda: running.every_one_ended_well_since(back), timeout=scaled(45.0),
                       message="every session's turns end well again")
        after = rows_by_path(host)
        assert [after[f"run_pools/pool-{i}"]["restarts"] for i in (0, 1)] == [1, 1]
        assert [pid_of(after, f"sessions/sessions-{i}") for i in (0, 1)] == partitions
        running.check()


# -- 12. a group restart whose next member is stopped ------------------------------------------------------


@pytest.mark.parametrize("crash", ["registry", "sessions-escalates"])
def test_a_group_restart_while_the_services_supervisor_is_stopped_completes(
        actor_system: Any, tmp_path: Path, crash: str) -> None:
    """The root restarts a group (rest_for_one: a crash of ``registry``, or of
    ``sessions`` escalated by both partitions killed past ``sessions_intensity = 1``) in
    the same instant as ``services``, a member of that group, is stopped (SIGSTOP): it
    cannot acknowledge its shutdown. The group restart completes all the same (the
    stopped supervisor is found by the health checks and killed), the turn in flight
    ends once, typed, the tree is whole again and the sessions serve."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=2, health=FAST,
                        sessions_intensity=1, sessions_period=30.0, root_intensity=1000)
    with Host(config, system=actor_system) as host:
        talkers = [Talker("echo", session_on("echo", p, 2, "echo-"), "hi {n}") for p in (0, 1)]
        sleepy = host.runner("sleepy", timeout=120.0)
        napper = session_on("sleepy", 0, 2, "napper-")
        sleepy.create_session(USER, napper)
        in_tool = tmp_path / "in-tool"
        with Talkers(host, talkers) as running:
            wait_until(lambda: all("ok" in t.ends for t in talkers), timeout=scaled(30.0))
            nap, outcome = one_turn_in_background(sleepy, napper, f"sleep 60 {in_tool}")
            wait_in_tool(host, in_tool)
            rows = rows_by_path(host)
            services = pid_of(rows, "services")
            victims = ([pid_of(rows, "registry")] if crash == "registry"
                       else [pid_of(rows, "sessions/sessions-0"), pid_of(rows, "sessions/sessions-1")])
            with continued_on_exit([services]):
                os.kill(services, signal.SIGSTOP)
                kill_together(victims)
                kind, value = typed_end(nap, outcome, scaled(30.0))
                assert kind == "failed", value
                wait_until(lambda: tree_whole(host, {services, *victims}), timeout=scaled(45.0),
                           message="the tree whole after a group restart past a stopped member")
            back = time.monotonic()
            wait_until(lambda: running.every_one_ended_well_since(back), timeout=scaled(45.0),
                       message="every session's turns end well again")
        running.check()


# -- 13. resumed runs through simultaneous kills -------------------------------------------------------------


@pytest.mark.parametrize("victims", [
    ("sessions/sessions-0", "run_pools/pool-1"),
    ("sessions/sessions-0", "run_pools/pool-0/worker", "sessions/sessions-1"),
], ids=["partition+other-pool", "partition+its-worker+other-partition"])
def test_runs_resumed_through_simultaneous_kills_complete_once_and_lose_nothing(
        kept: KeptHost, victims: tuple[str, ...]) -> None:
    """An app that resumes interrupted runs (``resume_interrupted``), its tool idempotent:
    sessions nap turn after turn on both partitions; kill -9 of ``victims`` in the same
    instant. Each caller follows its run's resume: every turn ends once, well or typed;
    no tool result is stored twice; every acknowledged event is stored; the tree is
    whole again and every session's turns end well (the host, kept for the next case once
    whole again, is stopped after the last)."""
    import kill_agents

    tag = f"{kept.tag()}-"
    with kept.host("resuming", lambda data: HostConfig(apps=kill_agents.APPS, data_dir=str(data), partitions=2,
                                                       root_intensity=1000)) as host:
        taken: set[str] = set()
        talkers = []
        for partition in (0, 1, 0, 1):
            sid = session_on("patient", partition, 2, f"{tag}patient-", taken)
            taken.add(sid)
            talkers.append(Talker("patient", sid, "nap 0.3"))
        with Talkers(host, talkers) as running:
            wait_until(lambda: tree_whole(host, set()), timeout=scaled(30.0))
            wait_until(lambda: all("ok" in t.ends for t in talkers), timeout=scaled(30.0))
            wait_until(lambda: all(t.busy_since is not None for t in talkers), timeout=scaled(10.0),
                       message="every session in a turn")
            rows = rows_by_path(host)
            pids = [pid_of(rows, v) for v in victims]
            kill_together(pids)
            wait_until(lambda: tree_whole(host, set(pids)), timeout=scaled(45.0), message="the tree whole")
            back = time.monotonic()
            wait_until(lambda: running.every_one_ended_well_since(back), timeout=scaled(45.0),
                       message="every session's turns end well again")
        running.check()


# -- 14. a service killed while a tool's call waits on it -----------------------------------------------------


def test_a_service_killed_while_a_tools_call_waits_on_it_tells_the_tool_the_true_reason(
        actor_system: Any, tmp_path: Path) -> None:
    """The artifacts actor is stopped (SIGSTOP), a turn's tool saves an artifact (its call
    waits on the stopped actor), then the actor is killed -9 and restarted by its
    supervisor. The tool learns the true reason: the save is done by the restarted
    actor, or it fails saying the service stopped, never that it "did not answer" after
    waiting out its whole deadline on a process that was gone."""
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1, health=None)
    with Host(config, system=actor_system) as host:
        notes = host.runner("notes", timeout=120.0)
        notes.create_session(USER, "n")
        assert texts(list(notes.run(USER, "n", "save one")))[-1] == "{'version': 0}"
        artifacts = pid_of(rows_by_path(host), "services/artifacts")
        with continued_on_exit([artifacts]):
            os.kill(artifacts, signal.SIGSTOP)
            turn, outcome = one_turn_in_background(notes, "n", "save two")
            wait_until(lambda: sum(1 for e in notes.get_session(USER, "n").events
                                   if e.content is not None and e.content.function_calls) == 2,
                       timeout=scaled(30.0), message="the second save's call on record")
            os.kill(artifacts, signal.SIGKILL)
        kind, events = typed_end(turn, outcome, scaled(60.0))
        assert kind == "ok", events
        said = texts(events)[-1]
        assert "did not answer within" not in said, said


# -- 15. a background job's run, its jobs actor and its partition or pool killed at once ------------------


@pytest.mark.parametrize("also", ["sessions/sessions-0", "run_pools/pool-0"])
def test_a_jobs_attempts_never_overlap_when_the_jobs_actor_and_the_runs_partition_or_pool_die_at_once(
        actor_system: Any, tmp_path: Path, also: str) -> None:
    """An agent job's run marks a file from a tool that blocks its thread; kill -9 of the
    ``jobs`` actor and of ``also`` in the same instant. The job completes on a later
    attempt; no two attempts ran at once (each attempt's marks come from a process and
    thread of its own: one's first mark is after the other's last), and each attempt
    given up was given up only after its last mark."""
    import kill_agents

    from adk_actors.jobs import Backoff, JobsConfig

    marks = tmp_path / "marks"
    jobs = JobsConfig(queues={"default": 2}, backoff=Backoff(base=0.05, max_delay=0.2, jitter=0.0), tick=0.2)
    config = HostConfig(apps=kill_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1, run_workers=1,
                        run_stop_grace=1.0, jobs=jobs, root_intensity=1000)
    with Host(config, system=actor_system) as host:
        job = host.jobs.enqueue_run("marker", f"mark {marks} 4", user_id=USER)
        wait_until(lambda: marks_size(marks) > 0, timeout=scaled(30.0), message="the first attempt's first mark")
        rows = rows_by_path(host)
        kill_together([pid_of(rows, "jobs"), pid_of(rows, also)])
        wait_until(lambda: host.jobs.get(job.id).state in ("completed", "discarded"), timeout=scaled(60.0),
                   message="the job finished")
        done = host.jobs.get(job.id)
    assert done.state == "completed" and done.attempt >= 2, done
    attempts: dict[tuple[str, str], list[float]] = {}
    for line in marks.read_text().splitlines():
        pid, thread, at = line.split()
        attempts.setdefault((pid, thread), []).append(float(at))
    spans = sorted((min(times), max(times)) for times in attempts.values())
    assert len(spans) == done.attempt, (spans, done)
    for (_, last), (first, _) in pairwise(spans):
        assert first > last, f"two attempts overlapped by {last - first:.3f} s"
    for error, (_, last) in zip(done.errors, spans, strict=False):
        assert error["at"] > last, f"an attempt was given up {last - error['at']:.3f} s before its work stopped"
