"""The HTTP server as a supervised child of the host's root.

``HttpServerActor`` owns one server process (``python -m adk_actors.http``), so the
web stack never runs inside an actor's message loop and a crash of one never takes
the other's state. In order, in ``init``: take the process ``serve`` forked ahead
(``HttpArgs.standby``, see ``_standby``) if this is the first start and nobody took
it, and send it this actor's pid as its owner (it stops with its owner); else start
one (it stops with this actor: ``PR_SET_PDEATHSIG``, SIGTERM, then its own watch of
its owner) and hand it its settings and owner on stdin, and the front door
(``HttpArgs.listen_fd``, the listening socket ``serve`` owns: a server's end never
closes it); wait up to ``START_WAIT`` seconds (scaled to the load) for ``READY <port>`` (anything
else: the start fails, with the process's last words in its log), then watch its
pid. When the process ends (kill -9 included) the actor crashes, so its supervisor
restarts both; when the actor is stopped, ``terminate`` stops the process (SIGTERM,
then SIGKILL after 5 s); when the actor is killed, the process finishes the requests
it took and exits. Meanwhile new connections wait in the socket's backlog for the
next server. The server's own log (uvicorn's warnings, a failed start)
goes to ``http.log`` in the data dir, mode 0600. Calls: ``"url"``, ``"server_pid"``.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from supervision import CallerRef, ChildSpec, GenServer
from supervision.lowlevel import load_scaled, open_pidfd, set_parent_death_signal

from .._files import private_file
from ..config import HttpSection
from ..messages import Limits
from ._standby import Standby

__all__ = ["HttpArgs", "HttpServerActor", "http_args", "http_child"]

START_WAIT = 30.0
STOP_WAIT = 5.0


@dataclass(frozen=True)
class HttpArgs:
    http: dict[str, Any]  # an HttpSection, dumped
    admin_port: int
    admin_address: str
    apps: dict[str, str]
    log_file: str
    agents_dir: str | None = None  # a folder of YAML apps (see engine.AppCatalog)
    evals_dir: str | None = None  # where the eval sets are kept (data/evals)
    a2a_tasks: str | None = None  # the SQLite file of the A2A tasks (data/a2a_tasks.db)
    http_functions: tuple[str, ...] = ()  # the job functions a request may enqueue ([jobs])
    path: list[str] = field(default_factory=list)  # import paths the apps need (the serve's cwd)
    standby: Standby | None = None  # a server process forked ahead by serve, for the first start
    max_json_depth: int = Limits.max_json_depth  # the host's [limits], applied to every body
    cluster_join: str = ""  # the host's [cluster] join: its requests are routed by the cluster's view
    # The listening socket serve owns (open_front_door), inherited by every process forked
    # from it; None: each server process binds its own (a host not started by serve).
    listen_fd: int | None = None

    def launch(self) -> dict[str, Any]:
        """The server process's settings (``_process``), without its owner."""
        return {"http": self.http, "admin_port": self.admin_port, "admin_address": self.admin_address,
                "apps": self.apps, "agents_dir": self.agents_dir, "path": self.path, "evals_dir": self.evals_dir,
                "a2a_tasks": self.a2a_tasks, "http_functions": list(self.http_functions),
                "max_json_depth": self.max_json_depth, "cluster_join": self.cluster_join,
                "listen_fd": self.listen_fd}


def http_args(section: HttpSection, *, admin_port: int, admin_address: str, apps: dict[str, str], data_dir: str,
              agents_dir: str | None = None, max_json_depth: int = Limits.max_json_depth,
              http_functions: tuple[str, ...] = (), cluster_join: str = "") -> HttpArgs:
    """The settings of an HTTP server for a host on ``admin_port`` serving ``apps`` (and
    the YAML apps in ``agents_dir``), its log, eval sets and A2A tasks in ``data_dir``; bodies
    nested deeper than ``max_json_depth`` (the host's ``[limits]``) are refused."""
    return HttpArgs(http=section.model_dump(), admin_port=admin_port, admin_address=admin_address, apps=dict(apps),
                    agents_dir=agents_dir, log_file=str(Path(data_dir) / "http.log"),
                    evals_dir=str(Path(data_dir) / "evals"), a2a_tasks=str(Path(data_dir) / "a2a_tasks.db"),
                    path=[os.getcwd()], max_json_depth=max_json_depth, http_functions=http_functions,
                    cluster_join=cluster_join)


