"""google-adk 2.x's ``node`` decorator and parallel workers (issue 55, "fan-out really
parallel"), and our extension: a function node's calls in OS processes.

Side by side with google-adk 2.13 (the same programs, only their imports rewritten,
tests/test_workflows.py's harness): ``@node``, ``@node()``, ``node(fn, name=...)``,
``node(a_node, ...)``, and ``node(fn, parallel_worker=True, max_parallel_workers=N)``
over lists, a single item, an empty list and the user's message; in a loop (item
runs numbered under each worker run), on a fan-out branch (items on sub-branches of
it) and failing on an item. What is compared: each event as a google-adk user reads
it (author, ``node_info.path``, ``output_for``, output, branch, state delta, error),
the final state and the error a run ends with; and the configuration errors.

Ours only (``processes=True``, tests/workflow_parallel_apps.py): the items' results
equal those computed in threads, computed in other processes (their pids are not the
run's), which are gone once the run ends; a cancelled run, and a run whose run worker
is killed with kill -9 on a real host, leave no item process behind (checked by pid);
a function that cannot cross to a process is refused with a typed error naming its
node; an item's exception comes back as itself.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import google_adk_harness as harness
import pytest
import workflow_parallel_apps as apps
from conftest import session_workers
from test_workflows import assert_same, both

from adk_actors import Content
from adk_actors._exceptions import RunFailedError
from adk_actors.engine import (
    CallDecision,
    NeedsDecision,
    SessionView,
    resume_invocation,
    run_invocation,
)
from adk_actors.runtime import Host, HostConfig
from adk_actors.testing import StubServer
from adk_actors.workflow import (
    FunctionNode,
    Node,
    NodeTimeoutError,
    UnpicklableNodeError,
    Workflow,
    WorkflowConfigurationError,
    node,
)
from adk_actors.workflow._views import node_info
from supervision.lowlevel import children_of, proc_stat, process_alive
from supervision.testing import running_actor_system, wait_until

pytest.importorskip("google.adk.workflow")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

# -- side by side with google-adk ---------------------------------------------------------

PARALLEL = '''
from google.adk.workflow import node

def split(node_input: str):
    return node_input.split()

@node(parallel_worker=True, max_parallel_workers=2)
def shout(node_input: str, ctx):
    ctx.state[f"seen_{node_input}"] = len(node_input)
    return node_input.upper()

def total(node_input: list):
    return " ".join(node_input)

root = Workflow(name="words", edges=[(START, split, shout, total)])
'''


def test_a_parallel_worker_runs_its_node_per_item_and_outputs_the_list_in_order_as_google_adk(
        gemini: StubServer) -> None:
    """``@node(parallel_worker=True, max_parallel_workers=2)``: one child run per item
    (``words@1/shout@1/shout@<i>``, on branch ``shout@<i>``), each with its state delta;
    the worker's output is the list of their outputs in input order, over two turns."""
    theirs, ours = both(PARALLEL, ["a bb ccc dddd", "x"], gemini)
    assert_same(theirs, ours, ordered=False)
    paths = [row["path"] for row in ours["events"]]
    branches = {row["path"]: row["branch"] for row in ours["events"]}
    assert [branches[f"words@1/shout@1/shout@{i}"] for i in range(1, 5)] == [f"shout@{i}" for i in range(1, 5)]
    assert branches["words@1/shout@1"] is None
    assert paths.index("words@1/shout@1") > max(paths.index(f"words@1/shout@1/shout@{i}") for i in range(1, 5))
    outputs = [row["output"] for row in ours["events"] if row["path"] == "words@1/shout@1"]
    assert outputs == [["A", "BB", "CCC", "DDDD"], ["X"]]
    assert ours["state"] == {"seen_a": 1, "seen_bb": 2, "seen_ccc": 3, "seen_dddd": 4, "seen_x": 1}


