"""``host.jobs``: enqueue and manage the host's background jobs from Python.

Each method is one call to the host's ``jobs`` actor (``timeout`` s at most); its
errors are the kit's typed ones: :class:`InvalidRequestError` for a job that cannot be
run (nothing is stored), :class:`NotFoundError` for an unknown job (or another user's),
:class:`HostError` when the host runs no jobs actor.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Any

from supervision import CallError, CallTimeout, ServerNotRunning, call
from supervision.protocol import ChildNotFound

from .._exceptions import HostError
from ..jobs import (
    CancelJob,
    DiscardJob,
    EnqueueJob,
    EnqueueJobs,
    GetJob,
    Job,
    JobSpec,
    ListJobs,
    RetryJob,
)
from ._endpoints import PrivateEndpoint
from ._routing import typed_error

__all__ = ["Jobs"]

#: while a call waits, how often the jobs actor's process is looked at
_ALIVE_POLL = 0.2
#: how long to wait before looking the jobs actor up again while it restarts
_RESTART_POLL = 0.05


class _NoJobsActor(HostError):
    """The host has no jobs actor at all (not a restart: asking again will not help)."""


class Jobs:
    """The jobs of ``host`` as ``user_id`` sees them (None: the operator, every user's).
    Safe from many threads: its calls take turns on one private endpoint of the host's
    actor system, to the ``jobs`` actor's address, looked up once and again after the
    actor restarted."""

    def __init__(self, host: Any, user_id: str | None = None, timeout: float = 10.0) -> None:
        self._host = host
        self.user_id = user_id
        self.timeout = timeout
        self._lock = threading.Lock()
        self._address: Any = None
        self._pid: int | None = None
        self._endpoint: PrivateEndpoint | None = None

    def _own(self, spec: JobSpec) -> JobSpec:
        return spec if self.user_id is None or spec.user_id == self.user_id else replace(spec, user_id=self.user_id)

    def enqueue(self, spec: JobSpec) -> Job:
        """Store ``spec`` as a job (or, for a unique key already taken, return that job)."""
        job: Job = self._call(EnqueueJob(self._own(spec)))
        return job

    def enqueue_many(self, specs: list[JobSpec]) -> list[Job]:
        """Store many jobs in one call and one transaction (Oban's ``insert_all``): all of
        them, or, if one cannot run, none (its problem is the error)."""
        jobs: list[Job] = self._call(EnqueueJobs(tuple(self._own(spec) for spec in specs)))
        return jobs

    def enqueue_run(self, app_name: str, message: str, *, user_id: str | None = None, **options: Any) -> Job:
        """A job that runs ``app_name`` on ``message`` (``session_id=`` an existing
        session; else a new one per job); ``options`` are :class:`JobSpec`'s fields."""
        return self.enqueue(JobSpec(kind="agent", app_name=app_name, message=message,
                                    user_id=user_id or self.user_id or "operator", **options))

    def enqueue_function(self, function: str, args: dict[str, Any] | None = None, *, user_id: str | None = None,
                         **options: Any) -> Job:
        """A job that calls ``function`` (``"package.module:name"``) with ``args``."""
        return self.enqueue(JobSpec(kind="function", function=function, args=dict(args or {}),
                                    user_id=user_id or self.user_id or "operator", **options))

    def get(self, job_id: str) -> Job:
        job: Job = self._call(GetJob(job_id, self.user_id))
        return job

    def list(self, *, queue: str | None = None, state: str | None = None, limit: int = 100) -> list[Job]:
        jobs: list[Job] = self._call(ListJobs(self.user_id, queue, state, limit))
        return jobs

    def cancel(self, job_id: str) -> Job:
        job: Job = self._call(CancelJob(job_id, self.user_id))
        return job

    def retry(self, job_id: str) -> Job:
        job: Job = self._call(RetryJob(job_id, self.user_id))
        return job

    def discard(self, job_id: str) -> Job:
        job: Job = self._call(DiscardJob(job_id, self.user_id))
        return job

    def _call(self, request: Any) -> Any:
        """One call to the jobs actor, within ``timeout`` s. In order: its address (looked
        up when not known); the call, watching the actor's process (a death is known at
        once, not at the timeout); when the actor is gone or restarting, the address is
        looked up again and the call sent again, until the deadline. A request the dead
        actor had stored before it died may so be stored twice (an enqueue: give it a
        ``unique_key``). Errors: the actor's answer typed; :class:`HostError` at the
        deadline."""
        deadline = time.monotonic() + self.timeout
        with self._lock:
            if self._endpoint is None:
                self._endpoint = PrivateEndpoint(self._host.system)
            while True:
                try:
                    if self._address is None:
                        self._address, self._pid = self._look_up()
                    pid = self._pid
                    # Watch its process where that can be told here; else a dead
                    # address refusing the delivery says it (``call``).
                    alive = ((lambda: self._host.tree_process_alive(pid) is not False)
                             if pid and self._host.tree_process_alive(pid) is not None else None)
                    return call(self._endpoint.context, self._address, request,
                                timeout=max(0.1, deadline - time.monotonic()), alive=alive, poll=_ALIVE_POLL)
                except _NoJobsActor:
                    raise
                except (ServerNotRunning, HostError) as exc:
                    self._address = None  # restarted (or restarting): look it up again
                    if time.monotonic() >= deadline:
                        raise HostError(f"the jobs actor did not take the request: {exc}") from None
                    time.sleep(_RESTART_POLL)
                except CallError as exc:
                    raise typed_error(exc) from None
                except CallTimeout:
                    self._address = None
                    raise HostError(f"no answer from the jobs actor within {self.timeout} s") from None

    def _look_up(self) -> tuple[Any, int | None]:
        """The jobs actor's address and process; HostError while it is restarting."""
        root = self._host.root
        if root is None:
            raise HostError("the host is not running")
        try:
            info = root.child("jobs")
        except ChildNotFound:
            raise _NoJobsActor("the host runs no jobs actor ([jobs] enabled = false)") from None
        except (CallError, CallTimeout) as exc:
            raise HostError(f"the host's root did not answer: {exc}") from None
        if info.address is None:
            raise HostError("the jobs actor is restarting")
        return info.address, info.pid
