"""``run`` and ``chat``: turns streamed from a host (its actor system or its HTTP API),
the approvals and human inputs a run waits for announced with the commands that
answer them; ``run AGENT_DIR`` in this process (``_repl``)."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from .._exceptions import (
    ConfigError,
    SessionNotFoundError,
)
from ._common import APPROVAL_POLL, DEFAULT_USER, connect_host, paint

if TYPE_CHECKING:
    from .._types import Content

__all__ = ["bearer_token", "cmd_chat", "cmd_run", "flags_of_host", "print_run_event", "runner_for", "stream_turn"]


def print_run_event(event: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(event.to_dict()), flush=True)
        return
    if event.author == "user":
        return
    if event.error_code:
        print(paint("31", f"[{event.author}] error {event.error_code}: {event.error_message}"), flush=True)
        return
    if event.content is None:
        if event.output is not None and event.node_info is not None:  # a workflow node's output
            print(paint("36", f"  => {event.node_info.path}: {json.dumps(event.output, default=str)}"), flush=True)
        return
    for part in event.content.parts:
        if part.text and not part.thought:
            if event.partial:
                print(part.text, end="", flush=True)
            else:
                print(f"{paint('1', event.author)}: {part.text}", flush=True)
        elif part.function_call is not None and not (part.function_call.name == "adk_request_input"
                                                     and part.function_call.id in (event.long_running_tool_ids or ())):
            call = part.function_call  # (a question is told by _announce_inputs)
            print(paint("36", f"  -> {call.name}({json.dumps(call.args)})"), flush=True)
        elif part.function_response is not None:
            result = part.function_response
            print(paint("36", f"  <- {result.name}: {json.dumps(result.response, default=str)}"), flush=True)
    if event.actions.transfer_to_agent:
        print(paint("33", f"  => transferred to {event.actions.transfer_to_agent}"), flush=True)


def stream_turn(runner: Any, user: str, session: str, message: str | Content, as_json: bool, app: str = "",
          url: str | None = None, token: str | None = None, host_flags: str = "") -> bool:
    """One turn, its events printed as they come; True when it ended well, False when
    the run sent an error event (``a2a_unavailable``, a model's error ...). A session
    made here is named by this message (``__session_metadata__.displayName``, as the
    console names its own, so its list shows it by that). From the
    run's first tool call on, the approvals its session waits for are looked for every
    ``APPROVAL_POLL`` seconds (on a thread: a Runner serves many threads; with ``url``,
    over the host's HTTP API) and each is announced once, with the commands that
    decide it (:class:`_ApprovalWatch`). A question a workflow node asks
    (``RequestInput``) is announced with how to answer it (:func:`_announce_inputs`).
    The commands printed carry ``host_flags`` (:func:`flags_of_host`: the ``--port`` and
    ``--config`` this command was given), so they reach the same host."""
    try:
        runner.get_session(user, session)
    except SessionNotFoundError:  # named as the console names its own: by the first message
        text = message if isinstance(message, str) else ""
        name = text if len(text) <= 47 else f"{text[:47]}..."
        runner.create_session(user, session, state={"__session_metadata__": {"displayName": name}})
    watch = _ApprovalWatch(_pending_approvals(runner, app, user, url, token), app, session, as_json, url, user,
                           with_token=bool(token), host_flags=host_flags)
    failed = False
    try:
        for event in runner.run(user, session, message):
            print_run_event(event, as_json)
            failed = failed or bool(event.error_code)
            if event.content is not None and any(part.function_call is not None for part in event.content.parts):
                watch.start()
                _announce_inputs(event, as_json, app, session, user, url, host_flags)
    finally:
        watch.stop()
    return not failed


def _answer_example(schema: Any) -> str:
    """An ANSWER as a shell word, shaped as ``schema`` asks: an object's fields with
    their types, else ``ANSWER``."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if schema is None or not isinstance(properties, dict):
        return "ANSWER"
    fields = ", ".join(f'"{name}": <{spec.get("type", "value") if isinstance(spec, dict) else "value"}>'
                       for name, spec in properties.items())
    return f"'{{{fields}}}'"


def flags_of_host(args: argparse.Namespace) -> str:
    """The flags that chose this command's host (``--port``, ``--config``), to repeat in
    the commands it prints; "" when it used the defaults or the HTTP API (``--url``)."""
    if getattr(args, "url", None):
        return ""
    flags = f" --port {int(args.port)}" if getattr(args, "port", None) else ""
    config = getattr(args, "config", None)
    return flags + (f" --config {shlex.quote(str(config))}" if config else "")


def _answer_command(app: str, interrupt_id: str, session: str, user: str, url: str | None, answer: str,
                    host_flags: str = "") -> str:
    """The ``adk-actors inputs answer`` command that answers request ``interrupt_id``."""
    where = f" --url {url}" if url else host_flags
    who = f" --user {user}" if user != DEFAULT_USER else ""
    return f"adk-actors inputs answer {app} {interrupt_id} {answer} --session {session}{who}{where}"


def _announce_inputs(event: Any, as_json: bool, app: str, session: str, user: str, url: str | None,
                     host_flags: str = "") -> None:
    """Each request for input ``event`` makes (a workflow node's ``RequestInput``),
    told once: ``waiting for input ID (NODE PATH): MESSAGE``, its payload, its
    response schema (or that any JSON value or text will do) and the ``adk-actors
    inputs answer`` command that answers it; with ``--json``, a JSON line
    ``{"input": {...}, "answer": CMD}`` on standard error (standard output stays the
    run's events). Nothing for an event that asks nothing (the workflow module is
    imported only for one that does)."""
    if not any(c.name == "adk_request_input" for c in event.content.function_calls):
        return
    from ..workflow import waiting_inputs

    for ask in waiting_inputs([event]):
        command = _answer_command(app, ask.interrupt_id, session, user, url, _answer_example(ask.response_schema),
                                  host_flags)
        if as_json:
            print(json.dumps({"input": ask.to_dict(), "answer": command}, default=str), file=sys.stderr, flush=True)
            continue
        print(paint("33", f"  waiting for input {ask.interrupt_id} ({ask.path or ask.author}): "
                           f"{ask.message or 'input requested'}"), flush=True)
        if ask.payload is not None:
            print(f"    payload: {json.dumps(ask.payload, default=str)}", flush=True)
        print(f"    schema:  {json.dumps(ask.response_schema) if ask.response_schema else 'none: any JSON or text'}",
              flush=True)
        print(f"    answer:  {command}", flush=True)


def _pending_approvals(runner: Any, app: str, user: str, url: str | None,
                       token: str | None) -> Callable[[], list[dict[str, Any]]]:
    """How to list ``user``'s pending approvals of ``app`` (``id``, ``sessionId``,
    ``tool``, ``args``, ``hint``): the Runner's, or with ``url`` the HTTP API's (the
    console's route)."""
    if url is None:
        return lambda: [{"id": a.id, "sessionId": a.session_id, "tool": a.tool, "args": a.args, "hint": a.hint}
                        for a in runner.approvals(user, "pending")]
    import httpx

    path = f"{url.rstrip('/')}/apps/{quote(app, safe='')}/users/{quote(user, safe='')}/approvals"
    headers = {"authorization": f"Bearer {token}"} if token else {}

    def listed() -> list[dict[str, Any]]:
        answer = httpx.get(path, headers=headers, timeout=10.0)
        answer.raise_for_status()
        found: list[dict[str, Any]] = answer.json()
        return found

    return listed


class _ApprovalWatch:
    """Announces, once each, the pending approvals of one session while its run goes
    on: ``waiting for approval ID: TOOL(ARGS) (hint)`` and the commands that approve or
    deny it (``adk-actors approvals approve|deny``; with ``url``, the HTTP request, a
    token named by ``$ADK_ACTORS_TOKEN``, never printed), on
    standard output (with ``--json``: a JSON line ``{"approval": {...}, "approve": CMD,
    "deny": CMD}`` on standard error, so standard output stays the run's events). A
    failure to list them (the approval server restarting) is tried again at the next
    poll. Started at the run's first tool call; stopped when the run ends."""

    def __init__(self, pending: Callable[[], list[dict[str, Any]]], app: str, session: str, as_json: bool,
                 url: str | None = None, user: str = DEFAULT_USER, *, with_token: bool = False,
                 host_flags: str = "") -> None:
        self._pending, self._app, self._session, self._json = pending, app, session, as_json
        self._url, self._user, self._with_token, self._host_flags = url, user, with_token, host_flags
        self._seen: set[str] = set()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._poll, name="approval-watch", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join(timeout=15.0)

    def _poll(self) -> None:
        while not self._done.wait(APPROVAL_POLL):
            try:
                pending = self._pending()
            except Exception:  # the approval server (or the HTTP process) restarting: ask again next time
                continue
            for approval in pending:
                if approval["sessionId"] == self._session and approval["id"] not in self._seen \
                        and not self._done.is_set():
                    self._seen.add(approval["id"])
                    self._announce(approval)

    def _commands(self, approval_id: str) -> tuple[str, str]:
        if self._url is None:
            return (f"adk-actors approvals approve {self._app} {approval_id}{self._host_flags}",
                    f"adk-actors approvals deny {self._app} {approval_id} --reason '...'{self._host_flags}")
        where = (f"{self._url.rstrip('/')}/apps/{quote(self._app, safe='')}/users/{quote(self._user, safe='')}"
                 f"/approvals/{approval_id}")
        # the token itself is never printed: the command names the variable that holds it
        auth = ' -H "authorization: Bearer $ADK_ACTORS_TOKEN"' if self._with_token else ""
        post = f"curl -X POST {where} -H 'content-type: application/json'{auth} -d"
        return f"{post} '{{\"approve\": true}}'", f"{post} '{{\"approve\": false, \"reason\": \"...\"}}'"

    def _announce(self, approval: dict[str, Any]) -> None:
        approve, deny = self._commands(approval["id"])
        if self._json:
            print(json.dumps({"approval": {key: approval.get(key) for key in ("id", "tool", "args", "hint")},
                              "approve": approve, "deny": deny}, default=str), file=sys.stderr, flush=True)
            return
        hint = f" ({approval['hint']})" if approval.get("hint") else ""
        print(paint("33", f"  waiting for approval {approval['id']}: {approval['tool']}"
                           f"({json.dumps(approval['args'], default=str)}){hint}"), flush=True)
        print(f"    approve: {approve}\n    deny:    {deny}", flush=True)


def bearer_token(args: argparse.Namespace) -> str | None:
    """``--token``, else ``$ADK_ACTORS_TOKEN``, else None."""
    return getattr(args, "token", None) or os.environ.get("ADK_ACTORS_TOKEN")


def runner_for(args: argparse.Namespace) -> tuple[Any, Callable[[], None]]:
    """The Runner for ``args.app`` and how to let it go: over the host's HTTP API with
    ``--url`` (its bearer token from ``--token`` or ``ADK_ACTORS_TOKEN``), else through
    the actor system on ``--port``."""
    if args.url:
        from ..remote import HttpRunner

        remote = HttpRunner(args.url, args.app, token=bearer_token(args))
        return remote, remote.close
    host = connect_host(args)
    return host.runner(args.app), host.disconnect


def cmd_run(args: argparse.Namespace) -> int:
    """An AGENT_DIR (a folder, and no ``--url`` or ``--port``): its ``services.yaml`` /
    ``services.py`` loaded (``service_registry.load_services_module``, as google-adk's
    ``adk run``), then run in this process (``_repl``), a ``--session_service_uri``
    scheme ``_repl`` does not open itself made by the factory registered for it, and an
    ``--artifact_service_uri`` / ``--memory_service_uri`` made as google-adk's ``adk
    run`` makes them (``utils.service_factory``: the registry's factory of the scheme;
    an artifact scheme nobody registered is kept in memory with a warning, a memory
    one is refused); else one turn of APP on a host, which needs a MESSAGE."""
    if Path(args.app).is_dir() and not args.url and not args.port:
        from .._repl import FolderRun, run_agent_folder
        from .service_registry import get_service_registry, load_services_module
        from .utils.service_factory import (
            create_artifact_service_from_options,
            create_memory_service_from_options,
        )

        load_services_module(str(Path(args.app).resolve()))  # google-adk's adk run: the agent folder's services files

        def registered(uri: str, agents_dir: str) -> Any:
            return get_service_registry().create_session_service(uri, agents_dir=agents_dir)

        def artifacts(uri: str, agents_dir: str) -> Any:
            return create_artifact_service_from_options(base_dir=agents_dir, artifact_service_uri=uri)

        def memory(uri: str, agents_dir: str) -> Any:
            return create_memory_service_from_options(base_dir=agents_dir, memory_service_uri=uri)

        return run_agent_folder(FolderRun(
            agent_dir=args.app, query=args.message, user_id=args.user, replay=args.replay, resume=args.resume,
            save_session=args.save_session, session_id=args.session_id or args.session, state=args.state,
            state_file=args.state_file, timeout=args.timeout, in_memory=args.in_memory, jsonl=args.jsonl or args.json,
            session_service_uri=args.session_service_uri, session_factory=registered,
            artifact_service_uri=args.artifact_service_uri, memory_service_uri=args.memory_service_uri,
            artifact_factory=artifacts, memory_factory=memory))
    if args.message is None:
        raise ConfigError(f"run {args.app}: give a MESSAGE for an app of a host, or an agent folder (run AGENT_DIR)")
    folder_only = [flag for flag in ("replay", "resume", "save_session", "session_id", "state", "state_file", "timeout",
                                     "in_memory", "jsonl", "session_service_uri", "artifact_service_uri",
                                     "memory_service_uri") if getattr(args, flag)]
    if folder_only:
        raise ConfigError(f"run {args.app}: --{folder_only[0]} goes with an AGENT_DIR run in this process, not with "
                          "an app of a host")
    runner, close = runner_for(args)
    try:
        ended_well = stream_turn(runner, args.user, args.session or f"cli-{uuid.uuid4().hex[:8]}", args.message, args.json,
                           args.app, args.url, bearer_token(args), flags_of_host(args))
    finally:
        close()
    return 0 if ended_well else 1


def cmd_chat(args: argparse.Namespace) -> int:
    runner, close = runner_for(args)
    session = args.session or f"chat-{uuid.uuid4().hex[:8]}"
    ended_well = True
    try:
        if sys.stdin.isatty():
            print(f"chatting with {args.app} (session {session}); end with Ctrl-D")
        for line in sys.stdin:
            if line.strip():
                ended_well = stream_turn(runner, args.user, session, line.strip(), args.json, args.app, args.url,
                                   bearer_token(args), flags_of_host(args)) and ended_well
    finally:
        close()
    return 0 if ended_well else 1


