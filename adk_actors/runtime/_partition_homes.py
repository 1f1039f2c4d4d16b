"""Where a partition's sessions live when several hosts share one store: forwards and homes.

:class:`PartitionHomes` is the part of ``SessionPartition`` (which inherits it) that
sends a request on when this host is not the one to serve its session. In order: a
session whose home (the first live member of the cluster's ranking for its key) is
another host is sent there (``_send_home``), unless held here already; a session
another host's partition holds (its lease) is forwarded to that holder
(``_forward``), once its host is seen to take a connection (``_host_answers``), and
``FORWARD_RECHECK`` later the holder's host is looked at again (``holder_gone`` to the
caller when it stopped). A new cluster view lets go of the idle sessions whose home is
now elsewhere (``_move_home``); busy ones leave once their runs have ended. A session
held here because its home was passed over (it took no connection when asked: dead,
cut off, or too busy to answer within ``HOLDER_CONNECT_WAIT``) is looked at again every
``AWAY_RECHECK`` while the view names that home: once the home answers, it goes home
as above (``_watch_home``).

It also fences writes (``_check_caller_lives``): a state update or a turn whose caller
died, or whose deadline passed, before the partition took it is refused, unwritten.
"""

from __future__ import annotations

from typing import Any

from supervision import CallerRef, CallError, Clock
from supervision.lowlevel import FORWARDED, WallClock, takes_connection
from supervision.protocol import ErrorReply

from ..messages import CreateSession, FollowRun
from ..store import SessionLeased
from ._caller_line import CallerLine
from ._partition_faults import PartitionFaults
from ._partition_timers import ForwardRecheck, MoveHome
from ._placement import ClusterView, Homed, Member, Reachability, ranked
from ._session import Session

__all__ = ["AWAY_RECHECK", "DEADLINE_MARGIN", "FORWARD_RECHECK", "HOLDER_CONNECT_WAIT", "PartitionHomes"]

#: How long a partition waits for another host's actor system to take a connection
#: before it forwards a request to that host (see PartitionHomes._host_answers).
HOLDER_CONNECT_WAIT = 0.25
#: How long after forwarding a request the holder's host is looked at again (see
#: PartitionHomes._recheck_forward).
FORWARD_RECHECK = 0.3
#: How often a partition holding sessions whose home (in the view) was passed over
#: looks at that home again (see PartitionHomes._watch_home).
AWAY_RECHECK = 2.0
#: A write whose caller's deadline is this close (seconds) is refused as if it had
#: passed (see PartitionHomes._check_caller_lives): it covers the write and its answer's
#: way back, and clocks of several hosts up to this far apart (NTP keeps a LAN's
#: within milliseconds; on one machine the clock is one).
DEADLINE_MARGIN = 0.1


