"""OTP supervisor semantics on real processes with real signals.

Themes follow OTP's supervisor_SUITE: restart type x exit reason, strategies with
kill -9 and with exceptions, escalation, shutdown order and timeouts, temporary
bystanders, significant children, failing restarts, introspection, orphans.

What is timed (a backoff, a shutdown timeout, the grace after a child's pidfd fired)
is tested on the supervisor's manual clock (``manual_system``): the test moves the
clock on and sees what happens just before and at the due time, never waiting for it.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import probe

from supervision import (
    Backoff,
    BadRequest,
    CallTimeout,
    ChildSpec,
    Strategy,
    SupervisorClient,
    SupervisorSpec,
    call,
    start_supervisor,
)
from supervision.lowlevel import MANUAL_CLOCK_VARIABLE, AutoShutdown
from supervision.protocol import (
    AdvanceClock,
    ChildAlreadyPresent,
    ChildAlreadyStarted,
    ChildNotFound,
    ChildRestarting,
    ChildRunning,
    ServerCrashed,
    StartFailed,
    UnknownRequest,
)
from supervision.testing import pid_alive, read_events, running_actor_system, wait_until

Start = Callable[..., SupervisorClient]


def make_exit(system: Any, sup: SupervisorClient, child_id: str, how: str) -> int:
    """End child ``child_id`` the way ``how`` says; return its old pid."""
    info = sup.child(child_id)
    assert info.pid is not None
    if how == "killed":
        os.kill(info.pid, signal.SIGKILL)
    elif how == "crash":
        with pytest.raises(ServerCrashed):
            call(system, info.address, ("crash", "on purpose"))
    else:
        assert call(system, info.address, ("stop", how)) == "stopping"
    return info.pid


def restarted(sup: SupervisorClient, child_id: str, old_pid: int) -> bool:
    info = sup.child(child_id)
    return info.status == "running" and info.pid not in (None, old_pid)


def starts(events: Path) -> list[str]:
    return [e[1] for e in read_events(events) if e[0] == "start"]


def init_failures(events: Path) -> int:
    return sum(1 for e in read_events(events) if e[0] == "init_failed")


@pytest.fixture
def manual_system(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An actor system whose supervisors run on a manual clock (``MANUAL_CLOCK_VARIABLE``):
    their timers (backoff, a child's end seen by its pidfd) fire only when the test
    moves the clock on (:func:`advance`), never by waiting; the children's is real."""
    monkeypatch.setenv(MANUAL_CLOCK_VARIABLE, "Supervisor")
    with running_actor_system(tmp_path / "logs") as system:
        yield system


def advance(system: Any, sup: SupervisorClient, seconds: float) -> int:
    """Move ``sup``'s manual clock ``seconds`` on; how many of its timers fired (each
    handled before the answer)."""
    fired: int = call(system, sup.address, AdvanceClock(seconds))
    return fired


def settled(sup: SupervisorClient, events: Path) -> None:
    """Return once ``sup`` is done with the restart in progress (a failed start and the
    retry it schedules included): a child started now is started after it, as the
    supervisor's jobs run one at a time, in order. That child (temporary, named for
    the moment) is then removed."""
    witness = f"settled-{len(sup.which_children())}-{init_failures(events)}"
    sup.start_child(probe(witness, events, restart="temporary"))
    sup.terminate_child(witness)


# -- restart type x exit reason --------------------------------------------------------

MATRIX = [
    ("permanent", "normal", True),
    ("permanent", "shutdown", True),
    ("permanent", "crash", True),
    ("permanent", "killed", True),
    ("transient", "normal", False),
    ("transient", "shutdown", False),
    ("transient", "crash", True),
    ("transient", "killed", True),
    ("temporary", "normal", False),
    ("temporary", "shutdown", False),
    ("temporary", "crash", False),
    ("temporary", "killed", False),
]


@pytest.mark.parametrize("restart, how, expect_restart", MATRIX)
def test_restart_type_by_exit_reason(
    actor_system: Any, start_sup: Start, events: Path, restart: str, how: str, expect_restart: bool
) -> None:
    sup = start_sup([probe("c", events, restart=restart), probe("witness", events)])
    old = make_exit(actor_system, sup, "c", how)
    wait_until(lambda: not pid_alive(old))
    if expect_restart:
        wait_until(lambda: restarted(sup, "c", old), message=f"{restart} child must restart after {how}")
        assert sup.child("c").restarts == 1
    elif restart == "temporary":
        wait_until(lambda: "c" not in [i.id for i in sup.which_children()], message="temporary spec removed")
    else:
        wait_until(lambda: sup.child("c").status == "undefined", message="transient spec kept, not running")
        assert sup.child("c").pid is None
    # The witness sibling is untouched under one_for_one.
    assert starts(events).count("witness") == 1
    assert sup.count_children().active == (2 if expect_restart else 1)


