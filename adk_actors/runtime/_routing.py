"""Where a Runner's calls go, and how they are asked again: :class:`Router`.

A call to a session (``Router.call``) leases an endpoint (``_endpoints``) and, in
order: goes to the session's home when it lives on another member of a cluster (that
member's ``sessions`` supervisor; one that refuses is forgotten and the host's own
partition asked, a turn as one that may have been taken: see below), else to the host's partition for the session, whose process is
watched while the call waits (``HostView.partition_alive``). While the partition
restarts it is asked again: at once with the partition's new address after the first
failure, then every ``RESTART_POLL`` seconds. A run request handed to another host's
partition that died before answering (``ServerDiedAnswering``) may have been acted on:
it is asked again, the same request (the same run id), while the dead holder's lease
lasts (``session_elsewhere``) until the session's next holder answers it; a read in
that case is refused at once (it wrote nothing either way). The same holds for a call
another member's ``sessions`` supervisor handed to its partition: that home is not
forgotten but asked again (a home that refuses the call itself is); and for a call
the host's partition handed to a holder whose host it then found stopped
(``holder_gone``). Past ``call_timeout`` the
call fails with :class:`HostError`; an error the host answered is raised typed
(:func:`typed_error`). A service call (``Router.service``) finds the service under the
host's root supervisor, and asks again while it restarts.

A part of the host restarting is waited for; the whole host stopped is not: a call
raises :class:`HostStopped` as soon as the host says so (``Host.partitions``: its
``stop`` began, or its root supervisor is gone), before it takes an endpoint, and so
does a call already waiting (a host that stops says its partitions and services are
gone, so the wait ends and the call asks again). A service call knows it by the root:
none (stopped), or one that refuses the asking or answers that it stops.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from supervision import (
    CallError,
    CallTimeout,
    ServerNotRunning,
    SupervisorClient,
    call,
)
from supervision.lowlevel import ask_delivered, partition_index, takes_connection
from supervision.protocol import Cast, ServerDiedAnswering

from .._exceptions import (
    AdkError,
    HostError,
    HostStopped,
    InternalError,
    InvalidRequestError,
    InvocationNotFoundError,
    LimitExceededError,
    NotFoundError,
    SessionBusyError,
    SessionElsewhereError,
    SessionExistsError,
    SessionFailedError,
    SessionNotFoundError,
    SessionUnreadableError,
    UnknownAppError,
)
from .._validate import MAX_JSON_DEPTH, check_input
from ..messages import PROBE, LinePath, RunRequest, session_key
from ._endpoints import EndpointPool
from ._host_view import HostView

__all__ = ["Router", "checked", "root_not_running", "typed_error"]

#: how often a request asks the host for a restarting partition's new address
RESTART_POLL = 0.005
#: asking again while a dead holder's lease runs out (seconds)
HOLDER_GONE_POLL = 0.2
#: asking again while a partition or service answers ``not_running`` (seconds)
NOT_RUNNING_POLL = 0.02
#: while a call waits, how often its partition's process is looked at (when it can be: see Host.partition_alive)
ALIVE_POLL = 0.01
#: how long a probe of a partition on another machine waits for its delivery
PROBE_WAIT = 0.02

_ERRORS: dict[str, type[AdkError]] = {
    "unknown_app": UnknownAppError,
    "unknown_session": SessionNotFoundError,
    "session_exists": SessionExistsError,
    "busy": SessionBusyError,
    "limit_exceeded": LimitExceededError,
    "invalid_request": InvalidRequestError,
    "bad_request": InvalidRequestError,
    "unknown_request": InvalidRequestError,
    "unknown_message": InvalidRequestError,
    "not_found": NotFoundError,
    "session_unreadable": SessionUnreadableError,
    "internal_error": InternalError,
    "session_failed": SessionFailedError,
    "session_elsewhere": SessionElsewhereError,
    "holder_gone": SessionElsewhereError,
    "invocation_not_found": InvocationNotFoundError,
}


def typed_error(error: CallError) -> AdkError:
    """The adk_actors exception for an error reply's code: a user of the kit never
    sees supervision's exception types (an unknown code is a :class:`HostError`)."""
    typed = _ERRORS.get(error.code)
    if typed is not None:
        return typed(error.detail)
    return HostError(f"the host answered {error.code}: {error.detail}")


