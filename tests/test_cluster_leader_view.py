"""The leader's view of its members, as its ``cluster`` actor keeps it from what
Thespian tells it (unit tests: the actor's rules driven by hand, no actor system).

Thespian tells of a member's leave only to the actors listening at that moment, and the
leader stops and starts listening at every refresh (to read the members' current
capabilities). A leave told in that gap was missed, and the dead member stayed in the
view for good (a failover test at load saw it: the leader's view still named a member
killed 30 s before). A member no longer named for ``UNANNOUNCED_ROUNDS`` refreshes is
now taken as gone; one named at every refresh stays.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from adk_actors.runtime._cluster import (
    MEMBER_CAPABILITY,
    UNANNOUNCED_ROUNDS,
    ClusterActor,
    ClusterArgs,
)


@dataclass
class _Sockname:
    sockname: tuple[str, int]


@dataclass
class _Address:
    addressDetails: _Sockname


@dataclass
class _Update:
    """Thespian's ActorSystemConventionUpdate, as the actor reads it."""

    remoteAdminAddress: _Address
    remoteCapabilities: dict[str, Any]
    remoteAdded: bool


class _Leader(ClusterActor):
    """The leader's cluster actor with Thespian's side recorded instead of sent."""

    def __init__(self) -> None:  # (no actor system)
        self.args = ClusterArgs(name="127.0.0.1:1000", leader="127.0.0.1:1000", refresh=1.0)
        self.leading = True
        self.sessions = self.root = None
        self.published = ("sessions", "root")
        self.members = {}
        self.rounds = 0
        self.announced = {}
        self.view = None
        self.sent = None
        self.registry = None
        self.listening: list[bool] = []
        self.cast: list[Any] = []
        self.logged = logging.getLogger("test_cluster_leader_view")

    @property
    def log(self) -> Any:
        return self.logged

    def notifyOnSystemRegistrationChanges(self, enable: bool) -> None:
        self.listening.append(enable)

    def send(self, target: Any, message: Any) -> None:
        self.cast.append((target, message))

    def send_after(self, seconds: float, payload: Any) -> None:
        pass

    @property
    def myAddress(self) -> Any:
        return "leader"


def _member(port: int, added: bool = True) -> _Update:
    return _Update(_Address(_Sockname(("127.0.0.2", port))), {MEMBER_CAPABILITY: ("s", "r", "c")}, added)


def _view(leader: _Leader) -> list[str]:
    assert leader.view is not None
    return [m.name for m in leader.view.members]


def test_a_member_whose_leave_was_missed_leaves_the_view_after_the_rounds_it_was_not_named() -> None:
    leader = _Leader()
    leader._refresh()
    leader._member_changed(_member(2000))
    leader._member_changed(_member(3000))
    leader._refresh()
    assert _view(leader) == ["127.0.0.1:1000", "127.0.0.2:2000", "127.0.0.2:3000"]
    # From now on Thespian names only 2000 at each ask: 3000 died while the leader was
    # between its stop and its start of listening, and its leave was never told.
    for _ in range(UNANNOUNCED_ROUNDS - 1):
        leader._member_changed(_member(2000))
        leader._refresh()
        assert "127.0.0.2:3000" in _view(leader)  # not dropped before its rounds are out
    leader._member_changed(_member(2000))
    leader._refresh()
    assert _view(leader) == ["127.0.0.1:1000", "127.0.0.2:2000"]
    assert leader.listening[-2:] == [False, True]  # it asks again at each refresh


def test_a_member_named_at_every_ask_stays_and_a_told_leave_takes_it_out_at_once() -> None:
    leader = _Leader()
    for _ in range(3 * UNANNOUNCED_ROUNDS):
        leader._refresh()
        leader._member_changed(_member(2000))
        leader._member_changed(_member(3000))
    leader._refresh()
    assert _view(leader) == ["127.0.0.1:1000", "127.0.0.2:2000", "127.0.0.2:3000"]
    leader._member_changed(_member(3000, added=False))
    leader._refresh()
    assert _view(leader) == ["127.0.0.1:1000", "127.0.0.2:2000"]
    leader._member_changed(_member(3000))  # back: in the view again
    leader._refresh()
    assert _view(leader) == ["127.0.0.1:1000", "127.0.0.2:2000", "127.0.0.2:3000"]
