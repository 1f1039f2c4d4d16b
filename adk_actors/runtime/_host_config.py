"""A host's configuration: :class:`HostConfig`, and the check of its cluster settings.

A ``HostConfig`` is made by the caller (or by ``adk_actors.config`` from a TOML file);
on construction it checks ``run_stop_grace`` (:class:`HostError` for one out of range).
At the host's start, :func:`check_cluster` checks the cluster settings in order: the
leader's address, a shared store, then the host's own address (loopback or private,
unless ``cluster_allow_public``); each failure a :class:`HostError` naming the setting.
"""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from supervision import ChildSpec
from supervision.lowlevel import HealthCheck

from .._exceptions import HostError
from ..jobs import JobsConfig
from ..messages import Limits
from ..models import BreakerConfig

__all__ = ["HostConfig", "check_cluster"]


@dataclass
class HostConfig:
    apps: dict[str, str]  # app name -> root agent import path ("package.module:root_agent") or YAML file
    data_dir: str = "data"
    # A folder of YAML apps (<agents_dir>/<name>/root_agent.yaml), served as they appear
    # (the agent builder saves there); None: the configured apps only.
    agents_dir: str | None = None
    # google-adk's conformance runner records and replays cases under this folder (see
    # runtime._conformance); None: a turn asking for either fails.
    conformance_dir: str | None = None
    port: int | None = None
    partitions: int = 2
    idle_timeout: float = 300.0
    # A run's deadline when its RunConfig sets none (None: no deadline). A run that
    # hangs (a tool blocked forever) then fails with "timeout" instead of holding its
    # session, and every turn queued behind it, forever.
    run_timeout: float | None = 600.0
    # A run that must stop (killed, cancelled, timed out, its session crashed or moved)
    # may take this long to stop at a step boundary; past it, the run worker process
    # holding it is killed, and its other runs end interrupted (resumed where their app
    # allows). Its caller hears of its end only once it stopped or its process is dead.
    run_stop_grace: float = 2.0
    max_queued_runs: int = 8
    run_workers: int = 2  # per partition: the processes every turn of its sessions runs on
    runs_per_worker: int = 0  # turns a run worker runs at once (0: no limit; 1: a process per turn)
    max_run_workers: int = 32  # per partition, with runs_per_worker: beyond, turns wait
    worker_cached_events: int = 50_000  # history events a run worker keeps for its sessions' next turns
    # Turns whose trace (adk_actors.tracing) each session keeps; 0: none recorded. Off for
    # an embedded host, on for `serve` (its console reads them): tracing costs about a
    # tenth of the throughput of a CPU-bound host (docs/benchmarks.md).
    trace_turns: int = 0
    log_file: str | None = None
    log_level: int = logging.INFO  # of the actors' log (log_file)
    address: str = "127.0.0.1"  # the actor system's address: it listens there only
    # Restart budgets, at every level (root, services, the session supervisors): sized
    # to tell a crash loop from kills of healthy actors. A child that dies at start is
    # restarted within 10-50 ms, so 40 restarts in 10 s stop a crash loop within a second
    # or two; kills of running actors, even one every 200 ms spread over the tree, stay
    # well under it at any one level (adk-actors chaos soak). Past it, the level gives up
    # and escalates; past the root's, every child stops in order and the host exits.
    root_intensity: int = 40
    root_period: float = 10.0
    #: Every supervisor health-checks its children, and every partition its run workers
    #: (``supervision.lowlevel.HealthCheck``): one that is alive but no longer answers (stopped,
    #: stuck in a handler) is killed and restarted. None: no checks.
    health: HealthCheck | None = field(default_factory=HealthCheck)
    #: A session that crashes more than ``session_intensity`` times within
    #: ``session_period`` seconds fails: it answers ``session_failed`` until reset.
    session_intensity: int = 5
    session_period: float = 60.0
    #: A partition whose run workers die, unasked, more than ``worker_intensity`` times
    #: within ``worker_period`` seconds exits, and its supervisor restarts it.
    worker_intensity: int = 20
    worker_period: float = 5.0
    services_intensity: int = 40
    services_period: float = 10.0
    sessions_intensity: int = 40  # the session partitions' supervisor's
    session_shutdown: float = 10.0  # how long a partition may take to stop (its runs are interrupted)
    sessions_period: float = 10.0
    models: dict[str, str] = field(default_factory=dict)  # model name -> OpenAI-compatible base URL
    breakers: bool = True
    breaker: BreakerConfig = field(default_factory=BreakerConfig)
    max_artifact_bytes: int = 50 * 1024 * 1024
    artifacts_dir: str = ""  # where artifacts' files are kept; empty: <data_dir>/artifacts ([artifacts] dir)
    limits: Limits = field(default_factory=Limits)  # message size, events per turn, sessions per user
    model_options: dict[str, Any] = field(default_factory=dict)  # e.g. {"retry": RetryPolicy(...), "timeout": 60}
    #: Background jobs (``[jobs]``): its queues, backoff and cron schedules; None: no
    #: ``jobs`` actor in the tree.
    jobs: JobsConfig | None = field(default_factory=JobsConfig)
    #: Clients of the host that live in its tree (the HTTP server): the root's last
    #: children, so a restart of the sessions or the services restarts them too.
    clients: tuple[ChildSpec, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    #: The session store: empty, SQLite in ``data_dir``; a ``postgresql://`` URL, that
    #: database (``[store] url``). See ``store_location``.
    store_url: str = ""
    lease_seconds: float = 15.0  # a partition's lease on a session it holds (renewed every third)

    #: A cluster (``[cluster]``, docs/scaling.md): the leader's ``<address>:<port>``; the
    #: host whose own address it is, is the leader. Empty: no cluster. Members need one
    #: shared store (``store_url``).
    cluster_join: str = ""
    cluster_checkin: float = 5.0  # members check in with the leader this often (3 missed: gone)
    cluster_refresh: float = 1.0  # the leader reads the members and sends the view this often
    #: A cluster's actor systems speak unauthenticated pickle: they may listen on a
    #: loopback or private address only, unless this is set.
    cluster_allow_public: bool = False

    def __post_init__(self) -> None:
        """A ``run_stop_grace`` that is no number of seconds in (0, 600]: :class:`HostError`."""
        grace = self.run_stop_grace
        if isinstance(grace, bool) or not isinstance(grace, (int, float)) or not 0 < grace <= 600:
            raise HostError(f"run_stop_grace must be seconds in (0, 600], not {grace!r}")

    @property
    def store_path(self) -> str:
        """The SQLite file of the embedded store (where it is, or would be)."""
        return str(Path(self.data_dir) / "sessions.db")

    @property
    def store_location(self) -> str:
        """What every process of the host opens as its session store
        (``store.open_session_store``): the URL, else the SQLite file."""
        return self.store_url or self.store_path


def check_cluster(config: HostConfig) -> tuple[str, int] | None:
    """The leader's (address, port) of a host in a cluster, or None outside one. Raises
    :class:`HostError` for a malformed ``cluster_join``, a cluster without a shared
    store, or one whose actor systems would listen beyond a private network (their
    sockets take unauthenticated pickle: an any-address or public one needs
    ``cluster_allow_public``)."""
    if not config.cluster_join:
        return None
    host, _, port = config.cluster_join.rpartition(":")
    try:
        leader = (str(ipaddress.ip_address(host)), int(port))
    except ValueError:
        raise HostError(f"[cluster] join must be the leader's <ip address>:<port>, not {config.cluster_join!r}") from None
    if not config.store_url:
        raise HostError("a cluster's hosts share one store: set [store] url (PostgreSQL)")
    own = ipaddress.ip_address(config.address)
    if own.is_unspecified:
        raise HostError(f"a cluster's actor systems speak unauthenticated pickle: [host] address {config.address} "
                        "would listen on every network; name the host's private address")
    if not (own.is_private or own.is_loopback) and not config.cluster_allow_public:
        raise HostError(f"a cluster's actor systems speak unauthenticated pickle: [host] address {config.address} "
                        "is public; put the hosts on a private network (or set [cluster] allow_public)")
    return leader
