"""Durable runs in a host: a run whose worker or partition is killed with kill -9 is
resumed from its last committed step (Runner.resume), ends as an uninterrupted run
does, and runs each side-effecting tool exactly once (counted in a file, outside the
host); a call that may have run stops the resumed run until a human decides."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import serving, session_workers, wait_workers_gone
from durable_agents import counted
from engine_helpers import summary
from kept_host import KeptHost, kept_hosts
from test_a2a import answer_message, asked, message, responses, states
from test_cli import cli
from test_credentials import oauth
from test_runtime import in_thread, session_pid

from adk_actors import Content, Event, FunctionResponse, HostError, InvalidRequestError, Part
from adk_actors._exceptions import RunFailedError
from adk_actors.chaos import tree_rows
from adk_actors.engine import CallDecision
from adk_actors.runtime import Host, HostConfig
from supervision import SupervisorClient
from supervision.testing import wait_until

APPS = {"durable": "durable_agents:root_agent", "resuming": "durable_agents:resuming_app",
        "booking": "durable_agents:booking_app",
        "boundary": "durable_agents:boundary_app", "charging": "durable_agents:charging_agent",
        "sent_then_stalled": "durable_agents:sent_then_stalled_app"}


kept = kept_hosts("durable-runs")


@pytest.fixture
def host(kept: KeptHost) -> Iterator[Host]:
    """A host of ``APPS``, kept from test to test (:class:`KeptHost`): each test kills run
    workers or partitions, which the host restarts; the next test is handed the host
    once its tree is whole again, a fresh one if the test failed."""
    with kept.host("durable", lambda data: HostConfig(apps=APPS, data_dir=str(data))) as running:
        yield running


@pytest.fixture
def user(kept: KeptHost) -> str:
    """A user of the test's own on the kept host (its sessions and run ids are its own)."""
    return kept.tag("ann-")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One ``serve`` of the ``durable`` and ``resuming`` apps for the HTTP tests: each kills
    run workers only (the pool replaces them; the host goes on) and talks on sessions of
    its own."""
    with serving(tmp_path_factory.mktemp("durable-serve"),
                 apps='durable = "durable_agents:root_agent"\nresuming = "durable_agents:resuming_app"\n') as info:
        yield info


def _partitions_listed(host: Host) -> None:
    """Wait until the host lists every partition again (a restarting one has no address yet)."""
    def listed() -> bool:
        try:
            host.partitions(refresh=True)
            return True
        except HostError:
            return False

    wait_until(listed, timeout=20)


def _by_branch(events: list[Event]) -> dict[tuple[str, str | None], list[tuple[str, str]]]:
    """The run's events (not the state updates between), per (author, branch), in order."""
    out: dict[tuple[str, str | None], list[tuple[str, str]]] = {}
    for event in events:
        if event.invocation_id.startswith("p-"):
            continue
        out.setdefault((event.author, event.branch), []).extend(summary([event]))
    return out


def _reference(runner: Any, tmp_path: Path, user: str = "ann") -> dict[tuple[str, str | None], list[tuple[str, str]]]:
    runner.create_session(user, "reference", state={"counts_file": str(tmp_path / "reference.txt")})
    list(runner.run(user, "reference", "go"))
    return _by_branch(runner.get_session(user, "reference").events)


def _start_paused(runner: Any, counts: Path, step: str, user: str) -> tuple[Any, dict[str, Any]]:
    """A run of session s1 whose ``step`` pauses right after its tool ran (counted)."""
    runner.create_session(user, "s1", state={"counts_file": str(counts), "pause_at": [step]})
    thread, box = in_thread(lambda: list(runner.run(user, "s1", "go", run_id=f"run-first-{user}")))
    wait_until(lambda: any(key.endswith(f":{step}") for key in counted(counts)), timeout=20)
    return thread, box


def _kill_paused(host: Any, runner: Any, thread: Any, box: dict[str, Any], user: str) -> None:
    """kill -9 of session s1's run workers while its run (``_start_paused``) is paused:
    its caller is told ``killed``; once the killed workers are gone (another may still be
    dying), the pause is taken off the session's state."""
    killed = session_workers(host, "durable", user, "s1")
    for worker in killed:
        os.kill(worker, signal.SIGKILL)
    thread.join(10)
    assert isinstance(box.get("error"), RunFailedError) and box["error"].reason == "killed"
    wait_workers_gone(host, "durable", user, "s1", killed)
    runner.update_state(user, "s1", {"pause_at": []})


