"""``adk-actors run AGENT_DIR``: google-adk's ``adk run``, in this process, no host.

An agent folder (``AGENT_DIR/agent.py`` defining ``root_agent``, or ``app``, or
``AGENT_DIR/root_agent.yaml``; its ``.env`` read first, as ``adk-actors web`` reads it)
is loaded by the host's own catalog and run by the in-process :class:`Runner` on one
asyncio loop. What :func:`run_agent_folder` does, in order:

1. The folder is checked and loaded (:func:`load_agent_folder`); the session store is
   opened (:func:`open_session_service`: ``--session_service_uri`` ``memory://``,
   ``sqlite://PATH`` or a ``postgresql://`` URL; another scheme, the service its
   registered factory makes (``FolderRun.session_factory``: google-adk's service
   registry, ``adk_actors.cli.service_registry``); ``--in_memory``; by default a SQLite
   file in the agents folder's ``.adk-actors/``, beside a served host's data but not
   its store). ``--artifact_service_uri`` and ``--memory_service_uri`` (google-adk's
   ``adk run`` flags), when given, name the run's artifact and memory services, made by
   the factories the CLI gives (``FolderRun.artifact_factory`` / ``memory_factory``:
   google-adk's service registry, its built-in schemes and those the folder's services
   files register); without them the artifacts and memory are kept in memory, as
   before. A bad folder, store, service, state or file is a :class:`ConfigError` (exit
   2) before anything runs.
2. One of google-adk's four modes:

   * a QUERY given: one turn (``Session ID: ID`` on standard error first; with
     ``--session_id``, that session continued or made), exit 2 when it paused on a
     long-running tool call, 1 when it failed; a session paused so takes the next
     QUERY as the call's answer;
   * ``--replay FILE`` (``{"state": {...}, "queries": [...]}``): a new session with
     that state (and ``_time``), each query printed as ``[user]: QUERY`` then run;
   * ``--resume FILE`` (a session saved by ``--save_session``, google-adk's JSON): a new
     session with its state and its events (each printed), then the REPL;
   * else ``Running agent NAME, type exit to exit.`` and the REPL: ``[user]: `` read
     from standard input until ``exit`` (or its end); blank lines are skipped; a turn
     that pauses on long-running tool calls asks for each one's answer (JSON, else
     ``{"result": TEXT}``) and sends them back; a workflow node's question
     (``RequestInput``) is told as ``[HITL input] MESSAGE`` with its payload and schema.

   Each event with text prints as ``[AUTHOR]: TEXT`` (one that only pauses as
   ``[AUTHOR]: (Paused for input...)``); ``--jsonl``: each event as a JSON line with
   its ``session_id``. An error event (a missing API key, a model's failure) is also
   told on standard error, ``[AUTHOR] error CODE: MESSAGE``, and makes the exit code 1
   (google-adk prints nothing for it). ``--timeout`` (``30s``, ``5m``) bounds each
   turn: one over it is said on standard error and the REPL goes on. A tool call that
   needs a human's approval (a confirmation policy) is asked at the terminal,
   ``[HITL confirm] HINT: TOOL(ARGS)`` then ``[user]: ``, ``yes`` approving it.
3. ``--save_session``: the session (asked for ``Session ID to save: `` unless
   ``--session_id``) is written, google-adk's JSON, to ``AGENT_DIR/ID.session.json``.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pydantic import ValidationError

from ._exceptions import ConfigError
from ._types import Content, Event, FunctionResponse, Part
from .artifacts import BaseArtifactService
from .engine import (
    APP_NAME,
    App,
    AppCatalog,
    Decision,
    remember_explicit_env,
)
from .memory import BaseMemoryService
from .runners import Runner
from .sessions import BaseSessionService, Session
from .sessions._store_service import StoreSessionService
from .store import SessionData, SessionNotFound, StoreError, in_memory_store, open_session_store

__all__ = ["FolderRun", "load_agent_folder", "open_run_services", "open_session_service", "open_sessions",
           "replay_queries", "run_agent_folder", "session_file_json"]

#: Where the sessions of ``run AGENT_DIR`` are kept by default: this file in the
#: ``.adk-actors`` folder of the agents folder (AGENT_DIR's parent).
SESSIONS_FILE = "run-sessions.db"
EXIT = "exit"
#: The ``--session_service_uri`` schemes :func:`open_sessions` opens itself.
OPENED_SCHEMES = frozenset({"memory", "sqlite", "postgresql", "postgres"})
_TIMEOUT = re.compile(r"(\d+)([sm]?)\Z")


@dataclass(frozen=True)
class FolderRun:
    """The options of ``adk-actors run AGENT_DIR`` (google-adk's ``adk run`` flags)."""

    agent_dir: str
    query: str | None = None
    user_id: str = "user"
    replay: str | None = None
    resume: str | None = None
    save_session: bool = False
    session_id: str | None = None
    state: str | None = None
    state_file: str | None = None
    timeout: str | None = None
    in_memory: bool = False
    jsonl: bool = False
    session_service_uri: str | None = None
    #: Consulted for a ``--session_service_uri`` scheme not in :data:`OPENED_SCHEMES`:
    #: called with the URI and the agents folder (AGENT_DIR's parent), it returns the
    #: service a factory registered for that scheme makes, or None when none is
    #: registered (the CLI gives google-adk's service registry's).
    session_factory: Callable[[str, str], BaseSessionService | None] | None = None
    artifact_service_uri: str | None = None
    memory_service_uri: str | None = None
    #: Make the service of ``--artifact_service_uri`` / ``--memory_service_uri``: called
    #: with the URI and the agents folder (AGENT_DIR's parent), each returns the service
    #: or raises (the CLI gives google-adk's ``create_*_service_from_options``).
    artifact_factory: Callable[[str, str], BaseArtifactService] | None = None
    memory_factory: Callable[[str, str], BaseMemoryService] | None = None


class _TerminalApprovals:
    """Tool calls that need a human's approval, asked at the terminal as google-adk asks
    for a confirmation: the hint (else ``Confirm TOOL?``), then ``[user]: ``; ``y``,
    ``yes``, ``true`` or ``confirm`` approves, anything else (or the end of standard
    input) rejects."""

    def __init__(self, read: Callable[[str], str | None]) -> None:
        self.read = read
        self.status: dict[str, str] = {}  # call id -> approved / denied (calls with an id)

    async def request(self, ctx: Any, tool: str, args: dict[str, Any], hint: str, timeout: float,
                      call_id: str = "") -> Decision:
        if call_id in self.status:  # asked again for the same call: the decision stands
            return Decision(self.status[call_id] == "approved", "", call_id)
        print(f"[HITL confirm] {hint or f'Confirm {tool}?'}: {tool}({json.dumps(args, default=str)})", flush=True)
        print('  Type "yes" to confirm, anything else to reject.', flush=True)
        typed = self.read("[user]: ")
        approved = typed is not None and typed.strip().lower() in ("y", "yes", "true", "confirm")
        if call_id:
            self.status[call_id] = "approved" if approved else "denied"
        reason = "" if approved else "rejected at the terminal" if typed is not None else "standard input ended"
        return Decision(approved, reason, call_id)

    async def call_status(self, ctx: Any, call_id: str) -> str | None:
        return self.status.get(call_id)


class _TerminalRunner(Runner):
    """The in-process Runner, its tool approvals asked at the terminal (the Runner's
    turn, with this approval service given to the engine)."""

    approvals: _TerminalApprovals


def load_agent_folder(agent_dir: str) -> tuple[App, str, Path]:
    """(the app, its session app name, the folder) of agent folder ``agent_dir``: its
    ``.env`` read (never over a variable set before), then ``agent.py``'s ``app`` or
    ``root_agent``, else ``root_agent.yaml``. ConfigError for a path that is no folder or
    holds no agent, or whose name cannot be imported; the catalog's
    AgentDefinitionError (with the import's error) for an agent that does not load."""
    folder = Path(agent_dir).resolve()
    if not folder.is_dir():
        raise ConfigError(f"{agent_dir}: no such folder (an agent folder holds agent.py defining root_agent, "
                          "or root_agent.yaml)")
    if not APP_NAME.fullmatch(folder.name):
        raise ConfigError(f"{agent_dir}: an agent folder's name must be a Python identifier (letters, digits and "
                          f"'_', not starting with a digit), not {folder.name!r}")
    catalog = AppCatalog(agents_dir=str(folder.parent))
    if catalog.source(folder.name) is None:
        raise ConfigError(f"{agent_dir} is not an agent folder: it holds no agent.py (defining root_agent) and no "
                          "root_agent.yaml (for an app of a running host, add --port or --url)")
    remember_explicit_env()
    if str(folder.parent) not in sys.path:
        sys.path.insert(0, str(folder.parent))
    app = catalog.load(folder.name)
    return app, app.name or folder.name, folder


def open_sessions(options: FolderRun, folder: Path) -> StoreSessionService:
    """The session service of a run: ``memory://`` (or ``--in_memory``) in memory;
    ``sqlite://PATH`` a SQLite file (``sqlite:///rel.db``, ``sqlite:////abs.db``, as
    google-adk reads them); ``postgresql://...`` a PostgreSQL database; none given, the
    SQLite file ``SESSIONS_FILE`` in ``.adk-actors/`` beside the agent folder.
    ConfigError for another scheme or a store that does not open."""
    uri = options.session_service_uri
    if options.in_memory and uri:
        raise ConfigError("--in_memory and --session_service_uri cannot be set together")
    if options.in_memory or uri in ("memory://", "sqlite://"):
        return StoreSessionService(in_memory_store())
    if uri is None:
        data = folder.parent / ".adk-actors"
        location = str(data / SESSIONS_FILE)
    else:
        parsed = urlparse(uri)
        if parsed.scheme == "sqlite":
            location = parsed.path[1:] if parsed.path.startswith("/") else parsed.path
        elif parsed.scheme in ("postgresql", "postgres"):
            location = uri
        else:
            raise ConfigError(f"--session_service_uri {uri!r}: use memory://, sqlite://PATH or postgresql://..., "
                              "or a scheme the agent's services.py or services.yaml registers")
    try:
        if uri is None:
            data.mkdir(mode=0o700, exist_ok=True)
        return StoreSessionService(open_session_store(location))
    except (StoreError, OSError) as exc:
        raise ConfigError(f"the session store {location} does not open: {exc}") from None


def open_session_service(options: FolderRun, folder: Path) -> BaseSessionService:
    """The session service of a run. A ``--session_service_uri`` whose scheme is not
    one :func:`open_sessions` opens, with a ``session_factory``: the service the factory
    makes (ConfigError naming the scheme when the factory raises or makes no session
    service); a scheme it has no factory for, and every other case: :func:`open_sessions`
    (ConfigError for a scheme nobody opens)."""
    uri = options.session_service_uri
    scheme = urlparse(uri).scheme if uri else ""
    if uri and not options.in_memory and options.session_factory is not None and scheme not in OPENED_SCHEMES:
        try:
            service = options.session_factory(uri, str(folder.parent))
        except Exception as exc:  # the user's factory: whatever it raises is told as a bad URI
            raise ConfigError(f"--session_service_uri {scheme}://...: the factory registered for {scheme!r} "
                              f"failed: {type(exc).__name__}: {exc}") from exc
        if service is not None:
            if not isinstance(service, BaseSessionService):
                raise ConfigError(f"--session_service_uri {scheme}://...: the factory registered for {scheme!r} "
                                  f"made a {type(service).__name__}, not a session service")
            return service
    return open_sessions(options, folder)


def open_run_services(options: FolderRun, folder: Path) -> tuple[BaseArtifactService | None,
                                                                  BaseMemoryService | None]:
    """The artifact and memory services of a run (None: the Runner's in-memory one), in
    order: a URI given with ``--in_memory`` is a ConfigError (as for sessions); each URI
    given is made by its factory with the agents folder (AGENT_DIR's parent); a URI with
    no factory, a factory that raises, or one that makes something other than that
    kind of service is a ConfigError naming the flag."""
    made: list[Any] = []
    for flag, uri, factory, kind in (
            ("--artifact_service_uri", options.artifact_service_uri, options.artifact_factory, BaseArtifactService),
            ("--memory_service_uri", options.memory_service_uri, options.memory_factory, BaseMemoryService)):
        if uri is None:
            made.append(None)
            continue
        if options.in_memory:
            raise ConfigError(f"--in_memory and {flag} cannot be set together")
        scheme = urlparse(uri).scheme or uri
        if factory is None:
            raise ConfigError(f"{flag} {scheme}://...: no service factory is given to this run")
        try:
            service = factory(uri, str(folder.parent))
        except Exception as exc:  # the registry's or the user's factory: told as a bad URI
            raise ConfigError(f"{flag} {scheme}://...: {type(exc).__name__}: {exc}") from exc
        if not isinstance(service, kind):
            raise ConfigError(f"{flag} {scheme}://...: the factory made a {type(service).__name__}, not a "
                              f"{kind.__name__}")
        made.append(service)
    return made[0], made[1]


class _Sessions:
    """A run's session operations: on the store of a :class:`StoreSessionService` (the
    schemes this module opens), else through the session service's own API (a service a
    registered factory made)."""

    def __init__(self, service: BaseSessionService) -> None:
        self.service = service
        self.store = service.store if isinstance(service, StoreSessionService) else None

    async def create(self, app_name: str, user_id: str, session_id: str,
                     state: dict[str, Any] | None) -> SessionData | Session:
        if self.store is not None:
            return self.store.create_session(app_name, user_id, session_id, state)
        return await self.service.create_session(app_name=app_name, user_id=user_id, session_id=session_id,
                                                 state=state)

    async def find(self, app_name: str, user_id: str, session_id: str) -> SessionData | Session | None:
        """The session, or None when there is none."""
        if self.store is not None:
            try:
                return self.store.get_session(app_name, user_id, session_id)
            except SessionNotFound:
                return None
        return await self.service.get_session(app_name=app_name, user_id=user_id, session_id=session_id)

    async def append(self, session: SessionData | Session, event: Event) -> None:
        if self.store is not None:
            self.store.append_event(session.app_name, session.user_id, session.id, event)
        else:
            await self.service.append_event(session, event)  # type: ignore[arg-type]


def _json_file(path: str, flag: str) -> Any:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{flag} {path}: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{flag} {path} is not JSON: {exc}") from None


def _initial_state(options: FolderRun) -> dict[str, Any] | None:
    """``--state`` (a JSON object) or ``--state_file`` (a file of one); ConfigError otherwise."""
    if options.state is not None and options.state_file is not None:
        raise ConfigError("--state and --state_file cannot be set together")
    if options.state_file is not None:
        state = _json_file(options.state_file, "--state_file")
    elif options.state is not None:
        try:
            state = json.loads(options.state)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"--state is not JSON: {exc}") from None
    else:
        return None
    if not isinstance(state, dict):
        raise ConfigError("the initial state must be a JSON object")
    return state


