"""``host.jobs``: enqueue and manage the host's background jobs from Python.

Each method is one call to the host's ``jobs`` actor (``timeout`` s at most); its
errors are the kit's typed ones: :class:`InvalidRequestError` for a job that cannot be
run (nothing is stored), :class:`NotFoundError` for an unknown job (or another user's),
:class:`HostError` when the host runs no jobs actor.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from supervision import CallError, ChildNotFound, ServerNotRunning, call

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
from ._runner import PrivateEndpoint, typed_error

__all__ = ["Jobs"]


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
        with self._lock:
            if self._endpoint is None:
                self._endpoint = PrivateEndpoint(self._host.system)
            for attempt in (1, 2):
                if self._address is None:
                    self._address = self._look_up()
                try:
                    return call(self._endpoint.context, self._address, request, timeout=self.timeout)
                except ServerNotRunning:
                    self._address = None  # restarted since: look it up again, once
                    if attempt == 2:
                        raise HostError("the jobs actor is restarting; try again") from None
                except CallError as exc:
                    raise typed_error(exc) from None
        raise AssertionError("unreachable")

    def _look_up(self) -> Any:
        root = self._host.root
        if root is None:
            raise HostError("the host is not running")
        try:
            address = root.child("jobs").address
        except ChildNotFound:
            address = None
        if address is None:
            raise HostError("the host runs no jobs actor (or it is restarting)")
        return address