def _paused_pid(counts: Path) -> int:
    """The pid of the worker a paused step runs on, once the step has written it."""
    return int(wait_until(lambda: Path(f"{counts}.pid").exists() and Path(f"{counts}.pid").read_text().strip(),
                          timeout=20))


def test_a_run_whose_worker_was_killed_after_a_side_effect_resumes_with_a_decision(host: Host,
                                                                                     tmp_path: Path, user: str) -> None:
    runner = host.runner("durable")
    expected = _reference(runner, tmp_path, user=user)
    counts = tmp_path / "counts.txt"
    thread, box = _start_paused(runner, counts, "right", user=user)  # right's send ran; its result is not committed
    pid = session_pid(host, "durable", user, "s1")
    assert pid is not None
    _kill_paused(host, runner, thread, box, user=user)

    with pytest.raises(RunFailedError) as stopped:
        list(runner.resume(user, "s1", f"run-first-{user}", new_run_id=f"run-second-{user}"))
    assert stopped.value.reason == "needs_decision"
    pending = stopped.value.pending_calls
    assert [(c["name"], c["args"], c["agent"]) for c in pending] == [("send", {"step": "right"}, "right")]
    with pytest.raises(InvalidRequestError, match="resumed already"):
        list(runner.resume(user, "s1", f"run-first-{user}"))

    # The human knows the message went out: its result is given, the tool is not run again.
    new = list(runner.resume(user, "s1", f"run-second-{user}",
                             decisions={pending[0]["call_id"]: CallDecision("result", {"sent": "right"})}))
    assert new and all(e.invocation_id == f"e-first-{user}" for e in new)
    assert _by_branch(runner.get_session(user, "s1").events) == expected
    sends = {k: n for k, n in counted(counts).items() if k.startswith("send:")}
    assert sends == {"send:first": 1, "send:right": 1}
    assert [e.content.text for e in runner.run(user, "s1", "again") if e.content is not None][-1] == "last done"


def test_a_run_whose_partition_was_killed_resumes_without_asking_when_its_tool_is_idempotent(
        host: Host, tmp_path: Path, user: str) -> None:
    runner = host.runner("durable")
    expected = _reference(runner, tmp_path, user=user)
    counts = tmp_path / "counts.txt"
    thread, box = _start_paused(runner, counts, "looped", user=user)  # looped's note (idempotent) ran
    sessions = SupervisorClient(host.system, host.root.child("sessions").address)  # type: ignore[union-attr]
    owner = next(i for i in sessions.which_children() if i.address == host.partition_for("durable", user, "s1"))
    assert owner.pid is not None
    os.kill(owner.pid, signal.SIGKILL)
    thread.join(10)
    assert isinstance(box.get("error"), RunFailedError) and box["error"].reason == "interrupted"
    wait_until(lambda: sessions.child(owner.id).status == "running" and sessions.child(owner.id).pid != owner.pid)
    _partitions_listed(host)
    runner.update_state(user, "s1", {"pause_at": []})
    started = time.monotonic()
    new = list(runner.resume(user, "s1", f"run-first-{user}"))
    assert time.monotonic() - started < 10
    assert [e.author for e in new][:1] == ["looped"]  # it went on where it was: first and fan are not run again
    assert _by_branch(runner.get_session(user, "s1").events) == expected
    made = counted(counts)
    assert made["send:first"] == 1 and made["send:right"] == 1
    assert made["note:looped"] == 3  # the interrupted call ran again (idempotent), then the second iteration


def test_only_a_failed_run_of_the_session_can_be_resumed(host: Host, tmp_path: Path, user: str) -> None:
    runner = host.runner("durable")
    runner.create_session(user, "s2", state={"counts_file": str(tmp_path / "c.txt")})
    list(runner.run(user, "s2", "go", run_id=f"run-done-{user}"))
    with pytest.raises(InvalidRequestError, match="'done'"):
        list(runner.resume(user, "s2", f"run-done-{user}"))
    with pytest.raises(InvalidRequestError, match="no run"):
        list(runner.resume(user, "s2", f"run-unknown-{user}"))
    runner.create_session(user, "s3")
    with pytest.raises(InvalidRequestError, match="no run"):
        list(runner.resume(user, "s3", f"run-done-{user}"))  # a run of another session


def _sse(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in body.decode().splitlines() if line.startswith("data: ")]


