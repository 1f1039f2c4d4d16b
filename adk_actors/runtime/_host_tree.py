"""The host's supervision tree, as a spec: what ``Host.start`` hands to ``start_supervisor``.

:func:`tree_spec` builds, in the order they start (rest_for_one at the root: each child
depends on the ones before it): the ``registry``; ``run_pools``, one pool of run
workers per session partition (:func:`pools_spec`); ``sessions``, the partitions'
supervisor; ``services`` (:func:`services_spec`: breakers, artifacts, memory,
approvals, credentials, the MCP toolsets' supervisor and, in a cluster, the
``cluster`` actor); the ``jobs`` actor when jobs are on; then the host's clients
(the HTTP server). Building it starts nothing and fails on nothing: a bad setting is
found by ``HostConfig`` and ``check_cluster`` first, a child that cannot start by
``start_supervisor``.

This module imports the code of every actor of the tree: the Host imports it only
when it starts one (a client of a running host needs none of it).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from supervision import (
    Backoff,
    ChildSpec,
    PartitionSupervisorSpec,
    Registry,
    Strategy,
    SupervisorSpec,
)
from supervision.lowlevel import ChildType

from ._approvals import ApprovalActor
from ._artifacts import ArtifactActor
from ._breakers import CircuitBreakerActor
from ._cluster import ClusterActor, ClusterArgs
from ._credentials import CredentialActor
from ._host_config import HostConfig, check_cluster
from ._job_calls import JobsArgs
from ._jobs import JobQueueActor
from ._link import worker_line_path
from ._mcp_supervisor import MCP_SUPERVISOR
from ._memory import MemoryActor
from ._partition import PartitionArgs, SessionPartition
from ._run_pool import PoolArgs, RunPool
from ._run_protocol import WorkerSettings
from ._run_workers import WorkerLimits

__all__ = ["PARTITION_BACKOFF", "RESTART_BACKOFF", "pools_spec", "services_spec", "tree_spec"]

#: How a service and the jobs actor are restarted: the first restart after 20 ms, each
#: consecutive one twice as late, up to 5 s; a child that ran 1 s is back to the first.
#: One whose start keeps failing (its store out of reach: a network cut) is tried ever
#: less often, so that an outage of tens of seconds does not spend the restart budgets
#: and stop the host.
RESTART_BACKOFF = Backoff(min_delay=0.02, max_delay=5.0, reset_after=1.0)
#: The session partitions': the same, but a partition that crashed while it ran (killed)
#: comes back at once, its sessions waiting on it; only a failed start waits.
PARTITION_BACKOFF = Backoff(min_delay=0.02, max_delay=5.0, reset_after=1.0, after_crashes=False)


def tree_spec(config: HostConfig, holder: str) -> SupervisorSpec:
    """The root's spec (see the module); ``holder``: the host's name among the hosts
    sharing its store (``Host.holder_name``: its sessions' lease writer)."""
    lines_dir = str(Path(config.data_dir) / "lines")
    partition_args = PartitionArgs(store=config.store_location, apps=dict(config.apps),
                                   lines_dir=lines_dir, lease_holder=holder,
                                   lease_seconds=config.lease_seconds,
                                   agents_dir=config.agents_dir, conformance_dir=config.conformance_dir,
                                   idle_timeout=config.idle_timeout,
                                   run_timeout=config.run_timeout,
                                   max_queued_runs=config.max_queued_runs,
                                   partitions=config.partitions,
                                   workers=WorkerLimits(config.run_workers, config.runs_per_worker,
                                                        config.max_run_workers,
                                                        stop_grace=config.run_stop_grace),
                                   trace_turns=config.trace_turns,
                                   limits=config.limits,
                                   session_intensity=config.session_intensity,
                                   session_period=config.session_period)
    return SupervisorSpec(
        children=(
            ChildSpec(id="registry", start=Registry, provides_registry=True),
            ChildSpec.supervisor("run_pools", pools_spec(config, holder, lines_dir), name="run_pools"),
            ChildSpec.supervisor("sessions", PartitionSupervisorSpec(
                partitions=config.partitions, partition_start=SessionPartition, partition_args=partition_args,
                partition_prefix="sessions", partition_start_timeout=60.0, partition_type=ChildType.WORKER,
                partition_shutdown=config.session_shutdown, intensity=config.sessions_intensity,
                period=config.sessions_period, health=config.health,
                partition_backoff=PARTITION_BACKOFF), name="sessions"),
            ChildSpec.supervisor("services", services_spec(config, holder)),
            *_jobs_spec(config, holder),
            *config.clients,
        ),
        strategy=Strategy.REST_FOR_ONE,
        intensity=config.root_intensity,
        period=config.root_period,
        health=config.health,
    )


def pools_spec(config: HostConfig, holder: str, lines_dir: str) -> SupervisorSpec:
    """One pool of run workers per session partition (``pool-<i>`` serves
    ``sessions-<i>``), one_for_one: a pool over its workers' restart intensity is
    restarted alone, at once, and the partitions' own intensity bounds this
    supervisor's. Started before the partitions, whose turns run on them."""
    worker = WorkerSettings(apps=dict(config.apps), agents_dir=config.agents_dir,
                            conformance_dir=config.conformance_dir,
                            model_base_urls=dict(config.models), model_options=dict(config.model_options),
                            cached_events=config.worker_cached_events, trace=config.trace_turns > 0)
    return SupervisorSpec(
        children=tuple(
            ChildSpec(id=f"pool-{index}", start=RunPool, args=PoolArgs(
                replace(worker, partition_line=worker_line_path(lines_dir, holder, index)),
                run_workers=config.run_workers, max_run_workers=config.max_run_workers,
                health=config.health, services=config.breakers,
                worker_intensity=config.worker_intensity, worker_period=config.worker_period),
                shutdown=config.session_shutdown)
            for index in range(config.partitions)),
        strategy=Strategy.ONE_FOR_ONE,
        intensity=config.sessions_intensity,
        period=config.sessions_period,
        health=config.health,
        concurrent_start=True,
    )


def services_spec(config: HostConfig, holder: str) -> SupervisorSpec:
    """The service actors, one_for_one, each restarted after a short backoff (so a
    service that keeps dying does not spin), with a restart budget of their own."""
    backoff = RESTART_BACKOFF
    data = Path(config.data_dir)
    return SupervisorSpec(
        children=(
            ChildSpec(id="breakers", start=CircuitBreakerActor, args=config.breaker, name="breakers",
                      backoff=backoff),
            ChildSpec(id="artifacts", start=ArtifactActor, name="artifacts", backoff=backoff,
                      args={"root": config.artifacts_dir or str(data / "artifacts"), "max_bytes": config.max_artifact_bytes}),
            ChildSpec(id="memory", start=MemoryActor, name="memory", backoff=backoff,
                      args={"memory": config.store_url or str(data / "memory.db"),
                            "session_store": config.store_location, "host": holder}),
            ChildSpec(id="approvals", start=ApprovalActor, name="approvals", backoff=backoff,
                      args={"path": config.store_url or str(data / "approvals.db"),
                            "session_store": config.store_location, "host": holder}),
            ChildSpec(id="credentials", start=CredentialActor, name="credentials", backoff=backoff,
                      args={"path": config.store_url or str(data / "credentials.db"),
                            "host": holder}),
            # MCP toolsets: one actor each, started by the first run that needs it (runtime._mcp).
            ChildSpec.supervisor("mcp", SupervisorSpec(children=(), strategy=Strategy.ONE_FOR_ONE,
                                                       intensity=30, period=60.0, actor_class=MCP_SUPERVISOR),
                                 name="mcp"),
            *_cluster_spec(config, holder),
        ),
        strategy=Strategy.ONE_FOR_ONE,
        intensity=config.services_intensity,
        period=config.services_period,
        health=config.health,
        concurrent_start=True,  # none needs another to start: 30-40 ms of serve's start (bench/startup.py)
    )


def _cluster_spec(config: HostConfig, holder: str) -> tuple[ChildSpec, ...]:
    """The ``cluster`` actor (a service), in a cluster only."""
    leader = check_cluster(config)
    if leader is None:
        return ()
    args = ClusterArgs(name=holder, leader=f"{leader[0]}:{leader[1]}", refresh=config.cluster_refresh)
    return (ChildSpec(id="cluster", start=ClusterActor, args=args, name="cluster", backoff=RESTART_BACKOFF),)


def _jobs_spec(config: HostConfig, holder: str) -> tuple[ChildSpec, ...]:
    """The ``jobs`` actor (after the sessions it runs agents on), if jobs are on."""
    if config.jobs is None:
        return ()
    args = JobsArgs(path=config.store_url or str(Path(config.data_dir) / "jobs.db"),
                    config=config.jobs, apps=dict(config.apps), agents_dir=config.agents_dir,
                    node=holder)
    return (ChildSpec(id="jobs", start=JobQueueActor, args=args, name="jobs",
                      backoff=RESTART_BACKOFF),)