SHAPES = '''
from google.adk.workflow import node

@node
def sq(node_input: int):
    return node_input * node_input

@node(parallel_worker=True)
def sq_each(node_input: int):
    return node_input * node_input

def again(node_input: list, ctx):
    rounds = ctx.state.get("rounds", 0) + 1
    ctx.state["rounds"] = rounds
    return Event(output=[x + 1 for x in node_input], route="again" if rounds < 2 else DEFAULT_ROUTE)

@node()
def done(node_input):
    return node_input

def fan(node_input):
    return [1, 2, 3]

@node(parallel_worker=True)
def inc(node_input: int):
    return node_input + 1

def other(node_input):
    return "o"

@node(name="echo", parallel_worker=True)
def echo_each(node_input):
    return node_input

renamed = node(FunctionNode(func=other), name="renamed", rerun_on_resume=True)
assert renamed.name == "renamed" and renamed.rerun_on_resume
assert sq_each.rerun_on_resume and sq_each.max_parallel_workers is None and sq.rerun_on_resume is False

looping = Workflow(name="looping", edges=[(START, sq_each, again, {"again": sq_each, DEFAULT_ROUTE: done})])
branching = Workflow(name="branching", edges=[(START, fan, (inc, renamed)), ((inc, renamed), JoinNode(name="meet"))])
echoing = Workflow(name="echoing", edges=[(START, echo_each)])
'''

SHAPES_MAIN = '''
async def main(cases):
    seen, states, errors = [], [], []
    for index, (graph, text) in enumerate(cases):
        runner = InMemoryRunner(agent=globals()[graph], app_name="shapes")
        session = await runner.session_service.create_session(app_name="shapes", user_id="ann")
        message = types.Content(role="user", parts=[types.Part(text=text)])
        try:
            async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
                seen.append(event)
        except Exception as exc:
            errors.append(type(exc).__name__)
        session = await runner.session_service.get_session(app_name="shapes", user_id="ann", session_id=session.id)
        states.append(dict(session.state))
    return seen, states, errors
'''

CASES = [("looping", "[2, 3]"), ("branching", "go"), ("echoing", "[]"), ("echoing", "7"),
         ("echoing", '["a", 1]'), ("echoing", '{"a": 1}'), ("echoing", "hello")]


def _both_programs(source: str, server: StubServer) -> tuple[dict[str, Any], dict[str, Any]]:
    from google_adk_harness import rewritten, run_program
    from test_workflows import HEAD, rows

    program = HEAD + source + SHAPES_MAIN
    runs = []
    for text in (program, rewritten(program)):
        _, (events, states, errors) = run_program(text, [], server, CASES)
        runs.append({"events": rows(events), "states": json.loads(json.dumps(states, default=str)),
                     "errors": errors})
    assert "google" not in rewritten(program)
    return runs[0], runs[1]


def test_node_forms_single_items_empty_lists_loops_and_branches_as_google_adk(gemini: StubServer) -> None:
    """``@node``, ``@node()``, ``@node(name=...)``, ``node(a_node, name=,
    rerun_on_resume=)``; a parallel worker run twice in a loop (its items numbered under
    each run: ``sq_each@2/sq_each@1``), on a branch of a fan-out (items on
    ``inc@1.inc@<i>``) joined with another, fed an empty list (``[]`` at once), a
    single item (a list of one), and the user's message as JSON or as text."""
    theirs, ours = _both_programs(SHAPES, gemini)
    assert theirs["events"] and not theirs["errors"]
    key = lambda row: json.dumps(row, sort_keys=True)  # noqa: E731
    assert sorted(ours["events"], key=key) == sorted(theirs["events"], key=key)
    assert ours["states"] == theirs["states"]
    assert ours["errors"] == theirs["errors"]
    paths = {row["path"]: row for row in ours["events"]}
    assert paths["looping@1/sq_each@2/sq_each@2"]["output"] == 100
    assert paths["branching@1/inc@1/inc@3"]["branch"] == "inc@1.inc@3"
    assert paths["branching@1/meet@1"]["output"] == {"inc": [2, 3, 4], "renamed": "o"}