def _replay_file(path: str) -> tuple[dict[str, Any], list[str]]:
    """The state and queries of a ``--replay`` file; ConfigError naming what is wrong."""
    found = _json_file(path, "--replay")
    if not isinstance(found, dict) or not isinstance(found.get("state"), dict) \
            or not isinstance(found.get("queries"), list) \
            or not all(isinstance(q, str) for q in found["queries"]):
        raise ConfigError(f"--replay {path}: expected {{\"state\": {{...}}, \"queries\": [\"...\", ...]}}")
    return found["state"], found["queries"]


def _saved_session(path: str) -> tuple[dict[str, Any], list[Event]]:
    """The state and events of a session file (``--save_session``'s, or google-adk's)."""
    found = _json_file(path, "--resume")
    if not isinstance(found, dict) or not isinstance(found.get("events", []), list) \
            or not isinstance(found.get("state", {}), dict):
        raise ConfigError(f"--resume {path}: expected a saved session (an object with state and events)")
    try:
        events = [Event.model_validate(event) for event in found.get("events", [])]
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"--resume {path}: an event is not one this kit reads ({where}: {first['msg']})") from None
    return dict(found.get("state", {})), events


def _timeout(text: str | None) -> float | None:
    if text is None:
        return None
    found = _TIMEOUT.match(text)
    if found is None:
        raise ConfigError(f"--timeout {text!r}: give seconds as 30 or 30s, or minutes as 5m")
    return float(found.group(1)) * (60 if found.group(2) == "m" else 1)


