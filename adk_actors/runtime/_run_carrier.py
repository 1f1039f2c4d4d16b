"""How a Runner carries one run: :class:`RunCarrier`, which ``Runner`` inherits.

A blocking run (``_run``), in order: it is sent straight to the session's partition
as last listed, on a leased endpoint of the Runner's pool (``_direct_route``); if
that partition was gone (``NotTaken``), or was never listed, it is sent again from a
new endpoint through the host's current partition (``_start_run``, through the
Runner's ``Router``, which asks again while partitions restart). Its messages are then
read until its terminal one (``_stream``: the pure ``_run_stream.RunStream`` fed by
a ``RunTransport``); a direct send carries when the Runner stops waiting for the run
(``Call.deadline``: a partition that gets to it later does not take it); while it is
silent its partition is probed, and a partition
found gone is asked for the session (``_reactivate``): its restarted self reports the
run's end first. An endpoint is given back clean once the run's end came; one whose
last send was refused, or whose answer may still come, is not reused.

An asyncio run (``_stream_async``) goes on the event loop's direct line to the
partition (``_async_line``) with no ``RunAccepted``: its messages are the answer; the
line's end before the run's raises ``NotTaken`` and the caller goes the blocking way.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from typing import Any

from supervision.protocol import Call

from .._exceptions import AdkError, HostError, HostStopped
from .._types import Event, RunConfig
from ..messages import GetState, RunAccepted, RunRequest
from ._async_line import AsyncRunnerLine
from ._direct_route import DirectRoute
from ._endpoints import EndpointPool, PrivateEndpoint
from ._run_stream import RunStream, drive, drive_async
from ._run_transport import HolderGone, NotTaken, RunTransport, ThespianTransport
from ._runner_calls import SessionCalls

__all__ = ["RunCarrier"]


class RunCarrier(SessionCalls):
    """Carries the Runner's runs (see the module); the session calls it inherits
    (``get_state``) wake a restarted partition."""

    timeout: float
    orphan_grace: float
    #: The clock a run's wait is measured on (a test gives its own, to run the wait's
    #: rules without waiting).
    clock: Callable[[], float] = time.monotonic
    _endpoints: EndpointPool
    _direct: DirectRoute

    def _run(self, request: RunRequest, run_config: RunConfig | None, direct: bool = True, *,
             ends_at: float | None = None) -> Iterator[Event]:
        """The run's events: sent straight to the session's partition first (unless not
        ``direct``: ``_direct_route``), then through the host's current partition. One
        wait for its end, begun here (``_run_limit``): a run sent again after its first
        partition died, and every look at its partition while it is silent, has only what
        is left of it, so a caller's wait never outlasts the limit however many
        partitions die meanwhile (each was given a whole limit before, and a turn at load
        waited 84 s for a limit of 40). ``ends_at``: that wait's end (on ``clock``) when it
        began before this call (``run_async``'s line)."""
        ends_at = self.clock() + self._run_limit(run_config) if ends_at is None else ends_at
        endpoint = self._endpoints.lease(self._router.peer(request.user_id, request.session_id)) if direct else None
        handed_on = False
        try:
            if endpoint is not None:
                try:
                    start = self._direct.send(endpoint, request, time.time() + self._run_limit(run_config))
                except HolderGone:  # its home may have taken it: asked again, never refused
                    start, handed_on = None, True
                if start is not None:
                    try:
                        yield from self._stream(endpoint, *start, run_config, request, ends_at=ends_at)
                        return
                    except NotTaken as gone:
                        # That partition was gone (or died during the run: asked again, the
                        # restarted one answers with the run's recorded end), or the holder
                        # it handed the run to stopped (it may have taken it: HolderGone).
                        handed_on = isinstance(gone, HolderGone)
                # From an endpoint of its own: this one's last send was refused, and Thespian may
                # still be retrying it (seen under kills: the next call on it got no answer for 30 s).
                endpoint.clean = False
                self._endpoints.give_back(endpoint)
            endpoint = self._endpoints.new()
            accepted = self._start_run(endpoint, request, maybe_taken=handed_on,
                                       timeout=ends_at - self.clock())
            yield from self._stream(endpoint, accepted, None, None, ThespianTransport(endpoint.context), run_config,
                                    request, ends_at=ends_at)
        finally:
            if endpoint is not None:
                self._endpoints.give_back(endpoint)

    def _start_run(self, endpoint: PrivateEndpoint, request: RunRequest, *, maybe_taken: bool = False,
                   timeout: float | None = None) -> RunAccepted:
        """Ask the partition that owns the session to start the run (the host's list of
        partitions looked up again while one restarts, up to the Runner's
        ``call_timeout`` or ``timeout`` when sooner; ``maybe_taken``: see
        ``Router.request``). A refusal marks ``endpoint`` clean (nothing more will come
        for this run); no answer leaves it unclean (one may still come, so it is not
        reused)."""
        try:
            accepted: RunAccepted = self._router.request(endpoint.context, request, request.session_id,
                                                         request.user_id, maybe_taken=maybe_taken, timeout=timeout)
        except HostError:
            raise
        except Exception:
            endpoint.clean = True
            raise
        return accepted

    def _run_limit(self, run_config: RunConfig | None) -> float:
        """How long a caller waits for a run's end: the Runner's ``timeout``, or the
        run's own deadline and 10 s more (the host ends it at its deadline)."""
        return self.timeout if run_config is None or not run_config.timeout else run_config.timeout + 10

    def _stream(self, leased: PrivateEndpoint, accepted: RunAccepted, first: Any, ref: str | None,
                transport: RunTransport, run_config: RunConfig | None, request: RunRequest, *,
                ends_at: float | None = None) -> Iterator[Event]:
        """Yield the run's events until its terminal message (``first``: one that came
        already), as ``transport`` brings them (``_run_stream.drive``), up to ``ends_at``
        (on ``clock``; None: the whole ``_run_limit`` from now). ``ref``: the
        direct call's ref, whose error reply raises NotTaken for ``not_running``, else
        its typed error. A transport that ends (its partition died) raises NotTaken too:
        asked again, the restarted partition answers with the run's recorded end. The
        endpoint is clean once the run's end came."""
        stream = RunStream(accepted.run_id, ref, self._run_limit(run_config), self.clock(),
                           orphan_grace=self.orphan_grace, deadline=ends_at)

        def lost() -> bool:  # gone: its restarted self is asked for the session, and reports the run first
            if self._router.partition_there(accepted.session):
                return False
            self._reactivate(request.user_id, request.session_id, stream.wait_left(self.clock()))
            return True

        try:
            yield from drive(stream, transport, first, self.clock, lost)
        finally:
            if stream.ended:
                leased.clean = True

    def _reactivate(self, user_id: str, session_id: str, timeout: float) -> None:
        """Ask the session's partition for its state, waiting up to ``timeout`` seconds
        (what is left of the run's wait; none left: not asked): that loads the session
        again if it is not running, and a restarted one tells the callers of its
        interrupted runs before it answers. ``HostStopped`` (the host has stopped) is
        raised; any other error is left to ``orphan_grace``."""
        if timeout <= 0:
            return
        try:
            self._router.call(GetState(self._router.app_name, user_id, session_id), session_id, user_id,
                              timeout=timeout)
        except HostStopped:
            raise  # no restart will answer: the caller is told at once
        except AdkError:
            pass  # the host is restarting more than the session: orphan_grace decides

    async def _stream_async(self, line: AsyncRunnerLine, request: RunRequest, run_config: RunConfig | None, *,
                            ends_at: float | None = None) -> AsyncIterator[Event]:
        """Send the run on ``line`` (no RunAccepted: its messages are the answer) and
        yield its events until its terminal message (``_run_stream.drive_async``), up to
        ``ends_at`` (on ``clock``; None: the whole ``_run_limit`` from now). The line's
        end before the run's (its partition died) raises NotTaken: asked again (with
        what is left of the wait), the restarted partition answers with the run's end."""
        message = Call(replace(request, reply_accepted=False), deadline=time.time() + self._run_limit(run_config))
        queue = line.open(request.run_id, message.ref)
        try:
            if not line.send(message):
                raise NotTaken()
            stream = RunStream(request.run_id, message.ref, self._run_limit(run_config), self.clock(),
                               probe_every=math.inf, deadline=ends_at)
            async for event in drive_async(stream, queue, self.clock):
                yield event
        finally:
            line.release(request.run_id, message.ref)