FAILING = '''
from google.adk.workflow import node

@node(parallel_worker=True, max_parallel_workers=1)
def check(node_input: int, ctx):
    ctx.state[f"checked_{node_input}"] = True
    if node_input == 13:
        raise ValueError(f"unlucky {node_input}")
    return node_input

def after(node_input):
    return "never"

root = Workflow(name="checks", edges=[(START, check, after)])
'''


def test_an_item_that_fails_fails_the_worker_with_its_error_event_only_as_google_adk(gemini: StubServer) -> None:
    """The third of four items raises: its error event (at its own path, with the state
    it wrote) and no error event of the worker's; the items after it never start; the
    run fails with the item's exception; the state holds what the items committed."""
    theirs, ours = both(FAILING, ["[2, 5, 13, 7]"], gemini)
    assert_same(theirs, ours)
    assert [row["path"] for row in ours["events"]] == [f"checks@1/check@1/check@{i}" for i in (1, 2, 3)]
    assert ours["events"][-1]["error_code"] == "ValueError" and ours["error"] == "ValueError"
    assert ours["state"] == {"checked_2": True, "checked_5": True, "checked_13": True}


SUBCLASS = '''
from google.adk.workflow import Node

class Double(Node):
    async def run_node_impl(self, *, ctx, node_input):
        ctx.state[f"doubled_{node_input}"] = True
        yield node_input * 2

class Plain(Node):
    async def run_node_impl(self, *, ctx, node_input):
        yield sum(node_input)

root = Workflow(name="nodes", edges=[(START, Double(name="double", parallel_worker=True, max_parallel_workers=2),
                                      Plain(name="plain"))])
'''


def test_a_node_subclass_as_a_parallel_worker_as_google_adk(gemini: StubServer) -> None:
    """A ``Node`` subclass with ``parallel_worker=True``: its ``run_node_impl`` per item
    (``nodes@1/double@1/double@<i>``), the list of outputs to the next node, which is a
    plain ``Node``."""
    theirs, ours = both(SUBCLASS, ["[1, 2, 3]"], gemini)
    assert_same(theirs, ours, ordered=False)
    assert ours["events"][-1]["output"] == 12 and ours["state"] == {
        "doubled_1": True, "doubled_2": True, "doubled_3": True}


RETRIED = '''
from google.adk.workflow import node

ATTEMPTS = {}

@node(parallel_worker=True, max_parallel_workers=1,
      retry_config=RetryConfig(max_attempts=2, initial_delay=0.01, jitter=0.0))
def flaky(node_input: int):
    ATTEMPTS[node_input] = ATTEMPTS.get(node_input, 0) + 1
    if node_input % 2 == 0 and ATTEMPTS[node_input] == 1:
        raise ConnectionError(f"item {node_input} dropped")
    return node_input * 3

root = Workflow(name="retried", edges=[(START, flaky)])
'''


def test_an_items_retry_config_retries_that_item_as_google_adk(gemini: StubServer) -> None:
    """``node(fn, parallel_worker=True, retry_config=...)``: the retry settings are the
    items' (as google-adk puts them on the wrapped node): an item that fails once makes
    its error event and is tried again under the same path; the worker's output is
    whole."""
    theirs, ours = both(RETRIED, ["[1, 2, 3, 4]"], gemini)
    assert_same(theirs, ours)
    assert [row["error_code"] for row in ours["events"] if row["error_code"]] == ["ConnectionError"] * 2
    assert ours["events"][-1]["output"] == [3, 6, 9, 12]


