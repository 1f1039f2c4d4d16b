"""The approval server: tool calls that wait for a human decision (HITL).

``RegisterApproval`` -> approval id (with run, agent, tool, arguments and a hint);
``Approve(id)`` / ``Deny(id, reason)`` from any client; ``WaitDecision(id, wait)``
answers as soon as the decision exists, also when it was made before anyone
waited (ADK Elixir loses such decisions), else after ``wait`` seconds with
``"pending"``; ``ListApprovals(app, user, status)``. Everything is in a database (a
SQLite file of the host's, or, with ``[store] url``, the PostgreSQL database every
host shares), so pending approvals survive a restart of this actor and a waiting
run, which asks again, still gets its decision. After a host restart, approvals
whose run is no longer running (the session store's ``runs`` table) are listed as
``expired``.

On a shared database a decision may be made through another host (its HTTP API, its
CLI): while runs wait here on a shared database, the pending approvals they wait for
are read again every ``SHARED_POLL`` seconds, and a decision found is answered at once.
"""

from __future__ import annotations

import builtins
import json
import time
import uuid
from typing import Any

from supervision import BadRequest, CallerRef, CallError, GenServer
from supervision.lowlevel import NO_REPLY

from .._validate import check_message
from ..store import Database, connection_name, open_session_store
from ._service_calls import (
    Approval,
    Approve,
    CallApproval,
    Deny,
    ListApprovals,
    RegisterApproval,
    WaitDecision,
)

__all__ = ["SHARED_POLL", "ApprovalActor", "ApprovalStore"]

#: On a shared database: how often the approvals waited for here are read again.
SHARED_POLL = 0.25

_MIGRATIONS = [
    (1, """CREATE TABLE IF NOT EXISTS approvals (id TEXT PRIMARY KEY, app TEXT, "user" TEXT, session TEXT,
            run_id TEXT, agent TEXT, tool TEXT, args TEXT, hint TEXT, status TEXT, reason TEXT, created REAL,
            decided REAL)"""),
    # Durable runs: the tool call an approval is for (a resumed run asks for the same call again).
    (2, "ALTER TABLE approvals ADD COLUMN call_id TEXT"),
]
_SELECT = 'SELECT id, app, "user", session, run_id, agent, tool, args, hint, status, reason, created, decided'


class ApprovalStore:
    def __init__(self, location: str, session_store: str | None = None, *, host: str = "") -> None:
        """Open the approvals at ``location`` (a SQLite file or a ``postgresql://`` URL)
        and, when ``session_store`` (a session store location) is given, that store:
        what tells a pending approval's run has ended. Their PostgreSQL connections are
        called ``adk-actors <host> approvals`` and ``... approvals-sessions``."""
        self._db = Database(location, application_name=connection_name(host, "approvals"))
        self._db.migrate("approvals", _MIGRATIONS)
        self.shared = self._db.postgres
        self.sessions = (open_session_store(session_store, application_name=connection_name(host, "approvals-sessions"))
                         if session_store else None)

    def register(self, request: RegisterApproval) -> Approval:
        """A new pending approval; for a call of the session that had one (a resumed
        run asking again), that one: pending again for the new run if it had expired
        or was still pending, as decided if a human decided meanwhile."""
        if request.call_id:
            known = self.of_call(request.app_name, request.user_id, request.session_id, request.call_id)
            if known is not None:
                if known.status in ("pending", "expired"):
                    self._db.run("UPDATE approvals SET status='pending', reason='', decided=NULL, run_id=? WHERE id=?",
                                 (request.run_id, known.id))
                    known = self.get(known.id)
                assert known is not None
                return known
        approval = Approval(f"approval-{uuid.uuid4().hex[:12]}", request.app_name, request.user_id,
                            request.session_id, request.run_id, request.agent, request.tool, dict(request.args),
                            request.hint, "pending", "", time.time())
        self._db.run("INSERT INTO approvals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', '', ?, NULL, ?)",
                     (approval.id, approval.app_name, approval.user_id, approval.session_id, approval.run_id,
                      approval.agent, approval.tool, json.dumps(approval.args, default=str), approval.hint,
                      approval.created, request.call_id or None))
        return approval

    def of_call(self, app: str, user: str, session: str, call_id: str) -> Approval | None:
        """The latest approval of that call of the session, or None."""
        rows = self._db.run(f'{_SELECT} FROM approvals WHERE app=? AND "user"=? AND session=? AND call_id=? '
                            "ORDER BY created DESC", (app, user, session, call_id)).rows
        return _row(rows[0]) if rows else None

    def get(self, approval_id: str) -> Approval | None:
        rows = self._db.run(f"{_SELECT} FROM approvals WHERE id=?", (approval_id,)).rows
        return _row(rows[0]) if rows else None

    def decide(self, approval_id: str, status: str, reason: str) -> Approval:
        updated = self._db.run("UPDATE approvals SET status=?, reason=?, decided=? WHERE id=? AND status='pending'",
                               (status, reason, time.time(), approval_id)).rowcount
        approval = self.get(approval_id)
        if approval is None:
            raise CallError(f"no approval {approval_id!r}", code="not_found")
        if not updated and approval.status != status:
            raise CallError(f"approval {approval_id} is already {approval.status}", code="already_decided")
        return approval

    def list(self, app: str | None, user: str | None, status: str | None) -> list[Approval]:
        self._expire_orphans()
        query, args = f"{_SELECT} FROM approvals WHERE 1=1", []
        for column, value in (("app", app), ('"user"', user), ("status", status)):
            if value is not None:
                query += f" AND {column}=?"
                args.append(value)
        return [_row(r) for r in self._db.run(query + " ORDER BY created", args).rows]

    def _expire_orphans(self) -> None:
        """Pending approvals whose run is no longer running (the host restarted) expire."""
        if self.sessions is None:
            return
        pending = self._db.run("SELECT id, run_id FROM approvals WHERE status='pending'").rows
        for approval_id, run_id in pending:
            status = self.sessions.run_status(run_id)
            if status is not None and status != "running":
                self.decide(approval_id, "expired", f"its run ended ({status}) before a decision")

    def decided_among(self, approval_ids: builtins.list[str]) -> builtins.list[Approval]:
        """Those of ``approval_ids`` decided by now (through any host)."""
        if not approval_ids:
            return []
        marks = ", ".join("?" * len(approval_ids))
        rows = self._db.run(f"{_SELECT} FROM approvals WHERE status<>'pending' AND id IN ({marks})",
                            approval_ids).rows
        return [_row(r) for r in rows]

    def close(self) -> None:
        self._db.close()
        if self.sessions is not None:
            self.sessions.close()


