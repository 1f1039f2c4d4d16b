"""``chaos soak`` with a graph workflow app (issue 55): examples/graph_soak (a fan-out
with one branch in a process of the run's pool, a join, side-effecting function nodes
counted outside the host, a loop back edge) driven while actors of every kind are
killed: nothing acknowledged is lost, no caller hangs, and every side-effecting node
run completed exactly once in each run that completed.

CI runs a short soak; ``ADK_SOAK_SECONDS=60 pytest tests/test_graph_soak.py`` runs the
long one."""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import pytest
from test_chaos_soak import shipped_host_config

from adk_actors.chaos import TARGET_KINDS, soak
from adk_actors.runtime import Host
from examples.graph_soak.agent import NODE_RUNS, ledger_path
from supervision.testing import running_actor_system

SECONDS = float(os.environ.get("ADK_SOAK_SECONDS", "4"))
APP = "graph_soak"
ROOT_PATH = "graph_soak@1"
USER = "graph-soaker"


def _ledger(path: Path) -> dict[str, Counter[str]]:
    """The node runs a session's ledger recorded, by run (invocation id)."""
    runs: dict[str, Counter[str]] = defaultdict(Counter)
    for line in path.read_text().splitlines():
        invocation, node_run = line.split()
        runs[invocation][node_run] += 1
    return runs


# every kind of actor; and the actors nearest a graph run (its session, the run, its
# worker, its partition), less often, so that runs complete between the faults too
@pytest.mark.parametrize(("targets", "interval"), [(TARGET_KINDS, 0.2), (("sessions", "runs", "workers", "partitions"), 0.5)],
                         ids=["every-kind", "near-the-runs"])
def test_a_soak_of_a_graph_app_loses_nothing_and_runs_each_node_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, targets: tuple[str, ...], interval: float) -> None:
    """The soak passes (LOST 0, HUNG 0, the tree restored, every session's next turn
    valid, no node run's output committed twice); then, read back from the store and
    the ledgers: each run that completed (its graph's output committed) recorded every
    side-effecting node run exactly once; a run a fault ended recorded none twice and
    none whose output is on record without its side effect; every recorded node
    run belongs to a run the store has (a graph's first node starts once the user's
    message is stored); and every turn that ended well is a run that completed."""
    monkeypatch.setenv("ADK_GRAPH_SOAK_DIR", str(tmp_path / "ledgers"))  # (the host's processes inherit it)
    config = shipped_host_config(tmp_path / "data")
    config = replace(config, apps={**config.apps, APP: "examples.graph_soak.agent:root_agent"})
    with running_actor_system(tmp_path / "logs") as system, Host(config, system=system) as host:
        report = soak(host, APP, sessions=4, duration=SECONDS, interval=interval, targets=targets, seed=17,
                      min_faults=int(SECONDS / interval), user=USER)
        print(report.render())
        runner = host.runner(APP)
        sessions = {s.id: runner.get_session(USER, s.id).events for s in runner.list_sessions(USER)}
    assert report.host_alive and report.tree_restored
    assert report.lost == 0 and report.hung == 0 and report.untyped_failures == {}
    assert report.next_turn_valid == 4 and report.orphans == 0 and report.nodes_twice == 0
    assert report.acknowledged_events > 0 and sum(report.kills.values()) >= int(SECONDS / interval)
    assert report.passed, report.problems

    assert len(sessions) == 4
    side_effecting = {run.split("@")[0] for run in NODE_RUNS}
    completed_runs = 0
    for session_id, events in sessions.items():
        ledger = _ledger(ledger_path(USER, session_id))
        stored_runs = {e.invocation_id for e in events}
        completed = {e.invocation_id for e in events
                     if e.node_info is not None and ROOT_PATH in (e.node_info.output_for or [])}
        outputs: dict[str, set[str]] = defaultdict(set)
        for e in events:
            if e.node_info is not None and e.output is not None:
                node_run = e.node_info.path.removeprefix(f"{ROOT_PATH}/")
                if node_run.split("@")[0] in side_effecting:
                    outputs[e.invocation_id].add(node_run)
        assert set(ledger) <= stored_runs, (f"{session_id}: a node ran for a run the store does not have: "
                                            f"{ {r: dict(ledger[r]) for r in set(ledger) - stored_runs} }; "
                                            f"stored: {[(e.invocation_id, e.author) for e in events]}")
        assert completed <= set(ledger), f"{session_id}: a run completed without its side effects"
        for run in completed:
            assert ledger[run] == Counter(NODE_RUNS), f"{session_id} {run}: {ledger[run]}"
        for run, recorded in ledger.items():
            assert max(recorded.values()) == 1, f"{session_id} {run}: a node ran twice: {recorded}"
            assert outputs[run] <= set(recorded), f"{session_id} {run}: an output on record without its side effect"
        completed_runs += len(completed)
    # every turn that ended well completed its graph; a few more may have (a fault hit
    # between the graph's last commit and the caller's answer: that turn failed, typed)
    assert report.turns_ok + report.next_turn_valid <= completed_runs <= report.turns + report.sessions