def test_node_configuration_errors_as_google_adk() -> None:
    """``max_parallel_workers`` without ``parallel_worker=True``, or below 1: refused at
    once, with google-adk's class name, messages and a ValueError on both sides; on a
    ``Node``, as pydantic's ValidationError on both sides."""
    from google.adk.workflow import node as their_node

    def f(node_input: Any) -> Any:
        return node_input

    for kwargs in ({"max_parallel_workers": 2}, {"parallel_worker": True, "max_parallel_workers": 0}):
        with pytest.raises(ValueError) as theirs:
            their_node(f, **kwargs)
        with pytest.raises(WorkflowConfigurationError) as ours:
            node(f, **kwargs)
        assert type(theirs.value).__name__ == type(ours.value).__name__ == "WorkflowConfigurationError"
        assert str(ours.value) == str(theirs.value)
        assert isinstance(ours.value, ValueError)
    from google.adk.workflow import Node as TheirNode

    with pytest.raises(ValueError) as their_class:
        TheirNode(name="n", max_parallel_workers=2)
    with pytest.raises(ValueError) as our_class:
        Node(name="n", max_parallel_workers=2)
    assert type(our_class.value).__name__ == type(their_class.value).__name__  # pydantic's ValidationError
    assert "max_parallel_workers can only be set when parallel_worker is True." in str(our_class.value)
    assert "max_parallel_workers can only be set when parallel_worker is True." in str(their_class.value)


def test_a_parallel_worker_in_the_graph_views_as_google_adk() -> None:
    """adk-web's graph views describe a parallel worker as google-adk's
    ``build_graph`` does: a node of the wrapped node's name, ``rerun_on_resume`` True,
    no description, its ``max_parallel_workers`` when set."""
    from google.adk.cli.utils.graph_serialization import serialize_node
    from google.adk.workflow import node as their_node

    def f(node_input: Any) -> Any:
        """Doc of f."""
        return node_input

    for kwargs in ({}, {"max_parallel_workers": 3}, {"timeout": 2.0}):
        assert node_info(node(f, parallel_worker=True, **kwargs)) == serialize_node(
            their_node(f, parallel_worker=True, **kwargs))
    assert node_info(node(f, name="g")) == serialize_node(their_node(f, name="g"))


# -- durable: resumed, a worker's items that gave their output do not run again -------------


def test_a_parallel_worker_resumed_after_any_committed_event_runs_only_the_items_not_finished() -> None:
    """The graph runs once; then, for every k, a session holding only its first k
    committed events is resumed (``split``, not safe to run again, decided ``rerun``
    when it had not finished): the final output and state are the uninterrupted run's,
    an item whose output was committed before the cut is not run again, and every
    other item runs exactly once (the worker runs again on resume, as google-adk's:
    ``rerun_on_resume=True``)."""
    async def run(session: SessionView) -> list[Any]:
        return [e async for e in run_invocation(apps.counting, session, Content.user("1 2 3 4 5"),
                                                invocation_id="e-1")]

    async def resume(session: SessionView, decisions: dict[str, CallDecision]) -> list[Any]:
        return [e async for e in resume_invocation(apps.counting, session, invocation_id="e-1",
                                                   decisions=decisions)]

    apps.CALLS.clear()
    full_session = SessionView()
    full = [e for e in asyncio.run(run(full_session)) if not e.partial]
    assert sorted(apps.CALLS) == [1, 2, 3, 4, 5]
    expected = [e.output for e in full if e.node_info is not None and "counting@1" in (e.node_info.output_for or [])]
    assert expected == [150]
    for k in range(1, len(full)):
        session = SessionView()
        for event in full[:k]:
            session.commit(event)
        done_before = {e.output // 10 for e in full[:k] if e.node_info is not None
                       and e.node_info.path.startswith("counting@1/count_item@1/") and e.output is not None}
        apps.CALLS.clear()
        decisions: dict[str, CallDecision] = {}
        for _ in range(3):
            try:
                asyncio.run(resume(session, decisions))
                break
            except NeedsDecision as stop:
                for pending in stop.calls:
                    decisions[pending.call_id or ""] = CallDecision("rerun")
        else:
            pytest.fail(f"cut {k}: the resumed run kept stopping for decisions")
        output = [e.output for e in session.events
                  if e.node_info is not None and "counting@1" in (e.node_info.output_for or [])]
        assert output == expected, f"cut {k}"
        assert dict(session.state) == dict(full_session.state), f"cut {k}"
        assert not done_before & set(apps.CALLS), f"cut {k}: a finished item ran again"
        assert sorted(apps.CALLS) == sorted({1, 2, 3, 4, 5} - done_before), f"cut {k}"


