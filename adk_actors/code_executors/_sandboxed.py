"""``SandboxedCodeExecutor``: runs the code in a separate, limited Python process."""

from __future__ import annotations

import base64
import functools
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, PrivateAttr

from ._base import BaseCodeExecutor
from ._processes import end_group
from ._sandbox_sessions import Session, SessionPool
from ._utils import CodeExecutionInput, CodeExecutionResult

__all__ = ["SandboxedCodeExecutor", "network_isolation"]

_log = logging.getLogger("adk_actors.code_executors")

_CHILD = (Path(__file__).parent / "_sandbox_child.py").read_text()


@functools.cache
def network_isolation() -> Literal["namespace", "audit-hook"]:
    """How a sandboxed run is kept off the network on this machine, found once:
    ``namespace`` when ``unshare -n`` works here (root, or a user namespace allowed),
    the run then has a network namespace of its own with no interface up; else
    ``audit-hook``, where the child's audit hook refuses every socket but AF_UNIX."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return "audit-hook"
    try:
        done = subprocess.run([unshare, "-n", sys.executable, "-c", "pass"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "audit-hook"
    return "namespace" if done.returncode == 0 else "audit-hook"


class SandboxedCodeExecutor(BaseCodeExecutor):
    """Runs each code block in a new Python process with limits, where a run that goes
    past one ends with an error result and the agent's process is untouched.

    The limits, each with its default: ``cpu_seconds`` of CPU time (10), then the
    kernel stops the run; ``memory_bytes`` of address space (1 GiB), past which an
    allocation fails with MemoryError; ``file_size_bytes`` (16 MiB) for any file it
    writes, its output included; ``timeout_seconds`` of wall time (30), after which its
    process group is killed; ``max_output_chars`` of stdout and of stderr kept (100,000).
    It runs in a working folder of its own (made under ``work_root``, default the
    system's temporary folder, removed afterwards) where its input files are put;
    writing anywhere else, starting processes, signalling other processes, raising its
    limits and ctypes calls are refused; it has no network (see
    :func:`network_isolation`). Environment variables of the agent are not passed on.

    With ``stateful=True``, runs that name the same execution id (the agent's loop
    gives the session's id) go to one child process that keeps its globals and its
    working folder between runs, each run with its own CPU-time and wall-time limits
    (memory and file size are the process's); up to ``max_sessions`` (8) such children
    live at once, the least recently used is ended first, and all end with
    :meth:`close` or when this process exits. A run that ends its child (a limit, a
    crash) loses the execution's variables, and says so; its output is lost with it.

    ``optimize_data_file`` is not supported (``ValueError`` at construction).
    """

    optimize_data_file: bool = Field(default=False, frozen=True, exclude=True)
    timeout_seconds: int | None = Field(default=30, gt=0)
    cpu_seconds: int = Field(default=10, gt=0)
    memory_bytes: int = Field(default=1 << 30, ge=64 << 20)
    file_size_bytes: int = Field(default=16 << 20, gt=0)
    max_output_chars: int = Field(default=100_000, gt=0)
    work_root: str | None = None
    max_sessions: int = Field(default=8, gt=0)
    _sessions: SessionPool = PrivateAttr(default_factory=SessionPool)

    def __init__(self, **data: Any) -> None:
        if data.get("optimize_data_file"):
            raise ValueError("Cannot set `optimize_data_file=True` in SandboxedCodeExecutor.")
        super().__init__(**data)

    def close(self) -> None:
        """End the children of a stateful executor (their variables and folders go)."""
        self._sessions.close()

    def execute_code(self, invocation_context: Any, code_execution_input: CodeExecutionInput) -> CodeExecutionResult:
        """In order: make a run folder with a ``work`` folder (the code's cwd, its input
        files in it) and a private ``io`` folder (the code, its stdout and stderr files);
        start the child interpreter (``python -I -B``, in a session of its own, behind
        ``unshare -n`` when :func:`network_isolation` says ``namespace``); wait up to
        ``timeout_seconds``, then kill its process group. The result's stderr says which
        limit ended the run (wall time, CPU time, a signal), after what the code printed;
        a run that exits 0 has an empty stderr. The run folder is removed in every case;
        a failure to start the child is a result with the reason in stderr. A stateful
        run with an execution id goes to that id's child instead (see the class)."""
        if self.stateful and code_execution_input.execution_id:
            return self._run_in_session(code_execution_input.execution_id, code_execution_input)
        run = Path(tempfile.mkdtemp(prefix="adk-sandbox-", dir=self.work_root))
        try:
            return self._run(run, code_execution_input)
        finally:
            shutil.rmtree(run, ignore_errors=True)

    def _command(self, work: Path, **more: Any) -> tuple[list[str], dict[str, str]]:
        """The child's command line and environment, for a run in ``work``."""
        isolation = network_isolation()
        settings = {"folder": str(work), "cpu_seconds": self.cpu_seconds, "memory_bytes": self.memory_bytes,
                    "file_size_bytes": self.file_size_bytes, "block_sockets": isolation != "namespace",
                    "max_output_chars": self.max_output_chars, **more}
        command = [sys.executable, "-I", "-B", "-c", _CHILD, json.dumps(settings)]
        if isolation == "namespace":
            command = [shutil.which("unshare") or "unshare", "-n", *command]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work), "TMPDIR": str(work),
               "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}
        return command, env

    def _run_in_session(self, execution_id: str, given: CodeExecutionInput) -> CodeExecutionResult:
        session = self._sessions.get(execution_id, self.max_sessions,
                                     lambda: Session(lambda work: self._command(work, serve=True), self.work_root))
        with session.lock:
            _put_files(session.work, given)
            stdout, stderr, status, alive = session.run(given.code, self.timeout_seconds)
        if alive:
            stdout, stderr = self._cut(stdout), self._cut(stderr)
            if status == 0:
                stderr = ""
            elif not stderr:
                stderr = f"Code execution exited with status {status}."
            return CodeExecutionResult(stdout=stdout, stderr=stderr, output_files=[], exit_code=status)
        self._sessions.drop(execution_id, session)
        note = self._why_ended(-signal.SIGKILL if status is None else status, timed_out=status is None) \
            or f"Code execution ended its process (status {status})."
        lost = "The execution's variables are lost: the next run starts afresh."
        return CodeExecutionResult(stdout="", stderr=f"{note} {lost}", output_files=[], exit_code=status)

    def _cut(self, text: str) -> str:
        if len(text) > self.max_output_chars:
            return text[: self.max_output_chars] + f"\n[output cut at {self.max_output_chars} characters]"
        return text

    def _run(self, run: Path, given: CodeExecutionInput) -> CodeExecutionResult:
        work, io = run / "work", run / "io"
        work.mkdir()
        io.mkdir(mode=0o700)
        _put_files(work, given)
        (io / "code.py").write_text(given.code, encoding="utf-8")
        command, env = self._command(work, code_path=str(io / "code.py"))
        timed_out = False
        with open(io / "stdout", "wb") as out, open(io / "stderr", "wb") as err:
            try:
                process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=work,
                                           env=env, start_new_session=True)
            except OSError as exc:
                return CodeExecutionResult(stderr=f"The sandbox could not start: {exc}")
            try:
                process.wait(self.timeout_seconds)
            except subprocess.TimeoutExpired:
                timed_out = True
                end_group(process, 0)
            else:
                end_group(process, 0)  # whatever it left behind goes with it
        stdout, stderr = self._read(io / "stdout"), self._read(io / "stderr")
        code = process.returncode
        note = self._why_ended(code, timed_out)
        if note:
            stderr = f"{stderr}\n{note}" if stderr else note
        elif code == 0:
            stderr = ""
        elif not stderr:
            stderr = f"Code execution exited with status {code}."
        return CodeExecutionResult(stdout=stdout, stderr=stderr, output_files=[], exit_code=code)

    def _read(self, path: Path) -> str:
        with open(path, "rb") as handle:
            data = handle.read(self.max_output_chars * 4 + 1)
        text = data.decode("utf-8", "replace")
        if len(text) > self.max_output_chars or len(data) > self.max_output_chars * 4:
            text = text[: self.max_output_chars] + f"\n[output cut at {self.max_output_chars} characters]"
        return text

    def _why_ended(self, code: int, timed_out: bool) -> str:
        if timed_out:
            return f"Code execution timed out after {self.timeout_seconds} seconds (wall-time limit); it was stopped."
        if code in (-signal.SIGXCPU, -signal.SIGKILL):
            return f"Code execution used up its CPU-time limit of {self.cpu_seconds} seconds; it was stopped."
        if code == -signal.SIGXFSZ:
            return f"Code execution wrote a file past its size limit of {self.file_size_bytes} bytes; it was stopped."
        if code < 0:
            return f"Code execution was ended by signal {signal.Signals(-code).name}."
        return ""


def _put_files(work: Path, given: CodeExecutionInput) -> None:
    """The input files into the working folder, by their base names (bytes, or base64)."""
    for file in given.input_files:
        name = os.path.basename(file.name)
        if not name or name in (".", ".."):
            continue
        content = file.content if isinstance(file.content, bytes) else base64.b64decode(file.content)
        (work / name).write_bytes(content)
