"""Durable graph workflows (issue 55): a workflow run killed (kill -9 of its run
worker) at a node boundary resumes at the node it was in, on a real host.

The graph (tests/workflow_resume_apps.py) has a fan-out (``left`` and ``right``), a
join (``gather``) and a routed loop back edge (``judge`` -> ``prepare`` on "again"),
run twice round the loop, then ``finish``. Each node run counts its side effect in a
file outside the host once its work is done; a kill point names the node run whose
start waits to be killed, so that every node run before it has committed its events.
What a user sees after resuming: every node run completed exactly once (the counts),
the same final state and the same final output as a run that was never interrupted;
a node that is not safe to run again (the default for function nodes, as for tools)
is run again only on a decision (call id: its node path); ``right``
(``rerun_on_resume=True``) and the join run again without one. The same with the
partition killed instead of the worker, and with ``App(resume_interrupted=2)`` (the
host resumes on its own; the caller's one call ends as if nothing happened).

In process, a graph with an LLM agent node (a tool call, then an answer) and a nested
workflow is cut after each of its committed events and resumed: the model is asked only
for the steps not committed; ``result`` and ``end`` decisions; a graph that lost a node
on record refuses to resume.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import workflow_resume_apps
from conftest import session_workers, wait_workers_gone

from adk_actors import Content, LlmAgent
from adk_actors._exceptions import RunFailedError
from adk_actors.engine import (
    CallDecision,
    EndedByDecision,
    NeedsDecision,
    SessionView,
    resume_invocation,
    run_invocation,
)
from adk_actors.models import ScriptedModel, call
from adk_actors.runtime import Host, HostConfig
from adk_actors.tools import FunctionTool
from adk_actors.workflow import START, JoinNode, Workflow, WorkflowResumeError
from supervision import SupervisorClient
from supervision.testing import running_actor_system, wait_until

RUNS = ["prepare@1", "left@1", "right@1", "gather@1", "judge@1",
        "prepare@2", "left@2", "right@2", "gather@2", "judge@2", "finish@1"]
SIBLING = {"left": "right", "right": "left"}
SAFE = {"right", "gather"}  # rerun_on_resume=True, and a join


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    base = tmp_path_factory.mktemp("resume")
    config = HostConfig(apps=workflow_resume_apps.APPS, data_dir=str(base / "data"), partitions=1)
    with running_actor_system(base / "logs") as system, Host(config, system=system) as running:
        yield running


def _session(host: Host, tmp_path: Path, name: str) -> tuple[Any, Path]:
    work = tmp_path / name
    work.mkdir()
    runner = host.runner("loop")
    runner.create_session("ann", name, state={"work_dir": str(work)})
    return runner, work


def _final_output(events: list[Any]) -> Any:
    return [e.output for e in events if e.node_info is not None and "loop_app@1" in (e.node_info.output_for or [])]


def _done(work: Path) -> Counter[str]:
    return Counter((work / "done.txt").read_text().split())


@pytest.fixture(scope="module")
def uninterrupted(host: Host, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The run nobody interrupts: its final state (without its work dir), output and counts."""
    runner, work = _session(host, tmp_path_factory.mktemp("plain"), "plain")
    events = list(runner.run("ann", "plain", "go"))
    state = runner.get_state("ann", "plain")
    state.pop("work_dir")
    return {"state": state, "output": _final_output(events), "done": _done(work)}


def _stored_output(runner: Any, session: str, node_run: str) -> bool:
    path = f"loop_app@1/{node_run}"
    return any(e.node_info is not None and e.node_info.path == path and e.output is not None
               for e in runner.get_session("ann", session).events)