# -- ours: a function node's calls in processes ---------------------------------------------


def _run(graph: Workflow, text: str) -> list[Any]:
    async def go() -> list[Any]:
        session = SessionView()
        return [e async for e in run_invocation(graph, session, Content.user(text), invocation_id="e-1")]
    return asyncio.run(asyncio.wait_for(go(), timeout=120))


def _rows(events: list[Any]) -> list[dict[str, Any]]:
    """What a user reads of each node event, the pids the items report left out."""
    rows = []
    for event in events:
        if event.node_info is None:
            continue
        output = event.output
        if isinstance(output, dict):
            output = {k: v for k, v in output.items() if k not in ("pid", "pids")}
        elif isinstance(output, list):
            output = [{k: v for k, v in item.items() if k != "pid"} for item in output]
        rows.append({"path": event.node_info.path, "branch": event.branch, "output": output,
                     "output_for": event.node_info.output_for, "author": event.author})
    return rows


def _pids(events: list[Any]) -> list[int]:
    return [e.output["pid"] for e in events
            if e.node_info is not None and e.node_info.path.count("/") == 2 and isinstance(e.output, dict)]


def test_items_in_processes_give_the_results_of_threads_from_other_processes_gone_after_the_run() -> None:
    """The same CPU-bound fan-out of six items, in threads then in processes: the same
    events (paths, branches, outputs, in order of paths); in threads every item ran in
    this process; in processes in others (and in more than one: the pool has a process
    per core, and runs two items at once here), none of them alive once the run ended."""
    text = "[60, 70, 80, 90, 100, 110]"
    threads, processes = _run(apps.in_threads, text), _run(apps.in_processes, text)
    key = lambda row: row["path"]  # noqa: E731
    assert sorted(_rows(processes), key=key) == sorted(_rows(threads), key=key)
    assert len(_pids(threads)) == len(_pids(processes)) == 6
    assert set(_pids(threads)) == {os.getpid()}
    item_pids = set(_pids(processes))
    assert os.getpid() not in item_pids
    if (os.cpu_count() or 1) > 1:
        assert len(item_pids) > 1
    assert not [pid for pid in item_pids if process_alive(pid)]


def test_branches_of_a_fan_out_run_in_processes_too() -> None:
    """Two function nodes in processes on the branches of a fan-out, joined: each gives
    the output it gives in threads (``spin(7)``), computed outside this process."""
    events = _run(apps.branches, "go")
    joined = [e.output for e in events if e.node_info is not None and e.node_info.path == "branches@1/both@1"]
    assert len(joined) == 1 and set(joined[0]) == {"left", "right"}
    for side in ("left", "right"):
        assert {k: v for k, v in joined[0][side].items() if k != "pid"} == {
            k: v for k, v in apps.spin(7).items() if k != "pid"}
        assert joined[0][side]["pid"] != os.getpid()


def test_an_items_exception_in_a_process_fails_the_run_with_that_exception_and_its_error_event() -> None:
    """An item raising KeyError in its process: the item's error event names KeyError
    and its message; the run fails with a KeyError."""
    seen: list[Any] = []

    async def go() -> None:
        session = SessionView()
        async for event in run_invocation(apps.failing, session, Content.user("[1, 2, 3, 4]"), invocation_id="e-1"):
            seen.append(event)

    with pytest.raises(KeyError, match="no item 3"):
        asyncio.run(asyncio.wait_for(go(), timeout=60))
    errors = [(e.node_info.path, e.error_code) for e in seen if e.error_code]
    assert errors == [("failing@1/fail_on_three@1/fail_on_three@3", "KeyError")]