# -- strategies ------------------------------------------------------------------------

STRATEGY_CASES = [
    # strategy, which child fails, which children must be restarted
    (Strategy.ONE_FOR_ONE, "b", ["b"]),
    (Strategy.ONE_FOR_ALL, "b", ["a", "b", "c"]),
    (Strategy.REST_FOR_ONE, "b", ["b", "c"]),
]


@pytest.mark.parametrize("how", ["killed", "crash"])
@pytest.mark.parametrize("strategy, failing, expected", STRATEGY_CASES)
def test_strategy_restarts_the_right_children_in_order(
    actor_system: Any, start_sup: Start, events: Path, strategy: Strategy, failing: str, expected: list[str], how: str
) -> None:
    sup = start_sup([probe(x, events) for x in "abc"], strategy=strategy)
    before = sup.pids()
    make_exit(actor_system, sup, failing, how)
    wait_until(lambda: all(restarted(sup, x, before[x]) for x in expected))
    after = sup.pids()
    untouched = [x for x in "abc" if x not in expected]
    assert all(after[x] == before[x] for x in untouched)
    assert starts(events)[3:] == expected  # restarted in start order
    stopped = [e[1] for e in read_events(events) if e[0] == "terminate" and e[3] == "shutdown"]
    bystanders = [x for x in expected if x != failing]
    assert stopped == list(reversed(bystanders))  # bystanders stopped in reverse start order


def test_temporary_bystander_is_not_restarted(actor_system: Any, start_sup: Start, events: Path) -> None:
    sup = start_sup(
        [probe("a", events), probe("tmp", events, restart="temporary"), probe("c", events)],
        strategy=Strategy.ONE_FOR_ALL,
    )
    before = sup.pids()
    make_exit(actor_system, sup, "a", "killed")
    wait_until(lambda: restarted(sup, "a", before["a"]) and restarted(sup, "c", before["c"]))
    assert [i.id for i in sup.which_children()] == ["a", "c"]
    wait_until(lambda: not pid_alive(before["tmp"]))
    assert starts(events).count("tmp") == 1


# -- intensity and escalation -----------------------------------------------------------


def test_intensity_exceeded_escalates_through_two_levels(actor_system: Any, events: Path) -> None:
    inner = SupervisorSpec(children=(probe("w", events),), intensity=1, period=30)
    outer = SupervisorSpec(
        children=(ChildSpec.supervisor("inner", inner), probe("sibling", events)),
        strategy=Strategy.ONE_FOR_ONE,
        intensity=1,
        period=30,
    )
    root = start_supervisor(actor_system, outer)
    inner_client = SupervisorClient(actor_system, root.child("inner").address)

    # inner allows 1 restart: the 1st kill restarts w, the 2nd exceeds -> inner exits (shutdown)
    w1 = make_exit(actor_system, inner_client, "w", "killed")
    wait_until(lambda: restarted(inner_client, "w", w1))
    inner_pid = root.child("inner").pid
    w2 = make_exit(actor_system, inner_client, "w", "killed")
    # outer (permanent spec for inner) restarts the inner supervisor: its first restart
    assert inner_pid is not None
    wait_until(lambda: restarted(root, "inner", inner_pid))
    wait_until(lambda: not pid_alive(w2) and not pid_alive(inner_pid))
    inner_client = SupervisorClient(actor_system, root.child("inner").address)
    wait_until(lambda: inner_client.child("w").status == "running")

    # Do it again: inner escalates again, outer's own intensity (1) is now exceeded.
    sibling_pid = root.child("sibling").pid
    assert sibling_pid is not None
    w3 = make_exit(actor_system, inner_client, "w", "killed")
    wait_until(lambda: restarted(inner_client, "w", w3))
    make_exit(actor_system, inner_client, "w", "killed")
    wait_until(lambda: not pid_alive(sibling_pid), message="outer supervisor stops its children")
    wait_until(lambda: _gone(actor_system, root), message="the outer supervisor exits too")
    terminated = [e[1] for e in read_events(events) if e[0] == "terminate"]
    assert terminated[-1] == "sibling"


class _Pid:
    pass