def root_not_running(error: ServerNotRunning) -> HostError:
    """What a host's root supervisor answering ``not_running`` (``error``) says to its
    caller: :class:`HostError` while the root starts (``Host.start``: asked again, as a
    restart is); else :class:`HostStopped`: it refused the call (its process is gone)
    or it stops, and a root is never restarted."""
    detail = str(error)
    if "server starting" in detail or "not initialised" in detail:
        return HostError(f"the host is starting: {detail}")
    return HostStopped(f"the host has stopped (its root supervisor: {detail})")


def checked(request: Any) -> Any:
    """``request`` itself, or the typed error of the input rule it breaks at the most any
    host accepts (``MAX_JSON_DEPTH``; the limits on a message's parts and a request's
    state: :class:`LimitExceededError`; else :class:`InvalidRequestError`): refused
    here, before it is pickled (a value nested 1,000 deep cannot be); the host applies
    its own limits."""
    try:
        check_input(request, MAX_JSON_DEPTH)
    except CallError as exc:
        raise typed_error(exc) from None
    return request


class Router:
    """Calls to the sessions and services of ``host`` for app ``app_name`` (see the
    module). ``clock`` and ``sleep`` are ``time.monotonic`` and ``time.sleep`` unless
    a test passes its own."""

    def __init__(self, host: HostView, app_name: str, call_timeout: float, pool: EndpointPool, *,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self.host = host
        self.app_name = app_name
        self.call_timeout = call_timeout
        self.pool = pool
        self.clock = clock
        self.sleep = sleep
        self._line_paths: dict[str, str | None] = {}  # partition address -> its line's socket

    def call(self, request: Any, session_id: str, user_id: str, *, timeout: float | None = None) -> Any:
        """Call the partition owning the session (see the module) from an endpoint of
        this call's own; ``session_id`` empty: no session (``ListSessions``);
        ``timeout``: see :meth:`request`."""
        checked(request)
        peer = self.peer(user_id, session_id)
        return self.pool.on_endpoint(lambda context: self.request(context, request, session_id, user_id,
                                                                  timeout=timeout), peer)

    def peer(self, user_id: str, session_id: str) -> int | None:
        """Which of the host's partitions the session's requests go to (an endpoint that
        talked to it before has its connection open); None for no session, and while the
        host's partitions cannot be listed (they restart: the request's own retries wait
        for them). :class:`HostStopped` when the host has stopped."""
        try:
            count = len(self.host.partitions())
        except HostStopped:
            raise
        except AdkError:
            return None
        return partition_index(session_key(self.app_name, user_id, session_id), count) if session_id else None

    def request(self, context: Any, request: Any, session_id: str, user_id: str, *,
                maybe_taken: bool = False, timeout: float | None = None) -> Any:
        """``request``'s answer from the session's partition, asked from endpoint
        ``context`` as many times as the module says, until ``call_timeout`` (or
        ``timeout`` seconds when it is sooner: what is left of a run's own wait).
        ``maybe_taken``: a run request sent before may have been acted on by the
        session's holder (``HolderGone``): a refusal cannot end it, as after
        ``ServerDiedAnswering``."""
        waits = self.call_timeout if timeout is None else max(0.0, min(self.call_timeout, timeout))
        deadline = self.clock() + waits
        refresh = False
        lost_with_a_holder = maybe_taken and isinstance(request, RunRequest)
        while True:
            try:
                return self._ask(context, request, session_id, user_id, deadline, refresh)
            except HostStopped:
                raise  # nothing to wait for
            except (ServerNotRunning, HostError) as exc:
                # A turn handed on may have been written: never answered by a refusal that says
                # nothing was (a read is: it wrote nothing either way).
                lost_with_a_holder = lost_with_a_holder or (
                    isinstance(exc, ServerDiedAnswering) and isinstance(request, RunRequest))
                if self.clock() >= deadline:
                    raise HostError(f"the host did not take the request: {exc}") from exc
                if refresh:
                    self.sleep(RESTART_POLL)
                refresh = True
            except CallError as exc:
                # handed on to a holder whose host then stopped: a turn may have been taken
                lost_with_a_holder = lost_with_a_holder or (exc.code == "holder_gone"
                                                            and isinstance(request, RunRequest))
                self._wait_or_raise(exc, deadline, lost_with_a_holder)
            except CallTimeout as exc:
                raise HostError(f"no answer from the host within {waits:g} s") from exc

    def _ask(self, context: Any, request: Any, session_id: str, user_id: str, deadline: float,
             refresh: bool) -> Any:
        """Ask once: the session's home on another member while it has one that takes the
        call, else the host's partition (its list asked again with ``refresh``);
        ``ServerNotRunning`` when that partition's process is known to be gone."""
        while (home := self.host.session_home(self.app_name, user_id, session_id) if session_id else None) is not None:
            try:  # another member of the cluster: straight to its sessions supervisor
                return call(context, home, request, timeout=max(0.1, deadline - self.clock()), poll=ALIVE_POLL)
            except ServerDiedAnswering:
                # Handed to its partition, which then looked gone: it may have acted (a busy
                # host can look so), and this host's partition would refuse a session held
                # there. The caller asks the home again, the same request (the same run id).
                raise
            except ServerNotRunning as exc:  # gone (restarted elsewhere, or its host): this host's partition
                if self.home_did_not_answer(home, request):
                    raise ServerDiedAnswering(f"a turn sent to its session's home may have been taken: {exc}") from exc
        address = self.host.partition_for(self.app_name, user_id, session_id, refresh=refresh)
        alive = self.host.partition_alive(address) if address is not None else False
        if alive is False:
            raise ServerNotRunning("the session's partition is restarting")
        # While it waits: gone when its process is, or when the host lists another
        # partition in its place (another thread saw the restart: its pid is no
        # longer known here, and a call to the dead address would wait for ever).
        return call(context, address, request, timeout=max(0.1, deadline - self.clock()),
                    alive=None if alive is None else lambda: self.host.partition_alive(address) is True,
                    poll=ALIVE_POLL)

    def home_did_not_answer(self, home: Any, request: Any) -> bool:
        """The one rule for a request sent to its session's home on another member that
        did not answer (the send failed, or no acknowledgement or first answer came in
        time), for both ways a request goes there (:meth:`_ask`, and the direct send of
        a run, ``DirectRoute.send``). In order: the home is forgotten (this host's
        partition is asked meanwhile, until the host names a home again); then True
        when ``request`` is a turn (a :class:`RunRequest`), which may have been taken
        there all the same (a send whose acknowledgement timed out on a home too busy
        or cut off; one delivered just before its host died): its caller raises its
        own "may have been taken" error (``ServerDiedAnswering``, ``HolderGone``) and
        asks again, the same request (the same run id), never answered by a refusal
        that says nothing was written. False for a read, which wrote nothing either
        way: the caller asks this host's partition as for a session with no home."""
        self.host.forget_home(home)
        return isinstance(request, RunRequest)

    def _wait_or_raise(self, error: CallError, deadline: float, lost_with_a_holder: bool) -> None:
        """After the host answered ``error``: wait before asking again (``not_running``;
        ``session_elsewhere`` or ``holder_gone`` for a run request its dead holder may have
        acted on), or raise it typed (past the deadline: :class:`HostError`, never a
        refusal that says nothing was written)."""
        if error.code == "not_running" and self.clock() < deadline:
            self.sleep(NOT_RUNNING_POLL)
            return
        if error.code in ("session_elsewhere", "holder_gone") and lost_with_a_holder:
            if self.clock() >= deadline:
                raise HostError(f"the host holding the session died with this request, which it may have "
                                f"acted on, and no other host took the session within {self.call_timeout} "
                                f"s: {error}") from None
            self.sleep(HOLDER_GONE_POLL)  # its lease runs out, then the next holder answers
            return
        raise typed_error(error) from None

    # -- services -----------------------------------------------------------------------------

    def service(self, child_id: str, request: Any) -> Any:
        """Call the host's service ``child_id`` (``artifacts``, ``memory``, ...): found
        under the root's ``services`` supervisor, looked for again while the tree
        restarts and called again when it dies while the call waits, until
        ``call_timeout``; its error answer raised typed; :class:`HostStopped` once the
        host has no root, or its root is gone (see the module)."""
        checked(request)
        if self.host.root is None:
            raise HostStopped("the host is not running")
        deadline = self.clock() + self.call_timeout

        def ask(context: Any) -> Any:
            while True:
                root = self.host.root
                if root is None:
                    raise HostStopped("the host has stopped")
                info = self._find_service(context, root, child_id, deadline)
                if info is not None and info.address is not None:
                    try:
                        return self._call_service(context, info.address, info.pid, request)
                    except ServerNotRunning:
                        pass
                if self.clock() >= deadline:
                    raise HostError(f"the {child_id} service did not answer within {self.call_timeout} s")
                self.sleep(NOT_RUNNING_POLL)

        return self.pool.on_endpoint(ask)

    def _find_service(self, context: Any, root: SupervisorClient, child_id: str, deadline: float) -> Any:
        """The service's child info, or None while the tree restarts (past the deadline:
        HostError); HostStopped when the root refuses the asking or stops (``root_not_running``)."""
        try:
            try:
                services = SupervisorClient(context, root.address, timeout=self.call_timeout).child("services")
            except ServerNotRunning as exc:
                raise root_not_running(exc) from None
            if services.address is None:
                return None
            return SupervisorClient(context, services.address, timeout=self.call_timeout).child(child_id)
        except HostStopped:
            raise
        except (CallTimeout, ServerNotRunning, CallError, HostError) as exc:  # the tree is restarting (or starting)
            if self.clock() >= deadline:
                raise HostError(f"the {child_id} service cannot be found: {exc}") from None
            return None

    def _call_service(self, context: Any, address: Any, pid: int | None, request: Any) -> Any:
        """Call the service; one that dies while the call waits fails it at once
        (``ServerNotRunning``: asked again); its error answer raised typed."""
        watched = self.host.tree_process_alive(pid) is not None
        try:
            return call(context, address, request, timeout=self.call_timeout,
                        alive=(lambda: self.host.tree_process_alive(pid) is True) if watched else None,
                        poll=ALIVE_POLL)
        except ServerNotRunning:
            raise
        except CallError as exc:
            raise typed_error(exc) from None

    # -- partitions ---------------------------------------------------------------------------

    def partition_there(self, address: Any) -> bool:
        """Is the session's partition there? Its process is looked at when the host runs
        on this machine (``Host.partition_alive``). Otherwise it is asked from an endpoint
        of its own with a ``PROBE`` cast: a refused delivery says it is gone; a delivery,
        that it is not known to be gone. No answer ever comes, so none can find this
        endpoint closed (a busy partition answering late to closed endpoints only got
        busier). (Under a burst of 200 new sessions the probes' new endpoints and
        connections took a quarter of the client's time and made the partitions
        slower, so more turns waited past the first wait and were probed in turn:
        docs/benchmarks.md.)"""
        if address is None:
            return True
        alive: bool | None = self.host.partition_alive(address)
        if alive is not None:
            return alive
        if self.host.is_member_sessions(address):  # another member's: is that host there?
            return takes_connection(address) is not False
        with self.host.system.private() as probe:
            try:
                ask_delivered(probe, address, Cast(PROBE), PROBE_WAIT)
            except ServerNotRunning:
                return False
        return True

    def line_path(self, address: Any) -> str | None:
        """Where the partition at ``address`` listens for lines (asked once, through
        Thespian); None when it has none or did not answer (asked again next time)."""
        key = str(address)  # (Thespian's addresses are not hashable)
        if key not in self._line_paths:
            try:
                with self.host.system.private() as asking:
                    self._line_paths[key] = call(asking, address, LinePath(), timeout=self.call_timeout)
            except (CallError, CallTimeout, ServerNotRunning):
                return None
        return self._line_paths[key]