def _local_node() -> Any:
    def inner(node_input: int) -> int:
        return node_input

    return node(inner, name="local_one", parallel_worker=True, processes=True)


def test_a_function_that_cannot_cross_to_a_process_is_refused_naming_its_node() -> None:
    """A lambda and a function defined inside another are refused when the node is
    built (UnpicklableNodeError, with the node's name); a function that takes ``ctx``
    too (a WorkflowConfigurationError); a result pickle refuses is the node's
    UnpicklableNodeError when the run makes it, as its error event says."""
    with pytest.raises(UnpicklableNodeError) as lambda_error:
        node(lambda node_input: node_input, name="quick", processes=True)
    assert lambda_error.value.node_name == "quick" and "lambda" in str(lambda_error.value)
    with pytest.raises(UnpicklableNodeError) as local_error:
        _local_node()
    assert local_error.value.node_name == "local_one" and "inside another function" in str(local_error.value)
    with pytest.raises(UnpicklableNodeError) as direct:
        FunctionNode(func=lambda node_input: node_input, name="direct", processes=True)
    assert direct.value.node_name == "direct"

    def with_ctx(node_input: Any, ctx: Any) -> Any:
        return node_input

    with pytest.raises(WorkflowConfigurationError, match="ctx"):
        node(with_ctx, processes=True)
    with pytest.raises(UnpicklableNodeError) as result_error:
        _run(apps.generating, "3")
    assert result_error.value.node_name == "give_a_generator" and "generator" in str(result_error.value)


def _item_pids(work: Path, count: int) -> list[int]:
    def found() -> list[int] | None:
        files = sorted(work.glob("item-*.pid"))
        texts = [f.read_text().strip() for f in files]
        return [int(t) for t in texts] if len(files) == count and all(texts) else None
    return wait_until(found, timeout=60, message=f"{count} items never started")  # type: ignore[no-any-return]


def test_a_cancelled_run_leaves_no_item_process_behind(tmp_path: Path) -> None:
    """Two items hold in their processes (one if the machine has one core); the run's
    task is cancelled: their processes are gone (their pids no longer alive) once the
    cancellation is through."""
    session = SessionView()
    session.state["work_dir"] = str(tmp_path)
    done = threading.Event()
    box: dict[str, Any] = {}

    async def go() -> None:
        task = asyncio.ensure_future(_consume(session))
        box["pids"] = await asyncio.to_thread(_item_pids, tmp_path, min(2, os.cpu_count() or 1))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        done.set()

    async def _consume(view: SessionView) -> None:
        async for _ in run_invocation(apps.holding, view, Content.user("1 2"), invocation_id="e-1"):
            pass

    asyncio.run(asyncio.wait_for(go(), timeout=120))
    assert done.is_set()
    pids = box["pids"]
    assert len(set(pids)) == len(pids) and os.getpid() not in pids
    wait_until(lambda: not any(process_alive(pid) for pid in pids), timeout=10,
               message=f"item processes {pids} outlived their cancelled run")