@pytest.mark.parametrize("kill_at", RUNS)
def test_a_graph_run_killed_at_a_node_boundary_resumes_at_that_node(
        host: Host, uninterrupted: dict[str, Any], tmp_path: Path, kill_at: str) -> None:
    """kill -9 of the run worker when node run ``kill_at`` starts (after the nodes
    before it committed their events), then resume: the killed node's own run is on
    record as not finished; if it is not safe to run again the resumed run stops for a
    decision naming exactly that node path (and nothing else ran), and a ``rerun``
    decision resumes it; the nodes that had finished do not run again; the final
    output and state are those of the uninterrupted run, and each node run completed
    exactly once."""
    session = "s-" + kill_at.replace("@", "-")
    runner, work = _session(host, tmp_path, session)
    (work / "arm").write_text(kill_at)
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["events"] = list(runner.run("ann", session, "go", run_id=f"run-{session}"))
        except Exception as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    pid = int(wait_until(lambda: (work / "pid").exists() and (work / "pid").read_text().strip(), timeout=30,
                         message=f"{kill_at} never started"))
    name, run_no = kill_at.split("@")
    if name in SIBLING:  # the other branch of the fan-out finishes and commits first
        wait_until(lambda: _stored_output(runner, session, f"{SIBLING[name]}@{run_no}"), timeout=20)
    before = _done(work) if (work / "done.txt").exists() else Counter()
    workers = session_workers(host, "loop", "ann", session)
    assert pid in workers
    os.kill(pid, signal.SIGKILL)
    thread.join(20)
    assert not thread.is_alive() and isinstance(box.get("error"), RunFailedError)
    assert box["error"].reason == "killed"
    wait_workers_gone(host, "loop", "ann", session, [pid])
    (work / "arm").unlink()
    assert kill_at not in before and all(n == 1 for n in before.values())

    path = f"loop_app@1/{kill_at}"
    resumed_from = f"run-{session}"
    if name not in SAFE:
        with pytest.raises(RunFailedError) as stopped:
            list(runner.resume("ann", session, resumed_from, new_run_id=f"again-{session}"))
        assert stopped.value.reason == "needs_decision"
        assert [(c["call_id"], c["name"], c["agent"]) for c in stopped.value.pending_calls] == [
            (path, name, "loop_app")]
        assert _done(work) == before if before else not (work / "done.txt").exists()
        resumed_from = f"again-{session}"
        events = list(runner.resume("ann", session, resumed_from, decisions={path: CallDecision("rerun")}))
    else:
        events = list(runner.resume("ann", session, resumed_from))

    assert events and all(e.invocation_id == events[0].invocation_id for e in events)
    made = [e.node_info.path.removeprefix("loop_app@1/") for e in events if e.node_info is not None]
    assert kill_at in made and not set(made) & set(before), "a finished node ran again"
    assert _final_output(events) == uninterrupted["output"]
    state = runner.get_state("ann", session)
    state.pop("work_dir")
    assert state == uninterrupted["state"]
    assert _done(work) == uninterrupted["done"] == Counter(RUNS)


# -- in process: cut after every committed event, with an LLM agent node ---------------

DONE: Counter[str] = Counter()  # node runs completed (function nodes), and tool calls made


def _mark(ctx: Any, name: str) -> str:
    run = ctx.node_path.removeprefix("wf@1/")  # step_in@2, inner@1/polish@1
    DONE[run] += 1
    return run


def step_in(node_input: Any, ctx: Any, rounds: int = 0) -> str:
    _mark(ctx, "step_in")
    ctx.state["rounds"] = rounds + 1
    text = node_input if isinstance(node_input, str) else "".join(p.text or "" for p in node_input.parts)
    return f"{text}#{rounds + 1}"


def tally(node_input: str, ctx: Any, log: list[str] | None = None) -> str:
    ctx.state["log"] = [*(log or []), _mark(ctx, "tally")]
    return f"T({node_input})"


def polish(node_input: str, ctx: Any) -> str:
    _mark(ctx, "polish")
    return f"P({node_input})"


def weigh(node_input: dict[str, Any], ctx: Any, rounds: int) -> str:
    _mark(ctx, "weigh")
    ctx.route = "again" if rounds < 2 else "done"
    return " & ".join(f"{k}={node_input[k]}" for k in sorted(node_input))