def http_child(args: HttpArgs) -> ChildSpec:
    """The root's ``http`` child; its first start launches ``args.standby`` when there is
    one and it is still unclaimed."""
    return ChildSpec(id="http", start=HttpServerActor, args=args, start_timeout=START_WAIT + 10.0,
                     shutdown=STOP_WAIT + 5.0)


def _stop_with_parent() -> None:
    """In the spawned server, before it runs: SIGTERM when its actor dies (it finishes
    the requests it took; its owner watch kills it if it lingers)."""
    set_parent_death_signal(signal.SIGTERM)


class HttpServerActor(GenServer):
    def init(self, args: HttpArgs) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.server_pid: int | None = None
        private_file(args.log_file)
        owner = {"owner": os.getpid()}
        if args.standby is not None and args.standby.claim():  # forked ahead by serve with its settings
            self.server_pid, from_server = args.standby.pid, args.standby.ready_fd
            self._send_line(args.standby.launch_fd, owner)
        else:
            self.process = self._spawn(args.log_file, args.listen_fd)
            stdin, stdout = self.process.stdin, self.process.stdout
            assert stdin is not None and stdout is not None
            self.server_pid, from_server = self.process.pid, stdout.fileno()
            self._send_line(stdin.fileno(), {**args.launch(), **owner})
            stdin.close()
        line = self._first_line(from_server, time.monotonic() + load_scaled(START_WAIT))  # its imports, at load
        if not line.startswith("READY "):
            self._stop_process()
            raise RuntimeError(f"the HTTP server did not start ({line or 'no answer'}); see {args.log_file}")
        self.port = int(line.split()[1])
        self.url = f"http://{args.http['address']}:{self.port}"
        self.log.info("HTTP API and console at %s", self.url)
        self.monitor_process(self.server_pid, "http-server")

    @staticmethod
    def _send_line(fd: int, payload: dict[str, Any]) -> None:
        """Write ``payload`` as one JSON line; a process that has already ended is seen
        by the wait for its first line."""
        try:
            os.write(fd, (json.dumps(payload) + "\n").encode())
        except OSError:
            pass

    @staticmethod
    def _spawn(log_file: str, listen_fd: int | None) -> subprocess.Popen[bytes]:
        """``python -m adk_actors.http``, given the front door's descriptor (same number)."""
        log = open(log_file, "ab")  # noqa: SIM115 - handed to the child, closed below
        try:
            return subprocess.Popen([sys.executable, "-m", "adk_actors.http"], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=log, preexec_fn=_stop_with_parent,
                                    close_fds=True, pass_fds=() if listen_fd is None else (listen_fd,))
        finally:
            log.close()

    @staticmethod
    def _first_line(fd: int, deadline: float) -> str:
        """The process's first stdout line ('' when it exits or is silent until the deadline)."""
        data = b""
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return ""
            chunk = os.read(fd, 256)
            if not chunk:
                return ""
            data += chunk
        return data.split(b"\n", 1)[0].decode(errors="replace").strip()

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if request == "url":
            return self.url
        if request == "server_pid":
            return self.server_pid
        return super().handle_call(request, caller)

    def handle_process_down(self, tag: Any) -> None:
        code = self.process.poll() if self.process is not None else None
        raise RuntimeError(f"the HTTP server process exited (status {code})")

    def terminate(self, reason: Any) -> None:
        self._stop_process()

    def _stop_process(self) -> None:
        """SIGTERM, then SIGKILL after ``STOP_WAIT`` seconds; a spawned process is reaped
        here, a forked-ahead one by ``serve`` (its parent)."""
        process, pid = self.process, self.server_pid
        if process is not None:
            if process.poll() is not None:
                return
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(STOP_WAIT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(STOP_WAIT)
            return
        if pid is None:
            return
        pidfd = open_pidfd(pid)
        if pidfd is None:  # already gone
            return
        try:
            os.kill(pid, signal.SIGTERM)
            if not select.select([pidfd], [], [], STOP_WAIT)[0]:
                os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        finally:
            os.close(pidfd)
