"""The soak (:func:`soak`, ``adk-actors chaos soak``): sessions talking to a host
while its actors are killed, then the proof that nothing was lost; its steps are
described in the package's docstring (:mod:`adk_actors.chaos`). Its arguments are
checked by :func:`check_soak_arguments`; one soak's state and its steps, each a
method named after what it does, are a :class:`_Soak`.
"""

from __future__ import annotations

import random
import signal
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from supervision import CallTimeout, SupervisionError

from .._exceptions import AdkError, RunFailedError, SessionFailedError
from .._types import Event, RunConfig
from ..runtime import ClusterView, Host, Runner
from ._back import kill_row
from ._deadline import scaled_deadline
from ._faults import (
    _cluster_rows,
    _command_line,
    _host_alive,
    _orphans,
    _pick_victim,
    _release,
    _Restarts,
    _wait_restored,
)
from ._report import SoakReport, UnfinishedResume, describe_unfinished
from ._soak_job import _enqueue_soak_jobs, _settle_soak_jobs
from ._tree import TARGET_KINDS, tree_rows


@dataclass
class _Session:
    id: str
    acknowledged: set[str] = field(default_factory=set)
    busy_since: float | None = None  # when the turn in flight began
    to_resume: str = ""  # --resume: the run a kill just ended (a turn, or a resume of one)
    chain: str = ""  # --resume: the turn a kill ended first, which to_resume continues
    last_run: str = ""  # the id of its last turn or resume
    last_failure: str = ""  # how its last turn that did not end well ended


def check_soak_arguments(*, sessions: int, duration: float, interval: float, targets: Iterable[str],
                         stops: float) -> tuple[str, ...]:
    """The target kinds of a soak, or ``ValueError`` for an unknown one, a count below 1,
    a duration or interval not above 0, or ``stops`` outside 0..1 (``soak`` checks its
    arguments with it; the CLI too, before it looks for a host)."""
    kinds = tuple(targets)
    unknown = [k for k in kinds if k not in TARGET_KINDS]
    if unknown or sessions < 1 or duration <= 0 or interval <= 0 or not 0 <= stops <= 1:
        raise ValueError(f"bad soak arguments: targets must be among {TARGET_KINDS} (got {unknown or kinds}); "
                         "sessions >= 1, duration and interval > 0, stops from 0 to 1")
    return kinds


def soak(host: Host, app: str, *, sessions: int = 8, duration: float = 60.0, interval: float = 0.2,
         targets: Iterable[str] = TARGET_KINDS, turn_timeout: float = 30.0, restore_timeout: float = 30.0,
         user: str = "chaos-soak", seed: int | None = None, stops: float = 0.0, min_faults: int = 0,
         jobs: int = 0, resume: bool = False, progress: Callable[[str], None] | None = None,
         cluster: bool = False, all_sessions: bool = False) -> SoakReport:
    """Drive ``sessions`` sessions of ``app`` on ``host`` while killing actors (see the
    module); return the :class:`SoakReport`. A fraction ``stops`` of the faults dealt to
    processes are a SIGSTOP instead of a SIGKILL (spread evenly, not drawn: a short soak
    stops as many as its share says): an actor alive but silent, which the host's health
    checks must find, kill and restart (one still there at the end fails the soak).
    The faults go on past ``duration`` (up to three times as long, scaled to the load:
    :func:`scaled_deadline`) until ``min_faults``
    have been dealt, every kind of target that was seen alive was hit and, with
    ``resume`` (for up to three times ``duration``, not scaled), a kill ended a turn (a
    soak with nothing to resume proves nothing): on a loaded
    machine a walk of the tree, needed to pick each victim, can take longer than
    ``interval``, and a soak must not pass on fewer faults than asked. The report's ``duration`` is the time the faults really took. ``jobs``:
    background jobs enqueued meanwhile (see the module; the host needs its jobs actor).
    ``resume``: a turn that a kill ends (``killed``, ``interrupted``) is resumed from its
    last committed step (``Runner.resume``), again while kills end it, and once more
    after the tree is restored: every one must complete (durable runs; the app's tools
    that are not idempotent then stop a resume with ``needs_decision``, a failure). One
    whose resume fails otherwise (refused, failed, or killed again at its last attempt)
    is a problem of the report, described when it failed (:func:`describe_unfinished`).
    ``cluster``: the faults are dealt across every host of ``host``'s cluster (its
    sessions live at their homes there), and every host's tree must be restored; the
    hosts must share this machine (their processes are killed by pid).
    ``all_sessions``: the sessions and runs crashed and killed may be anyone's on the
    host; without it, only the soak's own (the sessions it made: another user's
    sessions on the host are never touched). The tree must be restored within
    ``restore_timeout`` seconds scaled to the load (:func:`scaled_deadline`: a restarted
    process's imports take as much longer as the CPUs are shared); otherwise the soak
    fails, saying what was not restored, and reads no session back.
    Raises ``ValueError`` for bad arguments (``check_soak_arguments``).

    The steps, in order (each a method of :class:`_Soak`): make the sessions and look
    at the tree; start the talkers (and the jobs' enqueuer); deal the faults; stop the
    talkers and count what they saw; with the host gone, release the stopped processes
    and end; wait for the tree to be restored (not restored: end); reset the failed
    sessions; with ``resume``, resume what the faults left (then count the failures
    again); read every session back; with ``resume``, account for every turn a kill
    ended; run one more turn on each session; settle the background jobs; look for
    orphans."""
    kinds = check_soak_arguments(sessions=sessions, duration=duration, interval=interval, targets=targets,
                                 stops=stops)
    run = _Soak(host, app, kinds, sessions=sessions, duration=duration, interval=interval,
                turn_timeout=turn_timeout, restore_timeout=restore_timeout, user=user, seed=seed, stops=stops,
                min_faults=min_faults, jobs=jobs, resume=resume, progress=progress, cluster=cluster,
                all_sessions=all_sessions)
    run.start_talking()
    run.deal_faults()
    run.stop_talking()
    if not run.host_still_alive() or not run.tree_restored():
        return run.report
    run.reset_failed_sessions()
    run.resume_what_is_left()
    run.read_back()
    run.account_for_resumes()
    run.next_turns()
    run.settle_jobs()
    run.count_orphans()
    return run.report


