"""The sessions a partition holds: activated from the store, leased, let go, resumed.

:class:`PartitionHolding` is the part of ``SessionPartition`` (which inherits it) that
keeps its sessions in memory. In order: a request for a session not held activates
it (``_session``): its lease first (``SessionLeased`` when another host's partition
holds it), then its read from the store (runs a dead holder left ``running`` end
``interrupted``), then its latest run, when a crash interrupted it and its app
resumes such runs (``App.resume_interrupted``), is resumed. Held, its lease is
renewed every third of ``lease_seconds`` (a session whose lease another holder took
is dropped); idle for ``idle_timeout`` it is passivated (its lease released); dropped
(deleted, crashed, its lease lost) its runs end ``interrupted``, except, after a crash,
the turns queued behind its run in progress: once that run stopped they run, in
order, on the session read again (``_requeue``), or end ``SessionFailed`` when the
crash failed it. At start, the runs
orphaned by the partition's earlier self end ``interrupted``, their callers told the
id of the run that will resume them when their app resumes such runs.
"""

from __future__ import annotations

import uuid
from collections import deque
from dataclasses import replace
from functools import partial
from typing import Any

from supervision import CallError
from supervision.lowlevel import takes_connection

from ..messages import CreateSession, LastRun, ResumeRun, RunFailed, RunRequest, session_key
from ..store import RunRecord, SessionLeased, SessionNotFound, SessionStores, StoreError, Unreadable
from ._caller_line import CallerLine
from ._partition_homes import HOLDER_CONNECT_WAIT, PartitionHomes
from ._partition_timers import PassivateIdle, RenewLeases, ResumeInterrupted
from ._run_workers import RunWorkers
from ._session import Session, SessionRun
from ._turns import LiveTurn

__all__ = ["PartitionHolding"]


