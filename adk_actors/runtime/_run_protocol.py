"""What a session partition, its pool and their run workers say to each other.

The pool sends ``WorkerSettings`` once (the args of a worker's ``Init``). The worker
connects its line to the partition and says ``WorkerHello``; the partition answers
``PartitionHello``, then sends ``StartRun`` (one turn of one session) and ``Cancel``; the worker answers with
``RunOutput`` messages (``LiveSend`` carries a live run's inputs, in order), the last of a run carrying its ``RunOutcome`` (with the
turn's trace spans when the worker records them), or with
``NeedHistory`` when a ``StartRun`` counted on history the worker does not hold.
``StartRun``, ``RunOutput`` and ``NeedHistory`` travel on the direct line of ``_link``
when it can take them, through Thespian otherwise.

Between the partition and its pool (through Thespian): the partition greets a pool
whose worker said hello (``PartitionAt``), and asks it for another worker
(``GrowPool``), for a worker's replacement (``RetireWorker``) or for a worker's end
(``StopWorker``); the pool tells the partition which worker its health check found
unresponsive (``Condemned``) before that worker is killed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from supervision import BadRequest

from .._extras import missing_extra
from .._types import Event, LiveRequest, RunConfig
from ..engine import AppCatalog
from ..tracing import PackedTrace
from ._turns import RunTurn

__all__ = [
    "Cancel",
    "Committed",
    "Condemned",
    "GrowPool",
    "LiveSend",
    "NeedHistory",
    "PartitionAt",
    "PartitionHello",
    "RetireWorker",
    "RunOutcome",
    "RunOutput",
    "StartRun",
    "StopWorker",
    "WorkerHello",
    "WorkerSettings",
    "load_apps",
]


@dataclass(frozen=True)
class WorkerSettings:
    """What every run of one worker shares: sent once, with its ``Init``."""

    apps: dict[str, str]  # app name -> import path of its root agent (or App), or its YAML file
    agents_dir: str | None = None  # a folder of YAML apps (see engine.AppCatalog)
    conformance_dir: str | None = None  # where conformance cases are recorded and replayed (see _conformance)
    registry: Any = None  # where to find the host's services (None: runs use none)
    model_base_urls: dict[str, str] | None = None
    model_options: dict[str, Any] | None = None  # retry policy and timeout for provider connectors
    #: Events of session histories the worker keeps for their next turns (see
    #: StartRun.known); the least recent sessions' are forgotten beyond it.
    cached_events: int = 50_000
    trace: bool = False  # record each turn's spans and send them with its outcome (see ..tracing)
    partition_line: str | None = None  # where its partition listens for its line (see _link)


@dataclass(frozen=True)
class StartRun:
    """One turn of one session: what the worker needs to run it.

    The session's history is ``events`` when ``known`` is None. Otherwise the worker
    received this session's history before, and ``known`` = (how many events of it,
    the id of the last one) says which prefix it is to reuse: the history is that
    prefix followed by ``events``. A worker that does not hold exactly that prefix
    answers ``NeedHistory`` and runs nothing."""

    run_id: str
    invocation_id: str
    app_name: str
    user_id: str
    session_id: str
    known: tuple[int, str | None] | None
    events: list[Event]
    state: dict[str, Any]
    #: what the turn runs: a user message (NewTurn), a live conversation whose inputs
    #: come as LiveSend (LiveTurn), or invocation_id continued from its committed
    #: events (ResumeTurn)
    turn: RunTurn
    run_config: RunConfig

    def __str__(self) -> str:  # what Thespian logs for it (see supervision._messages)
        return f"StartRun({self.run_id})"


@dataclass(frozen=True)
class LiveSend:
    """An input of a live run, in the order its caller sent it."""

    run_id: str
    request: LiveRequest


@dataclass(frozen=True)
class NeedHistory:
    """The worker does not hold the prefix a ``StartRun`` named: send the whole history."""

    run_id: str


@dataclass(frozen=True)
class Cancel:
    run_id: str
    reason: str = "cancelled"


@dataclass(frozen=True)
class RunOutcome:
    run_id: str
    ok: bool
    reason: str = ""
    error_type: str = ""
    detail: str = ""
    trace: PackedTrace | None = None  # the turn's spans, when the worker records them


@dataclass(frozen=True)
class RunOutput:
    """Events of a run, in order; the last output of a run carries its outcome too
    (one message instead of two at the end of every turn)."""

    run_id: str
    events: list[Event]
    outcome: RunOutcome | None = None
    #: > 0: the worker waits, before a tool that must not run twice, until these events
    #: are in the store: answer ``Committed(run_id, barrier)`` once they are
    barrier: int = 0

    def __str__(self) -> str:
        return f"RunOutput({self.run_id}, {len(self.events)} events, outcome={self.outcome is not None})"


@dataclass(frozen=True)
class Committed:
    """The partition's answer to a ``RunOutput`` with a ``barrier``: its events and
    every one before are in the store (``ok``), or the run ended on its session (or
    its events could not be stored) and must not go on (not ``ok``)."""

    run_id: str
    barrier: int
    ok: bool = True


@dataclass(frozen=True)
class WorkerHello:
    """A worker's first message on its line: its address and pid, and its pool's address."""

    address: Any
    pid: int
    pool: Any


@dataclass(frozen=True)
class PartitionHello:
    """The partition's first message on a worker's line: its address, for what the
    line does not take."""

    address: Any


@dataclass(frozen=True)
class PartitionAt:
    """To a pool: the partition its workers serve is at ``address``."""

    address: Any


@dataclass(frozen=True)
class GrowPool:
    """To a pool: start one more worker (``runs_per_worker``: every worker is busy)."""


@dataclass(frozen=True)
class RetireWorker:
    """To a pool: the worker at ``address`` gets no new turn: start another in its place;
    its end, asked for with ``StopWorker``, is not counted against the pool's intensity."""

    address: Any


@dataclass(frozen=True)
class StopWorker:
    """To a pool: end the worker at ``address`` (``kill``: SIGKILL, else a shutdown);
    no other takes its place, and its end is not counted."""

    address: Any
    kill: bool = True


@dataclass(frozen=True)
class Condemned:
    """To a partition: the pool's health check found the worker at ``address``
    unresponsive. The partition fails its runs as ``RunActorUnresponsive`` when it is
    gone, and answers ``StopWorker``; the pool kills it then (or after a short wait)."""

    address: Any


def load_apps(apps: dict[str, str], agents_dir: str | None) -> AppCatalog:
    """The catalog of a host's apps, each of ``apps`` loaded now (a partition and a pool
    load them as they start); BadRequest naming the first that cannot be. The Python apps
    of the ``agents_dir`` are loaded too, so that the workers forked from here start
    with them, but one that does not import is skipped: the turns that ask for it say
    why. (A YAML app of the ``agents_dir`` is loaded by the turns that ask for it.)"""
    catalog = AppCatalog(apps, agents_dir)
    for app, path in apps.items():
        try:
            catalog.load(app)
        except Exception as exc:
            extra = missing_extra(exc)  # a missing extra: which, and the pip command, not the import's words
            raise BadRequest(f"app {app!r}: cannot load its agent {path!r}: " +
                             (extra or f"{type(exc).__name__}: {exc}")) from exc
    for app in catalog.names():
        if app not in apps and catalog.language(app) == "python":
            catalog.load_error(app)  # loads it; an error is kept, not raised
    return catalog
