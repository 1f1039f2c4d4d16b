"""The start arguments of the host's ``jobs`` actor (:mod:`adk_actors.runtime._jobs`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..jobs import JobsConfig

__all__ = ["JobsArgs"]


@dataclass(frozen=True)
class JobsArgs:
    path: str  # the jobs' store: a SQLite file or a postgresql:// URL (see store.JobStore)
    config: JobsConfig
    node: str = "local"  # this host's name among the hosts that share the queue
    apps: dict[str, str] = field(default_factory=dict)  # name -> import path or YAML file
    agents_dir: str | None = None