def _row(row: tuple[Any, ...]) -> Approval:
    (approval_id, app, user, session, run_id, agent, tool, args, hint, status, reason, created, _) = row
    return Approval(approval_id, app, user, session, run_id, agent, tool, json.loads(args), hint, status, reason,
                    created)


class ApprovalActor(GenServer):
    check_request = staticmethod(check_message)  # malformed requests: invalid_request, never a crash

    def init(self, args: dict[str, Any]) -> None:
        self.store = ApprovalStore(args["path"], args.get("session_store"), host=args.get("host", ""))
        self.waiters: dict[str, list[CallerRef]] = {}
        self.polling = False  # a poll of the shared database is armed

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if isinstance(request, RegisterApproval):
            if not request.tool or not isinstance(request.args, dict):
                raise BadRequest("an approval needs a tool name and its arguments")
            return self.store.register(request)
        if isinstance(request, (Approve, Deny)):
            return self._decide(request)
        if isinstance(request, CallApproval):
            self.store.list(request.app_name, request.user_id, None)  # pending ones of ended runs expire first
            return self.store.of_call(request.app_name, request.user_id, request.session_id, request.call_id)
        if isinstance(request, WaitDecision):
            current = self.store.get(request.id)
            if current is None:
                raise CallError(f"no approval {request.id!r}", code="not_found")
            if current.status != "pending" or request.wait <= 0:
                return current  # decided before anyone waited: not lost
            self.waiters.setdefault(request.id, []).append(caller)
            self.send_after(request.wait, ("wait-over", request.id, caller.ref))
            self._poll_if_shared()
            return NO_REPLY
        if isinstance(request, ListApprovals):
            return self.store.list(request.app_name, request.user_id, request.status)
        return super().handle_call(request, caller)

    def _decide(self, request: Approve | Deny) -> Approval:
        status = "approved" if isinstance(request, Approve) else "denied"
        approval = self.store.decide(request.id, status, getattr(request, "reason", ""))
        for waiter in self.waiters.pop(request.id, []):
            self.reply(waiter, approval)
        return approval

    def handle_cast(self, request: Any) -> None:
        """A decision may also arrive as a cast (a run that gave up waiting denies its own)."""
        if isinstance(request, (Approve, Deny)):
            try:
                self._decide(request)
            except CallError as exc:  # already decided, or unknown: nothing to change
                self.log.info("decision %s ignored: %s", request, exc)
        else:
            super().handle_cast(request)

    def terminate(self, reason: Any) -> None:
        self.store.close()

    def _poll_if_shared(self) -> None:
        if self.store.shared and not self.polling and self.waiters:
            self.polling = True
            self.send_after(SHARED_POLL, ("poll",))

    def _poll(self) -> None:
        """Answer the waiters of approvals decided through another host; come back while
        any wait."""
        self.polling = False
        for approval in self.store.decided_among(sorted(self.waiters)):
            for waiter in self.waiters.pop(approval.id, []):
                self.reply(waiter, approval)
        self._poll_if_shared()

    def handle_timeout(self, payload: Any) -> None:
        if payload == ("poll",):
            self._poll()
            return
        if isinstance(payload, tuple) and payload[0] == "wait-over":
            _, approval_id, ref = payload
            waiters = self.waiters.get(approval_id, [])
            for waiter in [w for w in waiters if w.ref == ref]:
                waiters.remove(waiter)
                self.reply(waiter, self.store.get(approval_id))
