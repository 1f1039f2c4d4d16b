"""The message API of the host's ``jobs`` actor: what any actor (or a plain client)
sends it as a ``supervision.Call``, to the address the host's registry gives for
``jobs``. Each names the user it acts for (None: the operator, every user's jobs).

* :class:`EnqueueJob` -> the :class:`Job` (a unique key already taken: that job);
  :class:`EnqueueJobs` -> the jobs, all or none; a job that cannot run is answered
  ``invalid_request`` naming the problem, and nothing is stored;
* :class:`GetJob` -> the job (``not_found`` for an unknown job, or another user's);
  :class:`ListJobs` -> jobs, newest first;
* :class:`CancelJob`, :class:`RetryJob`, :class:`DiscardJob` -> the job as it is now.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._model import JobSpec

__all__ = ["CancelJob", "DiscardJob", "EnqueueJob", "EnqueueJobs", "GetJob", "ListJobs", "RetryJob"]


@dataclass(frozen=True)
class EnqueueJob:
    spec: JobSpec


@dataclass(frozen=True)
class EnqueueJobs:
    specs: tuple[JobSpec, ...]


@dataclass(frozen=True)
class GetJob:
    job_id: str
    user_id: str | None = None


@dataclass(frozen=True)
class ListJobs:
    user_id: str | None = None
    queue: str | None = None
    state: str | None = None
    limit: int = 100


@dataclass(frozen=True)
class CancelJob:
    job_id: str
    user_id: str | None = None


@dataclass(frozen=True)
class RetryJob:
    job_id: str
    user_id: str | None = None


@dataclass(frozen=True)
class DiscardJob:
    job_id: str
    user_id: str | None = None


