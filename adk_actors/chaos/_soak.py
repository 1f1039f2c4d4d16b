"""The soak (:func:`soak`, ``adk-actors chaos soak``): sessions talking to a host
while its actors are killed, then the proof that nothing was lost; its steps are
described in the package's docstring (:mod:`adk_actors.chaos`). Its arguments are
checked by :func:`check_soak_arguments`.
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
from .._types import RunConfig
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
    Raises ``ValueError`` for bad arguments (``check_soak_arguments``)."""
    kinds = check_soak_arguments(sessions=sessions, duration=duration, interval=interval, targets=targets,
                                 stops=stops)
    say = progress or (lambda _text: None)
    rng = random.Random(seed)
    report = SoakReport(sessions=sessions, duration=duration)
    runner = Runner(host, app, timeout=turn_timeout + 15.0)
    config = RunConfig(timeout=turn_timeout)
    tag = f"{int(time.time())}-{rng.randrange(1 << 30):x}"
    members = [_Session(runner.create_session(user, f"soak-{tag}-{i}").id) for i in range(sessions)]
    views: list[ClusterView] = []

    # The soak's own sessions, found by their ids (wherever they are in a partition's
    # listing); with all_sessions, anyone's, as many as a partition holds.
    mine, shown = ("", 1_000_000) if all_sessions else (f"soak-{tag}-", sessions + 1)

    def walk(timeout: float = 1.0) -> list[dict[str, Any]]:
        if not cluster:
            return tree_rows(host, timeout, sessions=shown, search=mine, patient=False)
        try:  # (the cluster actor, or its supervisor, may be one of the killed)
            views[:] = [view] if (view := host.cluster_view()) is not None else views
        except (AdkError, SupervisionError) as exc:
            if not views:
                raise CallTimeout(f"the cluster's hosts are not known yet: {exc}") from None
        return _cluster_rows(host, timeout, views[0] if views else None, sessions=shown, search=mine, patient=False)

    seen = _Restarts()
    seen.look(walk())
    lock = threading.Lock()
    typed: Counter[str] = Counter()
    untyped: Counter[str] = Counter()
    stop = threading.Event()
    unfinished: list[str] = []  # --resume: why each turn a kill ended was not completed by its resumes
    asking = Runner(host, app, call_timeout=5.0)  # (a description's reads: they must not hold a talk thread long)

    def one_turn(member: _Session, text: str, resumes: str = "") -> bool:
        """Run a turn (``resumes``: resume that run instead); record what came back;
        True if it ended well. With ``resume``, a turn a kill ends is kept in
        ``member.to_resume`` (and, when it is no resume, in ``member.chain``)."""
        member.busy_since = time.monotonic()
        run_id = member.last_run = f"run-{uuid.uuid4().hex}"
        try:
            events = []
            stream = (runner.resume(user, member.id, resumes, run_config=config, new_run_id=run_id) if resumes
                      else runner.run(user, member.id, text, run_config=config, run_id=run_id))
            for event in stream:
                if not event.partial:
                    with lock:
                        member.acknowledged.add(event.id)
                events.append(event)
            last = events[-1] if events else None
            if last is not None and last.error_code:
                with lock:
                    typed[last.error_code] += 1
                member.last_failure = f"error event {last.error_code}: {last.error_message}"
                return False
            return True
        except RunFailedError as exc:
            with lock:
                typed[exc.reason] += 1
            if resume and exc.reason in ("killed", "interrupted"):
                member.to_resume = run_id
                member.chain = member.chain if resumes else run_id
            member.last_failure = f"{type(exc).__name__}: {exc}"
        except AdkError as exc:
            with lock:
                typed[type(exc).__name__] += 1
            member.last_failure = f"{type(exc).__name__}: {exc}"
        except Exception as exc:
            with lock:
                untyped[type(exc).__name__] += 1
                if untyped[type(exc).__name__] <= 3:
                    report.problems.append(f"untyped failure of session {member.id}: {type(exc).__name__}: {exc!r}")
            member.last_failure = f"{type(exc).__name__}: {exc}"
        finally:
            member.busy_since = None
        return False

    def resumed_to_the_end(member: _Session, attempts: int, last_chance: bool = False) -> None:
        """Resume the member's run a kill ended, up to ``attempts`` times while kills end
        it (the run still to resume stays in ``to_resume``). A resume that fails
        otherwise (refused, timed out, needing a decision) ends its turn's resumes, not
        completed: kept in ``unfinished``, as is, with ``last_chance``, one still killed
        at its last attempt."""
        for attempt in range(attempts):
            if not member.to_resume:
                return
            resumes, member.to_resume = member.to_resume, ""
            with lock:
                report.resume_attempts += 1
            if one_turn(member, "", resumes=resumes):
                with lock:
                    report.resumed_completed += 1
                member.chain = ""
                return
            if not member.to_resume or (last_chance and attempt == attempts - 1):
                said = describe_unfinished(asking, user, UnfinishedResume(member.id, member.chain, resumes,
                                                                          member.last_run, member.last_failure))
                with lock:  # described now: the turns that follow change the session's latest run
                    unfinished.append(said)
                member.to_resume = member.chain = ""
                return

    def talk(member: _Session) -> None:
        """Turns one after another; with ``resume``, a turn a kill ended is resumed (one
        attempt each time round) before the next turn begins."""
        number = 0
        while not stop.is_set():
            if member.to_resume:
                resumed_to_the_end(member, 1)
                continue
            number += 1
            ended_well = one_turn(member, f"turn {number}: what's the weather in Paris?")
            with lock:
                report.turns += 1
                report.turns_ok += ended_well
                if member.to_resume:
                    report.resumed = (report.resumed or 0) + 1

    workers = [threading.Thread(target=talk, args=(m,), daemon=True, name=f"soak-{m.id}") for m in members]
    jobs_dir = Path(tempfile.mkdtemp(prefix="adk-soak-jobs-")) if jobs > 0 else None
    job_ids: list[str] = []
    if jobs_dir is not None:
        workers.append(threading.Thread(target=_enqueue_soak_jobs, args=(host, jobs, duration, tag, jobs_dir, job_ids),
                                        daemon=True, name="soak-jobs"))
    for worker in workers:
        worker.start()
    kills: Counter[str] = Counter()
    stopped: Counter[str] = Counter()
    stopped_pids: list[int] = []
    present: set[str] = set()  # the kinds that had a live target at some walk
    began = time.monotonic()
    overtime = scaled_deadline(3 * duration)  # at load a fault takes longer to deal

    def dealing() -> bool:
        spent = time.monotonic() - began
        dealt = sum(kills.values()) + sum(stopped.values())
        unhit = present - set(kills) - set(stopped)
        # --resume: until a kill ended a turn, for 3 x duration unscaled (at load 30 partitions killed as they
        # came back let no turn reach one for minutes: nothing was ever resumed)
        unresumed = resume and not report.resumed and spent < 3 * duration
        return spent < duration or ((dealt < min_faults or bool(unhit) or unresumed) and spent < overtime)

    to_processes = 0  # faults dealt to an actor of its own process: the ones a stop may be
    while dealing():
        chosen_at = time.monotonic()
        victim = _pick_victim(walk, kinds, rng, seen, kills + stopped, frozenset(stopped_pids),
                              None if all_sessions else (user, frozenset(m.id for m in members)), present)
        if victim is not None:
            kind, row = victim
            to_processes += bool(row["pid"])
            stop_it = bool(row["pid"]) and sum(stopped.values()) + 1 <= stops * to_processes + 0.5
            try:
                kill_row(host, row, signal.SIGSTOP if stop_it else signal.SIGKILL)
                (stopped if stop_it else kills)[kind] += 1
                if cluster:
                    report.faults_by_host[row["host"]] = report.faults_by_host.get(row["host"], 0) + 1
                if stop_it:
                    stopped_pids.append(row["pid"])
            except (ProcessLookupError, AdkError):
                pass  # gone meanwhile: the process died, the run ended
        time.sleep(max(0.0, interval - (time.monotonic() - chosen_at)))
    report.duration = round(time.monotonic() - began, 1)
    say(f"{sum(kills.values())} kills in {report.duration:g} s; waiting for the turns in flight")
    stop.set()
    deadline = time.monotonic() + turn_timeout + 20.0
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))
    report.hung = sum(1 for w in workers if w.is_alive() and w.name != "soak-jobs")
    report.problems.extend(f"the turn of session {m.id} hung: began {time.monotonic() - m.busy_since:.0f} s ago"
                           for m in members if m.busy_since is not None)
    report.acknowledged_events = sum(len(m.acknowledged) for m in members)
    report.kills, report.stops = dict(kills), dict(stopped)
    report.typed_failures, report.untyped_failures = dict(typed), dict(untyped)
    report.host_alive = _host_alive(walk)
    if not report.host_alive:
        _release(stopped_pids)
        return report
    report.tree_restored, report.restore_seconds, unrestored = _wait_restored(
        walk, scaled_deadline(restore_timeout), stopped_pids, hosts=len(views[0].members) if views else 0)
    report.problems.extend(f"not restored: {row}" for row in unrestored[:10])
    report.stopped_left = _release(stopped_pids)
    seen.look(walk())
    report.restarts = dict(seen.restarts)
    if not report.tree_restored:  # a part of the tree is still down: its sessions cannot be read back; FAILED, why said
        return report
    for member in members:
        try:
            runner.get_state(user, member.id)
        except SessionFailedError:
            report.failed_sessions += 1
            runner.reset_session(user, member.id)
    if resume:
        report.resumed = report.resumed or 0
        for member in members:  # those the faults left to resume, on the restored tree
            resumed_to_the_end(member, 5, last_chance=True)
    report.typed_failures, report.untyped_failures = dict(typed), dict(untyped)  # the final resumes' too
    say("reading every session back")
    for member in members:
        events = runner.get_session(user, member.id).events
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
    if resume:  # why each turn a kill ended that was not completed was not; and any turn unaccounted for
        report.problems.extend(unfinished)
        unaccounted = (report.resumed or 0) - report.resumed_completed - len(unfinished)
        if unaccounted:
            report.problems.append(f"{unaccounted} turns a kill ended were neither completed by their resumes nor "
                                   "found unfinished (a resume still in flight?)")
    for member in members:
        valid = one_turn(member, "one more turn: weather in Oslo?")
        report.next_turn_valid += valid
        if not valid:
            report.problems.append(f"the next turn of session {member.id} failed: {member.last_failure}")
    if jobs_dir is not None:
        say("waiting for the background jobs")
        _settle_soak_jobs(host, report, jobs, job_ids, jobs_dir, restore_timeout + turn_timeout)
    orphans = _orphans(walk())
    report.orphans = len(orphans)
    report.problems.extend(f"orphan: pid {pid} {_command_line(pid)}" for pid in orphans[:10])
    return report