def test_child_failing_in_init_during_restart_shows_restarting_then_recovers(
    actor_system: Any, start_sup: Start, events: Path, tmp_path: Path
) -> None:
    flag = tmp_path / "fail"
    sup = start_sup(
        [probe("c", events, fail_flag=flag, backoff=Backoff(min_delay=0.05, max_delay=0.2, jitter=0))],
        intensity=1000,
        period=60,
    )
    flag.write_text("on")
    old = make_exit(actor_system, sup, "c", "killed")
    wait_until(lambda: sup.child("c").status == "restarting")
    wait_until(lambda: len([e for e in read_events(events) if e[0] == "init_failed"]) >= 2)
    with pytest.raises(ChildRestarting):
        sup.restart_child("c")
    with pytest.raises(ChildRestarting):
        sup.delete_child("c")
    flag.unlink()
    wait_until(lambda: restarted(sup, "c", old), timeout=5)


@pytest.mark.parametrize("retried", ["after a backoff", "at once"])
def test_an_earlier_child_that_dies_while_a_later_ones_restart_keeps_failing_is_restarted_too(
    actor_system: Any, start_sup: Start, events: Path, tmp_path: Path, retried: str
) -> None:
    """rest_for_one (the host's root: ``jobs`` before ``http``): ``b``'s restart keeps
    failing and is retried (by its backoff's timer, or queued at once when it has none);
    meanwhile ``a`` dies. ``a`` joins the pending restart, as the first of ``[a, b]``: it
    runs again, in a new process, while ``b`` still fails, and ``b`` runs once it can,
    each started after ``a``. (Issue 53: ``a`` stayed ``restarting`` for ever, its
    restart dropped because ``b``'s retry had started ``b`` again meanwhile.)"""
    flag = tmp_path / "fail"
    later = (probe("b", events, fail_flag=flag, backoff=Backoff(min_delay=0.05, max_delay=0.05, jitter=0))
             if retried == "after a backoff" else probe("b", events, fail_flag=flag, init_delay=0.1))
    sup = start_sup([probe("a", events, backoff=Backoff(min_delay=0.5, max_delay=0.5, jitter=0)), later],
                    strategy=Strategy.REST_FOR_ONE, intensity=1000, period=60)

    def failures() -> int:
        return sum(1 for e in read_events(events) if e[0] == "init_failed" and e[1] == "b")

    flag.write_text("on")
    make_exit(actor_system, sup, "b", "killed")
    wait_until(lambda: failures() >= 2, timeout=10, message="b's restart fails and is retried")
    old_a = make_exit(actor_system, sup, "a", "killed")
    wait_until(lambda: restarted(sup, "a", old_a), timeout=10, message="a restarted while b's restart still fails")
    assert sup.child("b").status == "restarting"
    assert call(actor_system, sup.child("a").address, "ping") == "pong"
    flag.unlink()
    wait_until(lambda: sup.child("b").status == "running", timeout=10, message="b runs once it can")
    assert [sup.child(x).status for x in "ab"] == ["running", "running"]
    assert all(call(actor_system, sup.child(x).address, "ping") == "pong" for x in "ab")
    tried = [e[1] for e in read_events(events) if e[0] in ("start", "init_failed")]
    assert tried[-1] == "b" and tried.count("a") == 2
    assert "b" in tried[tried.index("a", 1) + 1:]  # after a's restart, b is tried again, after it


def test_a_backoff_after_failed_starts_only_restarts_a_crashed_child_at_once_and_spaces_failed_starts(
    manual_system: Any, events: Path, tmp_path: Path
) -> None:
    """``Backoff(after_crashes=False)`` (the session partitions'): a child killed while it
    ran is back at once (the supervisor's clock standing still); while its start keeps
    failing, the tries are spaced by the backoff, to the clock (how they double:
    test_supervision_units)."""
    system = manual_system
    flag = tmp_path / "fail"
    backoff = Backoff(min_delay=1.5, max_delay=1.5, jitter=0, reset_after=0.1, after_crashes=False)
    sup = start_supervisor(system, SupervisorSpec(children=(probe("c", events, fail_flag=flag, backoff=backoff),),
                                                  intensity=1000, period=60))
    advance(system, sup, 0.3)  # it has run longer than its quiet period
    old = make_exit(system, sup, "c", "killed")
    wait_until(lambda: restarted(sup, "c", old), timeout=10, interval=0.01)  # no backoff after a crash
    flag.write_text("on")
    old = make_exit(system, sup, "c", "killed")
    wait_until(lambda: init_failures(events) == 1, timeout=10)  # restarted at once: its start fails
    settled(sup, events)
    tries = sup.child("c").restarts
    advance(system, sup, 1.499)
    assert sup.child("c").restarts == tries and init_failures(events) == 1  # a failed start waits its backoff
    advance(system, sup, 0.002)
    assert sup.child("c").restarts == tries + 1  # then it is tried again
    wait_until(lambda: init_failures(events) == 2, timeout=10)
    settled(sup, events)
    flag.unlink()
    advance(system, sup, 1.5)
    wait_until(lambda: restarted(sup, "c", old), timeout=10)


