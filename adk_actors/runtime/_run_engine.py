"""One turn on a run worker's thread: the engine run for it, its events handed over.

:class:`WorkerTurns` is the part of ``_run.RunActor`` (which inherits it) that runs on
the worker thread's loop. In order, for a turn (``_run_turn``): the app is loaded, its
plugins and the services' bridges set up; the engine's entry point is chosen by the
turn's kind (``StartRun.turn``: ``NewTurn`` -> ``run_invocation``, ``LiveTurn`` ->
``run_live_invocation``, ``ResumeTurn`` -> ``resume_invocation``); each event it
yields is handed to the main thread (``RunActor._hand``); after a new or resumed
turn's last event, with the app's ``events_compaction_config``, google-adk's
post-invocation compaction (``engine._compaction_adk.summary_after_invocation``), its
summary handed over as the run's last event (stored as any other, and its caller sees
it, unlike google-adk's Runner; a summarizer that raises: logged, no summary); then
the outcome (its failure's reason from the exception that ended it, compaction's
included; with the turn's spans when they are recorded). Before a tool that must not
run twice, the turn waits (``_committed``) until the partition says its events are
stored (``Committed``), ``COMMIT_WAIT`` at most.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

from .._secrets import redact
from .._types import Event, LiveRequest
from ..engine import (
    AppCatalog,
    CancelToken,
    EndedByDecision,
    ModelRaised,
    NeedsDecision,
    RunCancelled,
    SessionView,
    resume_invocation,
    run_invocation,
    run_live_invocation,
)
from ..engine._compaction_adk import summary_after_invocation
from ..engine._flow_tools import raised_by_tool
from ..models import resolve_model
from ..plugins.plugin_manager import PluginManager
from ..tracing import TraceRecorder, pack
from ._conformance import conformance_plugin
from ._run_protocol import Committed, RunOutcome, StartRun, WorkerSettings
from ._run_services import WorkerServices
from ._services_client import service_bridges
from ._turns import LiveTurn, NewTurn, ResumeTurn, RunTurn

__all__ = ["COMMIT_WAIT", "Turn", "WorkerTurns", "failed_outcome", "invocation_events"]

#: How long a run waits for its partition to say its tool call is on record (see ``_run``, 3).
COMMIT_WAIT = 30.0


async def invocation_events(app: Any, turn: RunTurn, view: SessionView, invocation_id: str,
                            inputs: asyncio.Queue[LiveRequest] | None = None,
                            **context: Any) -> AsyncGenerator[Event, None]:
    """The events of ``turn`` of ``app`` on ``view``, in order: the engine's entry point
    chosen by the turn's kind (``NewTurn`` -> ``run_invocation``, ``ResumeTurn`` ->
    ``resume_invocation``, ``LiveTurn`` -> ``run_live_invocation`` fed by ``inputs``),
    each event it yields; then, after a new or resumed turn, with the app's
    ``events_compaction_config``, google-adk's post-invocation summary
    (``summary_after_invocation``), committed to ``view`` and yielded last. What the
    engine raises goes through (see :func:`failed_outcome`)."""
    match turn:
        case LiveTurn():
            events = run_live_invocation(app.root_agent, view, inputs or asyncio.Queue(),
                                         invocation_id=invocation_id, **context)
        case ResumeTurn(decisions=decisions, message=message, state_delta=state_delta):
            events = resume_invocation(app.root_agent, view, invocation_id=invocation_id, decisions=decisions,
                                       message=message, state_delta=state_delta, **context)
        case NewTurn(message=message, state_delta=state_delta):
            events = run_invocation(app.root_agent, view, message, state_delta=state_delta,
                                    invocation_id=invocation_id, **context)
    async with contextlib.aclosing(events):
        async for event in events:
            yield event
    if not isinstance(turn, LiveTurn):  # google-adk's post-invocation compaction (not after live)
        summary = await summary_after_invocation(app.events_compaction_config, app.root_agent, view.events)
        if summary is not None:  # committed to the session as the run's last event
            view.commit(summary)
            yield summary


def failed_outcome(run_id: str, exc: BaseException) -> RunOutcome:
    """The outcome of run ``run_id`` that ``exc`` ended: cancelled (``RunCancelled``, or
    ``EndedByDecision``), ``needs_decision`` (a resumed run before calls that may have
    run), ``model_error`` (after its error event), else ``error`` (its exception's type
    and text; for a tool's own exception that ended the run, ``App(tool_errors="raise")``,
    the text is ``tool '<name>': <text>``); each detail redacted."""
    match exc:
        case RunCancelled():
            return RunOutcome(run_id, False, "cancelled", "RunCancelled", str(exc))
        case NeedsDecision():
            return RunOutcome(run_id, False, "needs_decision", "NeedsDecision", redact(exc.detail()))
        case EndedByDecision():
            return RunOutcome(run_id, False, "cancelled", "EndedByDecision", str(exc))
        case ModelRaised():
            return RunOutcome(run_id, False, "model_error", exc.error_type, redact(exc.message))
    tool = raised_by_tool(exc)
    if tool is not None:
        return RunOutcome(run_id, False, "error", type(exc).__name__, redact(f"tool {tool!r}: {exc}"))
    return RunOutcome(run_id, False, "error", type(exc).__name__, redact(str(exc)))


@dataclass
class Turn:
    """A turn this worker runs: its StartRun, its session view and its cancel token."""

    start: StartRun
    view: SessionView
    cancel: CancelToken = field(default_factory=CancelToken)
    #: a live run's inputs, put there on the worker thread's loop (call_soon_threadsafe)
    inputs: asyncio.Queue[LiveRequest] = field(default_factory=asyncio.Queue)


class WorkerTurns(WorkerServices):
    """The turns on the worker thread (see the module)."""

    _settings: WorkerSettings
    _catalog: AppCatalog
    _recorder: TraceRecorder | None  # records the turns' spans (WorkerSettings.trace)
    _loop: asyncio.AbstractEventLoop | None  # the worker thread's
    #: (run id, barrier) -> what the worker thread waits on before a tool that must
    #: not run twice (see _committed); set on the worker thread's loop
    _barriers: dict[tuple[str, int], asyncio.Future[bool]]
    _next_barrier: int

    def _hand(self, kind: str, run_id: str, item: Any) -> None:
        """Worker thread: queue an event, an outcome or a barrier for the main thread (``RunActor``)."""
        raise NotImplementedError

    async def _run_turn(self, turn: Turn) -> None:
        """Worker thread: run the engine for one turn; hand every event, then the outcome
        (with the turn's spans, when they are recorded)."""
        start, settings = turn.start, self._settings
        run_id = start.run_id
        try:
            app = self._catalog.load(start.app_name)
            delta = None if isinstance(start.turn, LiveTurn) else start.turn.state_delta
            conformance = conformance_plugin({**turn.view.state, **(delta or {})},
                                             start.run_config.streaming_mode.value, settings.conformance_dir)
            base_urls = settings.model_base_urls or {}
            options = dict(settings.model_options or {})
            services = settings.registry is not None
            context: dict[str, Any] = dict(
                run_config=start.run_config,
                plugins=PluginManager([*app.plugins, conformance] if conformance else app.plugins),
                policies=app.policies, cancel=turn.cancel,
                context_cache_config=app.context_cache_config, events_compaction_config=app.events_compaction_config,
                tool_errors=app.tool_errors,
                resolve_model=lambda name: resolve_model(name, base_urls=base_urls, **options),
                **(service_bridges(self) if services else {}), run_id=run_id,
                committed=lambda: self._committed(run_id))
            events = invocation_events(app, start.turn, turn.view, start.invocation_id, turn.inputs, **context)
            async with contextlib.aclosing(events):
                async for event in events:
                    self._hand("event", run_id, event)
        except BaseException as exc:
            outcome = failed_outcome(run_id, exc)
        else:
            outcome = RunOutcome(run_id, True)
        if self._recorder is not None:
            outcome = dataclasses.replace(outcome, trace=pack(start.invocation_id,
                                                              self._recorder.take(start.invocation_id)))
        self._hand("outcome", run_id, outcome)

    async def _committed(self, run_id: str) -> None:
        """Worker thread: return once the partition says every event the run handed over
        is in the store (``RunOutput.barrier``, answered ``Committed``). RunCancelled when
        it says the run ended there; a RuntimeError when it does not answer within
        ``COMMIT_WAIT``: either way the tool waiting for it does not run."""
        self._next_barrier += 1
        barrier = (run_id, self._next_barrier)
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._barriers[barrier] = future
        try:
            self._hand("barrier", run_id, barrier[1])
            try:
                ok = await asyncio.wait_for(future, COMMIT_WAIT)
            except TimeoutError:
                raise RuntimeError(f"the session's partition did not confirm the tool call was stored within "
                                   f"{COMMIT_WAIT} s; the tool did not run") from None
        finally:
            self._barriers.pop(barrier, None)
        if not ok:
            raise RunCancelled("the run ended on its session before its tool call was stored; the tool did not run")

    def _on_committed(self, answer: Committed) -> None:
        """Main thread: the partition's answer to a barrier, passed to the run waiting on it."""
        def settle() -> None:
            future = self._barriers.get((answer.run_id, answer.barrier))
            if future is not None and not future.done():
                future.set_result(answer.ok)

        if self._loop is not None:
            self._loop.call_soon_threadsafe(settle)
