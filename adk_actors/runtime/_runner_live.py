"""A Runner's live runs: :class:`LiveRuns`, which ``Runner`` inherits.

``run_live`` has google-adk's two shapes. Without a queue, in order: the live
``RunRequest`` is checked against the input rules (``InvalidRequestError`` before
anything is sent); it is sent from a new endpoint of the Runner's pool through the
host's current partition (``RunCarrier._start_run``), and a refusal is raised as its
typed error (the endpoint given back, clean); once accepted, the run is known to
``Runner.cancel`` and a :class:`~._live_run.LiveRun` is returned: its inputs go to the
session as ``LiveInput`` calls through the Runner's ``Router``, and its events are read
from the same endpoint by ``RunCarrier._stream`` (the run forgotten and the endpoint
given back when they end or the caller stops reading). With ``live_request_queue``,
the run is started the first way by :func:`~._live_run.fed_by_queue`, which feeds it
from the queue and is iterated with ``async for``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, overload

from .._types import Event, LiveRequest, RunConfig
from ..messages import LiveInput, RunRequest
from ._live_run import LiveRun, fed_by_queue
from ._routing import checked
from ._run_carrier import RunCarrier
from ._run_transport import ThespianTransport

if TYPE_CHECKING:  # the queue's package loads the agent definitions; a client of a host needs none of them
    from ..agents.live_request_queue import LiveRequestQueue

__all__ = ["LiveRuns"]


class LiveRuns(RunCarrier):
    """Starts the Runner's live runs (see the module); the runs it starts are listed
    in ``_runs`` for ``Runner.cancel`` while they stream."""

    auto_create_session: bool
    _runs: dict[str, tuple[str, str]]

    @overload
    def run_live(self, user_id: str, session_id: str, *, run_config: RunConfig | None = None,
                 reject_if_busy: bool = False, live_request_queue: None = None) -> LiveRun: ...

    @overload
    def run_live(self, user_id: str, session_id: str, *, run_config: RunConfig | None = None,
                 reject_if_busy: bool = False, live_request_queue: LiveRequestQueue) -> AsyncIterator[Event]: ...

    def run_live(self, user_id: str, session_id: str, *, run_config: RunConfig | None = None,
                 reject_if_busy: bool = False,
                 live_request_queue: LiveRequestQueue | None = None) -> LiveRun | AsyncIterator[Event]:
        """Start a live run on the session (see the module): returns once the
        session's partition accepted it; raises the typed error it answered instead.

        With ``live_request_queue`` (google-adk's ``run_live``, called with keywords and
        iterated with ``async for``): see :func:`~._live_run.fed_by_queue`."""
        if live_request_queue is not None:
            return fed_by_queue(lambda config: self.run_live(user_id, session_id, run_config=config,
                                                             reject_if_busy=reject_if_busy),
                                live_request_queue, run_config)
        request = checked(RunRequest(self._router.app_name, user_id, session_id, run_config=run_config,
                                     reject_if_busy=reject_if_busy, live=True,
                                     create_session=self.auto_create_session))
        endpoint = self._endpoints.new()
        try:
            accepted = self._start_run(endpoint, request)
        finally:
            if endpoint.clean:  # refused
                self._endpoints.give_back(endpoint)
        self._runs[request.run_id] = (user_id, session_id)

        def stream() -> Iterator[Event]:
            try:
                yield from self._stream(endpoint, accepted, None, None, ThespianTransport(endpoint.context),
                                        run_config, request)
            finally:
                self._runs.pop(request.run_id, None)
                self._endpoints.give_back(endpoint)

        def send(live: LiveRequest) -> Any:
            return self._router.call(LiveInput(self._router.app_name, user_id, session_id, request.run_id, live),
                                     session_id, user_id)

        return LiveRun(request.run_id, send, stream())
