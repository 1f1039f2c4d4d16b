"""``adk-actors``: serve a host, talk to it, look inside it, break it on purpose.

Commands (each talks to a running host on ``--port``, default from the config):

* ``serve [--config FILE]``: start the host and run until SIGTERM / SIGINT; stop
  gracefully (runs in flight are told they were interrupted, the tree stops in
  reverse order, no process is left). A busy port fails at once.
* ``web AGENTS_DIR`` (or ``serve AGENTS_DIR``), ``api_server AGENTS_DIR``: serve every
  agent folder of AGENTS_DIR (google-adk's layout) on embedded defaults (SQLite and the
  log in ``AGENTS_DIR/.adk-actors/``; the HTTP API on ``--host``/``--port``, default
  127.0.0.1:8000); an edited agent reloads, and one that does not import is reported
  here and over HTTP while its last good version serves.
* ``run APP MESSAGE [--user U] [--session S]``: one turn, streamed; a tool call that
  waits for a human's approval is announced with its approval id and the commands
  that approve or deny it, a workflow node's question (``RequestInput``) with its
  message, payload, schema and the ``inputs answer`` command that answers it; exit 1
  when the run ends with an error event. The default
  user (``run``, ``chat``, ``sessions``, ``resume``, ``jobs enqueue``) is ``user``, as
  in the console and google-adk's ``adk web``.
* ``run AGENT_DIR [QUERY]`` (a folder, and no ``--url`` / ``--port``): google-adk's
  ``adk run``, in this process with no host: a REPL on standard input, or one turn
  of QUERY; ``--replay``, ``--resume``, ``--save_session`` ... (``_repl``).
  ``create NAME``: google-adk's ``adk create``, an agent folder that runs offline
  until its model's key is set (``_create``).
* ``eval APP|AGENT_DIR EVAL_SET[:CASE,...]...``: eval sets run and scored, a line per
  case, a summary per set, exit 1 if a case did not pass; on an app of the host, or
  (an AGENT_DIR) google-adk's ``adk eval`` in this process (``evals._folder``), each
  set's results saved as google-adk saves them, in ``AGENT_DIR/.adk/eval_history/``
  (listed by ``web DIR`` on ``/dev/apps/APP/eval_results``, and by google-adk's ``adk web``).
* ``chat APP``: turns from standard input until EOF.
  Both talk to the host's actor system on ``--port``, or to its HTTP API with
  ``--url URL [--token T]`` (a host elsewhere, or behind bearer tokens).
* ``status``: the live supervision tree (id, type, state, pid, restarts).
* ``chaos soak``: sessions talk while random actors are killed; prints LOST, HUNG,
  restarts, restored, next turns valid, orphans (exit 1 unless all is well); its
  progress goes to standard error every few seconds.
* ``chaos kill TARGET | --random``: kill -9 an actor (``registry``,
  ``sessions/sessions-0``, ``sessions/sessions-0/worker-PID`` ...) and watch it come
  back (a run worker: replaced by its partition); a session
  (``sessions/sessions-0/APP/USER/SESSION``) is crashed, a run (its path, or its id)
  killed alone.
* ``sessions list|show|delete|reset APP [SESSION]``: ``reset`` lets a failed session
  (crashed beyond its restart intensity) serve again.
* ``approvals list|approve|deny APP [ID]``: the human side of tool approvals.
* ``inputs list|answer APP [ID ANSWER] [--session S]``: the human side of workflow
  nodes' questions (``RequestInput``): ``run`` announces one with the command that
  answers it; ``answer`` sends the answer and prints the graph's next events.
* ``resume APP SESSION RUN_ID [--rerun CALL] [--result CALL=JSON] [--end CALL]``:
  continue a run that a crash (or a failure) ended from its last committed step; a
  run that stops before calls that may have run lists them and exits 3: decide on
  each and resume the run it names.
* ``mcp [--user U]``: the host's apps as MCP tools on stdin/stdout, for an MCP
  client that starts it (Claude Desktop, an IDE, google-adk's McpToolset); the
  sessions are user U's (default ``mcp``). Needs the ``mcp`` extra.

``--json`` prints JSON lines for scripts; colours only on a terminal. Exit codes:
0 success, 1 failure, 2 bad usage or configuration, 3 a resumed run needs decisions.
"""

from __future__ import annotations

import argparse
import gc
import ipaddress
import json
import logging
import os
import random
import shlex
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

from ._create import add_create_flags, run_create
from ._decisions import CallDecision
from ._exceptions import (
    AdkError,
    ConfigError,
    InvalidRequestError,
    RunFailedError,
    SessionNotFoundError,
)

if TYPE_CHECKING:
    from ._types import Content
    from .config import Settings

__all__ = ["main"]

DEFAULT_CONFIG = "config/host.toml"
#: The user of ``run``, ``chat``, ``sessions``, ``resume`` and ``jobs enqueue`` when
#: ``--user`` is not given: google-adk's ``adk web`` user, and the console's, so a
#: session (or an approval) made in one is seen in the others.
DEFAULT_USER = "user"
#: How often a waiting ``run`` looks for approvals its run waits for, and how often
#: ``chaos soak`` says how far it is (seconds).
APPROVAL_POLL = 0.5
SOAK_TICK = 3.0
#: How long ``serve`` waits for a host that may hold a busy port to answer (seconds).
BUSY_PROBE = 5.0


def _color(code: str, text: str) -> str:
    return f"\033[{code}m{text}\033[0m" if sys.stdout.isatty() else text


def _settings(args: argparse.Namespace) -> Settings:
    # Imported here: a command that reads no config (`run --url`) does not pay for
    # pydantic-settings (bench/startup.py).
    from .config import load_settings

    path = args.config if args.config else (DEFAULT_CONFIG if Path(DEFAULT_CONFIG).exists() else None)
    return load_settings(path)


def _port(args: argparse.Namespace) -> int:
    if getattr(args, "port", None):
        return int(args.port)
    return _settings(args).host.port


def _connect(args: argparse.Namespace) -> Any:
    """The host of the config (its ``[host] address`` and port; ``--port`` overrides the port)."""
    from .runtime import Host

    return Host.connect(_port(args), _settings(args).host.address)


# -- serve ---------------------------------------------------------------------------------


#: google-adk's ``adk web`` / ``api_server`` port, ours with an agents folder
AGENTS_DIR_HTTP_PORT = 8000


def _serve_settings(args: argparse.Namespace) -> Settings:
    """The settings ``serve`` runs on. With an AGENTS_DIR: the config only if ``--config``
    names one (else the embedded defaults and the environment), that folder as the
    agents folder, the data in ``AGENTS_DIR/.adk-actors`` (unless the config or
    ``ADK_ACTORS_HOST__DATA_DIR`` says where), the HTTP API on port 8000. Then
    ``--host``, ``--port`` (the HTTP API's) and ``--admin_port`` (the actor system's)
    override. ConfigError for an AGENTS_DIR that is no folder."""
    from pydantic import ValidationError

    from .config import load_settings

    agents_dir = getattr(args, "agents_dir", None)
    settings = load_settings(args.config or None) if agents_dir else _settings(args)
    host, http = settings.host, settings.http
    if agents_dir:
        folder = Path(agents_dir).resolve()
        if not folder.is_dir():
            raise ConfigError(f"{agents_dir}: no such folder (the agents folder holds <name>/agent.py or "
                              "<name>/root_agent.yaml)")
        explicit_data = args.config or "ADK_ACTORS_HOST__DATA_DIR" in os.environ
        host = host.model_copy(update={"agents_dir": str(folder),
                                       "data_dir": host.data_dir if explicit_data else str(folder / ".adk-actors")})
        if not args.config and "ADK_ACTORS_HTTP__PORT" not in os.environ:
            http = http.model_copy(update={"port": AGENTS_DIR_HTTP_PORT})
    if getattr(args, "admin_port", None):
        host = host.model_copy(update={"port": args.admin_port})
    if getattr(args, "http_port", None) is not None:
        http = http.model_copy(update={"port": args.http_port})
    if args.command == "api_server":
        http = http.model_copy(update={"console": False})
    if getattr(args, "http_host", None):
        try:  # a public address still needs tokens
            http = type(http).model_validate({**http.model_dump(), "address": args.http_host})
        except ValidationError as exc:  # one line, exit 2
            raise ConfigError(f"--host {args.http_host}: " + "; ".join(p["msg"] for p in exc.errors())) from None
    return settings.model_copy(update={"host": host, "http": http})


