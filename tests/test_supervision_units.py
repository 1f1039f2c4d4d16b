"""Pure parts of supervision: spec validation, the intensity window, backoff (fake clock)."""

from __future__ import annotations

import random
import socket

import pytest

from supervision import (
    Backoff,
    ChildSpec,
    DynamicSupervisorSpec,
    Restart,
    SpecError,
    Strategy,
    SupervisorSpec,
)
from supervision.lowlevel import (
    BackoffState,
    ChildType,
    RestartIntensity,
    free_port,
    takes_connection,
)
from supervision.testing import Probe


def test_child_spec_defaults_follow_otp() -> None:
    worker = ChildSpec(id="w", start=Probe)
    assert worker.start == "supervision.testing:Probe"
    assert worker.restart is Restart.PERMANENT
    assert worker.shutdown == 5.0
    assert worker.type is ChildType.WORKER
    sup = ChildSpec.supervisor("s", SupervisorSpec())
    assert sup.shutdown == "infinity" and sup.type is ChildType.SUPERVISOR


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"significant": True}, "significant"),
        ({"restart": "permanent", "significant": True}, "significant"),
        ({"shutdown": -1}, "shutdown"),
        ({"shutdown": "soon"}, "shutdown"),
        ({"start": "not a path"}, "start"),
        ({"id": ""}, "id"),
        ({"start_timeout": 0}, "start_timeout"),
        ({"restart": "sometimes"}, "sometimes"),
    ],
)
def test_child_spec_rejects_bad_input(kwargs: dict[str, object], fragment: str) -> None:
    base: dict[str, object] = {"id": "c", "start": Probe}
    base.update(kwargs)
    with pytest.raises((SpecError, ValueError), match=fragment):
        ChildSpec(**base)  # type: ignore[arg-type]


def test_significant_transient_and_temporary_are_allowed() -> None:
    assert ChildSpec(id="a", start=Probe, restart="transient", significant=True).significant
    assert ChildSpec(id="b", start=Probe, restart="temporary", significant=True).significant


def test_local_function_cannot_be_a_start() -> None:
    class Local:
        pass

    with pytest.raises(SpecError, match="module-level"):
        ChildSpec(id="x", start=Local)


def test_supervisor_spec_validation() -> None:
    a = ChildSpec(id="a", start=Probe)
    with pytest.raises(SpecError, match="duplicate child id"):
        SupervisorSpec(children=[a, a])
    with pytest.raises(SpecError, match="intensity"):
        SupervisorSpec(intensity=-1)
    with pytest.raises(SpecError, match="period"):
        SupervisorSpec(period=0)
    registry = ChildSpec(id="reg", start="supervision:Registry", provides_registry=True)
    with pytest.raises(SpecError, match="rest_for_one or one_for_all"):
        SupervisorSpec(children=[registry])
    named_first = ChildSpec(id="n", start=Probe, name="n")
    with pytest.raises(SpecError, match="before the registry"):
        SupervisorSpec(children=[named_first, registry], strategy=Strategy.REST_FOR_ONE)
    with pytest.raises(SpecError, match="max_children"):
        DynamicSupervisorSpec(max_children=0)


def test_intensity_window_is_sliding_and_inclusive() -> None:
    window = RestartIntensity(intensity=3, period=5.0)
    assert window.add_restart(0.0)
    assert window.add_restart(1.0)
    assert window.add_restart(2.0)
    assert not window.add_restart(5.0)  # 4 restarts within [0, 5]: the one at 0 is exactly period old
    fresh = RestartIntensity(intensity=3, period=5.0)
    for t in (0.0, 1.0, 2.0):
        fresh.add_restart(t)
    assert fresh.add_restart(5.1)  # the restart at 0.0 fell out of the window
    assert fresh.recent(5.1) == 3


def test_intensity_zero_gives_up_on_first_restart() -> None:
    assert not RestartIntensity(0, 5.0).add_restart(100.0)


def test_intensity_counts_slow_restarts_forever() -> None:
    window = RestartIntensity(intensity=1, period=1.0)
    for i in range(100):  # OTP's multiple_restarts: one restart every 2.1 s must survive
        assert window.add_restart(i * 2.1)


def test_backoff_doubles_up_to_max_without_jitter() -> None:
    state = BackoffState(Backoff(min_delay=0.1, max_delay=1.0, jitter=0.0, reset_after=100))
    delays = [state.next_delay(now=0.0) for _ in range(6)]
    assert delays == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.0, 1.0])


