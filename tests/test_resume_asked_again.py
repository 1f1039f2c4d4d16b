"""A resume asked again with the same run id, once it ended (a Runner asks again so
when its partition died before it heard the run's end), is followed as a turn asked
again is: its events and its end, nothing run twice; not refused ``invalid_request``
(the caller would take a resume that completed for one that failed). A real host, real
kills."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest
from durable_agents import counted
from test_durable_runs import APPS, _kill_paused, _partitions_listed, _start_paused

from adk_actors.runtime import Host, HostConfig
from supervision import SupervisorClient
from supervision.testing import wait_until


@pytest.fixture
def host(actor_system: Any, tmp_path: Path) -> Any:
    with Host(HostConfig(apps=APPS, data_dir=str(tmp_path / "data")), system=actor_system) as running:
        yield running


def test_a_resume_asked_again_after_its_partition_died_is_followed_to_its_end(host: Host, tmp_path: Path) -> None:
    runner = host.runner("durable")
    counts = tmp_path / "counts.txt"
    thread, box = _start_paused(runner, counts, "looped", user="ann")  # looped's note (idempotent) ran
    _kill_paused(host, runner, thread, box, "ann")
    first = list(runner.resume("ann", "s1", "run-first-ann", new_run_id="run-second"))
    assert [e.content.text for e in first if e.content is not None][-1] == "last done"

    # The resume's partition dies; its caller, not sure it heard the end, asks again.
    sessions = SupervisorClient(host.system, host.root.child("sessions").address)  # type: ignore[union-attr]
    owner = next(i for i in sessions.which_children() if i.address == host.partition_for("durable", "ann", "s1"))
    assert owner.pid is not None
    os.kill(owner.pid, signal.SIGKILL)
    wait_until(lambda: sessions.child(owner.id).status == "running" and sessions.child(owner.id).pid != owner.pid,
               timeout=20)
    _partitions_listed(host)
    before = counted(counts)
    again = list(runner.resume("ann", "s1", "run-first-ann", new_run_id="run-second"))
    assert {e.id for e in first} <= {e.id for e in again}  # its events, as committed
    assert [e.content.text for e in again if e.content is not None][-1] == "last done"
    assert counted(counts) == before  # nothing ran again
    last = runner.last_run("ann", "s1")
    assert last is not None and (last.run_id, last.status) == ("run-second", "done")