def _say(line: str, error: bool) -> None:
    print(f"error: {line}" if error else line, file=sys.stderr if error else sys.stdout, flush=True)


def cmd_serve(args: argparse.Namespace) -> int:
    """``serve``, ``web``, ``api_server``: the cyclic garbage collector is off while the
    kit is imported (:func:`_serve`), and back on, with what was imported frozen
    (:func:`_freeze_imported`), before each process is forked (the HTTP server's, then
    the actor system's), or on any way out."""
    gc.disable()
    try:
        return _serve(args)
    finally:
        gc.enable()


def _freeze_imported() -> None:
    """Keep what ``serve`` has imported out of every later collection, here and in every
    process forked from here, then turn the collector on again.

    Why: importing the kit makes some 150,000 objects that live as long as the process
    (classes, pydantic schemas, module dicts). With the collector on, it walks them
    again and again while they are made: 70-90 ms of the 0.7-0.8 s of CPU ``serve``
    spent before its actor system started, all of it on the way to the first turn
    (bench/first_hour.py). Once frozen, no collection here or in a forked actor (whose
    first full collection would touch, and so copy, every page of them) walks them
    again. The few cycles made and dropped while importing stay allocated (about 1 MB,
    shared by the forks)."""
    gc.freeze()
    gc.enable()


def _serve(args: argparse.Namespace) -> int:
    from supervision import HealthCheck
    from supervision.lowlevel import PortInUse, check_port_free

    from .engine import AppCatalog, remember_explicit_env
    from .http import fork_standby, http_args, http_child, open_front_door
    from .messages import Limits
    from .models import BreakerConfig, RetryPolicy
    from .otel import quiet_unused_a2a_spans
    from .runtime import Host, HostConfig
    from .runtime._agent_folders import AgentFolderWatcher
    from .runtime._credentials import KEY_VARIABLE as CREDENTIAL_KEY_VARIABLE
    from .store import private_dir, private_file

    settings = _serve_settings(args)
    host_cfg = settings.host
    agents_dir = getattr(args, "agents_dir", None)
    if agents_dir:
        # Before any .env is read or any process forked: the variables a .env never
        # overrides (google-adk's rule), and no bytecode cached for an agent file that
        # may be edited again within the same second (its cache would look current).
        remember_explicit_env()
        sys.dont_write_bytecode = True
    catalog = AppCatalog(settings.apps, host_cfg.agents_folder)
    if not catalog.names():
        print("error: the config names no apps ([apps] name = \"package.module:root_agent\") and "
              f"{host_cfg.agents_folder} holds none (<name>/agent.py defining root_agent, or <name>/root_agent.yaml)", file=sys.stderr)
        return 2
    try:
        check_port_free(host_cfg.port, host_cfg.address)
        if settings.http.enabled and settings.http.port:
            check_port_free(settings.http.port, settings.http.address)
    except PortInUse as exc:
        print(f"error: {_busy_port(exc, settings)}", file=sys.stderr)
        return 1
    private_dir(host_cfg.data_dir)
    private_file(settings.log_file)
    sys.path.insert(0, os.getcwd())
    settings.check_jobs(catalog.names())  # a cron job that could never run: ConfigError (exit 2), nothing started
    quiet_unused_a2a_spans()  # before any process of the host imports a2a-sdk
    # The HTTP server's first process is forked now, while this process has imported
    # the kit and runs no thread yet: it imports the web stack while the tree starts
    # (bench/startup.py), instead of starting from nothing once the tree is up.
    join = getattr(args, "join", None) or settings.cluster.join
    http = http_args(settings.http, admin_port=host_cfg.port, admin_address=host_cfg.address, apps=dict(settings.apps),
                     data_dir=host_cfg.data_dir, agents_dir=host_cfg.agents_folder,
                     max_json_depth=settings.limits.max_json_depth,
                     http_functions=tuple(settings.jobs.http_functions),
                     cluster_join=join) if settings.http.enabled else None
    # The front door: this process binds the HTTP port and holds it until it exits. The
    # processes forked from here inherit it, and each HTTP server serves on it, so a
    # restart of any part of the tree (the HTTP server's included) leaves connections
    # waiting in its backlog, never refused (docs/design.md).
    door = None
    if http is not None:
        try:
            door = open_front_door(settings.http.address, settings.http.port)
        except OSError as exc:
            print(f"error: the HTTP API cannot listen on {settings.http.address}:{settings.http.port}: {exc}",
                  file=sys.stderr)
            return 1
        http = replace(http, listen_fd=door.fileno())
    _freeze_imported()  # before the first fork
    standby = fork_standby(http.launch(), http.log_file) if http is not None else None
    # The handler only sets a flag: a signal handler runs in the main thread between two
    # bytecodes, and one that called threading.Event.set() while that thread was inside
    # Event.wait (holding the event's lock) waited for itself for ever: a serve hung on
    # SIGTERM, found in a benchmark run.
    stop_requested: list[int] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda number, _frame: stop_requested.append(number))
    from .log import configure_logging

    configure_logging(json=True, level=settings.logging.level)
    # The code of every actor of the tree (Host.start imports it too), while the HTTP
    # server's process imports the web stack on the other core; frozen before the
    # actor system is forked.
    gc.disable()
    Host.load_tree_code()
    _freeze_imported()
    host = Host(HostConfig(apps=dict(settings.apps), data_dir=host_cfg.data_dir, agents_dir=host_cfg.agents_folder,
                           store_url=settings.store.url, lease_seconds=settings.store.lease_seconds,
                           cluster_join=join,
                           cluster_checkin=settings.cluster.checkin_seconds,
                           cluster_refresh=settings.cluster.refresh_seconds,
                           cluster_allow_public=settings.cluster.allow_public,
                           port=host_cfg.port, address=host_cfg.address, log_file=settings.log_file,
                           log_level=getattr(logging, settings.logging.level),
                           conformance_dir=host_cfg.conformance_dir or None, partitions=host_cfg.partitions,
                           idle_timeout=host_cfg.idle_timeout, run_timeout=host_cfg.run_timeout or None,
                           run_stop_grace=host_cfg.run_stop_grace,
                           max_queued_runs=host_cfg.max_queued_runs,
                           run_workers=host_cfg.run_workers, runs_per_worker=host_cfg.runs_per_worker,
                           max_run_workers=host_cfg.max_run_workers, trace_turns=host_cfg.trace_turns,
                           models=dict(settings.models), root_intensity=host_cfg.restart_intensity,
                           breaker=BreakerConfig(**settings.breaker.model_dump()),
                           max_artifact_bytes=settings.artifacts.max_bytes, artifacts_dir=settings.artifacts.dir,
                           limits=Limits(**settings.limits.model_dump()),
                           model_options={"retry": RetryPolicy(max_attempts=settings.retry.max_attempts,
                                                               base_delay=settings.retry.base_delay,
                                                               max_delay=settings.retry.max_delay),
                                          "timeout": settings.retry.timeout},
                           root_period=host_cfg.restart_period, extra={"global_root": True},
                           health=HealthCheck(host_cfg.health_interval, host_cfg.health_timeout)
                           if host_cfg.health_interval else None,
                           session_intensity=host_cfg.session_intensity, session_period=host_cfg.session_period,
                           worker_intensity=host_cfg.worker_intensity, worker_period=host_cfg.worker_period,
                           jobs=settings.jobs.jobs_config(),
                           clients=(http_child(replace(http, standby=standby)),) if http is not None else ()))
    try:
        host.start()  # its actor system too: stopped by host.stop(), or here if the start fails
    except Exception as exc:
        if standby is not None:
            standby.discard()
        print(f"error: {_start_error(exc)}", file=sys.stderr)
        return 1
    if settings.http.enabled:
        print(f"HTTP API and console: {host.http_url()}", flush=True)
    print(f"adk-actors host listening on {host_cfg.address}:{host_cfg.port} "
          f"(apps: {', '.join(catalog.names())}; data: {host_cfg.data_dir}; log: {settings.log_file})",
          flush=True)
    if not os.environ.get(CREDENTIAL_KEY_VARIABLE):
        print(f"warning: stored credentials (tokens, API keys saved by tools) are NOT encrypted at rest; "
              f"set {CREDENTIAL_KEY_VARIABLE} to a Fernet key (pip install 'adk-actors[crypto]') to encrypt them.",
              file=sys.stderr, flush=True)
    if host.config.cluster_join:
        role = "the leader" if host.holder_name == host.config.cluster_join else "a member"
        print(f"cluster: {host.holder_name} is {role} of the convention led by {host.config.cluster_join}; "
              f"its actor system's sockets (on {host_cfg.address}) speak unauthenticated pickle: keep them "
              "on a private network, and the HTTP API the only public interface", flush=True)
    if not ipaddress.ip_address(host_cfg.address).is_loopback:
        print(f"warning: the actor system's ports listen on {host_cfg.address} and speak unauthenticated "
              "pickle: anyone who reaches that address can run code in this host. Use it only on a "
              "private network between your own hosts.", file=sys.stderr, flush=True)
    watcher = None
    if agents_dir and args.reload_agents:
        watcher = AgentFolderWatcher(catalog, _say)
        watcher.start()
        print(f"watching {host_cfg.agents_folder}: an edited agent reloads", flush=True)
    checked = time.monotonic()
    while not stop_requested:
        time.sleep(0.1)  # a signal interrupts it (its handler runs, then the flag is seen)
        if watcher is not None:
            watcher.poll()
        if standby is not None and standby.reap():  # this process is its parent: no zombie left
            standby = None
        if time.monotonic() - checked < 1.0:
            continue
        checked = time.monotonic()
        if not host.alive():  # the root spent its restart budget (or was killed): never half-alive
            print("error: the supervision tree gave up (its restart budget was spent; see the log): "
                  "the host stops", file=sys.stderr, flush=True)
            host.stop(timeout=host_cfg.shutdown_timeout)
            if standby is not None:
                standby.discard()
            return 1
    if watcher is not None:
        watcher.stop()
    print("stopping: finishing the supervision tree ...", flush=True)
    began = time.monotonic()
    try:
        host.stop(timeout=host_cfg.shutdown_timeout)
    finally:
        if standby is not None:
            standby.discard()
    print(f"stopped in {time.monotonic() - began:.1f} s", flush=True)
    return 0


