"""A session held away from its home goes home once that home answers again (issue 59).

A partition passes over a home that takes no TCP connection within
``HOLDER_CONNECT_WAIT`` (dead, cut off, or too slow to answer on a loaded machine) and
serves the session itself. The view still names that home, so no new view comes to move
the session back: the partition looks at the home again every ``AWAY_RECHECK`` of its
clock while it holds such a session, and lets the session go (its lease released) once
the home answers, so that its next request activates it there. Tested on one host whose
partition is given a view naming a second member, on a manual clock: the "home" is a
loopback port that first refuses and then listens.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import runtime_agents

from adk_actors.messages import HeldKeys, session_key
from adk_actors.runtime import ClusterView, Host, HostConfig, Member, ranked
from adk_actors.runtime._partition_homes import AWAY_RECHECK
from adk_actors.store import SQLiteSessionStore
from supervision import call, cast
from supervision.lowlevel import MANUAL_CLOCK_VARIABLE, free_port
from supervision.protocol import AdvanceClock
from supervision.testing import running_actor_system


@pytest.fixture
def manual_system(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv(MANUAL_CLOCK_VARIABLE, "SessionPartition")
    with running_actor_system(tmp_path / "logs") as system:
        yield system


def test_a_session_whose_home_was_passed_over_goes_home_once_the_home_answers(
        manual_system: Any, tmp_path: Path) -> None:
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), partitions=1)
    with Host(config, system=manual_system) as host:
        port = free_port()
        me, home = Member(host.holder_name, sessions="here"), Member(f"127.0.0.1:{port}", sessions="there")
        members = (me, home)
        # A session whose home is the other member (nothing listens on its port yet).
        session = next(s for s in (f"s{i}" for i in range(100))
                       if ranked(session_key("echo", "ann", s), members)[0] is home)
        key = session_key("echo", "ann", session)
        partition = host.partition_for("echo", "ann", session)
        cast(manual_system, partition, ClusterView(leader=me.name, members=tuple(sorted(members, key=lambda m: m.name))))

        def held() -> bool:
            return key in call(manual_system, partition, HeldKeys())

        runner = host.runner("echo")
        runner.create_session("ann", session)  # its home refuses: passed over, held here
        assert [e.content.text for e in runner.run("ann", session, "one")][-1] == "echo: one (turn 1)"
        assert held()

        call(manual_system, partition, AdvanceClock(AWAY_RECHECK))
        assert held()  # looked at again: the home still refuses, so the session stays

        listener = socket.create_server(("127.0.0.1", port))  # the home answers again
        try:
            call(manual_system, partition, AdvanceClock(AWAY_RECHECK - 0.01))
            assert held()  # not before its next look
            call(manual_system, partition, AdvanceClock(0.01))
            assert not held()  # let go, its lease released: its home may take it at once
            store = SQLiteSessionStore(config.store_path)
            try:
                store.acquire_lease("echo", "ann", session, f"{home.name}/partition-0", ttl=30)
            finally:
                store.close()
        finally:
            listener.close()