def test_child_failing_in_init_during_restart_escalates(actor_system: Any, events: Path, tmp_path: Path) -> None:
    flag = tmp_path / "fail"
    sup = start_supervisor(actor_system, SupervisorSpec(children=(probe("c", events, fail_flag=flag),), intensity=2))
    pid = sup.child("c").pid
    flag.write_text("on")
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    # each restart attempt counts (OTP): attempts 1 and 2 fail, the 3rd would exceed
    # intensity 2, so the supervisor gives up without trying it
    wait_until(lambda: _gone(actor_system, sup), timeout=60)
    assert len([e for e in read_events(events) if e[0] == "init_failed"]) == 2


def _gone(system: Any, sup: SupervisorClient) -> bool:
    """The supervisor has exited: a call to it is refused as not running. One that is
    only slow to answer (a timeout: busy restarting, or a loaded machine) is not gone."""
    try:
        call(system, sup.address, _Pid(), timeout=0.5)
    except (UnknownRequest, CallTimeout):
        return False
    except Exception:
        return True
    return False


# -- starting and stopping ----------------------------------------------------------------


def test_start_fails_as_a_whole_and_stops_started_children(actor_system: Any, events: Path, tmp_path: Path) -> None:
    flag = tmp_path / "fail"
    flag.write_text("on")
    spec = SupervisorSpec(children=(probe("a", events), probe("b", events), probe("c", events, fail_flag=flag)))
    with pytest.raises(StartFailed, match="'c' failed to start"):
        start_supervisor(actor_system, spec)
    records = read_events(events)
    assert [(e[0], e[1]) for e in records] == [
        ("start", "a"),
        ("start", "b"),
        ("init_failed", "c"),
        ("terminate", "b"),
        ("terminate", "a"),
    ]
    wait_until(lambda: all(not pid_alive(int(e[2])) for e in records))

def test_a_concurrent_start_runs_the_childrens_inits_at_once(actor_system: Any, start_sup: Start,
                                                             events: Path) -> None:
    """Each init takes 1 s: one after another, the last would begin 2 s after the first
    ended; at once, all three end within 1 s of each other. They stop in reverse order."""
    sup = start_sup([probe(x, events, init_delay=1.0) for x in "abc"], concurrent_start=True)
    ended = [float(e[-1]) for e in read_events(events) if e[0] == "start"]
    assert len(ended) == 3 and max(ended) - min(ended) < 1.0
    assert [c.id for c in sup.which_children()] == ["a", "b", "c"]
    sup.stop()
    assert [e[1] for e in read_events(events) if e[0] == "terminate"] == ["c", "b", "a"]


def test_a_concurrent_start_that_fails_stops_every_child_started(actor_system: Any, events: Path,
                                                                 tmp_path: Path) -> None:
    flag = tmp_path / "fail"
    flag.write_text("on")
    spec = SupervisorSpec(children=(probe("a", events), probe("b", events, fail_flag=flag), probe("c", events)),
                          concurrent_start=True)
    with pytest.raises(StartFailed, match="'b' failed to start"):
        start_supervisor(actor_system, spec)
    records = read_events(events)
    assert sorted((e[0], e[1]) for e in records) == [("init_failed", "b"), ("start", "a"), ("start", "c"),
                                                    ("terminate", "a"), ("terminate", "c")]
    assert [e[1] for e in records if e[0] == "terminate"] == ["c", "a"]
    wait_until(lambda: all(not pid_alive(int(e[2])) for e in records))



def test_shutdown_stops_children_in_reverse_order(actor_system: Any, start_sup: Start, events: Path) -> None:
    sup = start_sup([probe(x, events) for x in "abcd"])
    pids = sup.pids()
    sup.stop()
    assert [e[1] for e in read_events(events) if e[0] == "terminate"] == ["d", "c", "b", "a"]
    assert all(e[3] == "shutdown" for e in read_events(events) if e[0] == "terminate")
    wait_until(lambda: not any(pid_alive(p) for p in pids.values() if p))