def test_over_http_a_killed_run_is_resumed_and_its_pending_call_decided(served: dict[str, Any],
                                                                        tmp_path: Path) -> None:
    counts = tmp_path / "counts.txt"
    with httpx.Client(base_url=served["url"], timeout=30) as http:
        base = "/apps/durable/users/ann/sessions"
        assert http.post(f"{base}/s1", json={"counts_file": str(counts), "pause_at": ["first"]}
                         ).status_code == 200
        thread, box = in_thread(lambda: http.post("/run", json={
            "appName": "durable", "userId": "ann", "sessionId": "s1",
            "newMessage": {"role": "user", "parts": [{"text": "go"}]}}))
        wait_until(lambda: Path(f"{counts}.pid").exists(), timeout=20)
        os.kill(int(Path(f"{counts}.pid").read_text()), signal.SIGKILL)  # the run's worker, mid-call
        thread.join(15)
        assert box["result"].status_code == 500 and "killed" in box["result"].text
        last = http.get(f"{base}/s1/runs/last").json()
        assert (last["status"], last["resumable"], last["attempt"]) == ("killed", True, 0)
        run_id = last["runId"]
        http.patch(f"{base}/s1", json={"stateDelta": {"pause_at": []}})

        stopped = _sse(http.post(f"{base}/s1/runs/{run_id}/resume", json={}).content)
        assert len(stopped) == 1 and stopped[0]["error_details"]["error_type"] == "NeedsDecision"
        pending = stopped[0]["error_details"]["pending_calls"]
        assert [(c["name"], c["args"]) for c in pending] == [("send", {"step": "first"})]
        assert http.post(f"{base}/s1/runs/{run_id}/resume", json={"decisions": {"x": {"action": "maybe"}}}
                         ).status_code == 422
        resumed_id = stopped[0]["error_details"]["run_id"]
        assert resumed_id != run_id

        # The CLI shows the same calls (and the run to resume), and refuses a malformed decision.
        port = str(served["port"])
        shown = cli("resume", "durable", "s1", resumed_id, "--user", "ann", "--port", port)
        assert shown.returncode == 3 and pending[0]["call_id"] in shown.stdout and "send" in shown.stdout, shown
        resumed_id = shown.stdout.split("adk-actors resume durable s1 ", 1)[1].split()[0]
        over_http = cli("resume", "durable", "s1", resumed_id, "--user", "ann", "--url", served["url"], "--json")
        assert over_http.returncode == 3, over_http
        answer = json.loads(over_http.stdout.splitlines()[-1])
        assert [c["name"] for c in answer["pending_calls"]] == ["send"]
        resumed_id = answer["needs_decision"]
        bad = cli("resume", "durable", "s1", resumed_id, "--user", "ann", "--port", port, "--result", "x=[1]")
        assert bad.returncode == 2 and "JSON" in bad.stderr
        done = _sse(http.post(f"{base}/s1/runs/{resumed_id}/resume",
                              json={"decisions": {pending[0]["call_id"]: {"action": "rerun"}}}).content)
        assert not any("error" in e for e in done) and done[-1]["author"] == "last"
        assert http.post(f"{base}/s1/runs/{run_id}/resume", json={}).status_code == 400  # resumed already
        last = http.get(f"{base}/s1/runs/last").json()
        assert (last["status"], last["resumable"], last["attempt"]) == ("done", False, 4)  # HTTP, CLI twice, HTTP
        http.post(f"{base}/s2", json={})
        none_yet = http.get(f"{base}/s2/runs/last")  # a session with no run: an empty answer
        assert (none_yet.status_code, none_yet.json()) == (200, None)
        assert http.get(f"{base}/s-unknown/runs/last").status_code == 404  # no such session
        assert counted(counts)["send:first"] == 2  # sent again: the human chose rerun
        assert counted(counts)["send:right"] == 1



def test_a_tools_call_is_on_record_before_the_tool_runs_even_when_it_blocks_the_runs_loop(
        host: Host, tmp_path: Path, user: str) -> None:
    """The worker is killed while the tool (a coroutine that blocks its loop, so the
    worker could send nothing after it began) charges: the resumed run still finds the
    call, and asks, instead of charging again."""
    runner = host.runner("charging")
    counts = tmp_path / "counts.txt"
    runner.create_session(user, "s1", state={"counts_file": str(counts), "pause_at": ["payer"]})
    thread, box = in_thread(lambda: list(runner.run(user, "s1", "pay", run_id=f"run-first-{user}")))
    os.kill(_paused_pid(counts), signal.SIGKILL)
    thread.join(10)
    assert isinstance(box.get("error"), RunFailedError) and box["error"].reason == "killed"
    runner.update_state(user, "s1", {"pause_at": []})
    with pytest.raises(RunFailedError) as stopped:
        list(runner.resume(user, "s1", f"run-first-{user}"))
    assert [(c["name"], c["args"]) for c in stopped.value.pending_calls] == [("charge", {"step": "payer"})]
    assert counted(counts)["charge:payer"] == 1