class PartitionHomes(PartitionFaults):
    """Forwards to a session's holder or home, and moves home (see the module)."""

    address: Any
    view: ClusterView | None  # the cluster, when this host is in one (runtime._placement)
    hosts_seen: Reachability  # which other hosts take a connection
    leaving: set[str]  # busy sessions whose home is another member: they move once idle
    move_armed: bool
    #: The wall clock a caller's deadline is read against (see _check_caller_lives).
    wall_clock: Clock = WallClock()

    def _let_go(self, session: Session) -> None:
        """Release a session's lease (``_partition_holding``)."""
        raise NotImplementedError

    def _forget(self, key: str) -> None:
        """Forget what the workers hold of session ``key`` (``_partition_holding``)."""
        raise NotImplementedError

    def _check_caller_lives(self, request: Any, caller: CallerRef, what: str) -> None:
        """The fence of a write (issue 59), in order; a write that fails it is refused and
        nothing is written, since its caller was told (or will be) that it failed, and its
        next write may have been taken first. A FollowRun writes nothing: not checked.

        1. The caller's deadline (``CallerRef.deadline``: epoch seconds of the caller's
           wall clock, stamped by ``supervision.call`` and carried through every hop)
           has not passed, nor will within ``DEADLINE_MARGIN``, by this host's wall
           clock (``wall_clock``, the real one even where ``clock`` is a manual one:
           the deadline is another process's real time): else ``deadline_exceeded``
           (a caller that gave up while this partition was busy).
        2. The caller is there still (through Thespian: it takes a TCP connection now;
           on a Runner's line: the line did not end, and the process that connected it
           still runs, see ``CallerLine.caller_gone``): else ``not_running`` (a busy
           caller asks again)."""
        if isinstance(request, FollowRun):
            return
        if caller.gave_up(self.wall_clock.current_time(), DEADLINE_MARGIN):
            raise CallError(f"the caller of this {what} on session {request.session_id!r} stopped waiting for "
                            "it before it was taken (its deadline passed): it was not taken", code="deadline_exceeded")
        gone = (caller.address.caller_gone if isinstance(caller.address, CallerLine)
                else takes_connection(caller.address, HOLDER_CONNECT_WAIT) is False)
        if gone:
            raise CallError(f"the caller of this {what} on session {request.session_id!r} takes no connection: "
                            "it was not taken", code="not_running")

    def _forward(self, request: Any, caller: CallerRef, held: SessionLeased) -> Any:
        """Another host's partition holds the session: the request goes on to it, and it
        answers the caller itself (a run's events stream from it to the caller). Where
        the holder left no address (or named this partition), CallError
        ``session_elsewhere`` names the holder instead. A holder that died within its
        lease gets the request and never answers: the caller's deadline ends the wait,
        and its next try, once the lease ran out, is served here."""
        self._tell(request.key, "activation_failed", f"session_elsewhere: {held}")
        if held.address is None or held.address == self.address:
            raise CallError(str(held), code="session_elsewhere")
        if not self._host_answers(held.holder):
            raise CallError(f"{held}; its host does not answer (stopped, or cut off): the session is served "
                            "again once that lease ends", code="session_elsewhere")
        # Homed: the holder serves it (or forwards it by the lease), never sends it on by
        # rendezvous, so that a holder about to let go cannot send it back here and forth.
        return self._hand_on(request, caller, held.address, held.holder, str(held), "partition")

    def _live_members(self) -> list[Member]:
        """The cluster's members whose actor systems take a connection now, this host
        among them; empty outside a cluster, or while this host is not in the view yet
        (it then serves as a host alone would: the leases keep one writer)."""
        view, me = self.view, self.config.lease_holder
        if view is None or view.member(me) is None:
            return []
        return [m for m in view.members if m.name == me or (m.sessions is not None and self._host_answers(m.name))]

    def _ranked_above_me(self, key: str) -> list[Member]:
        """The view's members that serve sessions and rank above this host for ``key``,
        in rank order; empty outside a cluster, or while this host is not in the view."""
        view, me = self.view, self.config.lease_holder
        if view is None or view.member(me) is None:
            return []
        above: list[Member] = []
        for member in view.ranked(key):
            if member.name == me:
                break
            if member.sessions is not None:
                above.append(member)
        return above

    def _home_of(self, request: Any) -> Member | None:
        """Where a request a caller (not another host) sent here must go: its session's
        home when that is another member of the cluster, for the creation of a session
        whose id the caller names and for a request of a session not held here (one held
        here is served here, even away from its home). Its app, and for a session's
        request its partition, are checked first: their errors are this host's."""
        self._check_app(request.app_name)
        if isinstance(request, CreateSession):
            if not request.session_id:
                return None
        else:
            self._check_ours(request.key)
            if request.key in self.sessions:
                return None
        return self._home_elsewhere(request.key)

    def _home_elsewhere(self, key: str) -> Member | None:
        """The session's home when it is another member (the first of the ranking whose
        host takes a connection: a dead or cut-off home is passed over); None when it
        is this host, or outside a cluster."""
        return next((member for member in self._ranked_above_me(key) if self._host_answers(member.name)), None)

    def _away_from_home(self, key: str) -> bool:
        """Is the session's home, by the view's whole ranking, another member (one that
        did not take a connection when last asked, or the session would not be here)?"""
        return bool(self._ranked_above_me(key))

    def _watch_home(self, key: str) -> None:
        """A session was just held here: when it is away from its home (passed over),
        ``_move_home`` runs ``AWAY_RECHECK`` later, and again while any held session is
        away, so that it goes home once that home answers again."""
        if self._away_from_home(key):
            self._arm_move_home(AWAY_RECHECK)

    def _arm_move_home(self, after: float) -> None:
        if not self.move_armed:
            self.move_armed = True
            self.send_after(after, MoveHome())

    def _send_home(self, request: Any, caller: CallerRef, home: Member) -> Any:
        """Send a request to its session's home (its ``sessions`` supervisor routes it to
        the partition), which answers the caller itself. A Runner's direct line reaches
        this process only: ``not_running`` makes it send the request again through
        Thespian, whose address the home reaches."""
        return self._hand_on(request, caller, home.sessions, home.name,
                             f"session {request.session_id!r} lives on {home.name}", "session supervisor")

    def _hand_on(self, request: Any, caller: CallerRef, to: Any, holder: str, where: str, what: str) -> Any:
        """Hand ``request`` on to ``to`` (another host's ``what``), as ``Homed``, which
        answers the caller itself; look at ``holder``'s host again ``FORWARD_RECHECK``
        later. ``not_running`` (the caller asks again) when the caller is a Runner's
        direct line (it reaches this process only: the Runner then asks through
        Thespian, whose address ``to`` reaches) or ``to`` takes no connection
        (restarted: the view or the lease names its new address soon)."""
        if isinstance(caller.address, CallerLine):
            raise CallError(f"{where}: the request goes there through Thespian", code="not_running")
        if takes_connection(to) is False:
            raise CallError(f"{where}, whose {what} is restarting: ask again", code="not_running")
        self.hand_over(caller, request if isinstance(request, Homed) else Homed(request), to)
        self.send_after(FORWARD_RECHECK, ForwardRecheck(holder, caller.address, caller.ref, where))
        return FORWARDED

    def _move_home(self) -> None:
        """A new view (``MoveHome``, or the last run of a leaving session ended): the idle
        sessions held here whose home is now another live member are let go (their
        leases released), so that their next request activates them there. Busy ones
        are *leaving*: they take no new run (``not_running``: the caller asks again and
        is sent home), and go once their runs in flight and queued have ended (looked at
        again as each run ends, and a second later). Sessions still away from a home
        that does not answer are looked at again ``AWAY_RECHECK`` later."""
        live = self._live_members()
        self.leaving = set()
        if not live:
            return
        me = self.config.lease_holder
        busy = away = False
        for key, session in list(self.sessions.items()):
            if ranked(key, live)[0].name == me:
                away = away or self._away_from_home(key)
                continue
            if session.active is not None or session.waiting:
                busy = True
                self.leaving.add(key)
                continue
            del self.sessions[key]
            self._forget(key)
            self._let_go(session)
            self._tell(key, "passivated")
        if busy or away:
            self._arm_move_home(1.0 if busy else AWAY_RECHECK)

    def _recheck_forward(self, holder: str, address: Any, ref: str, held: str) -> None:
        """``FORWARD_RECHECK`` after a forward: a holder's host that no longer takes a
        connection died about when the request reached it (or before it answered; or
        it is too busy to take one): the caller is answered ``holder_gone`` now instead
        of at its deadline. Never ``session_elsewhere``, which promises that nothing was
        written: the holder may have acted on the request (the Runner asks again, the
        same request, until the session's next holder answers it). (A caller that had
        its answer drops this one: its ref is no longer awaited.)"""
        self.hosts_seen.forget(holder.split("/", 1)[0])
        if not self._host_answers(holder):
            self.send(address, ErrorReply(ref, "holder_gone", f"{held}; its host stopped before it answered: "
                                                              "the session is served again once that lease ends"))

    def _host_answers(self, holder: str) -> bool:
        """Does the actor system of ``holder`` (``<address>:<port>/partition-<n>``) take a
        TCP connection now (supervision's ``takes_connection``)? Asked before each
        forward (a killed host refuses at once, a cut-off one within
        ``HOLDER_CONNECT_WAIT``); one that did not is not asked again for a second."""
        where = holder.split("/", 1)[0]
        return self.hosts_seen.answers(where, self.clock(),
                                       lambda: takes_connection(where, HOLDER_CONNECT_WAIT) is True)