def test_child_ignoring_shutdown_is_killed_after_its_timeout(manual_system: Any, events: Path) -> None:
    """A child that ignores its shutdown is killed once its ``shutdown`` timeout has
    passed on the supervisor's clock, not before; the supervisor then goes on (the
    next child in shutdown order) and is gone."""
    system = manual_system
    sup = start_supervisor(system, SupervisorSpec(children=(
        probe("calm", events), probe("stubborn", events, ignore_shutdown=True, shutdown=0.5))))
    stubborn = sup.child("stubborn").pid
    assert stubborn is not None
    stopping = threading.Thread(target=sup.stop, kwargs={"timeout": 30}, daemon=True)
    stopping.start()

    def terminated() -> list[str]:
        return [e[1] for e in read_events(events) if e[0] == "terminate"]

    # It has its shutdown request (the supervisor set the timeout's timer as it sent it).
    wait_until(lambda: terminated() == ["stubborn"], timeout=10)
    assert advance(system, sup, 0.499) == 0  # nothing is due before its timeout
    assert pid_alive(stubborn) and terminated() == ["stubborn"]
    assert advance(system, sup, 0.002) >= 1  # its timeout: killed
    wait_until(lambda: not pid_alive(stubborn), timeout=10)
    stopping.join(30)
    assert not stopping.is_alive()  # the supervisor went on and is gone: it did not hang
    assert terminated() == ["stubborn", "calm"]


def test_brutal_kill_skips_terminate(actor_system: Any, start_sup: Start, events: Path) -> None:
    sup = start_sup([probe("a", events), probe("b", events, shutdown="brutal_kill")])
    b = sup.child("b").pid
    sup.terminate_child("b")
    assert b is not None
    wait_until(lambda: not pid_alive(b))
    assert [e for e in read_events(events) if e[0] == "terminate"] == []
    assert sup.child("b").status == "undefined"


# -- significant children ---------------------------------------------------------------


def test_any_significant_shuts_the_supervisor_down(actor_system: Any, start_sup: Start, events: Path) -> None:
    sup = start_sup(
        [probe("main", events, restart="transient", significant=True), probe("helper", events)],
        auto_shutdown=AutoShutdown.ANY_SIGNIFICANT,
    )
    helper = sup.child("helper").pid
    make_exit(actor_system, sup, "main", "normal")
    assert helper is not None
    wait_until(lambda: not pid_alive(helper))
    wait_until(lambda: _gone(actor_system, sup), timeout=60)


def test_all_significant_waits_for_every_significant_child(actor_system: Any, start_sup: Start, events: Path) -> None:
    sup = start_sup(
        [
            probe("one", events, restart="temporary", significant=True),
            probe("two", events, restart="transient", significant=True),
            probe("helper", events),
        ],
        auto_shutdown=AutoShutdown.ALL_SIGNIFICANT,
    )
    make_exit(actor_system, sup, "one", "normal")
    wait_until(lambda: [i.id for i in sup.which_children()] == ["two", "helper"])
    assert sup.child("helper").status == "running"
    # a crash of a transient significant child restarts it: no shutdown
    old = make_exit(actor_system, sup, "two", "crash")
    wait_until(lambda: restarted(sup, "two", old))
    make_exit(actor_system, sup, "two", "shutdown")
    wait_until(lambda: _gone(actor_system, sup), timeout=60)


# -- the supervisor API --------------------------------------------------------------------


def test_child_api_and_otp_error_results(actor_system: Any, start_sup: Start, events: Path) -> None:
    sup = start_sup([probe("a", events)])
    with pytest.raises(ChildRunning):
        sup.restart_child("a")
    with pytest.raises(ChildRunning):
        sup.delete_child("a")
    with pytest.raises(ChildNotFound):
        sup.terminate_child("nope")
    with pytest.raises(ChildAlreadyStarted):
        sup.start_child(probe("a", events))
    sup.terminate_child("a")
    assert sup.child("a").status == "undefined"
    with pytest.raises(ChildAlreadyPresent):
        sup.start_child(probe("a", events))
    started = sup.restart_child("a")
    assert started.pid is not None and pid_alive(started.pid)
    sup.terminate_child("a")
    sup.delete_child("a")
    with pytest.raises(ChildNotFound):
        sup.get_childspec("a")
    started = sup.start_child(probe("b", events))
    assert sup.get_childspec("b").id == "b"
    counts = sup.count_children()
    assert (counts.specs, counts.active, counts.workers, counts.supervisors) == (1, 1, 1, 0)
    with pytest.raises(BadRequest):
        sup._call(__import__("supervision._messages", fromlist=["StartChild"]).StartChild("not a spec"))  # type: ignore[arg-type]
    with pytest.raises(UnknownRequest):
        call(actor_system, sup.address, {"bogus": 1})