def test_a_side_effects_result_is_on_record_before_the_run_goes_on(host: Host, tmp_path: Path, user: str) -> None:
    """A message is sent (a tool that is not idempotent), then the run's next tool
    blocks its loop, and the worker is killed there. The send's result was committed
    before the run went on, so the resumed run neither sends again nor stops for a
    human's decision: it ends well, the message sent once."""
    runner = host.runner("sent_then_stalled")
    counts = tmp_path / "counts.txt"
    runner.create_session(user, "s1", state={"counts_file": str(counts), "pause_once_at": ["then"]})
    thread, box = in_thread(lambda: list(runner.run(user, "s1", "go", run_id=f"run-first-{user}")))
    os.kill(_paused_pid(counts), signal.SIGKILL)
    thread.join(30)
    assert "error" not in box, box["error"]
    assert [e.content.text for e in box["result"] if e.content and e.content.text][-1] == "then done"
    last = runner.last_run(user, "s1")
    assert last is not None and (last.status, last.resumes) == ("done", f"run-first-{user}")
    assert counted(counts) == Counter({"send:first": 1, "stall:then": 2})


def _finished(runner: Any, session_id: str) -> bool:
    events = runner.get_session("ann", session_id).events
    return bool(events) and events[-1].author == "last"


def _start_and_kill(runner: Any, host: Host, counts: Path, victim: str, user: str) -> tuple[Any, dict[str, Any]]:
    """A run of session s1 (app ``resuming``), paused once in looped's tool, whose
    ``victim`` (its worker or its partition) is killed there with kill -9."""
    runner.create_session(user, "s1", state={"counts_file": str(counts), "pause_once_at": ["looped"]})
    thread, box = in_thread(lambda: list(runner.run(user, "s1", "go", run_id=f"run-first-{user}")))
    wait_until(lambda: Path(f"{counts}.pid").exists(), timeout=20)
    # Killed once looped's call is on record (and all before it: right's send and its result).
    wait_until(lambda: any(e.author == "looped" for e in runner.get_session(user, "s1").events), timeout=20)
    if victim == "worker":
        os.kill(int(Path(f"{counts}.pid").read_text()), signal.SIGKILL)
    else:
        pid = session_pid(host, "resuming", user, "s1")
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
    return thread, box


@pytest.mark.parametrize("victim", ["worker", "partition"])
def test_an_app_that_resumes_crashed_runs_finishes_them_and_their_caller_sees_one_run(
        host: Host, tmp_path: Path, victim: str, user: str) -> None:
    runner = host.runner("resuming")
    expected = _reference(runner, tmp_path, user=user)
    counts = tmp_path / "counts.txt"
    thread, box = _start_and_kill(runner, host, counts, victim, user=user)
    thread.join(30)
    assert "error" not in box, box  # the Runner followed the run that resumed it
    stored = [e for e in runner.get_session(user, "s1").events if not e.invocation_id.startswith("p-")]
    assert _by_branch(stored) == expected
    assert [e.id for e in box["result"] if not e.partial] == [e.id for e in stored]  # each event once, in order
    made = counted(counts)
    assert made["send:first"] == 1 and made["send:right"] == 1 and made["note:looped"] == 3
    last = runner.last_run(user, "s1")
    assert last is not None and (last.status, last.attempt, last.resumes) == ("done", 1, f"run-first-{user}")