def session_file_json(session: SessionData | Session) -> str:
    """A session as google-adk writes it (``id``, ``appName``, ``userId``, ``state``,
    ``events``, ``lastUpdateTime``; no null field), indented."""
    return json.dumps({"id": session.id, "appName": session.app_name, "userId": session.user_id,
                       "state": session.state, "events": [event.to_dict() for event in session.events],
                       "lastUpdateTime": session.last_update_time}, indent=2, ensure_ascii=False, default=str)


class _Printer:
    """Prints events in google-adk's shapes (see the module) and notes failures."""

    def __init__(self, jsonl: bool, session_id: str) -> None:
        self.jsonl, self.session_id = jsonl, session_id
        self.failed = False

    def event(self, event: Event) -> None:
        if event.partial:
            return
        if event.error_code:
            self.failed = True
            print(f"[{event.author or 'unknown'}] error {event.error_code}: {event.error_message}",
                  file=sys.stderr, flush=True)
        if self.jsonl:
            found = event.to_dict()
            actions = {k: v for k, v in found.get("actions", {}).items() if v != {}}
            found.pop("actions", None)
            ordered = {"author": found.pop("author", None), "session_id": self.session_id, "id": found.pop("id")}
            print(json.dumps({**ordered, **found, **({"actions": actions} if actions else {})}, ensure_ascii=False,
                             default=str), flush=True)
            return
        text = "".join(part.text for part in event.content.parts if part.text) if event.content is not None else ""
        if text:
            print(f"[{event.author or 'unknown'}]: {text}", flush=True)
        elif event.long_running_tool_ids:
            print(f"[{event.author or 'unknown'}]: (Paused for input...)", flush=True)


