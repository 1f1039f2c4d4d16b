"""Watching one session's life from plain code (``Runner.watch_session``).

A :class:`SessionWatch` holds an endpoint of its own, registered with the session's
partition by ``WatchSession``: the partition sends it a ``SessionLifecycle`` at each
change (activating, activated, crashed, restarted, failed, reset, passivated, deleted). A partition that dies
takes its watchers with it, so while ``next`` waits the watch looks at the partition
every half second; when it is gone it reports ``crashed`` ("its partition stopped")
itself and registers again with the restarted partition.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from supervision import CallError, CallTimeout, ServerNotRunning, call

from .._exceptions import AdkError, HostError, HostStopped
from ..messages import SessionLifecycle, SessionStatus, WatchSession
from ._host_view import HostView

__all__ = ["SessionWatch"]

#: While ``next`` waits: how often the partition is looked at.
_LOOK_EVERY = 0.5


class SessionWatch:
    """The life of one session, as it happens (see the module). Use ``with``, or call
    :meth:`close`."""

    def __init__(self, host: HostView, request: WatchSession, call_timeout: float) -> None:
        self.host = host
        self.request = request
        self.call_timeout = call_timeout
        self._manager = host.system.private()
        self._endpoint = self._manager.__enter__()
        self._partition: Any = None
        self.status: SessionStatus = self._register()

    def _register(self) -> SessionStatus:
        """Register with the session's partition (the host's current one, waiting while it
        restarts, up to ``call_timeout``; ``HostStopped`` at once when the host has stopped);
        its status then."""
        deadline = time.monotonic() + self.call_timeout
        refresh = False
        while True:
            try:
                address = self.host.partition_for(self.request.app_name, self.request.user_id,
                                                  self.request.session_id, refresh=refresh)
                status: SessionStatus = call(self._endpoint, address, self.request, timeout=2.0)
                self._partition = address
                return status
            except HostStopped:
                raise  # no restart will answer
            except (ServerNotRunning, CallTimeout, HostError) as exc:
                if time.monotonic() >= deadline:
                    raise HostError(f"the session's partition cannot be reached to watch it: {exc}") from exc
            except CallError as exc:
                if exc.code != "not_running" or time.monotonic() >= deadline:
                    raise
            refresh = True
            time.sleep(0.02)

    def next(self, timeout: float) -> SessionLifecycle | None:
        """The next change in the session's life, or None if none came within ``timeout``
        seconds."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            message = self._endpoint.listen(min(remaining, _LOOK_EVERY))
            if isinstance(message, SessionLifecycle) and message.session_id == self.request.session_id:
                return message
            if message is None and not self._partition_there():
                self.status = self._register()  # the restarted partition knows nothing of us
                return SessionLifecycle(self.request.app_name, self.request.user_id, self.request.session_id,
                                        "crashed", "its partition stopped", time.time())

    def _partition_there(self) -> bool:
        """Is the partition this watch registered with still the session's? Not when its
        process is gone, nor when the host lists another in its place (a caller saw it
        restart first)."""
        try:
            current = self.host.partition_for(self.request.app_name, self.request.user_id, self.request.session_id)
        except AdkError:
            return True  # the partitions are restarting: asked again at the next look
        return bool(current == self._partition) and self.host.partition_alive(current) is not False

    def events(self, timeout: float, until: Callable[[SessionLifecycle], bool] | None = None
               ) -> Iterator[SessionLifecycle]:
        """Each change as it comes, for ``timeout`` seconds in all (or until ``until`` of
        one is true: that one is the last)."""
        deadline = time.monotonic() + timeout
        while (event := self.next(max(0.0, deadline - time.monotonic()))) is not None:
            yield event
            if until is not None and until(event):
                return

    def close(self) -> None:
        """Stop watching (the partition forgets this watcher), and close the endpoint."""
        try:
            call(self._endpoint, self._partition, WatchSession(self.request.app_name, self.request.user_id,
                                                                self.request.session_id, stop=True), timeout=2.0)
        except (CallError, CallTimeout):
            pass  # gone: it forgot us with itself
        finally:
            self._manager.__exit__(None, None, None)

    def __enter__(self) -> SessionWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
