"""What a session partition is started with: :class:`PartitionArgs` (its ``Init``'s args)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..messages import Limits
from ._run_workers import WorkerLimits

__all__ = ["PartitionArgs"]

@dataclass(frozen=True)
class PartitionArgs:
    store: str  # the session store's location (store.open_session_store): a SQLite file or a postgresql:// URL
    apps: dict[str, str]  # app name -> root agent import path or YAML file
    lines_dir: str  # where Runners' and run workers' direct lines listen (see _caller_line, _link)
    lease_holder: str = "local"  # this host's name among the store's writers (its partitions add their index)
    lease_seconds: float = 15.0  # a lease on a held session lasts this long unless renewed (every third)
    agents_dir: str | None = None  # a folder of YAML apps (see engine.AppCatalog)
    conformance_dir: str | None = None  # where conformance cases are recorded and replayed (see _conformance)
    idle_timeout: float = 300.0
    run_timeout: float | None = None  # a run's deadline when its RunConfig sets none
    max_queued_runs: int = 8
    partitions: int = 1
    workers: WorkerLimits = field(default_factory=WorkerLimits)  # how busy its pool's workers may be
    trace_turns: int = 0  # turns whose trace each session keeps (0: no trace is recorded)
    limits: Limits = field(default_factory=Limits)
    session_intensity: int = 5  # a session that crashes more often than this ...
    session_period: float = 60.0  # ... within this many seconds fails: it answers session_failed until reset