def _pending_calls(events: list[Event]) -> list[tuple[str, str, dict[str, Any]]]:
    """(id, name, args) of the long-running tool calls ``events`` paused on: those no
    event of the turn answered (a long-running tool that returned a result was)."""
    pending = []
    answered = {r.id for event in events if event.content is not None for r in event.content.function_responses}
    for event in events:
        ids = set(event.long_running_tool_ids or ()) - answered
        if ids and event.content is not None:
            pending += [(c.id, c.name, c.args) for c in event.content.function_calls if c.id in ids]
    return pending


def _answer(text: str) -> dict[str, Any]:
    """A long-running call's answer from what the user typed: a JSON object as it is,
    other JSON or text as ``{"result": ...}`` (google-adk's rule)."""
    try:
        parsed = json.loads(text)
    except ValueError:
        return {"result": text}
    return parsed if isinstance(parsed, dict) else {"result": parsed}


def _tell_pending(name: str, args: dict[str, Any]) -> None:
    """What a paused call waits for: a workflow node's question (``adk_request_input``)
    as google-adk's ``adk run`` tells it, ``[HITL input] MESSAGE`` and its ``Schema:``,
    with its payload and how to answer; any other call as ``[HITL] Waiting for input
    for NAME(ARGS)``."""
    if name != "adk_request_input":
        print(f"[HITL] Waiting for input for {name}({json.dumps(args, default=str)})", flush=True)
        return
    print(f"[HITL input] {args.get('message') or 'Input requested'}", flush=True)
    if args.get("payload") is not None:
        print(f"  Payload: {json.dumps(args['payload'], ensure_ascii=False, default=str)}", flush=True)
    if args.get("response_schema"):
        print(f"  Schema: {json.dumps(args['response_schema'], ensure_ascii=False)}", flush=True)
    print("  Type the answer: JSON (a value or an object), else text.", flush=True)