@pytest.mark.parametrize("victim", ["worker", "partition"])
def test_a_runner_that_does_not_follow_resumes_is_told_the_resuming_run_and_can_join_it(
        host: Host, tmp_path: Path, victim: str, user: str) -> None:
    runner = host.runner("resuming", follow_resumes=False)
    counts = tmp_path / "counts.txt"
    thread, box = _start_and_kill(runner, host, counts, victim, user=user)
    thread.join(15)
    failed = box.get("error")
    assert isinstance(failed, RunFailedError) and failed.reason == ("killed" if victim == "worker" else "interrupted")
    assert failed.resumed_as  # the caller is told which run goes on
    _partitions_listed(host)
    joined = list(runner.follow(user, "s1", failed.resumed_as))  # in progress or ended: all its invocation's events
    stored = [e for e in runner.get_session(user, "s1").events if not e.invocation_id.startswith("p-")]
    assert [e.id for e in joined] == [e.id for e in stored] and stored[-1].author == "last"
    again = list(runner.follow(user, "s1", failed.resumed_as, after=stored[-3].id))  # ended: the last two
    assert [e.id for e in again] == [e.id for e in stored[-2:]]
    with pytest.raises(InvalidRequestError):
        list(runner.follow(user, "s1", f"run-never-{user}"))


def test_a_run_that_keeps_crashing_is_resumed_only_as_often_as_its_app_allows(host: Host, tmp_path: Path, user: str) -> None:
    runner = host.runner("resuming")
    counts = tmp_path / "counts.txt"
    runner.create_session(user, "s1", state={"counts_file": str(counts), "pause_at": ["looped"]})
    thread, box = in_thread(lambda: list(runner.run(user, "s1", "go")))
    killed: set[int] = set()
    for _ in range(3):  # the run, then its two resumes: each pauses in looped's note (idempotent: rerun), killed there
        pid = wait_until(lambda: (p := int(Path(f"{counts}.pid").read_text())) not in killed and p, timeout=20)
        killed.add(pid)
        os.kill(pid, signal.SIGKILL)
    thread.join(10)
    followed = box.get("error")  # its caller followed both resumes: the last one's end
    assert isinstance(followed, RunFailedError) and followed.reason == "killed" and not followed.resumed_as
    assert "not resumed again" in followed.detail
    time.sleep(1.5)  # no fourth attempt comes
    assert counted(counts)["note:looped"] == 3
    assert int(Path(f"{counts}.pid").read_text()) in killed
    watched = runner.last_run(user, "s1")
    assert watched is not None and (watched.status, watched.attempt) == ("killed", 2)
    assert followed.run_id == watched.run_id
    # Resumed by hand once more and killed again: its caller is told why it is not resumed.
    thread, box = in_thread(lambda: list(runner.resume(user, "s1", watched.run_id)))
    pid = wait_until(lambda: (p := int(Path(f"{counts}.pid").read_text())) not in killed and p, timeout=20)
    os.kill(pid, signal.SIGKILL)
    thread.join(10)
    failed = box.get("error")
    assert isinstance(failed, RunFailedError) and failed.reason == "killed" and not failed.resumed_as
    assert "resumed 3 times already, the most its app allows: not resumed again" in failed.detail


def test_cancelling_a_followed_run_by_its_first_id_cancels_the_run_that_continues_it(host: Host,
                                                                                       tmp_path: Path, user: str) -> None:
    runner = host.runner("resuming")
    counts = tmp_path / "counts.txt"
    runner.create_session(user, "s1", state={"counts_file": str(counts), "pause_at": ["looped"]})
    thread, box = in_thread(lambda: list(runner.run(user, "s1", "go", run_id=f"run-first-{user}")))
    first = _paused_pid(counts)
    os.kill(first, signal.SIGKILL)
    try:
        wait_until(lambda: int(Path(f"{counts}.pid").read_text()) != first, timeout=20)  # resumed, paused again
    except AssertionError as exc:  # say where the run is
        raise AssertionError(f"{exc}; last run: {runner.last_run('ann', 's1')}; counted: {counted(counts)}; "
                             f"tree: {[(r['path'], r['status'], r['pid']) for r in tree_rows(host)]}") from None
    runner.cancel(f"run-first-{user}")
    thread.join(10)
    failed = box.get("error")
    last = runner.last_run(user, "s1")
    assert isinstance(failed, RunFailedError) and failed.reason == "cancelled"
    assert last is not None and failed.run_id == last.run_id != f"run-first-{user}" and last.status == "cancelled"


