"""The requests of the host's ``jobs`` actor (:mod:`adk_actors.runtime._jobs`), and its
settings: what a client of the host needs, without the actor's code."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..jobs import JobsConfig, JobSpec

__all__ = ["CancelJob", "DiscardJob", "EnqueueJob", "EnqueueJobs", "GetJob", "JobsArgs", "ListJobs", "RetryJob"]


@dataclass(frozen=True)
class JobsArgs:
    path: str
    config: JobsConfig
    apps: dict[str, str] = field(default_factory=dict)  # name -> import path or YAML file
    agents_dir: str | None = None


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


