"""Runner: plain Python code talking to a host (sync iterator and asyncio).

It starts nothing hidden: it sends the message API to the host's partitions and
waits with timeouts. ``run`` yields the run's events as they arrive and returns
after ``RunDone``; ``RunFailed`` raises :class:`RunFailedError`. It never hangs:
while a run is silent it asks the session's partition itself, through the actor
system, whether it is still there (a refused connection: gone; the caller's own
process table is never consulted, so a Runner on another machine judges the same).
When it is gone, the Runner asks the restarted partition for the session: the
restarted partition reports the run as ``interrupted`` before it answers, so the
caller gets the true reason; only if no report comes within ``orphan_grace``
seconds after that does the run fail with reason ``killed``.

A run the host resumes on its own after a crash (``App.resume_interrupted``) is
followed: its failure names the run that resumes it (``RunFailed.resumed_as``), and
the Runner joins that run (``FollowRun``) and goes on yielding, so its caller sees one
run, each committed event once (``follow_resumes=False``: the failure is raised).

One Runner may be used from many threads at once: every call and every run leases
a Thespian endpoint of its own (an endpoint serves one thread at a time), kept for
later calls once its answer came.

The parts, each in a module of its own: the calls to sessions and services
(``_runner_calls``, inherited; the services' also grouped: ``runner.artifacts``...), where calls go and how they are asked again
(``_routing.Router``, through the host's :class:`~._host_view.HostView`), the endpoint
pool (``_endpoints``), carrying one run, straight to its partition or through the host
(``_run_carrier``, inherited; ``_direct_route``, and ``_run_stream``: a pure state
machine fed by a blocking transport or an asyncio line), following the host's
resumes (``_follow``), and live runs (``_runner_live``, inherited). What is left here:
the run requests and google-adk's ``run_debug``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Generator, Iterator, Mapping
from dataclasses import replace
from typing import Any

from .._decisions import CallDecision
from .._event_print import print_event
from .._exceptions import (
    InvalidRequestError,
    RunFailedError,
    SessionNotFoundError,
)
from .._types import Content, Event, RunConfig
from ..messages import CancelRun, FollowRun, ResumeRun, RunRequest
from ._direct_route import DirectRoute
from ._endpoints import EndpointPool
from ._follow import follow_request, followed
from ._host_view import HostView
from ._live_run import iterate_in_thread
from ._routing import Router, checked
from ._run_stream import Seen
from ._run_transport import NotTaken
from ._runner_calls import ServiceCalls
from ._runner_live import LiveRuns

__all__ = ["Runner"]

_debug_log = logging.getLogger("adk_actors.runtime")


class Runner(LiveRuns, ServiceCalls):
    """A host's app, from plain Python code (see the module)."""

    def __init__(self, host: HostView, app_name: str, *, timeout: float = 660.0, call_timeout: float = 30.0,
                 orphan_grace: float = 3.0, follow_resumes: bool = True, auto_create_session: bool = False) -> None:
        self.host = host
        #: a run on a session that does not exist creates it (google-adk's ``auto_create_session``)
        self.auto_create_session = auto_create_session
        self.follow_resumes = follow_resumes
        self.timeout = timeout
        self.orphan_grace = orphan_grace
        self._runs: dict[str, tuple[str, str]] = {}
        self._endpoints = EndpointPool(lambda: host.system)
        self._router = Router(host, app_name, call_timeout, self._endpoints)
        self._direct = DirectRoute(host, self._router)

    @property
    def app_name(self) -> str:
        """The app whose sessions this Runner calls."""
        return self._router.app_name

    @app_name.setter
    def app_name(self, value: str) -> None:
        self._router.app_name = value

    @property
    def call_timeout(self) -> float:
        """How long a call waits for the host (a restarting partition included)."""
        return self._router.call_timeout

    @call_timeout.setter
    def call_timeout(self, value: float) -> None:
        self._router.call_timeout = value

    def cancel(self, run_id: str, *, user_id: str | None = None, session_id: str | None = None) -> None:
        """Cancel a run that has not ended: one this Runner is streaming, or, given its
        ``user_id`` and ``session_id``, any run of that session (one whose stream was
        given up already: an async consumer that was cancelled). ``invalid_request``
        when there is no such run. A run the host resumed (and this Runner follows) is
        cancelled as the run that continues it: the session finds it by its invocation."""
        if run_id in self._runs:
            user_id, session_id = self._runs[run_id]
        elif user_id is None or session_id is None:
            raise InvalidRequestError(f"no run {run_id!r} in progress on this runner")
        self._router.call(CancelRun(self.app_name, user_id, session_id, run_id), session_id, user_id)

    # -- runs ---------------------------------------------------------------------------------

    def run(self, user_id: str, session_id: str, message: str | Content, *, run_config: RunConfig | None = None,
            state_delta: dict[str, Any] | None = None, reject_if_busy: bool = False,
            run_id: str | None = None, create_session: bool | None = None) -> Generator[Event, None, None]:
        """Run one turn; yield its events (the user's first, with ``state_delta``, which
        is committed with the message); raise RunFailedError on failure. A session that
        does not exist is refused (SessionNotFoundError), or created for the turn with
        ``create_session`` (None: the Runner's ``auto_create_session``)."""
        yield from self._tracked(self._run_request(user_id, session_id, message, run_config, state_delta,
                                                   reject_if_busy, run_id, create_session), run_config)

    def resume(self, user_id: str, session_id: str, run_id: str, *,
               decisions: Mapping[str, CallDecision] | None = None, run_config: RunConfig | None = None,
               new_run_id: str | None = None) -> Generator[Event, None, None]:
        """Continue run ``run_id`` of the session (interrupted, killed, timed out, failed,
        or stopped ``needs_decision``) from its committed steps, as a new run of the same
        invocation: yield the events made now; raise RunFailedError as ``run`` does
        (``needs_decision``: its ``pending_calls`` each need a :class:`CallDecision`, given
        in ``decisions`` by call id on the next resume). A run is resumed once:
        ``invalid_request`` for one resumed already, still running, done or cancelled."""
        yield from self._tracked(self._resume_request(user_id, session_id, run_id, decisions, run_config,
                                                      new_run_id), run_config)

    async def resume_async(self, user_id: str, session_id: str, run_id: str, *,
                           decisions: Mapping[str, CallDecision] | None = None, run_config: RunConfig | None = None,
                           new_run_id: str | None = None) -> AsyncIterator[Event]:
        """:meth:`resume` as an async iterator (on a thread of its own)."""
        request = self._resume_request(user_id, session_id, run_id, decisions, run_config, new_run_id)
        self._runs[request.run_id] = (user_id, session_id)
        try:
            async for event in iterate_in_thread(lambda: self._followed(request, run_config)):
                yield event
        finally:
            self._runs.pop(request.run_id, None)

    def follow(self, user_id: str, session_id: str, run_id: str, *, after: str = "",
               run_config: RunConfig | None = None) -> Generator[Event, None, None]:
        """Join run ``run_id`` of the session as its caller (``FollowRun``): yield the
        committed events of its invocation after event ``after`` (all of them when
        empty), then its events as they come; return at its end, or raise
        RunFailedError as ``run`` does (following on when the host resumes it on its
        own). A run that ended already yields its events and ends so. Its earlier caller
        hears nothing more of it. InvalidRequestError for a run the session never had."""
        request = checked(FollowRun(self.app_name, user_id, session_id, run_id=run_id, after=after))
        yield from self._followed(request, run_config)

    async def run_async(self, user_id: str, session_id: str, message: str | Content, *,
                        run_config: RunConfig | None = None, state_delta: dict[str, Any] | None = None,
                        reject_if_busy: bool = False, run_id: str | None = None,
                        create_session: bool | None = None) -> AsyncIterator[Event]:
        """The same as :meth:`run`, as an async iterator. On the host's machine the run
        goes on this event loop's direct line to the session's partition
        (``_async_line``: no thread); when there is none (the partitions not listed yet,
        another machine, a partition that died before answering), :meth:`run` carries it
        on a thread of its own (``_live_run.iterate_in_thread``)."""
        request = self._run_request(user_id, session_id, message, run_config, state_delta, reject_if_busy, run_id,
                                    create_session)
        self._runs[request.run_id] = (user_id, session_id)
        ends_at: float | None = self.clock() + self._run_limit(run_config)  # one wait, whichever way it goes
        try:
            line = await self._direct.async_line(request)
            direct, seen, failure = True, Seen(), None
            if line is not None:
                try:
                    async for event in self._stream_async(line, request, run_config, ends_at=ends_at):
                        if seen.first_time(event):
                            yield event
                    return
                except NotTaken:
                    direct = False  # as in _run: the host's current partition is asked
                except RunFailedError as error:
                    if not (self.follow_resumes and error.resumed_as):
                        raise
                    failure, request, ends_at = error, follow_request(request, error, seen), None
            following, until = request, ends_at
            async for event in iterate_in_thread(lambda: self._followed(following, run_config, direct, seen, failure,
                                                                        ends_at=until)):
                yield event
        finally:
            self._runs.pop(request.run_id, None)

    def _tracked(self, request: RunRequest, run_config: RunConfig | None) -> Iterator[Event]:
        """``_followed``'s events, the run known to :meth:`cancel` meanwhile."""
        self._runs[request.run_id] = (request.user_id, request.session_id)
        try:
            yield from self._followed(request, run_config)
        finally:
            self._runs.pop(request.run_id, None)

    def _followed(self, request: RunRequest, run_config: RunConfig | None, direct: bool = True,
                  seen: Seen | None = None, failure: RunFailedError | None = None, *,
                  ends_at: float | None = None) -> Iterator[Event]:
        """``_run``'s events, following the host's own resumes of the run (``_follow``).
        ``ends_at``: when the wait for ``request``'s run ends, when it began before (a
        run sent on again after its first way failed); each run followed after it is
        waited for a whole limit of its own."""
        untils = [ends_at]

        def run(asked: RunRequest, straight: bool) -> Iterator[Event]:
            until = untils.pop() if untils else None
            return self._run(asked, run_config, straight, ends_at=until)

        return followed(run, request,
                        follows=self.follow_resumes, direct=direct, seen=seen, failure=failure,
                        resumed_by=lambda run_id: self._resumed_by(request.user_id, request.session_id, run_id))

    def _resume_request(self, user_id: str, session_id: str, run_id: str,
                        decisions: Mapping[str, CallDecision] | None, run_config: RunConfig | None,
                        new_run_id: str | None) -> RunRequest:
        request = ResumeRun(self.app_name, user_id, session_id, run_config=run_config, resume=run_id,
                            decisions=dict(decisions) if decisions else None)
        if new_run_id:
            request = replace(request, run_id=new_run_id)
        return checked(request)  # type: ignore[no-any-return]

    def _run_request(self, user_id: str, session_id: str, message: str | Content, run_config: RunConfig | None,
                     state_delta: dict[str, Any] | None, reject_if_busy: bool, run_id: str | None,
                     create_session: bool | None) -> RunRequest:
        """The run's request (InvalidRequestError when it breaks the input rules)."""
        content = Content.user(message) if isinstance(message, str) else message
        request = RunRequest(self.app_name, user_id, session_id, new_message=content, run_config=run_config,
                             state_delta=dict(state_delta) if state_delta else None,
                             reject_if_busy=reject_if_busy,
                             create_session=self.auto_create_session if create_session is None else create_session)
        if run_id:
            request = replace(request, run_id=run_id)
        return checked(request)  # type: ignore[no-any-return]

    # -- google-adk's try-out -----------------------------------------------------------------

    async def run_debug(self, user_messages: str | list[str], *, user_id: str = "debug_user_id",
                        session_id: str = "debug_session_id", run_config: RunConfig | None = None,
                        quiet: bool = False, verbose: bool = False) -> list[Event]:
        """google-adk's quick try-out, as the in-process Runner's (``adk_actors.Runner``):
        in order, the session ``session_id`` of ``user_id`` is read, or created when the
        host has none; each of ``user_messages`` (one string or a list) is run in turn
        with :meth:`run_async`; every event the turns yielded but the user's own
        message is returned, in order.
        Unless ``quiet``: which session is used and each message are logged (the
        ``adk_actors.runtime`` logger, at INFO) and each event is printed as it comes
        (its texts; with ``verbose`` its tool calls, results, code and data too). A
        turn's error is raised here."""
        try:
            await asyncio.to_thread(self.get_session, user_id, session_id)
            created = False
        except SessionNotFoundError:
            await asyncio.to_thread(self.create_session, user_id, session_id)
            created = True
        if not quiet:
            _debug_log.info("%s session: %s", "Created new" if created else "Continue", session_id)
        collected: list[Event] = []
        for text in [user_messages] if isinstance(user_messages, str) else list(user_messages):
            if not quiet:
                _debug_log.info("User > %s", text)
            first = True
            async for event in self.run_async(user_id, session_id, text, run_config=run_config):
                users_own, first = first and event.author == "user", False
                if users_own:
                    continue  # the host's runs yield the message first; google-adk's run_debug shows it not
                if not quiet:
                    print_event(event, verbose=verbose)
                collected.append(event)
        return collected
