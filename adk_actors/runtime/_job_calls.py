"""The requests of the host's ``jobs`` actor (:mod:`adk_actors.runtime._jobs`), and its
settings: what a client of the host needs, without the actor's code."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..jobs import Backoff, CronEntry, JobSpec

__all__ = ["CancelJob", "DiscardJob", "EnqueueJob", "GetJob", "JobsArgs", "JobsConfig", "ListJobs", "RetryJob"]


@dataclass(frozen=True)
class JobsConfig:
    """The ``[jobs]`` section: queues and their concurrency, the backoff of failed
    attempts (unless a job has its own), how often the queue ticks, how long finished
    jobs are kept, and cron schedules."""

    queues: dict[str, int] = field(default_factory=lambda: {"default": 4})
    backoff: Backoff = field(default_factory=Backoff)
    tick: float = 1.0
    prune_after: float = 7 * 24 * 3600.0
    cron: tuple[CronEntry, ...] = ()


@dataclass(frozen=True)
class JobsArgs:
    path: str
    config: JobsConfig
    apps: tuple[str, ...] = ()
    agents_dir: str | None = None


@dataclass(frozen=True)
class EnqueueJob:
    spec: JobSpec


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


