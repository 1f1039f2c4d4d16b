"""The run worker: a pooled process that runs a session partition's turns.

A partition's pool (``_run_pool``) starts a few workers, its children; each connects
its line to the partition, and the partition gives each turn of any of its sessions
to one of them (``_run_workers``). In order, for a worker:

1. ``Init`` (``WorkerSettings``): the apps, where the host's services are, the model
   connectors' options, where its partition listens. It starts its worker thread: one
   thread and one asyncio loop for the process's life, on which every turn runs as a
   task, several at once (a turn mostly waits for a model or a tool). It connects its
   line to the partition (again and again, ``CONNECT_FIRST`` apart and doubling to
   ``CONNECT_MAX``, while none listens: the partition may be starting), says
   ``WorkerHello`` and learns the partition's address from its ``PartitionHello``.
2. ``StartRun``: the turn's session history, whole, or as the events since the
   prefix this worker received for the session last time (``known``: count and last
   event id, checked; a worker that does not hold exactly that prefix answers
   ``NeedHistory`` and runs nothing). The worker keeps the history it received per
   session, never the events it made (the partition's stored copies come back with
   the next turn), in a cache of at most ``WorkerSettings.cached_events`` events.
3. Events come back to the main thread through a queue and a ``Doorbell`` (an
   ``os.pipe`` watched with ``ThespianWatch``: a send made inside a long handler
   would leave only when it returns), rung once per batch, not per event. A
   non-partial event is held by the worker thread while it keeps computing, so that
   what follows it, the outcome included, leaves with it: a fast turn costs the
   partition one message (one store transaction), and the main thread no wakeup:
   a run that handed the main thread nothing has its whole output (its events and
   its outcome) sent on the line by the worker thread itself (``_send_whole``).
   Held events go when the loop is about to wait (for a model, a tool, a timer), or
   once the worker thread has used ``FINAL_WINDOW`` of CPU time since the last of
   them (``HOLD_LIMIT`` since the first). Partial events are signalled at once and
   leading-edge batched (the first of a burst at once, the rest every
   ``PARTIAL_WINDOW`` seconds).
   Before a tool that must not run twice (not idempotent) runs, the engine awaits
   ``InvocationContext.committed``: the run's held events go at once with a
   ``barrier`` (by the worker thread, as a whole output goes, when it can), and the tool
   runs only once the partition answers ``Committed`` (they are in the store: a resumed
   run finds the call), never when it says the run ended or not within ``COMMIT_WAIT``.
4. ``Cancel(run_id)`` sets that turn's cancel token (checked between steps); the
   turn's outcome, when it stopped, tells the partition it did. A turn that has not
   stopped within the host's ``run_stop_grace`` gets this process killed (SIGKILL,
   by its pool), with every other turn it holds (``_run_workers``).
5. ``LiveSend``: an input of a live run (``StartRun.turn`` a ``LiveTurn``: the engine's
   ``run_live_invocation``), handed to its turn's input queue on the worker thread's
   loop, in order; kept until the run starts when its StartRun has not come yet. A
   run whose model falls ``_WAITING_INPUTS`` inputs behind is cancelled.

``StartRun`` comes, and ``RunOutput`` / ``NeedHistory`` go, on the direct line of
``_link`` when it takes them; ``Init``, ``Cancel`` and ``Shutdown`` come through
Thespian, each handled after whatever waits on the line.

The worker creates no actors, so no fork ever happens while its threads run. If the
process dies, every turn it held fails ``killed`` (the partition sees its line end)
and the pool starts another worker. If its line ends (the partition died or stopped),
the worker exits, normally: its turns died with the partition, and the pool starts
another, which connects to the partition's next self.

``RunActor`` (here: its start, line, inputs and output) inherits
``_run_engine.WorkerTurns`` (a turn on the worker thread: the engine run by the
turn's kind), which inherits ``_run_services.WorkerServices`` (the host's services
from the worker's threads); ``_run_wake`` has the doorbell and the rule for when
held events go.
"""


from __future__ import annotations

import asyncio
import concurrent.futures
import os
import queue
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from supervision import BadRequest
from supervision.lowlevel import call_on_fresh_chunk, process_alive
from supervision.protocol import ErrorReply, ExitKind, ExitReason, Reply

