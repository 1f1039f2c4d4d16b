"""A real PostgreSQL server owned by a test run (exported by ``adk_actors.testing``).

:class:`TemporaryPostgres` makes a cluster with Debian's ``initdb`` in a temporary
folder, starts it with ``pg_ctl`` on 127.0.0.1 (its Unix socket in that folder,
password authentication with a random password) and a free port below the kernel's
range for outgoing connections (``supervision.lowlevel.free_port``; a port taken
before the server started is replaced, up to ``START_ATTEMPTS`` times), and stops it and
removes the folder on :meth:`close` (also at interpreter exit; and when the process
that started it dies without either, killed or interrupted, a watchdog process
started beside the server stops it and removes the folder within a second or so:
no server outlives the run). Run as root, the server runs as the ``postgres`` user that Debian's
package creates (PostgreSQL refuses to run as root).

The cluster is made for tests: ``fsync`` is off (a kill -9 of any client or host
loses nothing acknowledged; a power cut of the machine is not what it is for).
"""

from __future__ import annotations

import atexit
import glob
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg

from supervision.lowlevel import free_port

__all__ = ["PostgresUnavailable", "TemporaryPostgres"]


class PostgresUnavailable(RuntimeError):
    """PostgreSQL's server programs are not installed (Debian: ``apt-get install postgresql``)."""


def _server_program(name: str) -> str:
    """The path of a PostgreSQL server program: on PATH, else Debian's newest
    ``/usr/lib/postgresql/<version>/bin``."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0)
    if not candidates:
        raise PostgresUnavailable(f"PostgreSQL's {name} was not found: install Debian's postgresql package")
    return candidates[-1]


#: The watchdog's program: argv is the pid of the process that started the server, the
#: stop command, then the folder. While that process is its parent it sleeps; once it is
#: reparented (its starter died), it stops the server and removes the folder.
_WATCHDOG = """
import os, shutil, subprocess, sys, time
starter, command, folder = int(sys.argv[1]), sys.argv[2:-1], sys.argv[-1]
while os.getppid() == starter:
    time.sleep(0.5)
subprocess.run(command, capture_output=True, timeout=60, cwd=folder)
shutil.rmtree(folder, ignore_errors=True)
"""

#: Ports tried when the one picked was taken meanwhile (another process of the machine
#: bound it between the pick and the server's start).
START_ATTEMPTS = 4


class TemporaryPostgres:
    """A PostgreSQL server on 127.0.0.1 for as long as this object is open.

    ``url`` reaches its ``adk`` database as its superuser ``adk``;
    :meth:`new_database` makes an empty database and returns its URL.
    """

    def __init__(self, *, user: str = "adk", listen: tuple[str, ...] = ("127.0.0.1",),
                 clients: tuple[str, ...] = ()) -> None:
        """Create the cluster and start the server, listening on ``listen`` (loopback)
        and taking password logins from 127.0.0.1 and the ``clients`` networks (CIDR,
        e.g. a test's network namespace); PostgresUnavailable when the programs are
        missing, RuntimeError (with the server's log) when it fails."""
        self.user = user
        self.password = secrets.token_urlsafe(18)
        self.port = free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="adk-pg-"))
        self.data = self.folder / "data"
        self.log = self.folder / "server.log"
        self._as_postgres = os.geteuid() == 0
        self._stopped = False
        self._watchdog: subprocess.Popen[bytes] | None = None
        initdb, self._pg_ctl = _server_program("initdb"), _server_program("pg_ctl")
        pwfile = self.folder / "pw"
        pwfile.write_text(self.password)
        if self._as_postgres:
            shutil.chown(self.folder, "postgres")
            shutil.chown(pwfile, "postgres")
        atexit.register(self.close)
        self._run([initdb, "-D", str(self.data), "-U", user, "--auth=scram-sha-256", f"--pwfile={pwfile}",
                   "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"])
        pwfile.unlink()
        if clients:
            hba = self.data / "pg_hba.conf"
            lines = "".join(f"host all all {network} scram-sha-256\n" for network in clients)
            hba.write_text(hba.read_text() + lines)
        for attempt in range(START_ATTEMPTS):
            options = (f"-p {self.port} -k {self.folder} -c listen_addresses={','.join(listen)} -c fsync=off "
                       "-c full_page_writes=off -c max_connections=200")
            try:
                self._run([self._pg_ctl, "start", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
                           "-o", options])
                break
            except RuntimeError as failed:
                if attempt == START_ATTEMPTS - 1 or "Address already in use" not in str(failed):
                    raise
                self.port = free_port()  # taken since it was picked: another one
        self._watchdog = self._watch()
        self.url = f"postgresql://{user}:{self.password}@127.0.0.1:{self.port}/postgres"
        self._databases = 0
        self.url = self.new_database("adk")

    def _watch(self) -> subprocess.Popen[bytes]:
        """Start the watchdog (:data:`_WATCHDOG`) in a session of its own, so that a
        Ctrl-C or a signal to this process's group does not reach it."""
        stop = self._as_user([self._pg_ctl, "stop", "-D", str(self.data), "-m", "immediate", "-w", "-t", "30"])
        return subprocess.Popen([sys.executable, "-I", "-c", _WATCHDOG, str(os.getpid()), *stop, str(self.folder)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, env={"PATH": os.environ.get("PATH", os.defpath)})

    def _as_user(self, command: list[str]) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *command] if self._as_postgres else command

    def _run(self, command: list[str]) -> None:
        program = Path(command[0]).name
        command = self._as_user(command)
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=self.folder)
        if done.returncode != 0:
            log = self.log.read_text()[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{program} failed ({done.returncode}): "
                               f"{done.stderr.strip()[-2000:]}\n{log}")

    def database_url(self, name: str) -> str:
        return f"postgresql://{self.user}:{self.password}@127.0.0.1:{self.port}/{name}"

    def new_database(self, name: str | None = None) -> str:
        """Create an empty database (``name``, or a fresh one) and return its URL."""
        self._databases += 1
        name = name or f"t{self._databases}_{secrets.token_hex(4)}"
        with psycopg.connect(self.database_url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')  # a name made here
        return self.database_url(name)

    def close(self) -> None:
        """Stop the watchdog, then the server (fast: its clients are cut off), and
        remove its folder."""
        if self._stopped:
            return
        self._stopped = True
        if self._watchdog is not None:
            self._watchdog.kill()
            self._watchdog.wait(10)
        if (self.data / "postmaster.pid").exists():
            try:
                self._run([self._pg_ctl, "stop", "-D", str(self.data), "-m", "immediate", "-w", "-t", "30"])
            except (RuntimeError, subprocess.TimeoutExpired):
                pass
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> TemporaryPostgres:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
