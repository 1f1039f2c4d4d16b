"""A run sent straight to its session's partition: :class:`DirectRoute`.

A turn's request skips the host's lookups when it can: it goes to the session's
partition as the host last listed them (a session at home on another member of a
cluster: to that member's ``sessions`` supervisor), asking for no ``RunAccepted`` (the
run's messages are the answer). In order, :meth:`DirectRoute.send`: finds that
address (none while the partitions restart), skips a partition whose process is
known to be gone (looked at only when the endpoint has no open line to it: a line
ends with its partition), picks the carrier (the endpoint's direct line to a partition on
this machine, ``_caller_line``; else the endpoint itself, through Thespian), sends,
and waits ``FIRST_WAIT`` for a first answer. It returns None when the partition is
gone or answered ``not_running``: the request started nothing there, and the Runner
asks the host's current partition instead. :meth:`DirectRoute.async_line` gives an
event loop's line for ``run_async`` (``_async_line``), or None when there is none.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeAlias

from supervision.protocol import Call, ErrorReply

from .._exceptions import AdkError
from ..messages import RunAccepted, RunRequest
from ._async_line import AsyncLines, AsyncRunnerLine
from ._caller_line import RunnerLine
from ._endpoints import PrivateEndpoint
from ._host_view import HostView
from ._routing import Router
from ._run_transport import HolderGone, LineTransport, NotTaken, RunTransport, ThespianTransport

__all__ = ["FIRST_WAIT", "DirectRoute", "DirectStart"]

#: How long a request sent straight to a session's partition waits for its first
#: answer before the run's stream takes over (a refused connection answers sooner).
FIRST_WAIT = 0.2

#: What a direct send started: the run's acceptance (made here: none was asked for),
#: the first message if one came, the call's ref, and the transport its run goes on.
DirectStart: TypeAlias = tuple[RunAccepted, Any, str, RunTransport]


class DirectRoute:
    """Direct sends of runs to the partitions of ``host`` (see the module)."""

    def __init__(self, host: HostView, router: Router) -> None:
        self.host = host
        self.router = router
        self._async_lines = AsyncLines()  # run_async's lines, one per event loop and partition

    def send(self, endpoint: PrivateEndpoint, request: RunRequest, deadline: float | None = None) -> DirectStart | None:
        """Send ``request`` straight to the session's partition from ``endpoint`` (see
        the module); None when it started nothing there; :class:`HolderGone` when the
        session's home on another member may have taken it but did not answer (the home
        forgotten: ``Router.home_did_not_answer``, the rule a call's retries use too). ``deadline``: when the Runner
        stops waiting for the run (epoch seconds, ``Call.deadline``): a partition that
        gets to the request only later does not take it."""
        try:
            home = self.host.session_home(request.app_name, request.user_id, request.session_id)
            address = home if home is not None else self.host.partition_for(request.app_name, request.user_id,
                                                                              request.session_id)
        except AdkError:  # the partitions restart: the Runner's start of the run waits for them
            return None
        open_line = endpoint.lines.get(str(address)) if home is None else None
        if home is None and (open_line is None or open_line.closed) and self.host.partition_alive(address) is False:
            # Its process is gone: the host's current partition is asked. (The wait below
            # is not cut in slices to look at the process meanwhile, as a call does: each
            # of Thespian's listen() costs enough that, for every turn of a burst, it
            # tripled the client's CPU per turn: docs/benchmarks.md.) A line still open
            # needs no look at the process: the partition's death ends it (its send or
            # its first read fails: NotTaken, below), without a read of /proc per turn.
            return None
        message = Call(replace(request, reply_accepted=False), deadline=deadline)
        line = self.line(endpoint, address) if home is None else None  # another member: through Thespian
        transport: RunTransport = (LineTransport(line) if line is not None
                                   else ThespianTransport(endpoint.context, address, self.router.partition_there))
        try:
            answer = transport.first(message, FIRST_WAIT)
        except NotTaken:
            # Another member's, which took no connection or did not acknowledge in time
            # (dead, or too busy on a loaded machine): the Router's one rule for a home
            # that did not answer (a turn may have been taken: HolderGone, asked again
            # with the same run id, never refused).
            if home is not None and self.router.home_did_not_answer(home, request):
                raise HolderGone(f"the home of session {request.session_id!r} did not answer") from None
            return None  # it died: whether it took the request, its next self says
        if isinstance(answer, ErrorReply) and answer.ref == message.ref and answer.code == "not_running":
            return None
        return RunAccepted(request.run_id, 0, 0, address), answer, message.ref, transport

    def line(self, endpoint: PrivateEndpoint, address: Any) -> RunnerLine | None:
        """The endpoint's direct line to the partition at ``address`` (see
        ``_caller_line``), connected on first use; None when the partition runs on
        another machine (``Host.partition_alive`` cannot tell), has no line, or its
        socket cannot be reached from here: then Thespian carries the run. Lines that
        ended are dropped."""
        key = str(address)  # (Thespian's addresses are not hashable)
        line = endpoint.lines.get(key)
        if line is None or line.closed:
            for ended in [k for k, known in endpoint.lines.items() if known.closed]:
                del endpoint.lines[ended]
            line = None
            if self.host.partition_alive(address) is not None:
                path = self.router.line_path(address)
                line = RunnerLine.connect(path) if path else None
            if line is not None:
                endpoint.lines[key] = line
        return line

    async def async_line(self, request: RunRequest) -> AsyncRunnerLine | None:
        """This loop's line to the session's partition as the host last listed them,
        or None (the partitions not listed yet; a session at home on another member of
        a cluster, which Thespian reaches). A line still open is used as it is (a
        partition that died since closes it, and its run then goes the other way);
        before a new one is connected, the partition's process must be alive. Where
        the partition's socket is, is asked once per partition, on a thread (a
        Thespian call)."""
        if self.host.session_home(request.app_name, request.user_id, request.session_id) is not None:
            return None  # at home on another member of the cluster: through Thespian, on a thread
        address = self.host.listed_partition_for(request.app_name, request.user_id, request.session_id)
        if address is None:
            return None
        line = self._async_lines.open_line(str(address))
        if line is not None:
            return line
        if self.host.partition_alive(address) is not True:
            return None
        return await self._async_lines.line(str(address), lambda: self.router.line_path(address))
