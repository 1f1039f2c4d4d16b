"""google-adk's ``ExecuteBashTool`` and ``BashToolPolicy`` (``google.adk.tools.bash_tool``):
a command the model gives, run in a workspace directory after a person approved it.

A call of ``execute_bash`` (one string parameter, ``command``), in order:

1. a missing or empty command, or one the policy refuses, returns ``{"error": ...}``
   (the policy: any of ``blocked_operators`` appearing anywhere in the command refuses
   it; then, unless ``allowed_command_prefixes`` holds ``"*"``, the command split as a
   shell would split it must begin with the words of one of the prefixes, so ``ls``
   allows ``ls -la`` but not ``lsof`` nor ``/bin/ls``);
2. without a confirmation yet, a confirmation is requested (google-adk's
   ``request_confirmation``, its hint naming the command), the call's summary is
   skipped and it returns ``{"error": ...}`` saying approval is awaited; the run emits
   the ``adk_request_confirmation`` call and this call runs again with the answer; a
   rejection returns ``{"error": ...}``;
3. off POSIX, ``{"error": ...}``;
4. the command runs without a shell (its words as the program and its arguments;
   ``|``, ``;`` and ``$(`` reach it as plain arguments) with an empty stdin, in
   ``workspace``, in a new
   session (its own process group), with no core dumps and the policy's memory, file
   size and process limits; its stdout and stderr are read until it ends;
5. it returns ``{"stdout", "stderr", "returncode"}`` (an empty stream as a
   placeholder text); its process group is then killed, so nothing it started lives
   on. After ``timeout_seconds`` the group is killed and ``{"error", "stdout",
   "stderr", "returncode"}`` returned with what it wrote; when the call is cancelled
   the group is killed and the process reaped before the cancellation goes on; a
   failure to start returns ``{"error", "stdout", "stderr"}``.

The empty stdin is on purpose, where google-adk's command reads the stdin of the
process that runs it: here that is a host's run worker or an ``adk-actors`` command,
whose stdin is a terminal, a pipe or a supervisor's, not anything the model was given.
A command reading it (``cat``, ``read``, a program asking a question) would take the
input a person types to ``adk-actors run``, or what a supervisor pipes in, or wait
until ``timeout_seconds`` on a terminal nobody watches; with an empty stdin it sees
end of input at once and goes on. Input for a command goes in the command itself
or in a file in the workspace.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import pathlib
import shlex
import signal
from typing import Any

from .._types import FunctionDeclaration
from ._base import ToolContext
from ._classes import BaseTool

try:
    import resource as _resource
except ModuleNotFoundError:  # not POSIX
    _resource = None  # type: ignore[assignment]

__all__ = ["BashToolPolicy", "ExecuteBashTool"]

_log = logging.getLogger("adk_actors.tools.bash")

_NO_STDOUT = "<nothing on stdout>"
_NO_STDERR = "<nothing on stderr>"


@dataclasses.dataclass(frozen=True)
class BashToolPolicy:
    """Which commands may run and under which limits (google-adk's fields and defaults).

    ``allowed_command_prefixes``: ``("*",)`` (the default) allows any command, else a
    command must begin with the shell words of one entry (see the module); an entry
    that does not parse is logged and never matches. ``blocked_operators``: strings
    that refuse a command wherever they appear in it. ``timeout_seconds``: the
    command's time (None: no limit). ``max_memory_bytes``, ``max_file_size_bytes``,
    ``max_child_processes``: the command's resource limits (None: the system's)."""

    allowed_command_prefixes: tuple[str, ...] = ("*",)
    blocked_operators: tuple[str, ...] = ()
    timeout_seconds: int | None = 30
    max_memory_bytes: int | None = None
    max_file_size_bytes: int | None = None
    max_child_processes: int | None = None

    def __post_init__(self) -> None:
        for prefix in self.allowed_command_prefixes:
            try:
                shlex.split(prefix)
            except ValueError as exc:
                _log.warning("allowed_command_prefixes entry %r does not parse and is ignored: %s", prefix, exc)


def _refusal(command: str, policy: BashToolPolicy) -> str | None:
    """Why ``policy`` refuses ``command``, or None when it may run."""
    text = command.strip()
    if not text:
        return "A command is needed."
    for operator in policy.blocked_operators:
        if operator in command:
            return f"The command holds a blocked operator: {operator}"
    if "*" in policy.allowed_command_prefixes:
        return None
    try:
        words = shlex.split(text)
    except ValueError:
        return "The command could not be parsed."
    if not words:
        return "A command is needed."
    for prefix in policy.allowed_command_prefixes:
        try:
            start = shlex.split(prefix)
        except ValueError:
            continue
        if start and words[:len(start)] == start:
            return None
    return f"The command is not allowed. Allowed prefixes: {', '.join(policy.allowed_command_prefixes) or '<none>'}"


def _limits(policy: BashToolPolicy) -> None:
    """In the child, before the command starts: no core dumps, the policy's limits."""
    if _resource is None:
        return
    try:
        _resource.setrlimit(_resource.RLIMIT_CORE, (0, 0))
        for limit, value in ((_resource.RLIMIT_AS, policy.max_memory_bytes),
                             (_resource.RLIMIT_FSIZE, policy.max_file_size_bytes),
                             (_resource.RLIMIT_NPROC, policy.max_child_processes)):
            if value:
                _resource.setrlimit(limit, (value, value))
    except (ValueError, OSError) as exc:
        _log.warning("the command's resource limits could not be set: %s", exc)