class _Soak:
    """One soak (see :func:`soak`): its sessions, the threads that talk in them, the
    faults dealt and the report they fill."""

    def __init__(self, host: Host, app: str, kinds: tuple[str, ...], *, sessions: int, duration: float,
                 interval: float, turn_timeout: float, restore_timeout: float, user: str, seed: int | None,
                 stops: float, min_faults: int, jobs: int, resume: bool, progress: Callable[[str], None] | None,
                 cluster: bool, all_sessions: bool) -> None:
        """In order: the soak's random draws seeded, its report begun, one session made
        per member (named after the soak's tag), then a first walk of the tree, whose
        restarts later walks are counted against."""
        self.host, self.kinds, self.user = host, kinds, user
        self.duration, self.interval, self.stops, self.min_faults = duration, interval, stops, min_faults
        self.turn_timeout, self.restore_timeout = turn_timeout, restore_timeout
        self.jobs, self.resume, self.cluster, self.all_sessions = jobs, resume, cluster, all_sessions
        self.say = progress or (lambda _text: None)
        self.rng = random.Random(seed)
        self.report = SoakReport(sessions=sessions, duration=duration)
        self.runner = Runner(host, app, timeout=turn_timeout + 15.0)
        self.config = RunConfig(timeout=turn_timeout)
        self.tag = f"{int(time.time())}-{self.rng.randrange(1 << 30):x}"
        self.members = [_Session(self.runner.create_session(user, f"soak-{self.tag}-{i}").id)
                        for i in range(sessions)]
        self.views: list[ClusterView] = []
        # The soak's own sessions, found by their ids (wherever they are in a partition's
        # listing); with all_sessions, anyone's, as many as a partition holds.
        self.mine, self.shown = ("", 1_000_000) if all_sessions else (f"soak-{self.tag}-", sessions + 1)
        self.seen = _Restarts()
        self.seen.look(self.walk())
        self.lock = threading.Lock()
        self.typed: Counter[str] = Counter()
        self.untyped: Counter[str] = Counter()
        self.stop = threading.Event()
        self.unfinished: list[str] = []  # --resume: why each turn a kill ended was not completed by its resumes
        self.asking = Runner(host, app, call_timeout=5.0)  # (a description's reads: they must not hold a talk thread long)
        self.workers: list[threading.Thread] = []
        self.jobs_dir: Path | None = None
        self.job_ids: list[str] = []
        self.kills: Counter[str] = Counter()
        self.stopped: Counter[str] = Counter()
        self.stopped_pids: list[int] = []
        self.present: set[str] = set()  # the kinds that had a live target at some walk
        self.began = 0.0
        self.to_processes = 0  # faults dealt to an actor of its own process: the ones a stop may be

    def walk(self, timeout: float = 1.0) -> list[dict[str, Any]]:
        """The rows of the live tree: the host's, or with ``cluster`` every host's (the
        cluster's members as last known: the cluster actor, or its supervisor, may be
        one of the killed; none known yet: CallTimeout)."""
        if not self.cluster:
            return tree_rows(self.host, timeout, sessions=self.shown, search=self.mine, patient=False)
        try:
            self.views[:] = [view] if (view := self.host.cluster_view()) is not None else self.views
        except (AdkError, SupervisionError) as exc:
            if not self.views:
                raise CallTimeout(f"the cluster's hosts are not known yet: {exc}") from None
        return _cluster_rows(self.host, timeout, self.views[0] if self.views else None, sessions=self.shown,
                             search=self.mine, patient=False)

    # -- the talkers ----------------------------------------------------------------

    def one_turn(self, member: _Session, text: str, resumes: str = "") -> bool:
        """Run a turn (``resumes``: resume that run instead); record what came back;
        True if it ended well. With ``resume``, a turn a kill ends is kept in
        ``member.to_resume`` (and, when it is no resume, in ``member.chain``)."""
        member.busy_since = time.monotonic()
        run_id = member.last_run = f"run-{uuid.uuid4().hex}"
        try:
            return self._ended_well(member, self._turn_events(member, text, resumes, run_id))
        except RunFailedError as exc:
            with self.lock:
                self.typed[exc.reason] += 1
            if self.resume and exc.reason in ("killed", "interrupted"):
                member.to_resume = run_id
                member.chain = member.chain if resumes else run_id
            member.last_failure = f"{type(exc).__name__}: {exc}"
        except AdkError as exc:
            with self.lock:
                self.typed[type(exc).__name__] += 1
            member.last_failure = f"{type(exc).__name__}: {exc}"
        except Exception as exc:
            self._untyped_failure(member, exc)
        finally:
            member.busy_since = None
        return False

    def _turn_events(self, member: _Session, text: str, resumes: str, run_id: str) -> list[Event]:
        """The events of one turn (or of a resume of run ``resumes``), each one that is
        not partial acknowledged to ``member`` as it comes."""
        events = []
        stream = (self.runner.resume(self.user, member.id, resumes, run_config=self.config, new_run_id=run_id)
                  if resumes else self.runner.run(self.user, member.id, text, run_config=self.config, run_id=run_id))
        for event in stream:
            if not event.partial:
                with self.lock:
                    member.acknowledged.add(event.id)
            events.append(event)
        return events

    def _ended_well(self, member: _Session, events: list[Event]) -> bool:
        """Whether a turn ended well: not with an error event (counted by its code and
        kept as ``member.last_failure``)."""
        last = events[-1] if events else None
        if last is not None and last.error_code:
            with self.lock:
                self.typed[last.error_code] += 1
            member.last_failure = f"error event {last.error_code}: {last.error_message}"
            return False
        return True

    def _untyped_failure(self, member: _Session, exc: Exception) -> None:
        """A turn that failed with an exception no typed error: counted by its class, the
        first three of each class a problem of the report."""
        with self.lock:
            self.untyped[type(exc).__name__] += 1
            if self.untyped[type(exc).__name__] <= 3:
                self.report.problems.append(
                    f"untyped failure of session {member.id}: {type(exc).__name__}: {exc!r}")
        member.last_failure = f"{type(exc).__name__}: {exc}"

    def resumed_to_the_end(self, member: _Session, attempts: int, last_chance: bool = False) -> None:
        """Resume the member's run a kill ended, up to ``attempts`` times while kills end
        it (the run still to resume stays in ``to_resume``). A resume that fails
        otherwise (refused, timed out, needing a decision) ends its turn's resumes, not
        completed: kept in ``unfinished``, as is, with ``last_chance``, one still killed
        at its last attempt."""
        for attempt in range(attempts):
            if not member.to_resume:
                return
            resumes, member.to_resume = member.to_resume, ""
            with self.lock:
                self.report.resume_attempts += 1
            if self.one_turn(member, "", resumes=resumes):
                with self.lock:
                    self.report.resumed_completed += 1
                member.chain = ""
                return
            if not member.to_resume or (last_chance and attempt == attempts - 1):
                said = describe_unfinished(self.asking, self.user, UnfinishedResume(
                    member.id, member.chain, resumes, member.last_run, member.last_failure))
                with self.lock:  # described now: the turns that follow change the session's latest run
                    self.unfinished.append(said)
                member.to_resume = member.chain = ""
                return

    def talk(self, member: _Session) -> None:
        """Turns one after another; with ``resume``, a turn a kill ended is resumed (one
        attempt each time round) before the next turn begins."""
        number = 0
        while not self.stop.is_set():
            if member.to_resume:
                self.resumed_to_the_end(member, 1)
                continue
            number += 1
            ended_well = self.one_turn(member, f"turn {number}: what's the weather in Paris?")
            with self.lock:
                self.report.turns += 1
                self.report.turns_ok += ended_well
                if member.to_resume:
                    self.report.resumed = (self.report.resumed or 0) + 1

    def start_talking(self) -> None:
        """Start one talker thread per session, and with ``jobs`` one that enqueues the
        background jobs (their files in a new temporary directory)."""
        self.workers = [threading.Thread(target=self.talk, args=(m,), daemon=True, name=f"soak-{m.id}")
                        for m in self.members]
        self.jobs_dir = Path(tempfile.mkdtemp(prefix="adk-soak-jobs-")) if self.jobs > 0 else None
        if self.jobs_dir is not None:
            self.workers.append(threading.Thread(
                target=_enqueue_soak_jobs, args=(self.host, self.jobs, self.duration, self.tag, self.jobs_dir,
                                                 self.job_ids), daemon=True, name="soak-jobs"))
        for worker in self.workers:
            worker.start()

    # -- the faults -----------------------------------------------------------------

    def deal_faults(self) -> None:
        """Every ``interval``, pick a victim and deal it a fault, while :meth:`dealing`
        says so; the report's ``duration`` is the time that took."""
        self.began = time.monotonic()
        overtime = scaled_deadline(3 * self.duration)  # at load a fault takes longer to deal
        while self.dealing(overtime):
            chosen_at = time.monotonic()
            owners = None if self.all_sessions else (self.user, frozenset(m.id for m in self.members))
            victim = _pick_victim(self.walk, self.kinds, self.rng, self.seen, self.kills + self.stopped,
                                  frozenset(self.stopped_pids), owners, self.present)
            if victim is not None:
                self.deal(*victim)
            time.sleep(max(0.0, self.interval - (time.monotonic() - chosen_at)))
        self.report.duration = round(time.monotonic() - self.began, 1)

    def dealing(self, overtime: float) -> bool:
        """Whether to deal another fault: within ``duration``; past it, until
        ``overtime``, while fewer than ``min_faults`` were dealt, a kind seen alive was
        not hit, or (``resume``) no kill has ended a turn yet."""
        spent = time.monotonic() - self.began
        dealt = sum(self.kills.values()) + sum(self.stopped.values())
        unhit = self.present - set(self.kills) - set(self.stopped)
        # --resume: until a kill ended a turn, for 3 x duration unscaled (at load 30 partitions killed as they
        # came back let no turn reach one for minutes: nothing was ever resumed)
        unresumed = self.resume and not self.report.resumed and spent < 3 * self.duration
        return spent < self.duration or ((dealt < self.min_faults or bool(unhit) or unresumed) and spent < overtime)

    def deal(self, kind: str, row: dict[str, Any]) -> None:
        """Deal the victim ``row`` (of ``kind``) its fault: a SIGSTOP while the stops
        dealt to processes stay within their share ``stops``, else a SIGKILL; counted
        (by host too, with ``cluster``). A victim gone meanwhile is let be."""
        self.to_processes += bool(row["pid"])
        stop_it = bool(row["pid"]) and sum(self.stopped.values()) + 1 <= self.stops * self.to_processes + 0.5
        try:
            kill_row(self.host, row, signal.SIGSTOP if stop_it else signal.SIGKILL)
            (self.stopped if stop_it else self.kills)[kind] += 1
            if self.cluster:
                self.report.faults_by_host[row["host"]] = self.report.faults_by_host.get(row["host"], 0) + 1
            if stop_it:
                self.stopped_pids.append(row["pid"])
        except (ProcessLookupError, AdkError):
            pass  # gone meanwhile: the process died, the run ended

    # -- the end --------------------------------------------------------------------

    def stop_talking(self) -> None:
        """Stop the talkers and give the turns in flight ``turn_timeout`` (and 20 s)
        more; then count into the report the talkers still running (hung), the events
        acknowledged, the faults dealt and the failures seen."""
        report = self.report
        self.say(f"{sum(self.kills.values())} kills in {report.duration:g} s; waiting for the turns in flight")
        self.stop.set()
        deadline = time.monotonic() + self.turn_timeout + 20.0
        for worker in self.workers:
            worker.join(max(0.0, deadline - time.monotonic()))
        report.hung = sum(1 for w in self.workers if w.is_alive() and w.name != "soak-jobs")
        report.problems.extend(f"the turn of session {m.id} hung: began {time.monotonic() - m.busy_since:.0f} s ago"
                               for m in self.members if m.busy_since is not None)
        report.acknowledged_events = sum(len(m.acknowledged) for m in self.members)
        report.kills, report.stops = dict(self.kills), dict(self.stopped)
        report.typed_failures, report.untyped_failures = dict(self.typed), dict(self.untyped)

    def host_still_alive(self) -> bool:
        """Whether the host is still alive (in the report); when it is not, the stopped
        processes are let go on."""
        self.report.host_alive = _host_alive(self.walk)
        if not self.report.host_alive:
            _release(self.stopped_pids)
        return self.report.host_alive

    def tree_restored(self) -> bool:
        """Wait until the tree is restored (within ``restore_timeout`` scaled to the
        load), the parts not restored problems of the report; then let the stopped
        processes go on and count the restarts seen. False when a part of the tree is
        still down: its sessions cannot be read back (the soak fails, saying why)."""
        report = self.report
        report.tree_restored, report.restore_seconds, unrestored = _wait_restored(
            self.walk, scaled_deadline(self.restore_timeout), self.stopped_pids,
            hosts=len(self.views[0].members) if self.views else 0)
        report.problems.extend(f"not restored: {row}" for row in unrestored[:10])
        report.stopped_left = _release(self.stopped_pids)
        self.seen.look(self.walk())
        report.restarts = dict(self.seen.restarts)
        return report.tree_restored

    def reset_failed_sessions(self) -> None:
        """Reset each session that failed (counted in the report)."""
        for member in self.members:
            try:
                self.runner.get_state(self.user, member.id)
            except SessionFailedError:
                self.report.failed_sessions += 1
                self.runner.reset_session(self.user, member.id)

    def resume_what_is_left(self) -> None:
        """With ``resume``, resume the turns the faults left to resume, on the restored
        tree (up to five attempts each, the last one's failure unfinished); then count
        the failures into the report again (those resumes', and a hung turn's that
        ended since, included)."""
        if self.resume:
            self.report.resumed = self.report.resumed or 0
            for member in self.members:
                self.resumed_to_the_end(member, 5, last_chance=True)
        self.report.typed_failures, self.report.untyped_failures = dict(self.typed), dict(self.untyped)

    def read_back(self) -> None:
        """Read every session back: each event acknowledged that the store does not hold
        is lost; a function response, or a node run's output, committed twice is
        counted (each node run's a problem of the report)."""
        report = self.report
        self.say("reading every session back")
        for member in self.members:
            events = self.runner.get_session(self.user, member.id).events
            stored = {e.id for e in events}
            report.lost += len(member.acknowledged - stored)
            answered = Counter(p.function_response.id for e in events if e.content is not None
                               for p in e.content.parts if p.function_response is not None and p.function_response.id)
            report.results_twice += sum(1 for n in answered.values() if n > 1)
            outputs = Counter((e.invocation_id, e.node_info.path) for e in events
                              if e.node_info is not None and e.output is not None)
            report.nodes_twice += sum(1 for n in outputs.values() if n > 1)
            report.problems.extend(f"node run {path} of run {run} in session {member.id}: output committed {n} times"
                                   for (run, path), n in outputs.items() if n > 1)

    def account_for_resumes(self) -> None:
        """With ``resume``, say why each turn a kill ended that its resumes did not
        complete was not completed, and count any turn unaccounted for: problems of the
        report."""
        if not self.resume:
            return
        report = self.report
        report.problems.extend(self.unfinished)
        unaccounted = (report.resumed or 0) - report.resumed_completed - len(self.unfinished)
        if unaccounted:
            report.problems.append(f"{unaccounted} turns a kill ended were neither completed by their resumes nor "
                                   "found unfinished (a resume still in flight?)")

    def next_turns(self) -> None:
        """Run one more turn on every session: each that does not end well is a problem
        of the report."""
        for member in self.members:
            valid = self.one_turn(member, "one more turn: weather in Oslo?")
            self.report.next_turn_valid += valid
            if not valid:
                self.report.problems.append(f"the next turn of session {member.id} failed: {member.last_failure}")

    def settle_jobs(self) -> None:
        """With ``jobs``, wait for the background jobs and check them (``_soak_job``)."""
        if self.jobs_dir is not None:
            self.say("waiting for the background jobs")
            _settle_soak_jobs(self.host, self.report, self.jobs, self.job_ids, self.jobs_dir,
                              self.restore_timeout + self.turn_timeout)

    def count_orphans(self) -> None:
        """Look for orphans: each a problem of the report (the first ten)."""
        orphans = _orphans(self.walk())
        self.report.orphans = len(orphans)
        self.report.problems.extend(f"orphan: pid {pid} {_command_line(pid)}" for pid in orphans[:10])