def test_a_run_waiting_for_approval_survives_its_partitions_death_and_goes_on_when_approved(
        host: Host, tmp_path: Path, user: str) -> None:
    runner = host.runner("booking")
    counts = tmp_path / "counts.txt"
    runner.create_session(user, "s1", state={"counts_file": str(counts)})
    thread, box = in_thread(lambda: list(runner.run(user, "s1", "book it")))
    asked = wait_until(lambda: runner.approvals(user), timeout=20)
    pid = session_pid(host, "booking", user, "s1")
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    # The restarted partition resumed the run: it waits on the same approval again (its tool never ran).
    wait_until(lambda: [a.status for a in runner.approvals(user, None)] == ["pending"] and
               runner.approvals(user)[0].run_id != asked[0].run_id, timeout=20)
    assert [a.id for a in runner.approvals(user)] == [asked[0].id]
    assert counted(counts)["book:booker"] == 0
    assert thread.is_alive()  # its caller follows the resumed run, waiting with it
    runner.approve(asked[0].id)
    thread.join(20)
    assert "error" not in box, box
    assert box["result"][-1].content is not None and box["result"][-1].content.text == "booker done"
    assert box["result"][-1].id == runner.get_session(user, "s1").events[-1].id
    assert counted(counts)["book:booker"] == 1


#: Where a run is cut: when the invocation has committed this many events (the user's
#: counts) and a model or tool call is about to begin.
CUTS = range(1, 17)


def test_kill_9_at_step_boundaries_then_resume_ends_as_an_uninterrupted_run(host: Host, tmp_path: Path, user: str) -> None:
    runner = host.runner("boundary")
    expected = _reference(runner, tmp_path, user=user)
    paused = 0
    for cut in CUTS:
        counts, session = tmp_path / f"counts-{cut}.txt", f"cut-{cut}"
        runner.create_session(user, session, state={"counts_file": str(counts), "pause_after": cut})
        thread, box = in_thread(lambda session=session: list(runner.run(user, session, "go")))  # type: ignore[misc]
        wait_until(lambda counts=counts: Path(f"{counts}.pid").exists() or not thread.is_alive(), timeout=20)
        if thread.is_alive():
            paused += 1
            # what the worker released before it waited is committed: the events it counted
            wait_until(partial(_committed_at_least, runner, session, cut, user=user), timeout=10,
                       message=f"the {cut} events before the pause committed")
            if cut % 2:
                os.kill(int(Path(f"{counts}.pid").read_text()), signal.SIGKILL)  # the run's worker
            else:
                pid = session_pid(host, "boundary", user, session)
                assert pid is not None
                os.kill(pid, signal.SIGKILL)  # its partition
            thread.join(15)
            assert isinstance(box.get("error"), RunFailedError), (cut, box)
            _partitions_listed(host)
            _resume_deciding_as_a_human_would(runner, session, box["error"].run_id, counts, user=user)
        assert _by_branch(runner.get_session(user, session).events) == expected, cut
        sends = {k: n for k, n in counted(counts).items() if k.startswith("send:")}
        assert sends == {"send:first": 1, "send:right": 1}, (cut, sends)
    assert paused >= len(CUTS) * 3 // 4  # a count the parallel branches pass together is no boundary


def _committed_at_least(runner: Any, session: str, count: int, user: str) -> bool:
    """Has session ``session`` (of ann) stored ``count`` events of its run, at least?"""
    stored = runner.get_session(user, session).events
    return sum(1 for e in stored if not e.invocation_id.startswith("p-")) >= count


def _resume_deciding_as_a_human_would(runner: Any, session: str, run_id: str, counts: Path, user: str) -> None:
    """Resume ``run_id``; when it stops before calls that may have run, look at the
    world (the counts file): a call that ran gets its result, one that did not is rerun."""
    decisions: dict[str, CallDecision] = {}
    for _ in range(3):
        try:
            list(runner.resume(user, session, run_id, decisions=decisions or None))
            return
        except RunFailedError as stopped:
            if stopped.reason != "needs_decision":
                raise
            done = counted(counts)
            decisions = {c["call_id"]: CallDecision("result", {"sent": c["args"]["step"]})
                         if done[f"{c['name']}:{c['args']['step']}"] else CallDecision("rerun")
                         for c in stopped.pending_calls}
            run_id = stopped.run_id
    raise AssertionError("the run did not complete")