def _busy_port(error: BaseException, settings: Settings) -> str:
    """What ``serve`` says when a port it needs is taken. When a live adk-actors host
    holds it (its actor system's root answers on the host port, or ``/health`` answers
    on the HTTP port, each asked within ``BUSY_PROBE`` seconds): ``another adk-actors
    host is serving on port N``, and never the advice to stop a stale system (that
    would stop a live host); otherwise the port check's own words."""
    from supervision.lowlevel import PortInUse, check_port_free

    address, port = settings.host.address, settings.host.port
    try:
        check_port_free(port, address)
    except PortInUse:
        if _host_answers(port, address):
            return (f"port {port} is already in use: another adk-actors host is serving on port {port} "
                    "(its actor system answers there); "
                    "use that host, stop it (Ctrl-C or SIGTERM to its `adk-actors serve`), or pick another "
                    "port ([host] port, ADK_ACTORS_HOST__PORT)")
        return str(error)
    http = settings.http
    if http.enabled and http.port and _http_answers(http.address, http.port):
        return (f"port {http.port} is already in use: another adk-actors host is serving its HTTP API on "
                f"port {http.port} (its /health answers); "
                "use that host, stop it (Ctrl-C or SIGTERM to its `adk-actors serve`), or pick another port "
                "([http] port, ADK_ACTORS_HTTP__PORT)")
    return str(error)


def _host_answers(port: int, address: str) -> bool:
    """Does a live adk-actors host answer on ``port`` within ``BUSY_PROBE`` seconds?
    Asked on a daemon thread: a program that is no actor system may never answer."""
    answer: list[bool] = []

    def probe() -> None:
        try:
            from .runtime import Host

            host = Host.connect(port, address)
            try:
                answer.append(host.alive())
            finally:
                host.disconnect()
        except Exception:
            answer.append(False)

    thread = threading.Thread(target=probe, name="busy-port-probe", daemon=True)
    thread.start()
    thread.join(BUSY_PROBE)
    return bool(answer and answer[0])


def _http_answers(address: str, port: int) -> bool:
    """Does ``GET /health`` on ``address:port`` answer ``{"status": "ok"}`` within ``BUSY_PROBE`` seconds?"""
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://{address}:{port}/health", timeout=BUSY_PROBE) as answer:
            return bool(json.loads(answer.read()).get("status") == "ok")
    except (OSError, ValueError, AttributeError):  # nothing, not HTTP, or not our JSON
        return False


def _start_error(error: BaseException) -> str:
    """What a host that did not start says: an app that needs a missing extra in one
    line (``app 'X' cannot load its agent ...: the a2a extra (a2a-sdk) is not
    installed: pip install 'adk-actors[a2a]'``), not the chain of supervisors it
    failed under; anything else as ``the host did not start: ...``."""
    text = str(error)
    app_at = text.rfind("app '")
    if "pip install 'adk-actors[" in text and app_at >= 0:
        return text[app_at:]
    return f"the host did not start: {text}"


# -- run / chat ------------------------------------------------------------------------------