def test_backoff_jitter_stays_within_its_fraction() -> None:
    state = BackoffState(Backoff(min_delay=1.0, max_delay=1.0, jitter=0.2, reset_after=100), rng=random.Random(7))
    delays = [state.next_delay(now=0.0) for _ in range(200)]
    assert all(1.0 <= d <= 1.2 for d in delays)
    assert max(delays) - min(delays) > 0.1  # it really is random


def test_backoff_resets_after_a_quiet_period() -> None:
    state = BackoffState(Backoff(min_delay=0.1, max_delay=10, jitter=0.0, reset_after=5.0))
    state.started(0.0)
    assert state.next_delay(1.0) == pytest.approx(0.1)
    state.started(1.1)
    assert state.next_delay(2.0) == pytest.approx(0.2)  # failed again soon: grows
    state.started(2.2)
    assert state.next_delay(7.3) == pytest.approx(0.1)  # ran 5.1 s quietly: starts over
    assert Backoff(min_delay=1, max_delay=3).quiet_period == 2.0


def test_a_child_whose_restarts_fail_waits_ever_longer_however_long_it_ran_before() -> None:
    """A child that ran for an hour, then cannot start again (its store out of reach):
    each failed start doubles the wait, instead of counting the hour again as quiet."""
    state = BackoffState(Backoff(min_delay=0.1, max_delay=10, jitter=0.0, reset_after=1.0))
    state.started(0.0)
    delays = [state.next_delay(3600.0 + i) for i in range(6)]  # no start succeeds in between
    assert delays == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.6, 3.2])
    state.started(3610.0)
    assert state.next_delay(3620.0) == pytest.approx(0.1)  # it ran 10 s quietly: starts over


# -- health checks: the monitor's bookkeeping on a clock passed in (no sleeping) ---------------


def test_health_monitor_pings_one_at_a_time_and_finds_who_stopped_answering() -> None:
    from supervision import SpecError
    from supervision.lowlevel import HealthCheck, HealthMonitor
    from supervision.protocol import HEALTH_PING

    monitor = HealthMonitor(HealthCheck(interval=1.0, timeout=5.0))
    first = monitor.ping("a", now=0.0)
    assert first is not None and first.request == HEALTH_PING
    assert monitor.ping("a", now=1.0) is None  # one ping out at a time: a slow child is not flooded
    b = monitor.ping("b", now=1.0)
    assert b is not None
    assert monitor.overdue(4.9) == []
    assert monitor.answered(b.ref) and not monitor.answered(b.ref)  # answered once; unknown refs are not pings
    assert not monitor.answered("some other call's ref")
    assert monitor.overdue(5.0) == ["a"]  # "a" left its ping unanswered 5 s
    assert monitor.overdue(100.0) == []  # and was forgotten: its next incarnation is pinged afresh
    again = monitor.ping("b", now=2.0)
    assert again is not None
    monitor.forget("b")  # gone: its late answer no longer counts, nor does its silence
    assert not monitor.answered(again.ref) and monitor.overdue(100.0) == []
    with pytest.raises(SpecError):
        HealthCheck(interval=1.0, timeout=0.5)
    with pytest.raises(SpecError):
        HealthCheck(interval=0, timeout=5)


def test_free_port_gives_no_port_another_address_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host on 127.0.0.2 is given a port free on every address: a port a process holds
    on 127.0.0.1 is passed over (a host's start checks the wildcard address too, and
    failed a cluster's member in CI when it was not)."""
    with socket.socket() as held, socket.socket() as spare:
        held.bind(("127.0.0.1", 0))
        held.listen()
        spare.bind(("", 0))
        free = spare.getsockname()[1]
        spare.close()
        tried = iter([held.getsockname()[1], free])
        monkeypatch.setattr(random, "randrange", lambda low, high: next(tried))
        assert free_port("127.0.0.2") == free


def test_takes_connection_reads_a_host_port_string_as_a_lease_names_its_holder() -> None:
    """``"<host>:<port>"``, as a lease names a holder's actor system: a listening port is
    a yes, a closed one or a port that is no number a no, a string with no port None."""
    with socket.socket() as listening, socket.socket() as closed:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        closed.bind(("127.0.0.1", 0))
        gone = closed.getsockname()[1]
        closed.close()
        assert takes_connection(f"127.0.0.1:{listening.getsockname()[1]}") is True
        assert takes_connection(f"127.0.0.1:{gone}") is False
        assert takes_connection("127.0.0.1:http-ish") is False
        assert takes_connection("no-port-here") is None