def test_a_run_cut_by_a_clean_host_stop_is_resumed_when_its_session_is_next_used(actor_system: Any,
                                                                                 tmp_path: Path) -> None:
    config = HostConfig(apps=APPS, data_dir=str(tmp_path / "data"))
    counts = tmp_path / "counts.txt"
    with Host(config, system=actor_system) as host:
        runner = host.runner("resuming")
        expected = _reference(runner, tmp_path)
        runner.create_session("ann", "s1", state={"counts_file": str(counts), "pause_once_at": ["looped"]})
        thread, box = in_thread(lambda: list(runner.run("ann", "s1", "go")))
        wait_until(lambda: Path(f"{counts}.pid").exists(), timeout=20)
    thread.join(10)
    assert isinstance(box.get("error"), RunFailedError) and box["error"].reason == "interrupted"
    with Host(config, system=actor_system) as host:
        runner = host.runner("resuming")
        runner.get_session("ann", "s1")  # its session activates: the interrupted run is resumed
        wait_until(lambda: _finished(runner, "s1"), timeout=30)
        assert _by_branch(runner.get_session("ann", "s1").events) == expected
    made = counted(counts)
    assert made["send:first"] == 1 and made["send:right"] == 1 and made["note:looped"] == 3


def test_a_long_running_call_is_answered_after_a_host_restart(actor_system: Any, tmp_path: Path) -> None:
    config = HostConfig(apps={"asker": "durable_agents:asking_app"}, data_dir=str(tmp_path / "data"))
    with Host(config, system=actor_system) as host:
        runner = host.runner("asker")
        runner.create_session("ann", "s1")
        events = list(runner.run("ann", "s1", "may I?"))
        [asked] = [c for e in events if e.content is not None for c in e.content.function_calls]
        assert events[-1].long_running_tool_ids == (asked.id,)
    with Host(config, system=actor_system) as host:  # the answer comes to a host started again
        runner = host.runner("asker")
        answer = Content(role="user", parts=(Part(function_response=FunctionResponse(
            id=asked.id, name=asked.name, response={"answer": "yes"})),))
        assert [e.content.text for e in runner.run("ann", "s1", answer) if e.content is not None][-1] == \
            "the manager said yes"


def test_a_credential_asked_for_before_a_host_restart_is_given_after_it(actor_system: Any, tmp_path: Path) -> None:
    config = HostConfig(apps={"calendar": "runtime_agents:calendar_agent"}, data_dir=str(tmp_path / "data"))
    with Host(config, system=actor_system) as host:
        runner = host.runner("calendar")
        runner.create_session("ann", "s1")
        asked = list(runner.run("ann", "s1", "what's on today?"))[-1]
        [wanted] = asked.actions.requested_auth_configs.values()
        assert wanted["credential_key"] == "calendar"
    with Host(config, system=actor_system) as host:  # the user gives it to a host started again
        runner = host.runner("calendar")
        runner.put_credential("ann", "calendar", oauth(3600))
        answer = list(runner.run("ann", "s1", "and now?"))[-1]
        assert answer.content is not None and answer.content.text.startswith("calendar: {'events'")


def test_bad_input_to_the_resume_routes_gets_a_typed_4xx_and_the_host_serves_on(served: dict[str, Any]) -> None:
    with httpx.Client(base_url=served["url"], timeout=30) as http:
        base = "/apps/durable/users/ann/sessions"
        http.post(f"{base}/b1", json={})
        deep: dict[str, Any] = {"a": 1}
        for _ in range(100):
            deep = {"a": deep}
        surrogate = b'{"decisions": {"c": {"action": "result", "result": {"t": "\\ud800"}}}}'
        assert http.post(f"{base}/b1/runs/run-x/resume", content=surrogate,
                         headers={"content-type": "application/json"}).status_code == 422
        assert http.post(f"{base}/b1/runs/run-x/resume",
                         json={"decisions": {"c": {"action": "result", "result": deep}}}).status_code == 422
        assert http.post(f"{base}/b1/runs/run-x/resume", json={"decisions": 5}).status_code == 422
        assert http.post(f"{base}/b1/runs/{'x' * 5000}/resume", json={}).status_code == 400
        assert http.get(f"{base}/b1%00/runs/last").status_code == 422
        assert http.get(f"{base}/b1/runs/last").json() is None  # created, no run yet
        ran = http.post("/run", json={"appName": "durable", "userId": "ann", "sessionId": "b1",
                                      "newMessage": {"role": "user", "parts": [{"text": "hi"}]}})
        assert ran.status_code == 200 and http.get(f"{base}/b1/runs/last").json()["status"] == "done"


def _kill_the_worker_when_paused(counts: Path, http: httpx.Client, session: str, author: str | None) -> None:
    """Kill the run's worker once it paused (and ``author``'s first event is on record: all before it is)."""
    wait_until(lambda: Path(f"{counts}.pid").exists(), timeout=20)
    if author is not None:
        wait_until(lambda: any(e["author"] == author for e in http.get(session).json()["events"]), timeout=20)
    os.kill(int(Path(f"{counts}.pid").read_text()), signal.SIGKILL)


