"""``serve`` (and ``web`` / ``api_server`` on an agents folder): the host started and
run until SIGTERM / SIGINT, a busy port told apart from a host already there."""

from __future__ import annotations

import argparse
import gc
import ipaddress
import json
import os
import signal
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .._exceptions import (
    ConfigError,
)
from ._common import BUSY_PROBE, load_config_settings, say_line

if TYPE_CHECKING:
    from ..config import Settings

__all__ = ["AGENTS_DIR_HTTP_PORT", "cmd_serve"]


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

    from ..config import load_settings

    agents_dir = getattr(args, "agents_dir", None)
    settings = load_settings(args.config or None) if agents_dir else load_config_settings(args)
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
    from supervision.lowlevel import PortInUse, check_port_free

    from ..engine import AppCatalog, remember_explicit_env
    from ..http import fork_standby, http_args, http_child, open_front_door
    from ..otel import quiet_unused_a2a_spans
    from ..runtime import Host
    from ..runtime._agent_folders import AgentFolderWatcher
    from ..runtime._credentials import KEY_VARIABLE as CREDENTIAL_KEY_VARIABLE
    from ..store import private_dir, private_file
    from ._fast_api_host import host_config

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
    from ..log import configure_logging

    configure_logging(json=True, level=settings.logging.level)
    # The code of every actor of the tree (Host.start imports it too), while the HTTP
    # server's process imports the web stack on the other core; frozen before the
    # actor system is forked.
    gc.disable()
    Host.load_tree_code()
    _freeze_imported()
    host = Host(host_config(settings, cluster_join=join,
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
        watcher = AgentFolderWatcher(catalog, say_line)
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
            from ..runtime import Host

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