def close(node_input: str, ctx: Any) -> str:
    ctx.state["closed"] = _mark(ctx, "close")
    return f"closed: {node_input}"


def lookup(topic: str) -> dict[str, Any]:
    """Looks a topic up."""
    DONE[f"lookup:{topic}"] += 1
    return {"found": topic.upper()}


def _model_turn(request: Any) -> Any:
    """The scout's model: a lookup of its input, then an answer with what it found."""
    last = request.contents[-1]
    responses = [p.function_response for p in last.parts if p.function_response is not None]
    if responses:
        return f"scouted {responses[0].response['found']}"
    return call("lookup", topic="".join(p.text or "" for p in last.parts))


def _in_process_graph() -> tuple[Any, Any]:
    model = ScriptedModel(fallback=_model_turn)
    scout = LlmAgent(name="scout", model=model, instruction="Scout the topic.",
                     tools=[FunctionTool(lookup, idempotent=True)])
    inner = Workflow(name="inner", edges=[(START, polish)])
    graph = Workflow(name="wf", edges=[
        (START, step_in, (tally, scout, inner), JoinNode(name="meet"), weigh),
        (weigh, {"again": step_in, "done": close}),
    ])
    return graph, model


def test_a_graph_with_an_agent_node_cut_after_any_committed_event_resumes_to_the_same_end() -> None:
    """The graph runs once uninterrupted (in process); then, for every k, a session
    holding only its first k committed events is resumed: function nodes that had not
    finished ask for a decision (``rerun`` given), the agent node replays its committed
    LLM steps and asks the model only for the others; in the end the output and state
    are the uninterrupted run's, no node run that had finished runs again, and every
    function node run not finished before the cut runs exactly once."""
    graph, model = _in_process_graph()

    async def run(session: SessionView) -> list[Any]:
        return [e async for e in run_invocation(graph, session, Content.user("go"), invocation_id="e-1")]

    async def resume(session: SessionView, decisions: dict[str, CallDecision]) -> list[Any]:
        return [e async for e in resume_invocation(graph, session, invocation_id="e-1", decisions=decisions)]

    DONE.clear()
    full_session = SessionView()
    full = [e for e in asyncio.run(run(full_session)) if not e.partial]
    expected_done = Counter(DONE)
    assert {r: n for r, n in expected_done.items() if "@" in r} == {
        "step_in@1": 1, "tally@1": 1, "weigh@1": 1, "step_in@2": 1, "tally@2": 1, "weigh@2": 1, "close@1": 1,
        "inner@1/polish@1": 1, "inner@2/polish@1": 1}
    assert sum(n for r, n in expected_done.items() if r.startswith("lookup:")) == 2
    expected_output = [e.output for e in full if "wf@1" in ((e.node_info and e.node_info.output_for) or [])]
    second = "inner=P(go#1) & scout=scouted GO#1 & tally=T(go#1)#2"
    assert expected_output == [f"closed: inner=P({second}) & scout=scouted {second.upper()} & tally=T({second})"]
    model_steps = sum(1 for e in full if e.author == "scout" and e.content is not None and e.content.role == "model")
    asked_in_full = len(model.requests)
    assert model_steps == asked_in_full == 4

    for k in range(1, len(full)):
        session = SessionView()
        for event in full[:k]:
            session.commit(event)
        committed = full[1:k]
        DONE.clear()
        asked = len(model.requests)
        decisions: dict[str, CallDecision] = {}
        for _ in range(6):
            try:
                asyncio.run(resume(session, decisions))
                break
            except NeedsDecision as stop:
                for pending in stop.calls:
                    assert pending.call_id.startswith("wf@1/") and pending.call_id not in decisions
                    decisions[pending.call_id] = CallDecision("rerun")
        else:
            pytest.fail(f"cut {k}: the resumed run kept stopping for decisions")
        events = [e for e in session.events if not e.partial and e.invocation_id == "e-1"]
        output = [e.output for e in events if "wf@1" in ((e.node_info and e.node_info.output_for) or [])]
        assert output == expected_output, f"cut {k}"
        assert dict(session.state) == dict(full_session.state), f"cut {k}"
        recorded = {e.node_info.path.removeprefix("wf@1/") for e in committed
                    if e.node_info is not None and e.output is not None and e.author in ("wf", "inner")}
        assert not recorded & set(DONE), f"cut {k}: a finished node ran again"
        assert all(n == 1 for n in DONE.values()), f"cut {k}: {DONE}"
        assert set(DONE) | recorded >= {r for r in expected_done if "@" in r}, f"cut {k}"
        committed_steps = sum(1 for e in committed if e.author == "scout" and e.content is not None
                              and e.content.role == "model")
        assert len(model.requests) - asked == model_steps - committed_steps, f"cut {k}: model asked again"


