"""``sessions``, ``approvals``, ``inputs``, ``resume`` and ``jobs``: the operator's and
the human's side of a host's sessions, tool approvals, workflow questions, resumed
runs and background jobs."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Literal
from urllib.parse import quote

from .._decisions import CallDecision
from .._exceptions import (
    ConfigError,
    InvalidRequestError,
    RunFailedError,
)
from ._common import connect_host, paint
from ._talk import bearer_token, flags_of_host, print_run_event, runner_for, stream_turn

__all__ = ["cmd_approvals", "cmd_inputs", "cmd_jobs", "cmd_resume", "cmd_sessions"]


def cmd_sessions(args: argparse.Namespace) -> int:
    host = connect_host(args)
    try:
        runner = host.runner(args.app)
        if args.action == "list":
            sessions = runner.list_sessions(args.user)
            if args.json:
                print(json.dumps([{"id": s.id, "state": s.state, "lastUpdateTime": s.last_update_time}
                                  for s in sessions], default=str))
            for s in [] if args.json else sessions:
                print(f"{s.id}  updated {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(s.last_update_time))}")
        elif args.action == "show":
            session = runner.get_session(args.user, args.session)
            if args.json:
                print(json.dumps({"id": session.id, "state": session.state,
                                  "events": [e.to_dict() for e in session.events]}, default=str))
            else:
                print(f"session {session.id}: state {json.dumps(session.state, default=str)}")
                for event in session.events:
                    print_run_event(event, False) if event.author != "user" else print(
                        f"{paint('1', 'user')}: {event.content.text if event.content else ''}")
        elif args.action == "reset":
            return _reset_session(host, runner, args)
        else:
            runner.delete_session(args.user, args.session)
            print(f"deleted {args.session}")
    finally:
        host.disconnect()
    return 0


def _reset_session(host: Any, runner: Any, args: argparse.Namespace) -> int:
    """``sessions reset APP SESSION --user USER``: the session is looked for at the
    partition that owns it (not in a listing: ``chaos.find_rows``); a failed one is
    reset and serves again; one held and not failed is reset all the same (its crash
    count starts again) and said so; one not held (never crashed lately, or unknown)
    is an error (exit 1), nothing done."""
    from ..chaos import find_rows
    from ..messages import session_key

    if not args.session:
        print("error: sessions reset needs a SESSION", file=sys.stderr)
        return 2
    key = session_key(args.app, args.user, args.session)
    found = [r for r in find_rows(host, key) if r["type"] == "session"]
    if not found:
        print(f"error: no session {key!r} is held (a failed session is held until it is reset); "
              "see `adk-actors status --search`", file=sys.stderr)
        return 1
    runner.reset_session(args.user, args.session)
    if found[0]["status"] == "failed":
        print(f"reset {args.session}: it serves again")
    else:
        print(f"reset {args.session}: it was not failed ({found[0]['status']}); its crash count starts again")
    return 0


def cmd_approvals(args: argparse.Namespace) -> int:
    host = connect_host(args)
    try:
        runner = host.runner(args.app)
        if args.action == "list":
            pending = runner.approvals(None, None if args.all else "pending")
            if args.json:
                print(json.dumps([a.__dict__ for a in pending], default=str))
            for a in [] if args.json else pending:
                print(f"{a.id}  {a.status:<8} {a.user_id}/{a.session_id}  {a.agent} -> {a.tool}({json.dumps(a.args)})"
                      f"{'  ' + a.hint if a.hint else ''}")
        elif args.action == "approve":
            print(f"approved {runner.approve(args.id).id}")
        else:
            print(f"denied {runner.deny(args.id, args.reason).id}")
    finally:
        host.disconnect()
    return 0


def _session_events(runner: Any, user: str, session: str) -> list[Any]:
    """The events of ``session`` (the Runner's, or with ``--url`` its JSON read back)."""
    from .._types import Event

    found = runner.get_session(user, session)
    if isinstance(found, dict):
        return [Event.model_validate(event) for event in found.get("events", [])]
    return list(found.events)


def _user_sessions(runner: Any, args: argparse.Namespace) -> list[str]:
    """The ids of ``--user``'s sessions of the app (``--session`` alone when given)."""
    if args.session:
        return [args.session]
    if not args.url:
        return [s.id for s in runner.list_sessions(args.user)]
    import httpx

    token = bearer_token(args)
    answer = httpx.get(f"{args.url.rstrip('/')}/apps/{quote(args.app, safe='')}/users/{quote(args.user, safe='')}"
                       "/sessions", headers={"authorization": f"Bearer {token}"} if token else {}, timeout=30.0)
    answer.raise_for_status()
    return [str(s["id"]) for s in answer.json()]


def cmd_inputs(args: argparse.Namespace) -> int:
    """``inputs list APP [--session S]``: the requests for input (workflow nodes'
    ``RequestInput``) that ``--user``'s sessions wait for, one line each (``--json``: a
    JSON list). ``inputs answer APP ID ANSWER --session S``: ANSWER (JSON, else text)
    sent as the answer to request ID (a function response, as adk-web sends it); the
    graph goes on and its events print as ``run`` prints them (exit 1 if it fails).
    A request the session does not wait for is an InvalidRequestError (exit 1),
    nothing sent."""
    from .._types import Content
    from ..workflow import request_input_response, waiting_inputs

    runner, close = runner_for(args)
    try:
        if args.action == "list":
            rows = [(session, ask) for session in _user_sessions(runner, args)
                    for ask in waiting_inputs(_session_events(runner, args.user, session))]
            if args.json:
                print(json.dumps([{"sessionId": session, **ask.to_dict()} for session, ask in rows], default=str))
            for session, ask in [] if args.json else rows:
                payload = f"  payload {json.dumps(ask.payload, default=str)}" if ask.payload is not None else ""
                schema = f"  schema {json.dumps(ask.response_schema)}" if ask.response_schema else ""
                print(f"{ask.interrupt_id}  {session}  {ask.path or ask.author}: {ask.message or 'input requested'}"
                      f"{payload}{schema}")
            return 0
        waiting = waiting_inputs(_session_events(runner, args.user, args.session))
        if args.id not in [ask.interrupt_id for ask in waiting]:
            raise InvalidRequestError(f"session {args.session} waits for no input {args.id!r} (it waits for "
                                      f"{[ask.interrupt_id for ask in waiting] or 'none'})")
        try:
            value: Any = json.loads(args.answer)
        except ValueError:
            value = args.answer  # text
        message = Content(role="user", parts=(request_input_response(args.id, value),))
        return 0 if stream_turn(runner, args.user, args.session, message, args.json, args.app, args.url,
                          bearer_token(args), flags_of_host(args)) else 1
    finally:
        close()


def _decisions(args: argparse.Namespace) -> dict[str, CallDecision]:
    """``--rerun``, ``--result CALL=JSON`` and ``--end`` as decisions by call id."""
    decisions = {call_id: CallDecision("rerun") for call_id in args.rerun}
    decisions.update({call_id: CallDecision("end") for call_id in args.end})
    for spec in args.result:
        call_id, _, text = spec.partition("=")
        try:
            result = json.loads(text)
        except ValueError:
            raise ConfigError(f"--result {spec!r}: after CALL= comes the call's result as a JSON object") from None
        if not call_id or not isinstance(result, dict):
            raise ConfigError(f"--result {spec!r}: CALL=JSON, the JSON an object")
        decisions[call_id] = CallDecision("result", result)
    return decisions


def cmd_resume(args: argparse.Namespace) -> int:
    decisions = _decisions(args)
    runner, close = runner_for(args)
    try:
        try:
            for event in runner.resume(args.user, args.session, args.run_id, decisions=decisions or None):
                print_run_event(event, args.json)
        except RunFailedError as failed:
            if failed.reason != "needs_decision":
                raise
            if args.json:
                print(json.dumps({"needs_decision": failed.run_id, "pending_calls": failed.pending_calls}))
                return 3
            print(f"run {failed.run_id} stopped before calls that may have run (their tools are not idempotent):")
            for pending in failed.pending_calls:
                print(f"  {pending['call_id']}  {pending['agent']} -> {pending['name']}({json.dumps(pending['args'])})")
            print(f"decide on each, then: adk-actors resume {args.app} {args.session} {failed.run_id} "
                  "--rerun CALL | --result CALL='{...}' | --end CALL")
            return 3
    finally:
        close()
    return 0


def _json_object(text: str | None, flag: str) -> dict[str, Any]:
    """``text`` read as a JSON object (None: ``{}``); :class:`ConfigError` (exit 2)
    naming ``flag`` when it is not JSON or not an object."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{flag} {text!r}: not JSON ({exc}); give a JSON object, e.g. '{{\"name\": 1}}'") from None
    if not isinstance(value, dict):
        shape = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
        raise ConfigError(f"{flag} {text!r}: a JSON object (the function's keyword arguments), "
                          f"not {shape.get(type(value), 'null')}")
    return value


def cmd_jobs(args: argparse.Namespace) -> int:
    """``jobs list|show|enqueue|cancel|retry|discard``: the host's background jobs, as its
    operator (docs/jobs.md); a job as a line (``--json``: as the HTTP API sends it)."""
    from ..jobs import JobSpec

    function_args = _json_object(args.args, "--args") if args.action == "enqueue" else {}
    host = connect_host(args)
    try:
        jobs = host.jobs
        if args.action == "list":
            found = jobs.list(queue=args.queue, state=args.state, limit=args.limit)
        elif args.action == "enqueue":
            kind: Literal["agent", "function"] = "function" if args.function else "agent"
            found = [jobs.enqueue(JobSpec(kind=kind, user_id=args.user, queue=args.queue or "default",
                                          app_name=args.app or "", message=args.message or "",
                                          session_id=args.session, function=args.function or "",
                                          args=function_args,
                                          schedule_in=args.schedule_in, max_attempts=args.max_attempts,
                                          unique_key=args.unique))]
        else:
            if not args.id:
                raise InvalidRequestError(f"jobs {args.action} needs a job id")
            found = [{"show": jobs.get, "cancel": jobs.cancel, "retry": jobs.retry,
                      "discard": jobs.discard}[args.action](args.id)]
        if args.json:
            print(json.dumps([job.to_dict() for job in found], default=str))
        for job in [] if args.json else found:
            what = job.payload["app_name"] if job.kind == "agent" else job.payload["function"]
            last = f"  last error: {job.errors[-1]['error']}" if job.errors else ""
            print(f"{job.id}  {job.state:<10} {job.queue}  {job.kind} {what}  user {job.user_id}  "
                  f"attempt {job.attempt}/{job.max_attempts}  due {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(job.scheduled_at))}{last}")
            if args.action == "show":
                _print_job_detail(job)
    finally:
        host.disconnect()
    return 0


def _print_job_detail(job: Any) -> None:
    """``jobs show``: under the job's line, its result (a completed job's: what its
    function returned, or its run's final answer, session and run) and every attempt's
    error."""
    if job.finished_at is not None:
        print(f"  finished {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(job.finished_at))}")
    if job.result is not None:
        print(f"  result: {json.dumps(job.result, default=str)}")
    elif job.state == "completed":
        print("  result: (none: the job returned nothing)")
    else:
        print(f"  result: (none yet: the job is {job.state})")
    for error in job.errors:
        print(f"  attempt {error.get('attempt', '?')} failed: {error.get('error', '')}")


