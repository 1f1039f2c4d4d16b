"""The HTTP server as a supervised child of the host's root.

``HttpServerActor`` owns one server process (``python -m adk_actors.http``), so the
web stack never runs inside an actor's message loop and a crash of one never takes
the other's state. In order, in ``init``: start the process (it dies with this actor:
``PR_SET_PDEATHSIG``), hand it its settings on stdin, wait up to ``START_WAIT``
seconds for ``READY <port>`` (anything else: the start fails, with the process's
last words from its log), then watch its pid. When the process ends (kill -9
included) the actor crashes, so its supervisor restarts both; when the actor is
stopped, ``terminate`` stops the process (SIGTERM, then SIGKILL after 5 s). The
server's own log (uvicorn's warnings, a failed start) goes to ``http.log`` in the
data dir, mode 0600.
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

from supervision import CallerRef, ChildSpec, GenServer, set_parent_death_signal

from ..config import HttpSection
from ..store import private_file

__all__ = ["HttpArgs", "HttpServerActor", "http_child"]

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
    path: list[str] = field(default_factory=list)  # import paths the apps need (the serve's cwd)


def http_child(section: HttpSection, *, admin_port: int, admin_address: str, apps: dict[str, str],
               data_dir: str, agents_dir: str | None = None) -> ChildSpec:
    """The root's ``http`` child for a host on ``admin_port`` serving ``apps`` (and the
    YAML apps in ``agents_dir``)."""
    args = HttpArgs(http=section.model_dump(), admin_port=admin_port, admin_address=admin_address, apps=dict(apps),
                    agents_dir=agents_dir,
                    log_file=str(Path(data_dir) / "http.log"), evals_dir=str(Path(data_dir) / "evals"),
                    path=[os.getcwd()])
    return ChildSpec(id="http", start=HttpServerActor, args=args, start_timeout=START_WAIT + 10.0,
                     shutdown=STOP_WAIT + 5.0)


class HttpServerActor(GenServer):
    def init(self, args: HttpArgs) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        private_file(args.log_file)
        log = open(args.log_file, "ab")  # noqa: SIM115 - handed to the child, closed below
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "adk_actors.http"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=log, preexec_fn=set_parent_death_signal, close_fds=True)
        finally:
            log.close()
        assert self.process.stdin is not None and self.process.stdout is not None
        launch = {"http": args.http, "admin_port": args.admin_port, "admin_address": args.admin_address,
                  "apps": args.apps, "agents_dir": args.agents_dir, "path": args.path, "evals_dir": args.evals_dir}
        self.process.stdin.write((json.dumps(launch) + "\n").encode())
        self.process.stdin.close()
        line = self._first_line(self.process.stdout, time.monotonic() + START_WAIT)
        if not line.startswith("READY "):
            self._stop_process()
            raise RuntimeError(f"the HTTP server did not start ({line or 'no answer'}); see {args.log_file}")
        self.port = int(line.split()[1])
        self.url = f"http://{args.http['address']}:{self.port}"
        self.log.info("HTTP API and console at %s", self.url)
        self.monitor_process(self.process.pid, "http-server")

    @staticmethod
    def _first_line(stream: Any, deadline: float) -> str:
        """The process's first stdout line ('' when it exits or is silent until the deadline)."""
        data = b""
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([stream], [], [], left)[0]:
                return ""
            chunk = os.read(stream.fileno(), 256)
            if not chunk:
                return ""
            data += chunk
        return data.split(b"\n", 1)[0].decode(errors="replace").strip()

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if request == "url":
            return self.url
        return super().handle_call(request, caller)

    def handle_process_down(self, tag: Any) -> None:
        code = self.process.poll() if self.process is not None else None
        raise RuntimeError(f"the HTTP server process exited (status {code})")

    def terminate(self, reason: Any) -> None:
        self._stop_process()

    def _stop_process(self) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(STOP_WAIT)