def _print_event(event: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(event.to_dict()), flush=True)
        return
    if event.author == "user":
        return
    if event.error_code:
        print(_color("31", f"[{event.author}] error {event.error_code}: {event.error_message}"), flush=True)
        return
    if event.content is None:
        if event.output is not None and event.node_info is not None:  # a workflow node's output
            print(_color("36", f"  => {event.node_info.path}: {json.dumps(event.output, default=str)}"), flush=True)
        return
    for part in event.content.parts:
        if part.text and not part.thought:
            if event.partial:
                print(part.text, end="", flush=True)
            else:
                print(f"{_color('1', event.author)}: {part.text}", flush=True)
        elif part.function_call is not None and not (part.function_call.name == "adk_request_input"
                                                     and part.function_call.id in (event.long_running_tool_ids or ())):
            call = part.function_call  # (a question is told by _announce_inputs)
            print(_color("36", f"  -> {call.name}({json.dumps(call.args)})"), flush=True)
        elif part.function_response is not None:
            result = part.function_response
            print(_color("36", f"  <- {result.name}: {json.dumps(result.response, default=str)}"), flush=True)
    if event.actions.transfer_to_agent:
        print(_color("33", f"  => transferred to {event.actions.transfer_to_agent}"), flush=True)


def _turn(runner: Any, user: str, session: str, message: str | Content, as_json: bool, app: str = "",
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
    The commands printed carry ``host_flags`` (:func:`_host_flags`: the ``--port`` and
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
            _print_event(event, as_json)
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


def _host_flags(args: argparse.Namespace) -> str:
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
    from .workflow import waiting_inputs

    for ask in waiting_inputs([event]):
        command = _answer_command(app, ask.interrupt_id, session, user, url, _answer_example(ask.response_schema),
                                  host_flags)
        if as_json:
            print(json.dumps({"input": ask.to_dict(), "answer": command}, default=str), file=sys.stderr, flush=True)
            continue
        print(_color("33", f"  waiting for input {ask.interrupt_id} ({ask.path or ask.author}): "
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
        print(_color("33", f"  waiting for approval {approval['id']}: {approval['tool']}"
                           f"({json.dumps(approval['args'], default=str)}){hint}"), flush=True)
        print(f"    approve: {approve}\n    deny:    {deny}", flush=True)


def _token(args: argparse.Namespace) -> str | None:
    """``--token``, else ``$ADK_ACTORS_TOKEN``, else None."""
    return getattr(args, "token", None) or os.environ.get("ADK_ACTORS_TOKEN")


def _runner_for(args: argparse.Namespace) -> tuple[Any, Callable[[], None]]:
    """The Runner for ``args.app`` and how to let it go: over the host's HTTP API with
    ``--url`` (its bearer token from ``--token`` or ``ADK_ACTORS_TOKEN``), else through
    the actor system on ``--port``."""
    if args.url:
        from .remote import HttpRunner

        remote = HttpRunner(args.url, args.app, token=_token(args))
        return remote, remote.close
    host = _connect(args)
    return host.runner(args.app), host.disconnect


def cmd_run(args: argparse.Namespace) -> int:
    """An AGENT_DIR (a folder, and no ``--url`` or ``--port``): run in this process
    (``_repl``); else one turn of APP on a host, which needs a MESSAGE."""
    if Path(args.app).is_dir() and not args.url and not args.port:
        from ._repl import FolderRun, run_agent_folder

        return run_agent_folder(FolderRun(
            agent_dir=args.app, query=args.message, user_id=args.user, replay=args.replay, resume=args.resume,
            save_session=args.save_session, session_id=args.session_id or args.session, state=args.state,
            state_file=args.state_file, timeout=args.timeout, in_memory=args.in_memory, jsonl=args.jsonl or args.json,
            session_service_uri=args.session_service_uri))
    if args.message is None:
        raise ConfigError(f"run {args.app}: give a MESSAGE for an app of a host, or an agent folder (run AGENT_DIR)")
    folder_only = [flag for flag in ("replay", "resume", "save_session", "session_id", "state", "state_file", "timeout",
                                     "in_memory", "jsonl", "session_service_uri") if getattr(args, flag)]
    if folder_only:
        raise ConfigError(f"run {args.app}: --{folder_only[0]} goes with an AGENT_DIR run in this process, not with "
                          "an app of a host")
    runner, close = _runner_for(args)
    try:
        ended_well = _turn(runner, args.user, args.session or f"cli-{uuid.uuid4().hex[:8]}", args.message, args.json,
                           args.app, args.url, _token(args), _host_flags(args))
    finally:
        close()
    return 0 if ended_well else 1


def cmd_chat(args: argparse.Namespace) -> int:
    runner, close = _runner_for(args)
    session = args.session or f"chat-{uuid.uuid4().hex[:8]}"
    ended_well = True
    try:
        if sys.stdin.isatty():
            print(f"chatting with {args.app} (session {session}); end with Ctrl-D")
        for line in sys.stdin:
            if line.strip():
                ended_well = _turn(runner, args.user, session, line.strip(), args.json, args.app, args.url,
                                   _token(args), _host_flags(args)) and ended_well
    finally:
        close()
    return 0 if ended_well else 1


# -- eval ----------------------------------------------------------------------------------------


def _metrics(specs: list[str]) -> list[Any]:
    """``name[=threshold]`` options as EvalMetrics; none given: google-adk's defaults."""
    from .evals import DEFAULT_THRESHOLDS, EvalMetric

    if not specs:
        return [EvalMetric(metric_name=name, threshold=threshold) for name, threshold in DEFAULT_THRESHOLDS.items()]
    metrics = []
    for spec in specs:
        name, _, threshold = spec.partition("=")
        try:
            metrics.append(EvalMetric(metric_name=name, threshold=float(threshold) if threshold else None))
        except ValueError:
            raise ConfigError(f"--metric {spec!r}: the threshold must be a number") from None
    return metrics


def _config_metrics(path: str) -> list[Any]:
    """The metrics of a google-adk eval config file; a missing or invalid one is a ConfigError."""
    from .evals import EvalError, get_eval_metrics_from_config, get_evaluation_criteria_or_default

    if not Path(path).is_file():
        raise ConfigError(f"--config_file_path {path}: no such file")
    try:
        return get_eval_metrics_from_config(get_evaluation_criteria_or_default(path))
    except EvalError as exc:
        raise ConfigError(str(exc)) from None


def cmd_eval(args: argparse.Namespace) -> int:
    """Run eval sets (google-adk's ``*.evalset.json``; ``FILE:CASE,CASE`` picks cases)
    and print one line per case (its status and each scored metric), what a failed
    case got wrong, a summary per set; exit 1 if a case did not pass. An AGENT_DIR
    (a folder, and no ``--url`` or ``--port``) is evaluated in this process
    (:func:`_eval_folder`); an APP on the host. Before anything runs, a bad option, a
    file that is no eval set or a case it lacks is a ConfigError (exit 2)."""
    if args.config_file_path and args.metric:
        raise ConfigError("give --metric or --config_file_path, not both")
    if Path(args.app).is_dir() and not args.url and not args.port:
        return _eval_folder(args)
    from .evals import EvalError, check_cases, parse_eval_targets, read_eval_set_file, run_eval_set

    metrics = _config_metrics(args.config_file_path) if args.config_file_path else _metrics(args.metric)
    picked = []
    try:
        for target, case_ids in parse_eval_targets(args.files).items():
            eval_set = read_eval_set_file(target)
            check_cases(eval_set, case_ids, target)
            picked.append((eval_set, case_ids))
    except EvalError as exc:
        raise ConfigError(str(exc)) from None
    runner, close = _runner_for(args)
    results = []
    try:
        for eval_set, case_ids in picked:
            result = run_eval_set(runner, args.app, eval_set, metrics, case_ids)
            results.append(result)
            _print_eval_set(result, {}, args.json, args.print_detailed_results)
    finally:
        close()
    return _eval_summary(results, args.json)


def _eval_folder(args: argparse.Namespace) -> int:
    """``eval AGENT_DIR EVAL_SET[:CASE,...]...``, google-adk's ``adk eval``, in this
    process (``evals._folder``), in order: the folder loaded as ``run AGENT_DIR`` loads
    it (its ``.env`` first); every eval set read (a file, or the id of a set in
    AGENT_DIR) and its picked cases checked; the metrics (``--metric``, else the eval
    config: ``--config_file_path``, else ``test_config.json`` beside the one file
    named, else the defaults) checked; then each set's cases run once and scored, and
    printed as they are done; each set's result is saved where google-adk's ``adk eval``
    saves it, ``AGENT_DIR/.adk/eval_history/<app>_<set>_<time>.evalset_result.json``
    (its path said on standard error). Any failure before the run is a ConfigError
    (exit 2); a result that cannot be saved is an error line, and the exit code is 1."""
    import asyncio

    from ._repl import load_agent_folder
    from .evals import (
        EvalError,
        check_cases,
        check_metrics,
        check_simulator,
        eval_config_for,
        eval_set_for,
        evaluate_app,
        get_eval_metrics_from_config,
        parse_eval_targets,
    )
    from .evals._files import HISTORY_DIR, save_result_file

    app, _app_name, folder = load_agent_folder(args.app)
    targets = parse_eval_targets(args.files)
    try:
        picked = []
        for target, case_ids in targets.items():
            eval_set = eval_set_for(target, folder)
            check_cases(eval_set, case_ids, target)
            picked.append((eval_set, case_ids))
        simulated: dict[str, Any] | None = None
        if args.metric:
            metrics = _metrics(args.metric)
        else:
            config = eval_config_for(args.config_file_path, list(targets))
            metrics, simulated = get_eval_metrics_from_config(config), config.user_simulator_config
        check_metrics(metrics)
        check_simulator([eval_set for eval_set, _ in picked], simulated)
    except EvalError as exc:
        raise ConfigError(str(exc)) from None

    unsaved: list[str] = []

    async def evaluate_all() -> list[Any]:
        done = []
        for eval_set, case_ids in picked:
            ran = await evaluate_app(app, eval_set, metrics, case_ids, simulated, result_prefix=folder.name)
            _print_eval_set(ran.result, ran.errors, args.json, args.print_detailed_results)
            try:
                saved = save_result_file(folder, ran.result, ran.sessions)
                print(f"eval results saved: {saved}", file=sys.stderr, flush=True)
            except (OSError, EvalError) as exc:
                unsaved.append(eval_set.eval_set_id)
                _say(f"the results of eval set {eval_set.eval_set_id} were not saved in "
                     f"{folder / HISTORY_DIR}: {exc}", True)
            done.append(ran.result)
        return done

    verdict = _eval_summary(asyncio.run(evaluate_all()), args.json)
    return 1 if unsaved else verdict


def _print_eval_set(result: Any, errors: dict[str, str], as_json: bool, detailed: bool) -> None:
    """One set's results: ``--json``, the result as google-adk serves it; else a line per
    case (``PASS``, or its status in red, then each metric's score but the
    informational ones), the error that stopped its turns, and what it got wrong (with
    ``detailed``, every invocation and metric, passed ones too)."""
    from .evals import EvalStatus

    if as_json:
        print(json.dumps(result.wire()), flush=True)
        return
    for case in result.eval_case_results:
        ok = case.final_eval_status == EvalStatus.PASSED
        scores = ", ".join(f"{m.metric_name} {m.score:.2f}" if m.score is not None else f"{m.metric_name} -"
                           for m in case.overall_eval_metric_results if m.eval_status != EvalStatus.INFORMATIONAL)
        status = _color("32", "PASS") if ok else _color("31", case.final_eval_status.name)
        print(f"{status} {result.eval_set_id}/{case.eval_id}: {scores or '(no metric results)'}", flush=True)
        if case.eval_id in errors:
            print(f"  error: {errors[case.eval_id]}", flush=True)
        if detailed:
            for metric in case.overall_eval_metric_results:
                print(f"  metric {metric.metric_name}: {metric.eval_status.name}, score {_number(metric.score)}, "
                      f"threshold {_number(metric.threshold)}", flush=True)
        for line in _eval_differences(case, every=True) if detailed else [] if ok else _eval_differences(case):
            print(line, flush=True)


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _eval_summary(results: list[Any], as_json: bool) -> int:
    """google-adk's ``Eval Run Summary`` (cases passed and failed per set; not with
    ``--json``); 0 when every case passed, else 1."""
    from .evals import EvalStatus

    counts: dict[str, list[int]] = {}
    for result in results:
        for case in result.eval_case_results:
            count = counts.setdefault(result.eval_set_id, [0, 0])
            count[0 if case.final_eval_status == EvalStatus.PASSED else 1] += 1
    if not as_json:
        print("Eval Run Summary", flush=True)
        for eval_set_id, (passed, failed) in counts.items():
            print(f"{eval_set_id}:\n  Tests passed: {passed}\n  Tests failed: {failed}", flush=True)
    return 0 if counts and not any(failed for _, failed in counts.values()) else 1


def _eval_differences(case: Any, *, every: bool = False) -> list[str]:
    """What a case that did not pass got wrong, invocation by invocation: the user's
    message, then each metric that failed there, and the expected against the actual
    tool calls and final response. ``every`` (``--print_detailed_results``): every
    invocation, those that passed too."""
    from .evals import EvalStatus

    lines = []
    for number, row in enumerate(case.eval_metric_result_per_invocation, 1):
        failed = [m for m in row.eval_metric_results if m.eval_status == EvalStatus.FAILED]
        if not failed and row.eval_metric_results and not every:
            continue
        actual, expected = row.actual_invocation, row.expected_invocation
        lines.append(f"  invocation {number}: {_content_text(actual.user_content)!r}"
                     + "".join(f"; {m.metric_name} {m.score:.2f} < {m.threshold}" if m.score is not None
                               and m.threshold is not None else f"; {m.metric_name} failed" for m in failed))
        if expected is not None:
            lines.append(f"    expected tools:    {_calls_text(expected.tool_calls())}")
        lines.append(f"    actual tools:      {_calls_text(actual.tool_calls())}")
        if expected is not None:
            lines.append(f"    expected response: {_content_text(expected.final_response)!r}")
        lines.append(f"    actual response:   {_content_text(actual.final_response)!r}")
        if every:
            lines.append("    metrics:           " + (", ".join(
                f"{m.metric_name} {m.eval_status.name} {_number(m.score)}" for m in row.eval_metric_results)
                or "(none)"))
    return lines


def _content_text(content: Any) -> str:
    return "".join(part.text for part in content.parts if part.text) if content is not None else ""


def _calls_text(calls: list[Any]) -> str:
    return ", ".join(f"{call.name}({json.dumps(call.args, default=str)})" for call in calls) or "(none)"


# -- status / chaos ---------------------------------------------------------------------------


def _tree(host: Any, timeout: float = 1.0) -> list[dict[str, Any]]:
    from .chaos import tree_rows

    return tree_rows(host, timeout)


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve the config's apps as MCP tools over stdio until the client closes stdin.
    Standard output carries the protocol only: logs go to standard error."""
    try:
        from .mcp import apps_server
    except ModuleNotFoundError as missing:
        if (missing.name or "").partition(".")[0] != "mcp":
            raise
        print("error: the mcp extra is not installed: pip install 'adk-actors[mcp]'", file=sys.stderr)
        return 2
    from .engine import BUILDER_ASSISTANT, AppCatalog

    settings = _settings(args)
    sys.path.insert(0, os.getcwd())
    catalog = AppCatalog(settings.apps, settings.host.agents_folder)
    described = {name: _description(catalog, name) for name in catalog.names() if name != BUILDER_ASSISTANT}
    host = _connect(args)
    runners: dict[str, Any] = {}
    try:
        server = apps_server(lambda app: runners.setdefault(app, host.runner(app)), described, lambda _: args.user)
        server.run("stdio")
    finally:
        host.disconnect()
    return 0


def _description(catalog: Any, name: str) -> str:
    """The app's root agent's description ("" when the app cannot be loaded here)."""
    try:
        return str(catalog.load(name).root_agent.description or "")
    except Exception:
        return ""


def cmd_status(args: argparse.Namespace) -> int:
    """The host's supervision tree; in a cluster, every host's (the leader's view), each
    under a line naming it. ``--json``: the rows (outside a cluster), or the hosts. The
    held sessions are paged (``--offset``, ``--limit``) and searched (``--search``:
    those whose app/user/session or a run id contains it); a line under the tree says
    which page is shown of how many."""
    from .chaos import cluster_trees

    if args.offset < 0 or args.limit < 0:
        print("error: --offset and --limit are numbers from 0", file=sys.stderr)
        return 2
    host = _connect(args)
    try:
        hosts = cluster_trees(host, sessions=args.limit, offset=args.offset, search=args.search)
    finally:
        host.disconnect()
    clustered = len(hosts) > 1 or hosts[0]["leader"]
    if args.json:
        print(json.dumps(hosts if clustered else hosts[0]["rows"]))
        return 0
    for entry in hosts:
        if clustered:
            roles = [role for role, on in (("leader", entry["leader"]), ("this host", entry["this"])) if on]
            print(f"\nhost {entry['name']}" + (f" ({', '.join(roles)})" if roles else "")
                  + (f": unreachable ({entry['unreachable']})" if "unreachable" in entry else ""))
        if entry["rows"]:
            _print_tree(entry["rows"])
            held = sum(row.get("sessions", 0) for row in entry["rows"])
            shown = sum(row["type"] == "session" for row in entry["rows"])
            matching = f" matching {args.search!r}" if args.search else ""
            print(f"sessions {args.offset + 1 if shown else 0}-{args.offset + shown} of {held}{matching} "
                  "(--offset, --limit, --search for others)")
    return 0


def _print_tree(rows: list[dict[str, Any]]) -> None:
    print(f"{'child':<48} {'type':<10} {'status':<10} {'pid':>7} {'restarts':>8}  last exit")
    for row in rows:
        name = "  " * row["depth"] + row["id"] + (f" ({row['sessions']} sessions held)" if "sessions" in row else "")
        status = _color("32" if row["status"] == "running" else "33", f"{row['status']:<10}")
        print(f"{name:<48} {row['type']:<10} {status} {row['pid'] or '-':>7} {row['restarts']:>8}  "
              f"{row.get('why') or row.get('last_exit') or ''}".rstrip())


def cmd_chaos(args: argparse.Namespace) -> int:
    """``chaos kill TARGET``: kill -9 a process (by its path or id) and wait for it to
    come back, or crash a session (by its path or ``APP/USER/SESSION``), or kill a run
    (by its path or id): these are asked of the partition that owns them, wherever
    they are in its listing (``chaos.find_rows``). ``--random``: a random process."""
    from .chaos import find_rows, kill_row, killable

    host = _connect(args)
    try:
        rows = [r for r in _tree(host) if killable(r)]
        if args.random:
            target = random.choice([r for r in rows if r["pid"]])
        else:
            if not args.target:
                print("error: chaos kill needs a TARGET (or --random); see `adk-actors status`", file=sys.stderr)
                return 2
            matches = [r for r in find_rows(host, args.target) if killable(r)]
            if not matches:
                print(f"error: no running actor {args.target!r}; see `adk-actors status`", file=sys.stderr)
                return 1
            target = matches[0]
        began = time.monotonic()
        done = kill_row(host, target)
        print(f"killed {done}", flush=True)
        if not target["pid"]:  # a session (read from the store on its next request) or a run: nothing restarts
            return 0
        deadline = began + 10
        while time.monotonic() < deadline:
            try:
                back = [r for r in _tree(host) if r["path"] == target["path"]]
            except Exception:  # a supervisor on the path is itself restarting
                back = []
            if back and back[0]["status"] == "running" and back[0]["pid"] not in (None, target["pid"]):
                print(f"{target['path']} is back as pid {back[0]['pid']} after "
                      f"{1000 * (time.monotonic() - began):.0f} ms (restarts: {back[0]['restarts']})")
                return 0
            if target["id"].startswith("worker-") and _worker_replaced(host, target, rows):
                print(f"{target['path']} was replaced by its pool after "
                      f"{1000 * (time.monotonic() - began):.0f} ms")
                return 0
            time.sleep(0.02)
        print(f"error: {target['path']} did not come back within 10 s", file=sys.stderr)
        return 1
    finally:
        host.disconnect()


def _worker_replaced(host: Any, target: dict[str, Any], before: list[dict[str, Any]]) -> bool:
    """Has the pool of run worker ``target`` as many live workers as before, the killed
    one not among them?"""
    prefix = target["path"].rsplit("/", 1)[0] + "/worker-"
    try:
        now = {r["pid"] for r in _tree(host) if r["path"].startswith(prefix)}
    except Exception:  # the pool is restarting
        return False
    return target["pid"] not in now and len(now) >= sum(r["path"].startswith(prefix) for r in before)


def cmd_soak(args: argparse.Namespace) -> int:
    from .chaos import check_soak_arguments, soak

    try:  # a usage error needs no host
        check_soak_arguments(sessions=args.sessions, duration=args.duration, interval=args.interval / 1000.0,
                             targets=args.targets.split(","), stops=args.stops)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    host = _connect(args)
    ticker = _SoakTicker(args.duration)
    try:
        app = args.app or _default_app(args)
        ticker.start()
        report = soak(host, app, sessions=args.sessions, duration=args.duration, interval=args.interval / 1000.0,
                      targets=args.targets.split(","), turn_timeout=args.turn_timeout, seed=args.seed,
                      stops=args.stops, jobs=args.jobs, resume=args.resume, cluster=args.cluster,
                      all_sessions=args.all, progress=ticker.phase)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        ticker.stop()
        host.disconnect()
    print(json.dumps(report.to_dict()) if args.json else report.render(), flush=True)
    return 0 if report.passed else 1


class _SoakTicker:
    """A soak's progress on standard error (standard output keeps the report, and its
    ``--json``): each phase the soak names as it begins, and every ``SOAK_TICK`` seconds
    how long it has run and what it is doing, until :meth:`stop`; Ctrl-C ends it."""

    def __init__(self, duration: float) -> None:
        self._duration = duration
        self._began = time.monotonic()
        self._doing = f"dealing faults for {duration:g} s"
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="soak-ticker", daemon=True)

    def start(self) -> None:
        self._began = time.monotonic()
        print(f"soak: {self._doing} while sessions talk (Ctrl-C to stop)", file=sys.stderr, flush=True)
        self._thread.start()

    def phase(self, text: str) -> None:
        self._doing = text
        print(f"soak: {text}", file=sys.stderr, flush=True)

    def stop(self) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)

    def _tick(self) -> None:
        while not self._done.wait(SOAK_TICK):
            print(f"soak: {time.monotonic() - self._began:.0f} s: {self._doing}", file=sys.stderr, flush=True)


def _default_app(args: argparse.Namespace) -> str:
    apps = sorted(_settings(args).apps)
    if not apps:
        raise ConfigError("chaos soak needs --app (the config names no apps)")
    return "weather_bot" if "weather_bot" in apps else apps[0]


# -- sessions -----------------------------------------------------------------------------------


def cmd_sessions(args: argparse.Namespace) -> int:
    host = _connect(args)
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
                    _print_event(event, False) if event.author != "user" else print(
                        f"{_color('1', 'user')}: {event.content.text if event.content else ''}")
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
    from .chaos import find_rows
    from .messages import session_key

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
    host = _connect(args)
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
    from ._types import Event

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

    token = _token(args)
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
    from ._types import Content
    from .workflow import request_input_response, waiting_inputs

    runner, close = _runner_for(args)
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
        return 0 if _turn(runner, args.user, args.session, message, args.json, args.app, args.url,
                          _token(args), _host_flags(args)) else 1
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
    runner, close = _runner_for(args)
    try:
        try:
            for event in runner.resume(args.user, args.session, args.run_id, decisions=decisions or None):
                _print_event(event, args.json)
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
    from .jobs import JobSpec

    function_args = _json_object(args.args, "--args") if args.action == "enqueue" else {}
    host = _connect(args)
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


# -- entry point ----------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="adk-actors", description="Agents on supervised actors.")
    parser.add_argument("--config", help=f"TOML config (default: {DEFAULT_CONFIG} if present)")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--port", type=int, help="the host's port (default: from the config)")
        p.add_argument("--json", action="store_true", help="JSON output for scripts")
        p.add_argument("--config", help=argparse.SUPPRESS, default=argparse.SUPPRESS)
        return p

    for name, what in (("serve", "run the host (and its HTTP API and console) until SIGTERM / SIGINT"),
                       ("web", "serve an agents folder: the HTTP API and the console (serve AGENTS_DIR)"),
                       ("api_server", "serve an agents folder: the HTTP API")):
        serve = sub.add_parser(name, help=what)
        serve.add_argument("agents_dir", nargs="?", metavar="AGENTS_DIR",
                           help="a folder of agents, <name>/agent.py defining root_agent or <name>/root_agent.yaml "
                                "(google-adk's layout), served on embedded defaults (data in AGENTS_DIR/.adk-actors)")
        serve.add_argument("--config", help=argparse.SUPPRESS, default=argparse.SUPPRESS)
        serve.add_argument("--join", metavar="LEADER",
                           help="join the cluster whose leader's actor system is at LEADER "
                                "(<ip>:<port>; [cluster] join)")
        serve.add_argument("--host", dest="http_host", help="the HTTP API's address (default: 127.0.0.1)")
        serve.add_argument("--port", dest="http_port", type=int,
                           help=f"the HTTP API's port (default: {AGENTS_DIR_HTTP_PORT} with AGENTS_DIR, "
                                "else [http] port)")
        serve.add_argument("--admin_port", type=int, help="the actor system's port (default: [host] port, 19470)")
        serve.add_argument("--reload_agents", action="store_true", default=True,
                           help="google-adk's flag, always on here: an edited agent of AGENTS_DIR reloads")
        serve.set_defaults(func=cmd_serve)
    def remote(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--url", help="talk to the host over its HTTP API at this URL instead of its actor system")
        p.add_argument("--token", help="the bearer token for --url (default: $ADK_ACTORS_TOKEN)")
        return p

    run = remote(common(sub.add_parser("run", help="one turn against an app; or AGENT_DIR in this process, "
                                                   "a REPL (google-adk's adk run)")))
    run.add_argument("app", metavar="APP|AGENT_DIR",
                     help="an app of the host; or an agent folder (agent.py or root_agent.yaml), run in this process")
    run.add_argument("message", nargs="?", metavar="MESSAGE",
                     help="the message (an app of a host: needed; an AGENT_DIR: one turn, else the REPL)")
    run.add_argument("--user", default=DEFAULT_USER, help=f"whose session (default: {DEFAULT_USER})")
    run.add_argument("--session")
    folder = run.add_argument_group("with an AGENT_DIR (google-adk's adk run flags)")
    folder.add_argument("--replay", metavar="FILE", help="a JSON file {\"state\": {...}, \"queries\": [...]}: "
                        "a new session with that state answers each query, then the run ends")
    folder.add_argument("--resume", metavar="FILE", help="a session saved by --save_session: shown again, continued")
    folder.add_argument("--save_session", action="store_true", help="at the end, write AGENT_DIR/ID.session.json")
    folder.add_argument("--session_id", help="the saved session's ID (default: asked); with MESSAGE, the session")
    folder.add_argument("--state", help="the new session's state, a JSON object")
    folder.add_argument("--state_file", metavar="FILE", help="the new session's state, a JSON file")
    folder.add_argument("--timeout", help="each turn's deadline: 30s, 5m")
    folder.add_argument("--in_memory", action="store_true", help="keep the sessions in memory only")
    folder.add_argument("--jsonl", action="store_true", help="every event as a JSON line")
    folder.add_argument("--session_service_uri", help="memory://, sqlite://PATH or postgresql://... "
                        "(default: AGENT_DIR/../.adk-actors/run-sessions.db)")
    run.set_defaults(func=cmd_run)
    create = sub.add_parser("create", help="make an agent folder NAME (google-adk's adk create)")
    add_create_flags(create)
    create.set_defaults(func=run_create)
    chat = remote(common(sub.add_parser("chat", help="turns from standard input")))
    chat.add_argument("app")
    chat.add_argument("--user", default=DEFAULT_USER, help=f"whose session (default: {DEFAULT_USER})")
    chat.add_argument("--session")
    chat.set_defaults(func=cmd_chat)
    evaluate = remote(common(sub.add_parser("eval", help="run eval sets against an app, or on AGENT_DIR in this "
                                                        "process (google-adk's adk eval); exit 1 if a case fails")))
    evaluate.add_argument("app", metavar="APP|AGENT_DIR",
                          help="an app of the host; or an agent folder (agent.py or root_agent.yaml), evaluated in "
                               "this process")
    evaluate.add_argument("files", nargs="+", metavar="EVAL_SET[:CASE,...]",
                          help="google-adk eval set files (*.evalset.json), or with an AGENT_DIR the id of a set "
                               "in it; ':CASE,CASE' runs only those cases")
    evaluate.add_argument("--metric", action="append", default=[],
                          help="NAME[=THRESHOLD], repeatable (default: tool_trajectory_avg_score=1.0 "
                               "response_match_score=0.8; with an AGENT_DIR, the eval config's criteria)")
    evaluate.add_argument("--print_detailed_results", action="store_true",
                          help="print expected against actual for every invocation, passed cases too "
                               "(failed ones always are)")
    evaluate.add_argument("--config_file_path", default=None,
                          help="a google-adk eval config (test_config.json: criteria with thresholds, match types, "
                               "judge models, rubrics); instead of --metric (with an AGENT_DIR, default: the "
                               "test_config.json beside the one eval set file named)")
    evaluate.set_defaults(func=cmd_eval)
    status = common(sub.add_parser("status", help="the live supervision tree"))
    status.add_argument("--offset", type=int, default=0, help="the first held session shown (default: 0)")
    status.add_argument("--limit", type=int, default=50, help="how many held sessions are shown (default: 50)")
    status.add_argument("--search", default="",
                        help="only the sessions whose app/user/session, or one of whose run ids, contains this")
    status.set_defaults(func=cmd_status)
    chaos = sub.add_parser("chaos", help="fault injection")
    chaos_sub = chaos.add_subparsers(dest="chaos_command", required=True)
    kill = common(chaos_sub.add_parser("kill", help="kill -9 an actor and watch it come back"))
    kill.add_argument("target", nargs="?")
    kill.add_argument("--random", action="store_true")
    kill.set_defaults(func=cmd_chaos)
    soak = common(chaos_sub.add_parser("soak", help="drive sessions while killing random actors; report LOST/HUNG"))
    soak.add_argument("--app", help="the app whose sessions talk (default: weather_bot, else the first)")
    soak.add_argument("--sessions", type=int, default=8)
    soak.add_argument("--duration", type=float, default=60.0, help="seconds of kills")
    soak.add_argument("--interval", type=float, default=200.0, help="milliseconds between two kills")
    soak.add_argument("--targets", default="root,services,partitions,pools,workers",
                      help="kinds of actor to kill, comma-separated: the processes (root, services, partitions, "
                           "pools, workers), and sessions (crashed) and runs (killed alone)")
    soak.add_argument("--turn-timeout", type=float, default=30.0, help="a turn's deadline, seconds")
    soak.add_argument("--seed", type=int, help="for a repeatable choice of victims")
    soak.add_argument("--stops", type=float, default=0.0,
                      help="the fraction of faults that stop an actor (SIGSTOP) instead of killing it, 0 to 1")
    soak.add_argument("--jobs", type=int, default=0,
                      help="background jobs enqueued meanwhile: each must end, never two attempts at once")
    soak.add_argument("--resume", action="store_true",
                      help="resume the turns a kill ends (durable runs): every one must complete")
    soak.add_argument("--cluster", action="store_true",
                      help="deal the faults across every host of the cluster (hosts on this machine)")
    soak.add_argument("--all", action="store_true",
                      help="sessions and runs of anyone on the host may be crashed and killed (default: the soak's own)")
    soak.set_defaults(func=cmd_soak)
    sessions = common(sub.add_parser("sessions", help="list, show or delete sessions"))
    sessions.add_argument("action", choices=["list", "show", "delete", "reset"])
    sessions.add_argument("app")
    sessions.add_argument("session", nargs="?")
    sessions.add_argument("--user", default=DEFAULT_USER, help=f"whose session (default: {DEFAULT_USER})")
    sessions.set_defaults(func=cmd_sessions)
    approvals = common(sub.add_parser("approvals", help="tool calls waiting for a human decision"))
    approvals.add_argument("action", choices=["list", "approve", "deny"])
    approvals.add_argument("app")
    approvals.add_argument("id", nargs="?")
    approvals.add_argument("--reason", default="denied by a human")
    approvals.add_argument("--all", action="store_true", help="list decided approvals too")
    approvals.set_defaults(func=cmd_approvals)
    inputs = remote(common(sub.add_parser("inputs", help="questions workflow nodes wait for (RequestInput): "
                                                         "list, answer")))
    inputs.add_argument("action", choices=["list", "answer"])
    inputs.add_argument("app")
    inputs.add_argument("id", nargs="?", help="answer: the request's id (its interruptId)")
    inputs.add_argument("answer", nargs="?", help="answer: the answer, JSON (a value or an object) or text")
    inputs.add_argument("--session", help="the session (answer: needed; list: default all of the user's)")
    inputs.add_argument("--user", default=DEFAULT_USER, help=f"whose session (default: {DEFAULT_USER})")
    inputs.set_defaults(func=cmd_inputs)
    resume = remote(common(sub.add_parser("resume", help="continue a failed run from its last committed step")))
    resume.add_argument("app")
    resume.add_argument("session")
    resume.add_argument("run_id")
    resume.add_argument("--user", default=DEFAULT_USER, help=f"whose session (default: {DEFAULT_USER})")
    resume.add_argument("--rerun", action="append", default=[], metavar="CALL", help="run this pending call again")
    resume.add_argument("--result", action="append", default=[], metavar="CALL=JSON",
                        help="this pending call ran, and this was its result")
    resume.add_argument("--end", action="append", default=[], metavar="CALL", help="end the run at this call")
    resume.set_defaults(func=cmd_resume)
    jobs = common(sub.add_parser("jobs", help="background jobs: list, show, enqueue, cancel, retry, discard"))
    jobs.add_argument("action", choices=["list", "show", "enqueue", "cancel", "retry", "discard"])
    jobs.add_argument("id", nargs="?", help="the job (show, cancel, retry, discard)")
    jobs.add_argument("--queue", help="list: only this queue; enqueue: the queue (default: default)")
    jobs.add_argument("--state", help="list: only jobs in this state")
    jobs.add_argument("--limit", type=int, default=100)
    jobs.add_argument("--app", help="enqueue: the app to run")
    jobs.add_argument("--message", help="enqueue: the message the run answers")
    jobs.add_argument("--session", help="enqueue: an existing session (default: a new one per job)")
    jobs.add_argument("--function", help="enqueue: a function, package.module:name, instead of a run")
    jobs.add_argument("--args", help="enqueue: the function's arguments, a JSON object")
    jobs.add_argument("--user", default=DEFAULT_USER, help=f"enqueue: whose job it is (default: {DEFAULT_USER})")
    jobs.add_argument("--in", dest="schedule_in", type=float, help="enqueue: due in this many seconds")
    jobs.add_argument("--max-attempts", type=int, default=20)
    jobs.add_argument("--unique", help="enqueue: a unique key (a duplicate within 60 s returns that job)")
    jobs.set_defaults(func=cmd_jobs)
    mcp = common(sub.add_parser("mcp", help="the host's apps as MCP tools on stdin/stdout"))
    mcp.add_argument("--user", default="mcp", help="whose sessions the calls make (default: mcp)")
    mcp.set_defaults(func=cmd_mcp)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv``, run the command, and turn its failures into an exit code and a
    line on standard error (see the module). A reader that goes away (``status | head``)
    ends the command quietly with 0: standard output is pointed at /dev/null so that
    nothing fails again when Python flushes it at exit."""
    try:
        code = _dispatch(argv)
        sys.stdout.flush()  # here, not at exit: a closed pipe is seen while it can be handled
        return code
    except BrokenPipeError:
        _silence_stdout()
        return 0


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file behind sys.stdout (a test's capture)
        pass


def _dispatch(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "config"):
        args.config = None
    if getattr(args, "chaos_command", None) == "kill" and not args.random and not args.target:
        parser.error("chaos kill needs a TARGET or --random")
    if args.command == "sessions" and args.action in ("show", "delete", "reset") and not args.session:
        parser.error(f"sessions {args.action} needs a SESSION")
    if args.command == "approvals" and args.action != "list" and not args.id:
        parser.error(f"approvals {args.action} needs an approval ID")
    if args.command == "inputs" and args.action == "answer" and (args.answer is None or not args.session):
        parser.error("inputs answer needs a request ID, an ANSWER and --session")
    try:
        result: int = args.func(args)
        return result
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except AdkError as exc:  # RunFailedError, HostError ... : a line, not a traceback
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        raise  # main's to handle
    except Exception as exc:
        if type(exc).__module__.startswith("supervision"):  # the host's own layer: its detail, not its name
            print(f"error: the host answered: {getattr(exc, 'detail', '') or exc}", file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