def _kill_group(process: asyncio.subprocess.Process) -> None:
    """SIGKILL the process's group (its own session's); gone already is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _text(data: bytes | None, empty: str) -> str:
    return data.decode(errors="replace") if data else empty


class ExecuteBashTool(BaseTool):
    """Runs a command in ``workspace`` (default: the current directory) once a person
    approved it, under ``policy`` (default: any command; see the module)."""

    def __init__(self, *, workspace: pathlib.Path | None = None, policy: BashToolPolicy | None = None) -> None:
        policy = policy or BashToolPolicy()
        allowed = ("any command" if "*" in policy.allowed_command_prefixes else
                   f"commands that begin with: {', '.join(policy.allowed_command_prefixes) or '<none>'}")
        super().__init__(name="execute_bash", description=(
            f"Run a bash command in the workspace directory. Allowed: {allowed}. A person approves every "
            "command before it runs."))
        self._workspace = workspace if workspace is not None else pathlib.Path.cwd()
        self._policy = policy

    def _get_declaration(self) -> FunctionDeclaration:
        return FunctionDeclaration(name=self.name, description=self.description, parameters_json_schema={
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command to run."}},
            "required": ["command"]})

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """One call (see the module)."""
        command = args.get("command")
        if not isinstance(command, str) or not command:
            return {"error": "A command is needed."}
        refused = _refusal(command, self._policy)
        if refused:
            return {"error": refused}
        if not tool_context.tool_confirmation:
            tool_context.request_confirmation(hint=f"Approve or reject this bash command: {command}")
            tool_context.actions.skip_summarization = True
            return {"error": "This call waits for a person to approve or reject it."}
        if not tool_context.tool_confirmation.confirmed:
            return {"error": "A person rejected this call."}
        if os.name != "posix":
            return {"error": "ExecuteBashTool runs on POSIX systems only."}
        return await self._run(command)

    async def _run(self, command: str) -> dict[str, Any]:
        policy = self._policy
        # started apart from this task: a cancellation while the pipes are being set up
        # would otherwise kill the command alone (asyncio's cleanup), not its group
        spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
            *shlex.split(command), cwd=str(self._workspace), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True,
            preexec_fn=lambda: _limits(policy)))
        try:
            process = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                started = await spawn
                _kill_group(started)
                await started.wait()
            raise
        except Exception as exc:
            _log.exception("execute_bash could not start the command")
            return {"error": f"The command could not run: {exc}", "stdout": _NO_STDOUT, "stderr": _NO_STDERR}
        try:
            out, err = await asyncio.wait_for(process.communicate(), timeout=policy.timeout_seconds)
        except TimeoutError:
            _kill_group(process)
            out, err = await process.communicate()
            return {"error": f"The command did not end within {policy.timeout_seconds} seconds.",
                    "stdout": _text(out, _NO_STDOUT), "stderr": _text(err, _NO_STDERR),
                    "returncode": process.returncode}
        except asyncio.CancelledError:
            _kill_group(process)
            with contextlib.suppress(Exception):
                await asyncio.shield(process.wait())
            raise
        finally:
            _kill_group(process)  # whatever the command left running in its group
        return {"stdout": _text(out, _NO_STDOUT), "stderr": _text(err, _NO_STDERR),
                "returncode": process.returncode}

    def _detect_error_in_response(self, response: Any) -> str | None:
        """google-adk's telemetry hook: ``TOOL_ERROR`` for a result with an error."""
        return "TOOL_ERROR" if isinstance(response, dict) and response.get("error") else None
