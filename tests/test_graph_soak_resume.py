"""``chaos soak`` with a graph app whose killed runs are RESUMED (issue 55):
examples/graph_soak_resume (examples/graph_soak's graph, every node declared safe to
run again, ``App(resume_interrupted=5)``) driven while run workers, partitions and
sessions are killed (crashed, for a session). The host resumes a run a crash ended
and its caller follows it (one call, one run); the soak resumes itself
(``soak(resume=True)``) only a run the host tells its caller it will not resume.

Then, read back from the store (its events, and its runs table: each resume is a new
run of the same invocation, ``resumes`` naming the run it continues) and from the
ledgers outside the host (each node run's body logs when it began):

* LOST 0, HUNG 0, no node run's output committed twice (the chaos soak's report);
* every run a kill ended was resumed, and its invocation completed (the graph's
  output committed);
* no FINISHED node ran again: no node run's body began after its output was
  committed (node runs a kill cut short ran again, as they may: they are idempotent);
* a join resumed with one branch finished and one missing waited only for the
  missing one: the finished branch did not run again, the missing one ran in the
  resumed run, the join began after it, and its output holds both branches' outputs
  as committed.

And, alone: a session crashed during a graph run of an app that resumes crashed runs
is resumed by the host and its caller's one call ends with the graph's output (the
soak found that it was not: see the test).

CI runs a short soak; ``ADK_SOAK_SECONDS=60 pytest tests/test_graph_soak_resume.py``
runs the long one."""

from __future__ import annotations

import bisect
import os
import sqlite3
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from test_chaos_soak import shipped_host_config

from adk_actors.chaos import soak
from adk_actors.runtime import Host, HostConfig
from examples.graph_soak_resume._ledger import effect_path, ledger_path
from examples.graph_soak_resume.agent import NAME, NODE_RUNS, ROUNDS
from supervision.testing import running_actor_system, wait_until

SECONDS = float(os.environ.get("ADK_SOAK_SECONDS", "4"))
APP = NAME
ROOT_PATH = f"{NAME}@1"
USER = "graph-resumer"
TARGETS = ("workers", "partitions", "sessions")
INTERVAL = 0.5
ENDED_BY_A_KILL = ("killed", "interrupted")  # a run's status once a kill ended it ("resumed" once resumed)


@dataclass
class _Run:
    """One invocation, as the store and its ledger have it."""

    session: str
    attempts: list[tuple[float, str, str, str | None]] = field(default_factory=list)  # (started, run, status, resumes)
    outputs: dict[str, tuple[float, Any]] = field(default_factory=dict)  # node run -> (committed at, output)
    completed: bool = False
    starts: dict[str, list[float]] = field(default_factory=dict)  # node run -> when its body began, each time

    def attempt_at(self, when: float) -> int:
        """Which attempt (0: the first run, 1: its first resume ...) was running at ``when``."""
        return max(0, bisect.bisect_right([a[0] for a in self.attempts], when) - 1)


def _runs_table(store: Path) -> list[tuple[str, str, str, str | None, float]]:
    """The app's runs as the store recorded them: (session, invocation, run, status, resumes, started)."""
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return db.execute("SELECT session_id, COALESCE(invocation_id, 'e-' || substr(run_id, 5)), run_id, status, "
                          "resumes, started FROM runs WHERE app_name=? AND user_id=?", (APP, USER)).fetchall()
    finally:
        db.close()


def _starts(invocation: str) -> dict[str, list[float]]:
    path = ledger_path(invocation)
    starts: dict[str, list[float]] = defaultdict(list)
    if path.exists():
        for line in path.read_text().splitlines():
            node_run, _pid, when = line.split()
            starts[node_run].append(float(when))
    return starts


def _read_back(sessions: dict[str, list[Any]], rows: list[Any]) -> dict[str, _Run]:
    runs: dict[str, _Run] = {}
    for session, invocation, run_id, status, resumes, started in rows:
        runs.setdefault(invocation, _Run(session)).attempts.append((float(started), run_id, status, resumes))
    for events in sessions.values():
        for event in events:
            info = event.node_info
            if info is None or event.invocation_id not in runs:
                continue
            if ROOT_PATH in (info.output_for or []):
                runs[event.invocation_id].completed = True
            if event.output is not None and info.path and info.path.startswith(f"{ROOT_PATH}/"):
                node_run = info.path.removeprefix(f"{ROOT_PATH}/")
                runs[event.invocation_id].outputs[node_run] = (event.timestamp, event.output)
    for invocation, run in runs.items():
        run.attempts.sort()
        run.starts = _starts(invocation)
    return runs