from .._types import Event, LiveRequest
from .._validate import check_fields
from ..engine import (
    AppCatalog,
    SessionView,
)
from ..messages import session_key
from ..models import close_pooled_clients
from ..tracing import TraceRecorder
from ._link import RunLink
from ._run_engine import Turn, WorkerTurns
from ._run_protocol import (
    Cancel,
    Committed,
    LiveSend,
    NeedHistory,
    PartitionHello,
    RunOutcome,
    RunOutput,
    StartRun,
    WorkerHello,
    WorkerSettings,
)
from ._run_wake import (
    FINAL_WINDOW,
    HOLD_LIMIT,
    Doorbell,
    HeldEvents,
    WaitWatchingSelector,
    release_due,
    released,
)
from ._services_client import ServiceError

__all__ = ["FINAL_WINDOW", "HOLD_LIMIT", "PARTIAL_WINDOW", "Doorbell", "RunActor", "release_due"]

#: Inputs of live runs that have not started here yet are kept for this many runs, this many each.
_EARLY_RUNS = 64
_EARLY_INPUTS = 1000
#: A live run whose model falls this many inputs behind its caller is cancelled (a
#: flood would otherwise grow the worker's memory without bound).
_WAITING_INPUTS = 1000
#: Partial (streaming) events after the first of a burst are sent in batches this often.
PARTIAL_WINDOW = 0.03
#: A worker that finds no partition listening tries again this long after, then twice
#: as long each time, up to CONNECT_MAX.
CONNECT_FIRST = 0.01
CONNECT_MAX = 0.2


@dataclass(frozen=True)
class ConnectPartition:
    """(A timer) try to connect the line to the partition again; next, ``delay`` later."""

    delay: float


