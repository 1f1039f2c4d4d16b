"""The ``cluster`` actor: one per host of a cluster, among the host's services.

Hosts form a cluster with Thespian's multi-system convention: each member's actor
system is started with the leader's address (``adk-actors serve --join LEADER``), checks
in with it, and Thespian tells the leader's actors that ask (``notifyOnSystemRegistration
Changes``) which members joined and which left or stopped checking in. There is no
protocol of ours for membership: only what each host publishes as its actor system's
``adk_member`` capability (which Thespian hands the leader at each check-in, and at once
when it changes), and the view the leader sends out.

Every host's cluster actor, at start and every ``refresh`` seconds, in order:

1. looks up its host's ``sessions`` supervisor and root in the host's registry and
   publishes them, with its own address, as ``adk_member`` (only when they changed: a
   change reaches every actor of the system, and the leader);
2. on the leader: asks Thespian again for the members (it tells of joins and leaves
   only, so the members' current capabilities are read by asking again; a member it
   has not named in ``UNANNOUNCED_ROUNDS`` such rounds has left, though the word of it
   was missed: Thespian tells of a leave only to the actors listening at that moment,
   and an ask again is a stop and a start of listening), makes the
   :class:`~._placement.ClusterView` (the leader and every member that published its
   ``adk_member``), and casts it to every member's cluster actor (each refresh: a
   member's restarted cluster actor gets it within one);
3. a view it got (its own, on the leader) that differs from the last one is cast to its
   host's partitions (``ToPartitions``: a partition that restarts later gets it too).

Calls: ``"view"`` answers the last view (None before the first). A member's cluster
actor that hears nothing from the leader keeps its last view: the hosts serve on, and
the view changes again once the leader is back (its members check in again within a
check-in period).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from supervision import BadRequest, CallerRef, GenServer
from supervision.protocol import (
    REGISTRY_OWNER,
    Call,
    Cast,
    ErrorReply,
    Reply,
    ToPartitions,
    WhereIs,
)

from ._placement import ClusterView, Member

__all__ = ["MEMBER_CAPABILITY", "ClusterActor", "ClusterArgs"]

#: The capability each member publishes: (its sessions supervisor, its root, its cluster actor).
MEMBER_CAPABILITY = "adk_member"
#: The ToPartitions topic of the view.
VIEW_TOPIC = "cluster-view"
#: The leader takes a member Thespian has not named in this many of its asks (one each
#: refresh) as gone: its leave was told while the leader was not listening.
UNANNOUNCED_ROUNDS = 5


@dataclass(frozen=True)
class ClusterArgs:
    name: str  # this host: its actor system's "<address>:<port>"
    leader: str  # the leader's "<address>:<port>" (this host's name on the leader)
    refresh: float = 1.0


@dataclass(frozen=True)
class _Refresh:
    pass


class ClusterActor(GenServer):
    def init(self, args: ClusterArgs) -> None:
        if not isinstance(args, ClusterArgs):
            raise BadRequest("ClusterActor needs ClusterArgs")
        self.args = args
        self.leading = args.name == args.leader
        self.sessions: Any = None
        self.root: Any = None
        self.published: tuple[Any, Any] | None = None
        self.members: dict[str, Member] = {}  # on the leader: the other members, by name
        self.rounds = 0  # on the leader: how many times it asked Thespian for the members
        self.announced: dict[str, int] = {}  # on the leader: the round each member was last named in
        self.view: ClusterView | None = None
        self.sent: tuple[ClusterView, Any] | None = None  # the view last cast to the partitions, and where
        if self.leading:
            self.notifyOnSystemRegistrationChanges(True)
        self._refresh()

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if request == "view":
            return self.view
        return super().handle_call(request, caller)

    def handle_cast(self, request: Any) -> None:
        if isinstance(request, ClusterView) and not self.leading:
            self._take(request)
            return
        super().handle_cast(request)

    def handle_timeout(self, payload: Any) -> None:
        if isinstance(payload, _Refresh):
            self._refresh()

    def handle_info(self, message: Any, sender: Any) -> None:
        if type(message).__name__ == "ActorSystemConventionUpdate":
            self._member_changed(message)
        elif isinstance(message, Reply) and message.ref in ("cluster-sessions", "cluster-root"):
            if message.ref == "cluster-sessions":
                self.sessions = message.value
            else:
                self.root = message.value
            self._publish()
        elif isinstance(message, ErrorReply) and message.ref in ("cluster-sessions", "cluster-root"):
            self.log.warning("the registry did not answer %s: %s", message.ref, message.detail)
        else:
            super().handle_info(message, sender)

    def _refresh(self) -> None:
        """Step 1 (its answers come as Replies), then 2 on the leader; again in ``refresh`` s."""
        if self.registry is not None:
            self.send(self.registry, Call(WhereIs("sessions"), ref="cluster-sessions"))
            self.send(self.registry, Call(WhereIs(REGISTRY_OWNER), ref="cluster-root"))
        if self.leading:
            self._drop_unannounced()
            self.rounds += 1
            self.notifyOnSystemRegistrationChanges(False)  # asked again: every member's capabilities now
            self.notifyOnSystemRegistrationChanges(True)
            self._send_view()
        self.send_after(self.args.refresh, _Refresh())

    def _publish(self) -> None:
        """This host's entry, as a capability of its actor system, when it changed."""
        if self.sessions is None or self.root is None or (self.sessions, self.root) == self.published:
            return
        self.published = (self.sessions, self.root)
        self.updateCapability(MEMBER_CAPABILITY, (self.sessions, self.root, self.myAddress))
        if self.leading:
            self._send_view()
        elif self.view is not None:
            self._take(self.view)  # a new sessions supervisor: its partitions need the view

    def _member_changed(self, update: Any) -> None:
        """The leader: a member joined, checked in with new capabilities, or left."""
        address = update.remoteAdminAddress
        name = _name_of(address)
        if name is None:
            return
        published = (update.remoteCapabilities or {}).get(MEMBER_CAPABILITY)
        if update.remoteAdded:
            self.announced[name] = self.rounds
        if not update.remoteAdded or published is None:
            if self.members.pop(name, None) is not None and not update.remoteAdded:
                self.log.warning("cluster member %s left (deregistered, or stopped checking in)", name)
        else:
            sessions, root, cluster = published
            known = self.members.get(name)
            self.members[name] = Member(name, sessions, root, cluster)
            if known is None:
                self.log.info("cluster member %s joined", name)

    def _drop_unannounced(self) -> None:
        """The leader: a member Thespian has not named in ``UNANNOUNCED_ROUNDS`` asks has
        left (see the module, 2)."""
        for name in list(self.members):
            if self.rounds - self.announced.get(name, self.rounds) >= UNANNOUNCED_ROUNDS:
                del self.members[name]
                self.announced.pop(name, None)
                self.log.warning("cluster member %s left (no longer named by the convention; its leave "
                                 "was told while the leader was not listening)", name)

    def _send_view(self) -> None:
        """The leader: the view from what it knows, to every member and to its own host."""
        if self.published is None:
            return
        me = Member(self.args.name, self.published[0], self.published[1], self.myAddress)
        view = ClusterView(self.args.name, tuple(sorted([me, *self.members.values()], key=lambda m: m.name)))
        for member in view.members:
            if member.name != self.args.name and member.cluster is not None:
                self.send(member.cluster, Cast(view))
        self._take(view)

    def _take(self, view: ClusterView) -> None:
        """Step 3: a new view goes to this host's partitions."""
        self.view = view
        if self.sessions is not None and (view, self.sessions) != self.sent:  # (a new sessions supervisor too)
            self.sent = (view, self.sessions)
            self.send(self.sessions, Cast(ToPartitions(VIEW_TOPIC, view)))


def _name_of(address: Any) -> str | None:
    """A remote admin's ``<address>:<port>`` (Thespian's TCP address details), or None."""
    where = getattr(getattr(address, "addressDetails", None), "sockname", None)
    if not where:
        return None
    return f"{where[0]}:{where[1]}"