@pytest.mark.timeout(240 + 4 * SECONDS)  # the soak's own deadlines: faults up to 3x its time, then turns, restore
def test_a_soak_that_resumes_killed_graph_runs_completes_them_without_running_a_finished_node_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The soak passes; then, read back (see the module): every run a kill ended was
    resumed and completed, no finished node run began again, and each join resumed
    with one branch missing waited for that branch only. How many of each the soak
    made is printed; the long form (``ADK_SOAK_SECONDS`` of 30 or more) must have made
    such a join (the short one makes one most times, by chance)."""
    monkeypatch.setenv("ADK_GRAPH_SOAK_DIR", str(tmp_path / "ledgers"))  # (the host's processes inherit it)
    config = shipped_host_config(tmp_path / "data")
    config = replace(config, apps={**config.apps, APP: "examples.graph_soak_resume.agent:app"})
    with running_actor_system(tmp_path / "logs") as system, Host(config, system=system) as host:
        report = soak(host, APP, sessions=4, duration=SECONDS, interval=INTERVAL, targets=TARGETS, seed=23,
                      min_faults=int(SECONDS / INTERVAL), user=USER, resume=True)
        print(report.render())
        runner = host.runner(APP)
        sessions = {s.id: runner.get_session(USER, s.id).events for s in runner.list_sessions(USER)}
    rows = _runs_table(Path(config.store_path))

    # the chaos soak's own verdict
    assert report.host_alive and report.tree_restored
    assert report.lost == 0 and report.hung == 0 and report.untyped_failures == {}
    assert report.next_turn_valid == 4 and report.orphans == 0 and report.nodes_twice == 0
    assert report.acknowledged_events > 0 and sum(report.kills.values()) >= int(SECONDS / INTERVAL)

    runs = _read_back(sessions, rows)
    statuses = Counter(status for _, _, _, status, _, _ in rows)
    resumed = {resumes for _, _, _, _, resumes, _ in rows if resumes}
    interrupted = [run for run in runs.values() if len(run.attempts) > 1 or run.attempts[-1][2] in ENDED_BY_A_KILL]
    print(f"runs by status {dict(statuses)}; {len(runs)} invocations, {len(interrupted)} ended by a kill at "
          f"least once, {len(resumed)} resumes")
    assert interrupted, "no graph run was interrupted: the soak proved nothing about resuming"

    # every run a kill ended was resumed (its status is then "resumed", and a run of the
    # same invocation names it), and its invocation completed
    for invocation, run in runs.items():
        where = f"{run.session} {invocation}"
        for _, run_id, status, _ in run.attempts[:-1]:
            assert status == "resumed" and run_id in resumed, f"{where}: run {run_id} ended {status}: {run.attempts}"
        assert run.attempts[-1][2] == "done", f"{where}: its last run did not complete: {run.attempts}"
        assert run.completed, f"{where}: its graph's output is not committed: {run.attempts}"

    kept = rerun = joins_resumed = 0
    for invocation, run in runs.items():
        where = f"{run.session} {invocation}"
        if run.completed:
            assert set(run.outputs) == set(NODE_RUNS), f"{where}: {sorted(run.outputs)}"
        assert set(run.starts) <= set(NODE_RUNS), f"{where}: unknown node runs began: {sorted(run.starts)}"
        for node_run, (committed, output) in run.outputs.items():
            began = run.starts.get(node_run, [])
            assert began, f"{where}: {node_run}'s output is committed and its body never began"
            # no finished node ran again: every time its body began was before its output was committed
            assert max(began) < committed, (f"{where}: {node_run} began again after its output was committed: "
                                            f"began {began}, committed at {committed}; attempts {run.attempts}")
            if not node_run.startswith("meet@"):  # the join has no effect of its own
                assert effect_path(invocation, node_run).read_text() == output, f"{where}: {node_run}'s effect"
            if run.attempt_at(committed) < len(run.attempts) - 1:
                kept += 1  # finished before a resume, and not run again
        for node_run, began in run.starts.items():
            if len(began) > 1:  # only a kill makes a node run begin again
                rerun += 1
                assert len({run.attempt_at(t) for t in began}) == len(began), (
                    f"{where}: {node_run} began twice in one attempt: {began}; attempts {run.attempts}")
        # a join resumed with one branch finished and one missing waited only for the missing one
        for n in range(1, ROUNDS + 1):
            meet = run.outputs.get(f"meet@{n}")
            branches = {b: run.outputs.get(f"{b}@{n}") for b in ("north", "south")}
            if meet is None or any(v is None for v in branches.values()):
                continue
            assert meet[1] == {b: v[1] for b, v in branches.items() if v is not None}, f"{where}: meet@{n}"
            resumed_in = run.attempt_at(meet[0])
            done_before = [b for b, v in branches.items() if v is not None and run.attempt_at(v[0]) < resumed_in]
            missing = [b for b in branches if b not in done_before]
            if len(done_before) != 1:
                continue
            joins_resumed += 1
            (finished,), (awaited,) = done_before, missing
            # (it may have begun twice before, a kill cutting its first attempt short)
            assert all(run.attempt_at(t) < resumed_in for t in run.starts[f"{finished}@{n}"]), (
                f"{where}: {finished}@{n} ran again for the join: began {run.starts[f'{finished}@{n}']}; "
                f"attempts {run.attempts}")
            awaited_output = branches[awaited]
            assert awaited_output is not None and run.attempt_at(awaited_output[0]) == resumed_in, where
            assert max(run.starts[f"meet@{n}"]) > awaited_output[0], (
                f"{where}: meet@{n} began before {awaited}@{n}'s output was committed")
    print(f"node runs finished before a resume and kept: {kept}; node runs a kill cut short, run again: {rerun}; "
          f"joins resumed with one branch missing: {joins_resumed}")
    assert kept > 0, "no resumed run had a finished node to keep: the soak proved nothing about skipping them"
    if SECONDS >= 30:
        assert joins_resumed > 0, "no join was resumed with a branch missing: the soak proved nothing about joins"
    # last, the soak's whole verdict: besides the above, every run a kill ended that the
    # host did not resume (its caller told no run to follow) was resumed by the soak
    assert report.passed, (report.typed_failures, report.resumed, report.resumed_completed, report.problems)


@pytest.mark.timeout(240)  # its waits: 60 s for the fan-out, 90 s for the run
def test_a_session_crashed_during_a_graph_run_is_resumed_and_its_caller_sees_the_run_complete(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``App(resume_interrupted=5)``: the session is crashed (``crash_session``, as the
    soak's ``sessions`` faults do) while its graph run is in the fan-out (``north@1``
    began). The host resumes the run once its end is stored, and tells its caller the
    id of the run that resumes it: the caller's one ``run`` call ends with the graph's
    output, no error; the store has the run ``resumed`` and its resume ``done``; no
    node run that had finished began again.

    (Before, the caller got ``interrupted`` with no run to follow, the host resumed the
    run only when a later request activated the session, which made the caller's own
    ``Runner.resume`` an ``InvalidRequestError``, and a run waiting behind it was
    resumed instead of it.)"""
    monkeypatch.setenv("ADK_GRAPH_SOAK_DIR", str(tmp_path / "ledgers"))
    config = HostConfig(apps={APP: "examples.graph_soak_resume.agent:app"}, data_dir=str(tmp_path / "data"),
                        partitions=1)
    box: dict[str, Any] = {}
    with running_actor_system(tmp_path / "logs") as system, Host(config, system=system) as host:
        runner = host.runner(APP)
        runner.create_session(USER, "crashed")

        def run() -> None:
            try:
                box["events"] = list(runner.run(USER, "crashed", "go"))
            except Exception as exc:
                box["error"] = exc

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        invocation = wait_until(lambda: next((p.stem for p in (tmp_path / "ledgers").glob("*.ledger")
                                              if "north@1" in p.read_text()), None),
                                timeout=60, message="north@1 never began")
        runner.crash_session(USER, "crashed", "crashed by the test")
        thread.join(90)
        assert not thread.is_alive(), "the caller's run never ended"
        assert "error" not in box, box.get("error")
        events = runner.get_session(USER, "crashed").events
    assert [e.output for e in box["events"] if e.node_info is not None and ROOT_PATH in (
        e.node_info.output_for or [])] == [e.output for e in events if e.node_info is not None and ROOT_PATH in (
            e.node_info.output_for or [])] != []
    rows = [r for r in _runs_table(Path(config.store_path)) if r[1] == invocation]
    assert [status for _, _, _, status, _, _ in sorted(rows, key=lambda r: r[5])] == ["resumed", "done"], rows
    run = _read_back({"crashed": events}, rows)[invocation]
    assert run.completed and set(run.outputs) == set(NODE_RUNS)
    for node_run, (committed, _) in run.outputs.items():
        assert max(run.starts[node_run]) < committed, f"{node_run} began again after its output was committed"