def _a2a_session(http: httpx.Client, counts: Path, pause: str) -> tuple[str, str]:
    """A context of app ``resuming`` (its session made first, with its state), whose
    ``pause`` step pauses once; and its session's path."""
    context = uuid.uuid4().hex
    path = f"/apps/resuming/users/A2A_USER_{context}/sessions/{context}"
    http.post(path, json={"counts_file": str(counts), "pause_once_at": [pause]})
    return context, path


def test_an_sse_stream_and_an_a2a_task_whose_worker_is_killed_go_on_as_one_run(served: dict[str, Any],
                                                                               tmp_path: Path) -> None:
    """The HTTP API's and the A2A server's Runner follow the run that resumes theirs:
    the SSE stream gives each event once and ends with the last agent's answer, no
    error line; the A2A task completes."""
    with httpx.Client(base_url=served["url"], timeout=30) as http:
        counts = tmp_path / "sse.txt"
        base = "/apps/resuming/users/ann/sessions"
        http.post(f"{base}/sse1", json={"counts_file": str(counts), "pause_once_at": ["looped"]})
        thread, box = in_thread(lambda: http.post("/run_sse", json={
            "appName": "resuming", "userId": "ann", "sessionId": "sse1",
            "newMessage": {"role": "user", "parts": [{"text": "go"}]}}))
        _kill_the_worker_when_paused(counts, http, f"{base}/sse1", "looped")
        thread.join(30)
        streamed = [json.loads(line[6:]) for line in box["result"].text.splitlines() if line.startswith("data: ")]
        assert not any("error" in event for event in streamed) and streamed[-1]["author"] == "last", streamed[-2:]
        stored = [e["id"] for e in http.get(f"{base}/sse1").json()["events"] if e["author"] != "user"]
        assert [event["id"] for event in streamed if not event.get("partial")] == stored
        assert counted(counts)["send:right"] == 1

        counts = tmp_path / "a2a.txt"
        context, path = _a2a_session(http, counts, "looped")
        thread, box = in_thread(lambda: asyncio.run(responses(f"{served['url']}/a2a/resuming",
                                                              message("go", context))))
        _kill_the_worker_when_paused(counts, http, path, "looped")
        thread.join(30)
        assert states(box["result"])[-1] == "TASK_STATE_COMPLETED", asked(box["result"])
        assert counted(counts)["send:right"] == 1 and counted(counts)["note:looped"] == 3, (
            Path(f"{counts}.debug").read_text(), served["err"].read_text()[-3000:])


def test_an_a2a_task_whose_resumed_run_needs_a_decision_asks_its_client(served: dict[str, Any],
                                                                         tmp_path: Path) -> None:
    """The worker is killed after right's send ran and before its result was
    committed: the host resumes the run, which stops before that call; the task is
    input-required with the call, and the client's decision (its result) completes it."""
    with httpx.Client(base_url=served["url"], timeout=30) as http:
        counts = tmp_path / "a2a.txt"
        url = f"{served['url']}/a2a/resuming"
        context, path = _a2a_session(http, counts, "right")
        thread, box = in_thread(lambda: asyncio.run(responses(url, message("go", context))))
        # Killed as soon as the send runs: its call went on record before it ran (the barrier).
        _kill_the_worker_when_paused(counts, http, path, None)
        thread.join(30)
        assert states(box["result"])[-1] == "TASK_STATE_INPUT_REQUIRED"
        task_id, context_id, question = asked(box["result"])
        assert [(c["name"], c["args"]) for c in question["pending_calls"]] == [("send", {"step": "right"})]
        call_id = question["pending_calls"][0]["call_id"]
        again = asyncio.run(responses(url, answer_message(context_id, task_id, text="whatever")))
        assert states(again)[-1] == "TASK_STATE_INPUT_REQUIRED"  # no decision in it: asked again
        done = asyncio.run(responses(url, answer_message(context_id, task_id, data={
            "decisions": {call_id: {"action": "result", "result": {"sent": "right"}}}})))
        assert states(done)[-1] == "TASK_STATE_COMPLETED"
        assert counted(counts)["send:right"] == 1 and counted(counts)["send:first"] == 1
        events = http.get(path).json()["events"]
        assert events[-1]["author"] == "last"