class RunActor(WorkerTurns):
    """A pooled run worker (see the module)."""

    check_request = staticmethod(check_fields)  # malformed requests: invalid_request, never a crash

    def __init__(self) -> None:
        super().__init__()
        self._settings = WorkerSettings(apps={})
        self._catalog = AppCatalog()
        self._turns: dict[str, Turn] = {}
        #: session key -> the history this worker last received for it (see StartRun.known).
        self._histories: OrderedDict[str, list[Event]] = OrderedDict()
        self._cached = 0  # events in _histories
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_ready = threading.Event()
        self._requests: queue.SimpleQueue[tuple[str, str, Any, Any]] = queue.SimpleQueue()
        self._registry: Any = None
        self._services: dict[str, Any] = {}
        self._service_pids: dict[str, int] = {}
        self._lookups: dict[str, str] = {}
        self._waiting: dict[str, list[tuple[str, Any, Any]]] = {}
        self._service_calls: dict[str, concurrent.futures.Future[Any]] = {}
        #: (kind, run id, item) from the worker thread: "event", "outcome", "release"
        #: (every held event may go), or "barrier" (the run's go now; see _committed).
        self._queue: queue.SimpleQueue[tuple[str, str, Any]] = queue.SimpleQueue()
        self._bell = Doorbell()  # the worker and tool threads wake the main thread with it
        self._held: list[tuple[str, Event]] = []  # handed over, not yet released
        self._ready: dict[str, list[Event]] = {}  # handed over and released, not yet sent
        self._holds = HeldEvents()  # worker thread: the events it holds (see _hand)
        self._to_main: set[str] = set()  # worker thread: the runs that handed the main thread anything
        self._ended: list[RunOutput] = []  # worker thread: whole outputs to send as its loop goes to select
        self._line_lock = threading.Lock()  # the line's reads and close, and the worker thread's sends
        self._partial_armed = False
        self._link: RunLink | None = None  # our direct line to the partition (see _link)
        self._partition: Any = None  # its address, from its PartitionHello
        self._through_thespian: set[str] = set()  # runs whose output fell back from the line
        self._recorder: TraceRecorder | None = None  # records the turns' spans (WorkerSettings.trace)
        #: inputs of live runs not started here yet (their StartRun waits on NeedHistory)
        self._early_inputs: OrderedDict[str, list[LiveRequest]] = OrderedDict()
        #: (run id, barrier) -> what the worker thread waits on before a tool that must
        #: not run twice (see _committed); set on the worker thread's loop
        self._barriers: dict[tuple[str, int], asyncio.Future[bool]] = {}
        self._next_barrier = 0

    def init(self, args: WorkerSettings) -> Any:
        """Start the worker thread, watch the bell, connect the line to the partition."""
        if not isinstance(args, WorkerSettings):
            raise BadRequest("a run worker needs WorkerSettings")
        self._settings = args
        self._catalog = AppCatalog(args.apps, args.agents_dir)
        self._registry = args.registry
        if args.trace:
            self._recorder = TraceRecorder()
            self._recorder.attach()
        self._thread = threading.Thread(target=self._worker, name="run-worker", daemon=True)
        self._thread.start()
        self._connect(ConnectPartition(CONNECT_FIRST))
        return None

    def _connect(self, attempt: ConnectPartition) -> None:
        """Connect the line to the partition and say hello; while none listens, try again
        later (see the module, 1)."""
        path = self._settings.partition_line
        link = RunLink.connect(path) if path is not None else None
        if link is None or not link.send(WorkerHello(self.myAddress, os.getpid(), self.supervisor)):
            if link is not None:
                link.close()
            if path is not None:
                self.send_after(attempt.delay, ConnectPartition(min(attempt.delay * 2, CONNECT_MAX)))
            self._watch()
            return
        self._link = link
        self._watch()

    def _watch(self) -> None:
        line = [self._link.fd] if self._link is not None and not self._link.closed else []
        self.watch_fds([self._bell.read_fd, *line])

    def _read_link(self) -> None:
        """Take what the partition sent on our line (its hello, StartRun, Committed), in
        order. The line ended: the partition is gone, and so are our turns: exit."""
        if self._link is None:
            return
        with self._line_lock:  # (a line closed here while the worker thread sends on it: see _send_whole)
            messages = self._link.receive()
        for message in messages:
            if isinstance(message, StartRun):
                self._start(message)
            elif isinstance(message, Committed):
                self._on_committed(message)
            elif isinstance(message, PartitionHello):
                self._partition = message.address
        if self._link.closed:
            self._link = None
            self.stop(ExitReason(ExitKind.NORMAL, "its partition's line ended"))

    def _to_partition(self, run_id: str, message: Any) -> None:
        """On the line, or through Thespian (for the rest of that run) when it does not
        take the message."""
        if run_id not in self._through_thespian and self._link is not None and self._link.send(message):
            return
        self._through_thespian.add(run_id)
        if self._partition is not None:
            self.send(self._partition, message)

    def handle_cast(self, request: Any) -> None:
        self._read_link()  # a StartRun on the line came before this
        if isinstance(request, StartRun):
            self._start(request)
        elif isinstance(request, Committed):
            self._on_committed(request)
        elif isinstance(request, Cancel):
            turn = self._turns.get(request.run_id)
            if turn is not None:
                turn.cancel.cancel(request.reason)
        elif isinstance(request, LiveSend):
            self._live_input(request)
        else:
            super().handle_cast(request)

    # -- turns ------------------------------------------------------------------------------

    def _live_input(self, send: LiveSend) -> None:
        """Hand a live run's input to its turn, or keep it until the run starts here
        (inputs of at most ``_EARLY_RUNS`` runs, ``_EARLY_INPUTS`` each, are kept)."""
        turn = self._turns.get(send.run_id)
        if turn is not None and self._loop is not None:
            if turn.inputs.qsize() >= _WAITING_INPUTS:  # read only here and on the loop: a bound, roughly
                turn.cancel.cancel(f"more than {_WAITING_INPUTS} inputs waited for the model")
                return
            self._loop.call_soon_threadsafe(turn.inputs.put_nowait, send.request)
            return
        early = self._early_inputs.setdefault(send.run_id, [])
        if len(early) < _EARLY_INPUTS:
            early.append(send.request)
        while len(self._early_inputs) > _EARLY_RUNS:
            self._early_inputs.popitem(last=False)

    def _start(self, start: StartRun) -> None:
        """Rebuild the turn's history (answer NeedHistory if the prefix it names is not the
        one held), remember it for the session's next turn, forget the services' addresses
        whose process has died (looked up again), and hand the turn to the worker thread."""
        if start.run_id in self._turns:
            return  # the same turn again: it runs already
        key = session_key(start.app_name, start.user_id, start.session_id)
        if start.known is None:
            history = list(start.events)
        else:
            held = self._histories.get(key)
            count, last_id = start.known
            if held is None or len(held) != count or (count and held[-1].id != last_id):
                self._to_partition(start.run_id, NeedHistory(start.run_id))
                return
            history = held + list(start.events)
        self._remember(key, history)
        view = SessionView(app_name=start.app_name, user_id=start.user_id, session_id=start.session_id,
                           state=dict(start.state), events=list(history))
        turn = Turn(start, view)
        self._turns[start.run_id] = turn
        self._service_pids = {name: pid for name, pid in self._service_pids.items() if process_alive(pid)}
        self._services = {n: at for n, at in self._services.items() if n in self._service_pids}  # restarted: look up
        self._loop_ready.wait(5.0)
        assert self._loop is not None
        for request in self._early_inputs.pop(start.run_id, []):
            self._loop.call_soon_threadsafe(turn.inputs.put_nowait, request)
        asyncio.run_coroutine_threadsafe(self._run_turn(turn), self._loop)

    def _remember(self, key: str, history: list[Event]) -> None:
        """Keep ``history`` as ``key``'s, most recent last; forget the least recent
        sessions while more than ``cached_events`` events are kept (the one just kept stays)."""
        previous = self._histories.pop(key, None)
        self._cached -= len(previous) if previous is not None else 0
        self._histories[key] = history
        self._cached += len(history)
        while self._cached > self._settings.cached_events and len(self._histories) > 1:
            _, dropped = self._histories.popitem(last=False)
            self._cached -= len(dropped)

    def _worker(self) -> None:
        """Worker thread: one asyncio loop for every turn of this process; ends (closing
        the pooled HTTP clients) when the loop is stopped."""
        loop = asyncio.SelectorEventLoop(WaitWatchingSelector(self._before_select))
        asyncio.set_event_loop(loop)
        self._loop = loop
        self._loop_ready.set()
        try:
            call_on_fresh_chunk(loop.run_forever)  # its own frame chunk: no edge under the turns' calls
            loop.run_until_complete(close_pooled_clients())
        finally:
            loop.close()

    def _hand(self, kind: str, run_id: str, item: Any) -> None:
        """Worker thread: hold a non-partial event (see ``_before_select``), or hand an
        item to the main thread and wake it. What is handed after held events releases
        them first (a partial event cannot pass them). An outcome takes its run's held
        events along: when its run handed the main thread nothing (its output is all
        here: nothing of it can be overtaken), this thread sends them itself, on the line,
        at its loop's next select (``_send_whole``: after the turn's own tail, as the
        thread goes idle); else they are handed over after what the run handed before.
        Such a run's barrier goes that way too, at once, with its held events."""
        if kind == "event" and not item.partial:
            self._holds.hold(run_id, item, time.thread_time())
            return
        if kind == "barrier" and run_id not in self._to_main:
            if not self._send_whole(RunOutput(run_id, self._holds.take(run_id), None, item)):
                self._bell.ring()  # (handed to the main thread instead)
            return
        if kind == "outcome":
            events = self._holds.take(run_id)
            if run_id not in self._to_main:
                self._ended.append(RunOutput(run_id, events, item))
                return
            self._to_main.discard(run_id)
            for event in events:
                self._queue.put(("event", run_id, event))
        else:
            self._holds.hand_all(self._queue, self._to_main)  # (released: see HeldEvents)
            self._to_main.add(run_id)
        self._queue.put((kind, run_id, item))
        self._bell.ring()

    def _send_whole(self, output: RunOutput) -> bool:
        """Worker thread: send the whole output of a run that handed the main thread
        nothing (or its events and a barrier) on the line (one datagram, kept whole),
        saving the main thread's wakeup; False when the line is gone, does not take it
        or it does not pickle: then the main thread gets it (and the rest of the run)."""
        with self._line_lock:
            link = self._link
            try:
                sent = (link is not None and not link.closed and output.run_id not in self._through_thespian
                        and link.send(output))
            except Exception:
                sent = False
        if sent:
            if output.outcome is not None:
                self._turns.pop(output.run_id, None)
            return True
        for event in output.events:
            self._queue.put(("event", output.run_id, event))
        if output.outcome is None:
            self._to_main.add(output.run_id)
        self._queue.put(("barrier", output.run_id, output.barrier) if output.outcome is None else
                        ("outcome", output.run_id, output.outcome))
        return False

    def _before_select(self, timeout: float | None) -> None:
        """Worker thread, at each turn of its loop: release the held events (and wake the
        main thread for them) when the loop is about to wait, or when the thread has used
        FINAL_WINDOW of its CPU time since the last of them or HOLD_LIMIT since the first.
        First, the ended runs' whole outputs go (``_hand``)."""
        ring = False
        while self._ended:
            ring = not self._send_whole(self._ended.pop(0)) or ring
        if self._holds.first is not None and self._holds.due(timeout, time.thread_time()):
            ring = self._holds.hand_all(self._queue, self._to_main) or ring
        if ring:
            self._bell.ring()

    def handle_watch(self, ready: list[int]) -> None:
        """Woken by the line (a StartRun) or the bell: serve the threads' service
        requests, then take what the worker thread handed over and send what may go
        (see the module, 3)."""
        if self._link is not None and self._link.fd in ready:
            self._read_link()
        self._bell.answer()  # before reading the queues (see Doorbell)
        self._serve_requests()
        partial_only: list[str] = []
        while True:
            try:
                kind, run_id, item = self._queue.get_nowait()
            except queue.Empty:
                break
            if kind == "release":
                self._release(None)
            elif kind == "event" and not item.partial:
                self._held.append((run_id, item))
            elif kind == "event":
                self._ready.setdefault(run_id, []).append(item)
            elif kind == "barrier":
                self._release(run_id)
                self._send(run_id, None, barrier=item)
            else:
                self._release(run_id)
                self._send(run_id, item)
        for run_id, events in list(self._ready.items()):
            if any(not event.partial for event in events):
                self._send(run_id, None)  # held as long as it should already: it goes now
            elif events:
                partial_only.append(run_id)
        if partial_only and not self._partial_armed:
            # Leading edge: the first partial of a burst goes at once (first-token
            # latency); what follows within the window is batched.
            self._partial_armed = True
            for run_id in partial_only:
                self._send(run_id, None)
            self.send_after(PARTIAL_WINDOW, "flush-partials")

    def _release(self, run_id: str | None) -> None:
        """Held events become ready: all of them (None), or those of one run."""
        self._held = released(self._held, self._ready, run_id)

    def _send(self, run_id: str, outcome: RunOutcome | None, barrier: int = 0) -> None:
        """Send a run's ready events (and its outcome, which ends the turn here, or a
        barrier the run waits on) to the partition."""
        events = self._ready.pop(run_id, [])
        if not events and outcome is None and not barrier:
            return
        self._to_partition(run_id, RunOutput(run_id, events, outcome, barrier))
        if outcome is not None:
            self._turns.pop(run_id, None)
            self._through_thespian.discard(run_id)

    # -- services (breakers, artifacts ...) reached from the worker and tool threads ------

    def handle_info(self, message: Any, sender: Any) -> None:
        if isinstance(message, (Reply, ErrorReply)) and message.ref in self._lookups:
            name = self._lookups.pop(message.ref)
            entry = message.value if isinstance(message, Reply) else None
            waiting = self._waiting.pop(name, [])
            if entry is None:
                for _, _, future in waiting:
                    if future is not None and not future.done():
                        future.set_exception(ServiceError(name, "not_running", f"no {name} service is registered"))
                return
            self._services[name] = entry[0]
            if isinstance(entry[1], int):
                self._service_pids[name] = entry[1]
            for kind, request, future in waiting:
                self._send_to_service(kind, entry[0], request, future)
        elif isinstance(message, Reply) and message.ref in self._service_calls:
            future = self._service_calls.pop(message.ref)
            if not future.done():  # its caller may have given up (cancelled): a late answer is dropped
                future.set_result(message.value)
        elif isinstance(message, ErrorReply) and message.ref in self._service_calls:
            future = self._service_calls.pop(message.ref)
            if not future.done():
                future.set_exception(ServiceError("service", message.code, message.detail))
        else:
            super().handle_info(message, sender)

    def handle_timeout(self, payload: Any) -> None:
        if isinstance(payload, ConnectPartition):
            if self._link is None:
                self._connect(payload)
            return
        if payload != "flush-partials":
            return
        self._partial_armed = False
        for run_id in list(self._ready):
            self._send(run_id, None)

    def terminate(self, reason: Any) -> None:
        loop = self._loop
        if loop is not None and not self._turns and self._thread is not None:
            # Idle: its pooled connections are closed as the loop ends.
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join(0.5)
        self._bell.close()
        if self._link is not None:
            with self._line_lock:
                self._link.close()