def _cut_at(events: list[Any], path: str) -> Any:
    """A session holding ``events`` up to and with the first event of node run ``path``
    (its start and output), as a run killed right after that commit left it."""
    session = SessionView()
    for event in events:
        session.commit(event)
        if event.node_info is not None and event.node_info.path == path:
            break
    return session


def test_a_function_node_left_unfinished_is_decided_as_a_tool_call_result_or_end() -> None:
    """Killed after ``step_in@1``'s output was committed: ``tally@1`` may have run. A
    ``result`` decision for its node path is its output, as if it had returned it (it
    does not run; the join gets that output); an ``end`` decision ends the run with
    ``EndedByDecision`` and runs nothing."""
    graph, _ = _in_process_graph()

    async def run(session: Any) -> list[Any]:
        return [e async for e in run_invocation(graph, session, Content.user("go"), invocation_id="e-1")]

    async def resume(session: Any, decisions: dict[str, CallDecision]) -> list[Any]:
        return [e async for e in resume_invocation(graph, session, invocation_id="e-1", decisions=decisions)]

    full = [e for e in asyncio.run(run(SessionView())) if not e.partial]
    DONE.clear()
    with pytest.raises(EndedByDecision):
        asyncio.run(resume(_cut_at(full, "wf@1/step_in@1"), {"wf@1/tally@1": CallDecision("end")}))
    assert not DONE

    session = _cut_at(full, "wf@1/step_in@1")
    asyncio.run(resume(session, {"wf@1/tally@1": CallDecision("result", {"told": "by a human"}),
                                 "wf@1/inner@1/polish@1": CallDecision("rerun"),
                                 "wf@1/tally@2": CallDecision("rerun")}))
    assert "tally@1" not in DONE and DONE["tally@2"] == 1
    meets = [e.output for e in session.events if e.node_info is not None and e.node_info.path == "wf@1/meet@1"]
    assert meets == [{"inner": "P(go#1)", "scout": "scouted GO#1", "tally": {"told": "by a human"}}]


def test_a_graph_whose_committed_nodes_it_no_longer_has_refuses_to_resume() -> None:
    """The app changed between the crash and the resume (a node renamed): the resumed
    run fails with WorkflowResumeError naming the missing node, and runs nothing."""
    graph, _ = _in_process_graph()

    async def run(session: Any) -> list[Any]:
        return [e async for e in run_invocation(graph, session, Content.user("go"), invocation_id="e-1")]

    full = [e for e in asyncio.run(run(SessionView())) if not e.partial]
    changed = Workflow(name="wf", edges=[(START, tally)])

    async def resume(session: Any) -> list[Any]:
        return [e async for e in resume_invocation(changed, session, invocation_id="e-1")]

    DONE.clear()
    with pytest.raises(WorkflowResumeError, match=r"\['step_in'\]"):
        asyncio.run(resume(_cut_at(full, "wf@1/step_in@1")))
    assert not DONE