def _read(prompt: str) -> str | None:
    """A line typed after ``prompt``; None at the end of standard input."""
    try:
        return input(prompt)
    except EOFError:
        print(flush=True)
        return None


class _Session:
    """One session of a run: its turns, printed."""

    def __init__(self, runner: Runner, session: SessionData | Session, options: FolderRun) -> None:
        self.runner, self.session = runner, session
        self.printer = _Printer(options.jsonl, session.id)
        self.seconds = _timeout(options.timeout)

    async def turn(self, message: Content) -> list[Event]:
        """One turn: its events printed and returned (those made before a timeout)."""
        seen: list[Event] = []

        async def drive() -> None:
            events: AsyncIterator[Event] = self.runner.run_async(
                user_id=self.session.user_id, session_id=self.session.id, new_message=message)
            async for event in events:
                seen.append(event)
                self.printer.event(event)

        try:
            await asyncio.wait_for(drive(), timeout=self.seconds)
        except TimeoutError:
            self.printer.failed = True
            print(f"error: the turn timed out after {self.seconds:g} s", file=sys.stderr, flush=True)
        except Exception as exc:  # the agent's code, a model's failure: told, and the REPL goes on
            told = any(event.error_code for event in seen)  # its error event said it already
            self.printer.failed = True
            if not told:
                print(f"error: the turn failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return seen

    async def repl(self, read: Callable[[str], str | None] = _read) -> None:
        """Turns typed on standard input until ``exit`` or its end; a turn that paused
        asks for the answer of each call it paused on, and sends them as its next message."""
        message: Content | None = None
        while True:
            if message is None:
                query = read("[user]: ")
                if query is None or query == EXIT:
                    return
                if not query.strip():
                    continue
                message = Content(role="user", parts=(Part(text=query),))
            events = await self.turn(message)
            message = None
            answers = []
            for call_id, name, args in _pending_calls(events):
                _tell_pending(name, args)
                typed = read("[user]: ")
                if typed is None:
                    return
                answers.append(Part(function_response=FunctionResponse(id=call_id, name=name, response=_answer(typed))))
            if answers:
                message = Content(role="user", parts=tuple(answers))


async def _run(options: FolderRun) -> int:
    app, app_name, folder = load_agent_folder(options.agent_dir)
    if options.replay and options.resume:
        raise ConfigError("--replay and --resume cannot be set together")
    if options.query is not None and options.replay:
        raise ConfigError("a QUERY and --replay cannot be given together")
    state = _initial_state(options)
    replay = _replay_file(options.replay) if options.replay else None
    saved = _saved_session(options.resume) if options.resume else None
    _timeout(options.timeout)
    artifacts, memory = open_run_services(options, folder)
    service = open_session_service(options, folder)
    store = _Sessions(service)
    runner = _TerminalRunner(app=app, app_name=app_name, session_service=service, artifact_service=artifacts,
                             memory_service=memory)
    runner.approvals = _TerminalApprovals(_read)
    try:
        if options.query is not None:
            return await _once(runner, store, app_name, options, state)
        if replay is not None:
            replay_state, queries = replay
            session = await store.create(app_name, options.user_id, options.session_id or str(uuid.uuid4()),
                                         {**replay_state, "_time": datetime.now().isoformat()})
            run = _Session(runner, session, options)
            await replay_queries(run, queries)
        elif saved is not None:
            saved_state, events = saved
            session = await store.create(app_name, options.user_id, str(uuid.uuid4()), saved_state)
            run = _Session(runner, session, options)
            for event in events:
                await store.append(session, event)
                run.printer.event(event)
            run.printer.failed = False  # a failure of the saved conversation is not this run's
            await run.repl()
        else:
            session = await store.create(app_name, options.user_id, str(uuid.uuid4()), state)
            run = _Session(runner, session, options)
            print(f"Running agent {getattr(app.root_agent, 'name', app_name)}, type exit to exit.", flush=True)
            await run.repl()
        if options.save_session:
            await _save(store, app_name, options, session.id, folder)
        return 1 if run.printer.failed else 0
    finally:
        await runner.close()


async def replay_queries(run: _Session, queries: list[str]) -> None:
    """``--replay``'s turns: each query printed as ``[user]: QUERY``, then run as one
    turn of ``run`` (its events printed; a failed turn noted and the next one run)."""
    for query in queries:
        print(f"[user]: {query}", flush=True)
        await run.turn(Content(role="user", parts=(Part(text=query),)))


async def _once(runner: Runner, store: _Sessions, app_name: str, options: FolderRun,
                state: dict[str, Any] | None) -> int:
    """google-adk's single-step mode: one turn of QUERY, its session named on standard
    error; exit 2 when it paused for input, 1 when it failed. When the session waits
    on a long-running call, QUERY is that call's answer (JSON, else ``{"result": QUERY}``)."""
    session_id = options.session_id or str(uuid.uuid4())
    found = await store.find(app_name, options.user_id, session_id)
    session = found if found is not None else await store.create(app_name, options.user_id, session_id, state)
    if not options.jsonl:
        print(f"Session ID: {session.id}", file=sys.stderr, flush=True)
    run = _Session(runner, session, options)
    query = options.query or ""
    waiting = _pending_calls(session.events)
    if waiting:  # the session paused on a call: the query is its answer (google-adk's auto-resume)
        call_id, name, _args = waiting[0]
        if not options.jsonl:
            print(f"Auto-resuming interrupt {call_id} with input: {query}", file=sys.stderr, flush=True)
        message = Content(role="user", parts=(Part(function_response=FunctionResponse(
            id=call_id, name=name, response=_answer(query))),))
    else:
        message = Content(role="user", parts=(Part(text=query),))
    events = await run.turn(message)
    if _pending_calls(events):
        if not options.jsonl:
            for _call_id, name, args in _pending_calls(events):
                if name == "adk_request_input":
                    _tell_pending(name, args)
            print(f"paused: the run waits for input; to answer, run again with --session_id {session.id}",
                  file=sys.stderr, flush=True)
        return 2
    return 1 if run.printer.failed else 0


async def _save(store: _Sessions, app_name: str, options: FolderRun, session_id: str, folder: Path) -> None:
    """Write the session to ``AGENT_DIR/ID.session.json`` (ID asked for unless given)."""
    name = options.session_id or _read("Session ID to save: ")
    if not name or not name.strip() or "/" in name or name.startswith("."):
        raise ConfigError("--save_session needs a session id to name the file (letters, digits, '-', '_')")
    path = folder / f"{name.strip()}.session.json"
    session = await store.find(app_name, options.user_id, session_id)
    if session is None:
        raise ConfigError(f"--save_session: session {session_id} is no longer in the session service")
    path.write_text(session_file_json(session), encoding="utf-8")
    print("Session saved to", path, flush=True)


def run_agent_folder(options: FolderRun) -> int:
    """Run ``options.agent_dir`` as the module says; the exit code: 0 when every turn
    ended well, 1 when one failed, 2 when a single turn paused for input. ConfigError
    for bad input (nothing run); the agent's own load error as AgentDefinitionError."""
    return asyncio.run(_run(options))