class PartitionHolding(PartitionHomes):
    """The sessions held in memory, their leases, and the runs a crash interrupted (see the module)."""

    store: SessionStores
    holder: str  # this partition's name among the store's writers
    pool: RunWorkers
    idle_timer_armed: bool
    #: interrupted run id -> the id of the run that will resume it (its caller was told: see _fail_orphan)
    resume_ids: dict[str, str]

    def _create(self, request: CreateSession) -> Any:
        """Create a session and hold it (``SessionPartition``)."""
        raise NotImplementedError

    def _last_run(self, request: LastRun) -> Any:
        """The session's latest run as stored. One stored ``running`` that no process
        here runs, of a session this partition would serve but does not hold, may be
        a dead host's: the session is activated here (which ends that host's runs
        ``interrupted`` once its lease ran out) and the run read again. A session held
        elsewhere, unknown or unreadable, or a run still stopping here (``_runs_here``),
        leaves the answer as stored."""
        found = self.store.last_run(request.app_name, request.user_id, request.session_id)
        if (found is None or found.status != "running" or self._runs_here(found.run_id)
                or request.key in self.sessions or not self._ours(request.key)
                or self._home_elsewhere(request.key) is not None):
            return found
        try:
            self._session(request)
        except (CallError, SessionLeased):
            return found
        return self.store.last_run(request.app_name, request.user_id, request.session_id)

    def _create_if_missing(self, request: RunRequest) -> None:
        """The run's session, created with an empty state when neither held nor stored
        (``RunRequest.create_session``); one made meanwhile by another holder is as good."""
        if request.key in self.sessions or self.store.session_exists(request.app_name, request.user_id,
                                                                     request.session_id):
            return
        try:
            self._create(CreateSession(request.app_name, request.user_id, request.session_id, {}))
        except CallError as error:
            if error.code != "session_exists":
                raise

    def _runs_here(self, run_id: str) -> bool:
        """Does a worker of this partition run ``run_id``: live, or told to stop and not
        stopped yet (its session crashed or was let go: ``_drop``), or is it a turn queued
        behind such a run, kept to run after it (``_drop``)? Such a run is no dead host's:
        its end is stored once it stopped (or it runs), never before."""
        return run_id in self.pool.runs or run_id in self.pool.stopping or run_id in self.draining_runs

    def _session(self, request: Any) -> Session:
        """The session a request names: held, or loaded from the store and held. A run
        the store has ``running`` that no worker here runs (``_runs_here``) was a dead
        holder's: it ends ``interrupted`` (``_fail_orphan``), and is resumed as below."""
        session = self.sessions.get(request.key)
        if session is not None:
            return session
        self._tell(request.key, "activating")
        try:
            # The lease first, then the read: no other holder can write between them.
            lease = self._lease(request.app_name, request.user_id, request.session_id)
            data = self.store.get_session(request.app_name, request.user_id, request.session_id)
            if lease.epoch > 1:  # held before: by another host that died with runs in flight?
                for record in self.store.running_runs(request.app_name, request.user_id, request.session_id):
                    if not self._runs_here(record.run_id):
                        self._fail_orphan(record, "the host that held the session stopped while this run was "
                                                  "in flight")
        except SessionNotFound:
            self._tell(request.key, "activation_failed", "unknown_session")
            raise CallError(f"no session {request.session_id!r} for {request.app_name}/{request.user_id}",
                            code="unknown_session") from None
        except Unreadable as exc:
            self._tell(request.key, "activation_failed", f"session_unreadable: {exc}")
            raise CallError(str(exc), code="session_unreadable") from None
        session = self._hold(Session(self, data.app_name, data.user_id, data.id, data.state, data.events,
                                     data.last_update_time, lease=lease))
        self._resume_after_activation(session)
        return session

    def _lease(self, app: str, user: str, session_id: str) -> Any:
        """This partition's lease on a session it is about to hold (``store.Lease``,
        naming this partition's address for other hosts to forward to); SessionLeased
        when another host's partition holds it (never two writers)."""
        return self.store.acquire_lease(app, user, session_id, self.holder, self.config.lease_seconds,
                                        address=self.address)

    def _let_go(self, session: Session) -> None:
        """Release a session's lease (passivated or dropped here): another holder may
        take it at once. A store that fails here is logged: the lease expires alone."""
        if session.lease is None:
            return
        try:
            self.store.release_lease(session.lease)
        except StoreError as exc:
            self.slog.warning("a session's lease was not released; it expires on its own", session=session.key,
                              error=str(exc))

    def _renew_leases(self) -> None:
        """Renew the leases of every session held here; a session whose lease another
        holder took (this partition was cut off from the store for longer than a
        lease) is dropped: its runs end ``interrupted``, and its new holder serves it."""
        self.send_after(self.config.lease_seconds / 3, RenewLeases())
        if not self.sessions:
            return
        try:
            held = self.store.renew_leases(self.holder, self.config.lease_seconds)
        except StoreError as exc:
            self.slog.warning("leases not renewed: the store failed", error=str(exc))
            return
        for key, session in list(self.sessions.items()):
            if (session.app_name, session.user_id, session.session_id) not in held:
                self.slog.warning("a session's lease was taken by another holder; dropped here", session=key)
                self._drop(key, "the session moved to another host (its lease was taken)")

    def _hold(self, session: Session) -> Session:
        session.idle_since = self.clock()
        self.sessions[session.key] = session
        faults = self.faults.get(session.key)
        if faults is not None and faults.down:  # back after a crash: OTP's restarted child
            faults.down = False
            self._tell(session.key, "restarted", faults.last)
        else:
            self._tell(session.key, "activated")
        if not self.idle_timer_armed:
            self.idle_timer_armed = True
            self.send_after(self.config.idle_timeout, PassivateIdle())
        self._watch_home(session.key)
        return session

    def _passivate(self) -> None:
        """Drop the sessions idle for ``idle_timeout`` (no run, no request); come back
        when the next one would be due."""
        self.idle_timer_armed = False
        now = self.clock()
        for key, session in list(self.sessions.items()):
            if session.active is None and not session.waiting and now - session.idle_since >= self.config.idle_timeout:
                del self.sessions[key]
                self._forget(key)
                self._let_go(session)
                self._tell(key, "passivated")
        for key, faults in list(self.faults.items()):  # quiet for a period, and not failed: forgotten
            if not faults.failed and key not in self.sessions and (
                    not faults.crashes or now - faults.crashes[-1] > self.config.session_period):
                del self.faults[key]
        if self.sessions:
            self.idle_timer_armed = True
            due = min(s.idle_since for s in self.sessions.values()) + self.config.idle_timeout
            self.send_after(max(due - now, 0.05), PassivateIdle())

    def _drop(self, key: str, why: str, *, resume: bool = False, queued: str = "") -> None:
        """Let go of session ``key`` held in memory (nothing if it is not held): its
        runs end ``interrupted`` with ``why`` (a running one is told to stop on its
        worker, and its end waits until it stopped there or the worker, killed past
        ``run_stop_grace``, is gone); the store's copy is read again on its next request.
        With ``resume`` (the session crashed), the run in progress, when its app resumes
        crashed runs (fewer times so far than it allows), is resumed once its end is
        stored, its caller told the id of the run that resumes it (``Session.interrupt``):
        on the session read again by then (a request came meanwhile: its activation left
        that run alone, as it was still stopping), else on its activation that follows
        (``ResumeInterrupted``). Never while the run may still go on on its worker.
        With ``queued`` (the session crashed: ``"run"``, or ``"fail"`` when the crash
        failed it), the turns waiting behind the run in progress, which never began, are
        not ended: they wait here (followers join them: ``follow_stopping``) until that
        run stopped and the session's lease was let go, then go to ``_requeue``."""
        session = self.sessions.pop(key, None)
        if session is None:
            return
        kept = ([r for r in session.waiting if r.outcome is None and not isinstance(r.turn, LiveTurn)]
                if queued else [])
        if kept:
            session.waiting = deque(r for r in session.waiting if r not in kept)
        for run in [session.active, *session.waiting, *kept]:
            if run is not None:
                self.pool.drop(run)
        active, resumed_as = session.active, ""
        if (resume and active is not None and active.outcome is None and not isinstance(active.turn, LiveTurn)
                and active.attempt < self._resume_limit(session.app_name)):
            resumed_as = self.resume_ids[active.run_id] = f"run-{uuid.uuid4().hex}"
        stopping = active if active is not None and active.outcome is None and active.worker is not None else None
        for run in [stopping, *kept]:
            if run is not None:
                self.draining_runs[run.run_id] = run
        pending: list[partial[None]] = []  # a requeue due before the lease below was let go
        released = False

        def stopped() -> None:
            # with turns kept, _requeue resumes the crashed run itself, ahead of them
            self._stopped(key, stopping.run_id if stopping else "", bool(resumed_as) and not kept)
            if kept:
                requeue = partial(self._requeue, key, kept, queued == "fail", active if resumed_as else None)
                if released:
                    requeue()
                else:
                    pending.append(requeue)

        session.interrupt(why, stop_active=True, resumed_as=resumed_as, then=stopped)
        self._forget(key)
        self._let_go(session)  # before the session is held again (_requeue): its lease is not the new one
        released = True
        for requeue in pending:
            requeue()

    def follow_stopping(self, run_id: str, caller: Any) -> bool:
        """Make ``caller`` the caller of run ``run_id`` when it is a dropped session's run
        still stopping here (``Session.follow``: a follower that came meanwhile): it gets
        the run's end once it stopped, naming the run that resumes it, if any. False for
        any other run."""
        run = self.draining_runs.get(run_id)
        if run is None:
            return False
        run.caller = caller
        return True

    def _stopped(self, key: str, run_id: str, resume: bool) -> None:
        """The run in progress of session ``key``'s dropped self (``run_id``; "" for none)
        stopped and its end is stored and sent (``_drop``). With ``resume``: if the session
        was read again meanwhile, the run is resumed there now (``_resume_after_activation``:
        when it is still the session's latest run); if not, its activation resumes it
        (``ResumeInterrupted``)."""
        self.draining_runs.pop(run_id, None)
        session = self.sessions.get(key)
        if resume and session is not None:
            self._resume_after_activation(session)

    def _requeue(self, key: str, runs: list[SessionRun], failed: bool, resumes: SessionRun | None) -> None:
        """The turns a crashed session had accepted but not begun (``_drop``), in order,
        once its run in progress stopped and its lease was let go. First ``resumes``,
        that run when its app resumes it (its caller was told the id of the run resuming
        it), is resumed on the session read again (its activation would not: the latest
        run stored is a queued one). Then, for each run: one the store no longer has
        ``running`` (ended meanwhile, its caller told) is skipped; one whose caller is
        gone (its Runner's line ended, or its address takes no connection; a host's own
        resume has no caller and is not gone) ends ``interrupted`` unseen; with ``failed`` (the crash failed the session) each ends
        ``interrupted``, error type ``SessionFailed``; when the session cannot be held
        again (this partition stopping, the session moving, gone from the store,
        another host holding it) each ends ``interrupted``, ``SessionStopped``, saying
        why; the others are taken back, in order, by the session read again
        (``Session.requeue``), behind the run that resumes the crashed one, if any.
        Each caller gets one end."""
        try:
            self._requeue_runs(key, runs, failed, resumes)
        finally:  # until here, held as this partition's: activating the session leaves them alone
            for run in runs:
                self.draining_runs.pop(run.run_id, None)

    def _requeue_runs(self, key: str, runs: list[SessionRun], failed: bool, resumes: SessionRun | None) -> None:
        """``_requeue``'s steps, the runs still held as this partition's."""
        session: Session | None = None
        if resumes is not None and not (failed or self.stopping or key in self.leaving):
            try:
                session = self._session(resumes.request)
                resume = ResumeRun(session.app_name, session.user_id, session.session_id,
                                   run_config=resumes.request.run_config, resume=resumes.run_id)
                run_id = self.resume_ids.pop(resumes.run_id, "")
                session.resume(replace(resume, run_id=run_id) if run_id else resume)
            except (CallError, SessionLeased, StoreError) as exc:
                self.slog.warning("an interrupted run was not resumed", run=resumes.run_id, error=str(exc))
        for run in runs:
            try:
                if self.store.run_status(run.run_id) != "running":
                    continue
            except StoreError:
                pass
            why, error_type = "", "SessionStopped"
            gone = (run.caller.caller_gone if isinstance(run.caller, CallerLine)  # (a host's own resume: no caller)
                    else run.caller is not None and takes_connection(run.caller, HOLDER_CONNECT_WAIT) is False)
            if failed:
                why, error_type = ("the session failed (it crashed more often than its restart intensity allows; "
                                   "session_failed until an operator resets it) before this turn began"), "SessionFailed"
            elif gone:
                why = "the session crashed before this turn began, and its caller is gone"
            elif self.stopping or key in self.leaving:
                why = "the session crashed before this turn began, and it is not held here any more"
            elif session is None:
                try:
                    session = self._session(run.request)
                except (CallError, SessionLeased, StoreError) as exc:
                    why = f"the session crashed before this turn began, and was not read again: {exc}"
            if why or session is None:
                if not gone and run.caller is not None:
                    self.send(run.caller, RunFailed(run.run_id, "interrupted", error_type, why))
                try:
                    self.store.end_run(run.run_id, "interrupted")
                except StoreError:
                    pass
                continue
            session.requeue(run)

    def _forget(self, key: str) -> None:
        self.pool.forget(key)

    def _fail_orphaned_runs(self) -> None:
        """At start: the runs of our sessions that died with our earlier self (or with a
        host whose lease on them ran out) end ``interrupted``, their callers told. The
        sessions of those whose app resumes crashed runs are activated just after
        (``ResumeInterrupted``: activation resumes them)."""
        resumed: list[tuple[str, str, str]] = []
        for app, user, session_id, record in self.store.orphaned_runs(self.holder):
            if self._ours(session_key(app, user, session_id)):
                self._fail_orphan(record, "the session's partition was restarted while this run was in flight")
                if self._resume_limit(app) > 0:
                    resumed.append((app, user, session_id))
        if resumed:
            self.send_after(0.001, ResumeInterrupted(tuple(dict.fromkeys(resumed))))

    def _resume_limit(self, app: str) -> int:
        """How many times a crashed run of ``app`` is resumed on its own (``App.resume_interrupted``)."""
        try:
            return int(self.catalog.load(app).resume_interrupted)
        except Exception:
            return 0

    def auto_resume(self, session: Session, run: SessionRun, failed: RunFailed) -> RunRequest | str | None:
        """The request resuming ``run`` when a crash ended it (its worker died) and its app
        resumes such runs, fewer times so far than it allows; why not, when it has been
        resumed as often as allowed; else None."""
        if self.stopping or isinstance(run.turn, LiveTurn) or failed.error_type not in (
                "RunActorDied", "RunActorUnresponsive", "RunWorkerKilled"):
            return None
        limit = self._resume_limit(session.app_name)
        if limit <= 0:
            return None
        if run.attempt >= limit:
            return f"resumed {run.attempt} times already, the most its app allows: not resumed again"
        return ResumeRun(session.app_name, session.user_id, session.session_id, run_config=run.request.run_config,
                         resume=run.run_id)

    def _resume_after_activation(self, session: Session) -> None:
        """A session just activated: its latest run, when a crash of a partition or host
        ended it ``interrupted`` and nothing ran on the session since, is resumed (its
        app's ``resume_interrupted``, fewer times so far than it allows)."""
        limit = self._resume_limit(session.app_name)
        if limit <= 0:
            return
        last = self.store.last_run(session.app_name, session.user_id, session.session_id)
        if last is None or last.status != "interrupted" or last.attempt >= limit:
            return
        latest = next((e.invocation_id for e in reversed(session.events) if not e.invocation_id.startswith("p-")), None)
        if latest != last.invocation_id:
            return
        try:
            resume = ResumeRun(session.app_name, session.user_id, session.session_id, resume=last.run_id)
            run_id = self.resume_ids.pop(last.run_id, "")
            session.resume(replace(resume, run_id=run_id) if run_id else resume)
        except StoreError as exc:  # the store failed, or the lease went meanwhile: the request goes on without it
            self.slog.warning("an interrupted run was not resumed", run=last.run_id, error=str(exc))

    def _fail_orphan(self, record: RunRecord, why: str) -> None:
        """End a run whose partition or host died ``interrupted``, telling its caller;
        when its app resumes such runs (and has not as often as it allows), the caller
        is told the id of the run that will resume it once its session is activated
        (``_resume_after_activation``), so it can follow it (``FollowRun``)."""
        resumed_as = ""
        info = self.store.run_info(record.run_id)
        if info is not None and info.attempt < self._resume_limit(info.app_name):
            resumed_as = self.resume_ids[record.run_id] = f"run-{uuid.uuid4().hex}"
        if record.caller is not None:
            self.send(record.caller, RunFailed(record.run_id, "interrupted", "PartitionRestarted", why,
                                               resumed_as=resumed_as))
        self.store.end_run(record.run_id, "interrupted")