@pytest.mark.parametrize("kill_at", ["left@1", "gather@1", "prepare@2", "finish@1"])
def test_an_app_that_resumes_on_its_own_finishes_a_killed_graph_run_in_the_same_call(
        host: Host, uninterrupted: dict[str, Any], tmp_path: Path, kill_at: str) -> None:
    """``App(resume_interrupted=2)`` whose nodes are all safe to run again
    (``rerun_on_resume=True``): kill -9 of the run worker when ``kill_at`` starts; the
    host resumes the run on its own and the caller's one ``run`` call ends with the
    uninterrupted run's output, state and side effects (each node run completed once)."""
    session = "auto-" + kill_at.replace("@", "-")
    work = tmp_path / session
    work.mkdir()
    runner = host.runner("resuming")
    runner.create_session("ann", session, state={"work_dir": str(work)})
    (work / "arm").write_text(kill_at)
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["events"] = list(runner.run("ann", session, "go"))
        except Exception as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    pid = int(wait_until(lambda: (work / "pid").exists() and (work / "pid").read_text().strip(), timeout=30,
                         message=f"{kill_at} never started"))
    name, run_no = kill_at.split("@")
    if name in SIBLING:
        wait_until(lambda: _stored_output(runner, session, f"{SIBLING[name]}@{run_no}"), timeout=20)
    assert pid in session_workers(host, "resuming", "ann", session)
    os.kill(pid, signal.SIGKILL)
    thread.join(60)
    assert not thread.is_alive() and "error" not in box, box.get("error")
    assert _final_output(box["events"]) == uninterrupted["output"]
    state = runner.get_state("ann", session)
    state.pop("work_dir")
    assert state == uninterrupted["state"]
    assert _done(work) == uninterrupted["done"] == Counter(RUNS)


@pytest.mark.parametrize("kill_at", ["right@2", "judge@1"])
def test_a_graph_run_whose_partition_was_killed_resumes_at_its_node(
        host: Host, uninterrupted: dict[str, Any], tmp_path: Path, kill_at: str) -> None:
    """kill -9 of the session's partition (not of its worker) when node run
    ``kill_at`` starts: the run ends ``interrupted``; once the partition is back,
    ``Runner.resume`` goes on at that node (a decision for ``judge``, which is not
    safe to run again; none for ``right``) and ends as the uninterrupted run did."""
    session = "p-" + kill_at.replace("@", "-")
    runner, work = _session(host, tmp_path, session)
    (work / "arm").write_text(kill_at)
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["events"] = list(runner.run("ann", session, "go", run_id=f"run-{session}"))
        except Exception as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    wait_until(lambda: (work / "pid").exists() and (work / "pid").read_text().strip(), timeout=30)
    name, run_no = kill_at.split("@")
    if name in SIBLING:
        wait_until(lambda: _stored_output(runner, session, f"{SIBLING[name]}@{run_no}"), timeout=20)
    sessions = SupervisorClient(host.system, host.root.child("sessions").address)  # type: ignore[union-attr]
    owner = next(i for i in sessions.which_children() if i.address == host.partition_for("loop", "ann", session))
    assert owner.pid is not None
    os.kill(owner.pid, signal.SIGKILL)
    thread.join(30)
    assert not thread.is_alive() and isinstance(box.get("error"), RunFailedError)
    assert box["error"].reason in ("interrupted", "killed")
    wait_until(lambda: sessions.child(owner.id).status == "running" and sessions.child(owner.id).pid != owner.pid,
               timeout=20)
    path = f"loop_app@1/{kill_at}"
    decisions = None if name in SAFE else {path: CallDecision("rerun")}
    if decisions is not None:
        with pytest.raises(RunFailedError) as stopped:
            list(runner.resume("ann", session, f"run-{session}", new_run_id=f"again-{session}"))
        assert [c["call_id"] for c in stopped.value.pending_calls] == [path]
        events = list(runner.resume("ann", session, f"again-{session}", decisions=decisions))
    else:
        events = list(runner.resume("ann", session, f"run-{session}"))
    assert _final_output(events) == uninterrupted["output"]
    state = runner.get_state("ann", session)
    state.pop("work_dir")
    assert state == uninterrupted["state"]
    assert _done(work) == uninterrupted["done"] == Counter(RUNS)
