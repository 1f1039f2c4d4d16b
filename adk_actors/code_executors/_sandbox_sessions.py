"""The live child processes of a stateful ``SandboxedCodeExecutor``: one per execution
id, each with its working folder, its globals kept between runs."""

from __future__ import annotations

import atexit
import json
import os
import selectors
import shutil
import subprocess
import tempfile
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from ._processes import end_group

__all__ = ["Reply", "Session", "SessionPool"]

#: a run's stdout, stderr, exit status, and whether the session lives on (when not,
#: the status is the child's return code, or None when the run timed out)
Reply = tuple[str, str, int | None, bool]


class Session:
    """One child serving runs of one execution id."""

    def __init__(self, command: Callable[[Path], tuple[list[str], dict[str, str]]], work_root: str | None) -> None:
        self.folder = self.work = Path(tempfile.mkdtemp(prefix="adk-sandbox-", dir=work_root))
        argv, env = command(self.work)
        self.lock = threading.Lock()
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, cwd=self.work, env=env, start_new_session=True)
        self._buffer = b""

    def run(self, code: str, timeout: float | None) -> Reply:
        """Send ``code``, wait up to ``timeout`` s for its reply: (stdout, stderr, status,
        alive). A child that does not answer in time is ended (alive False, status
        None); one that died answers with its return code (alive False)."""
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(json.dumps({"code": code}).encode() + b"\n")
            stdin.flush()
        except OSError:
            return self._died()
        deadline = None if timeout is None else time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    self.close()
                    return "", "", None, False
                if not selector.select(left):
                    continue
                chunk = os.read(stdout.fileno(), 1 << 16)
                if not chunk:
                    return self._died()
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        reply = json.loads(line)
        return reply["stdout"], reply["stderr"], int(reply["status"]), True

    def _died(self) -> Reply:
        self.close()
        return "", "", self.process.returncode, False

    def close(self) -> None:
        """End the child and its group, and remove the folder."""
        if self.process.poll() is None:
            end_group(self.process, 0)
        else:
            self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass
        shutil.rmtree(self.folder, ignore_errors=True)


class SessionPool:
    """Sessions by execution id, at most ``limit`` (the least recently used goes); all
    are ended when the process exits. A copy (deep copy, pickle) is a new, empty pool:
    live processes are not copied."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        _POOLS.add(self)

    def get(self, execution_id: str, limit: int, make: Callable[[], Session]) -> Session:
        evicted: list[Session] = []
        with self._lock:
            session = self._sessions.get(execution_id)
            if session is None or session.process.poll() is not None:
                session = self._sessions[execution_id] = make()
            self._sessions.move_to_end(execution_id)
            while len(self._sessions) > limit:
                evicted.append(self._sessions.popitem(last=False)[1])
        for old in evicted:
            with old.lock:
                old.close()
        return session

    def drop(self, execution_id: str, session: Session) -> None:
        with self._lock:
            if self._sessions.get(execution_id) is session:
                del self._sessions[execution_id]

    def close(self) -> None:
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), OrderedDict()
        for session in sessions:
            session.close()

    def __len__(self) -> int:
        return len(self._sessions)

    def __deepcopy__(self, memo: dict[int, object]) -> SessionPool:
        return SessionPool()

    def __reduce__(self) -> tuple[type[SessionPool], tuple[()]]:
        return SessionPool, ()


_POOLS: weakref.WeakSet[SessionPool] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for pool in list(_POOLS):
        pool.close()