def test_which_children_reports_states_and_restart_counts(actor_system: Any, start_sup: Start, events: Path) -> None:
    nested = ChildSpec.supervisor("nested", SupervisorSpec(children=(probe("n1", events),)))
    sup = start_sup([probe("a", events), nested, probe("t", events, restart="transient")])
    infos = {i.id: i for i in sup.which_children()}
    assert [i.id for i in sup.which_children()] == ["a", "nested", "t"]
    assert infos["nested"].type == "supervisor" and infos["a"].type == "worker"
    assert all(i.status == "running" and i.pid for i in infos.values())
    old = make_exit(actor_system, sup, "a", "killed")
    wait_until(lambda: restarted(sup, "a", old))
    make_exit(actor_system, sup, "t", "normal")
    wait_until(lambda: sup.child("t").status == "undefined")
    assert sup.child("a").restarts == 1
    counts = sup.count_children()
    assert (counts.specs, counts.active, counts.supervisors, counts.workers) == (3, 2, 1, 2)


# -- orphans -------------------------------------------------------------------------------


def test_no_orphans_after_a_supervisor_is_killed(actor_system: Any, start_sup: Start, events: Path) -> None:
    nested = ChildSpec.supervisor("nested", SupervisorSpec(children=tuple(probe(f"n{i}", events) for i in range(3))))
    sup = start_sup([nested])
    nested_client = SupervisorClient(actor_system, sup.child("nested").address)
    grandchildren = [p for p in nested_client.pids().values() if p]
    nested_pid = sup.child("nested").pid
    assert nested_pid is not None and len(grandchildren) == 3
    os.kill(nested_pid, signal.SIGKILL)
    wait_until(lambda: not any(pid_alive(p) for p in grandchildren), message="grandchildren die with their parent")
    # and the outer supervisor restarts the nested one with fresh children
    wait_until(lambda: restarted(sup, "nested", nested_pid))


def test_backoff_delays_the_restart(manual_system: Any, events: Path) -> None:
    """A child with a backoff, killed, is restarted once its delay has passed on the
    supervisor's clock, not before."""
    system = manual_system
    sup = start_supervisor(system, SupervisorSpec(children=(
        probe("c", events, backoff=Backoff(min_delay=0.4, max_delay=0.4, jitter=0)),)))
    old = make_exit(system, sup, "c", "killed")
    wait_until(lambda: sup.child("c").status == "restarting")  # its restart is due in 0.4 s of the clock
    advance(system, sup, 0.399)
    assert sup.child("c").status == "restarting" and sup.child("c").restarts == 0
    advance(system, sup, 0.002)
    assert sup.child("c").restarts == 1  # tried now
    wait_until(lambda: restarted(sup, "c", old), timeout=10)


def test_a_temporary_child_killed_and_started_again_under_its_id_at_once_lives_on(
        manual_system: Any, events: Path) -> None:
    """A temporary child killed (-9), removed, and started again under the same id at
    once: the new process is not taken for the old one's end (a timer of the old
    process's end fires 50 ms of the supervisor's clock after its pidfd did; a new
    record's first tag must differ)."""
    system = manual_system
    sup = start_supervisor(system, SupervisorSpec(children=(probe("witness", events),)))
    for _ in range(5):
        sup.start_child(probe("x", events, restart="temporary"))
        old = sup.child("x").pid
        assert old is not None
        os.kill(old, signal.SIGKILL)
        wait_until(lambda: "x" not in [i.id for i in sup.which_children()], interval=0.001,
                   message="the temporary child removed")
        sup.start_child(probe("x", events, restart="temporary"))
        new = sup.child("x").pid
        # The old process's end timer fires (the clock moved on in 50 ms steps until a
        # timer fired: the pidfd may be seen just after the child was removed).
        wait_until(lambda: advance(system, sup, 0.05) > 0, timeout=10, interval=0.01,
                   message="the old process's end timer fired")
        info = sup.child("x")
        assert info.status == "running" and info.pid == new and pid_alive(new), info
        sup.terminate_child("x")  # a temporary child's spec goes with it