def _item_children() -> list[int]:
    """This process's children that are item processes."""
    found = []
    for pid in children_of(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if b"_process_child" in cmdline.read():
                    found.append(pid)
        except OSError:
            pass
    return found


def test_an_item_past_its_timeout_is_killed_with_its_process(tmp_path: Path) -> None:
    """Items in processes with a 5 s ``timeout`` that hold on: the run fails with
    NodeTimeoutError naming the node; the item processes that had started (their pid
    files) are gone, by pid, and no item process is left among this process's children."""
    session = SessionView()
    session.state["work_dir"] = str(tmp_path)

    async def go() -> None:
        async for _ in run_invocation(apps.timing_out, session, Content.user("1 2"), invocation_id="e-1"):
            pass

    with pytest.raises(NodeTimeoutError) as timed_out:
        asyncio.run(asyncio.wait_for(go(), timeout=120))
    assert timed_out.value.node_name == "slow"
    pids = [int(f.read_text()) for f in tmp_path.glob("item-*.pid") if f.read_text().strip()]
    assert pids, "no item had started within its 5 s"
    wait_until(lambda: not any(process_alive(pid) for pid in pids) and not _item_children(), timeout=10,
               message=f"item processes {pids} outlived their timed-out node")


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    base = tmp_path_factory.mktemp("parallel")
    config = HostConfig(apps=apps.APPS, data_dir=str(base / "data"), partitions=1)
    with running_actor_system(base / "logs") as system, Host(config, system=system) as running:
        yield running


def test_items_in_processes_on_a_host_run_outside_its_run_worker(host: Host) -> None:
    """On a real host (a run worker with its threads): the fan-out's items run in
    processes of the run's pool, not in the run worker, give the results computed here
    in threads, and are gone once the run ended."""
    runner = host.runner("fan")
    runner.create_session("ann", "fan")
    events = list(runner.run("ann", "fan", "[40, 50, 60]"))
    final = [e.output for e in events if e.node_info is not None and e.node_info.path == "fan@1/squares@1"]
    assert len(final) == 1
    assert final[0]["sums"] == [apps.spin(n)["sum"] for n in (40, 50, 60)]
    workers = set(session_workers(host, "fan", "ann", "fan"))
    assert final[0]["pids"] and not set(final[0]["pids"]) & (workers | {os.getpid()})
    wait_until(lambda: not any(process_alive(pid) for pid in final[0]["pids"]), timeout=10,
               message="item processes outlived their run")


def test_a_run_worker_killed_with_kill_9_leaves_no_item_process_behind(host: Host, tmp_path: Path) -> None:
    """On a real host: three items, as many of them as the pool has processes (one per
    core) hold in processes of the run's pool, children of the run worker; kill -9 of
    the run worker: the run fails ``killed`` and every item process is gone
    (PR_SET_PDEATHSIG), by pid."""
    runner = host.runner("holding")
    runner.create_session("ann", "kill", state={"work_dir": str(tmp_path)})
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["events"] = list(runner.run("ann", "kill", "4 5 6"))
        except Exception as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    pids = _item_pids(tmp_path, min(3, os.cpu_count() or 1))
    workers = session_workers(host, "holding", "ann", "kill")
    parents = {(proc_stat(pid) or ("?", 0))[1] for pid in pids}
    assert len(parents) == 1 and parents <= set(workers), "the items run in processes of the run's worker"
    os.kill(parents.pop(), signal.SIGKILL)
    thread.join(30)
    assert not thread.is_alive() and isinstance(box.get("error"), RunFailedError)
    assert box["error"].reason == "killed"
    wait_until(lambda: not any(process_alive(pid) for pid in pids), timeout=10,
               message=f"item processes {pids} outlived their killed run worker")



def test_a_function_of_a_module_in_the_current_folder_runs_in_processes_from_a_script_on_stdin(
        tmp_path: Path) -> None:
    """``python -`` (or ``-c``, or a REPL) has the current folder on its path as ``""``:
    a node function of a module found there runs in the pool's processes too (they are
    given that folder, not ``""``, which would be theirs)."""
    (tmp_path / "here_items.py").write_text("def double(node_input: int) -> int:\n    return node_input * 2\n")
    script = (
        "import asyncio\n"
        "from adk_actors import Content\n"
        "from adk_actors.engine import SessionView, run_invocation\n"
        "from adk_actors.workflow import START, Workflow, node\n"
        "from here_items import double\n"
        "def items() -> list[int]:\n    return [1, 2, 3]\n"
        "graph = Workflow(name='w', edges=[(START, node(items), node(double, parallel_worker=True, processes=True))])\n"
        "async def go():\n"
        "    return [e.output async for e in run_invocation(graph, SessionView(), Content.user('go'), invocation_id='i')\n"
        "            if e.node_info is not None and e.node_info.path == 'w@1/double@1']\n"
        "print(asyncio.run(go()))\n")
    done = subprocess.run([sys.executable, "-"], input=script, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[[2, 4, 6]]"
