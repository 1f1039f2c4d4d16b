"""``UnsafeLocalCodeExecutor``: runs the code in a plain child Python process, with the
agent's own rights (google-adk's name and behaviour)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from pydantic import Field

from ._base import BaseCodeExecutor
from ._processes import end_group
from ._utils import CodeExecutionInput, CodeExecutionResult

__all__ = ["UnsafeLocalCodeExecutor"]

_log = logging.getLogger("adk_actors.code_executors")

_RUNNER = (Path(__file__).parent / "_run_unsafe.py").read_text()
_GRACE_SECONDS = 5.0


class UnsafeLocalCodeExecutor(BaseCodeExecutor):
    """Runs each code block in a new child interpreter, with no limit but
    ``timeout_seconds`` (300 by default; None: none): the code can do all the agent's
    process can. Use :class:`SandboxedCodeExecutor` for code you do not trust.

    It is never stateful and never optimizes data files: asking for either raises
    ``ValueError`` when it is made, as google-adk's does.
    """

    stateful: bool = Field(default=False, frozen=True, exclude=True)
    optimize_data_file: bool = Field(default=False, frozen=True, exclude=True)
    timeout_seconds: int | None = 300

    def __init__(self, **data: Any) -> None:
        for flag in ("stateful", "optimize_data_file"):
            if data.get(flag):
                raise ValueError(f"Cannot set `{flag}=True` in UnsafeLocalCodeExecutor.")
        super().__init__(**data)

    def execute_code(self, invocation_context: Any, code_execution_input: CodeExecutionInput) -> CodeExecutionResult:
        """In order: start ``python -c <runner>`` in a session of its own, with this
        process's import path and UTF-8 output; give it the code on stdin; wait up to
        ``timeout_seconds``. On timeout its whole process group gets SIGTERM, then
        SIGKILL after a grace of 5 s, and the result says it timed out after what it
        printed. A run that exits 0 has an empty ``stderr`` (warnings are not failures);
        one that exits otherwise without a word says its exit status."""
        _log.debug("running code:\n%s", code_execution_input.code)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        env["PYTHONIOENCODING"] = "utf-8"
        process = subprocess.Popen(
            [sys.executable, "-c", _RUNNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=env, start_new_session=True)
        timed_out = False
        try:
            out, err = process.communicate(code_execution_input.code.encode("utf-8"), timeout=self.timeout_seconds)
        except subprocess.TimeoutExpired:
            timed_out = True
            end_group(process, _GRACE_SECONDS)
            out, err = _leftovers(process)
        stdout, stderr = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
        if timed_out:
            note = f"Code execution timed out after {self.timeout_seconds} seconds."
            stderr = f"{stderr}\n{note}" if stderr else note
        elif process.returncode == 0:
            stderr = ""
        elif not stderr:
            stderr = f"Code execution exited with status {process.returncode}."
        return CodeExecutionResult(stdout=stdout, stderr=stderr, output_files=[], exit_code=process.returncode)


def _leftovers(process: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """What a killed process wrote before it died (nothing if its pipes stay open)."""
    try:
        return process.communicate(timeout=_GRACE_SECONDS)
    except (subprocess.TimeoutExpired, ValueError):
        return b"", b""
