"""``run_skill_script``: runs one of a skill's scripts through a code executor (the
toolset's, else the agent's), never in the agent's process: the script and the
skill's files go to the executor as one self-contained program (``_skill_program``).

Its name, parameters (``skill_name``, ``file_path``, ``args``, ``short_options``,
``positional_args``), response keys (``skill_name``, ``file_path``, ``stdout``,
``stderr``, ``status``, and ``saved_artifacts`` / ``skipped_artifacts``) and error codes
are google-adk 2.13's; descriptions and error texts are ours.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import secrets
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from .._types import FunctionDeclaration, Part
from ..code_executors import CodeExecutionInput
from ..skills import _instruction as names
from ..skills import models
from ..skills._paths import safe_relative_path
from . import _skill_program as prog
from ._base import ToolContext
from ._skill_tools import (
    SkillToolBase,
    count_failure,
    error,
    fetch_or_error,
    missing,
    object_schema,
    string_schema,
)

if TYPE_CHECKING:
    from .skill_toolset import SkillToolset

__all__ = ["RunSkillScriptTool"]

_log = logging.getLogger("adk_actors.tools")

_SHELL = ("sh", "bash")
_SUPPORTED = ("py", *_SHELL)


def _check_arguments(script_args: Any, short_options: Any, positional_args: Any) -> dict[str, Any] | None:
    """``INVALID_ARGUMENTS`` listing every argument of the wrong type (``args`` a dict or
    a list; ``short_options`` a dict; ``positional_args`` a list; no options with a
    list of ``args``), or None."""
    lines = []
    if script_args is not None and not isinstance(script_args, dict | list):
        lines.append(f"'args' has to be an object or a list of strings, not {type(script_args).__name__}.")
    if short_options is not None and not isinstance(short_options, dict):
        lines.append(f"'short_options' has to be an object, not {type(short_options).__name__}.")
    if positional_args is not None and not isinstance(positional_args, list):
        lines.append(f"'positional_args' has to be a list of strings, not {type(positional_args).__name__}.")
    if isinstance(script_args, list) and (short_options or positional_args):
        lines.append("With 'args' given as a list, 'short_options' and 'positional_args' cannot be given.")
    return error("\n".join(lines), "INVALID_ARGUMENTS") if lines else None


def _shell_envelope(stdout: str) -> dict[str, Any] | None:
    """The shell result the program printed: all of ``stdout`` as JSON, else its last
    line that is such an object; None when there is none."""
    try:
        whole = json.loads(stdout)
    except ValueError:
        whole = None
    if isinstance(whole, dict) and whole.get("__skill_shell__"):
        return whole
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if not (line.startswith("{") and line.endswith("}")):
            continue
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict) and found.get("__skill_shell__"):
            return found
    return None


def _status(rc: int | None, stdout: str, stderr: str) -> str:
    """``error`` for a non-zero status, or for stderr without stdout when no status is
    known; ``warning`` for stderr beside stdout; else ``success``."""
    if rc is not None and rc != 0:
        return "error"
    if stderr and not stdout:
        return "error"
    return "warning" if stderr else "success"


def _skip(skipped: list[str], path: str) -> None:
    if len(skipped) < prog.MAX_ARTIFACTS and path not in skipped:
        skipped.append(path)


async def _save_generated(tool_context: ToolContext, files: list[dict[str, Any]], skipped: list[str]) -> list[str]:
    """Save each generated file as an artifact under its path, in order, skipping (with
    a warning) an unsafe path, content that is not base64, and a file past the caps
    (those land in ``skipped``); a save that fails is logged. Returns the saved names."""
    saved: list[str] = []
    total = 0
    for item in files:
        path, encoded = item.get("path"), item.get("content_b64")
        if not isinstance(path, str) or not path or not isinstance(encoded, str):
            continue
        pure = PurePosixPath(path.replace("\\", "/"))
        if pure.is_absolute() or ".." in pure.parts or path.startswith("user:") or str(pure).startswith("user:"):
            _log.warning("generated skill file with an unsafe path not saved: %s", path)
            continue
        try:
            data = base64.b64decode(encoded)
        except ValueError:
            _log.warning("generated skill file %s could not be decoded", path)
            continue
        name = str(pure)
        if (len(data) > prog.MAX_ARTIFACT_BYTES or total + len(data) > prog.MAX_ARTIFACTS_TOTAL
                or len(saved) >= prog.MAX_ARTIFACTS):
            _log.warning("generated skill file %s not saved: past the size or count limit", name)
            _skip(skipped, name)
            continue
        mime_type = item.get("mime_type") if isinstance(item.get("mime_type"), str) else None
        try:
            await tool_context.save_artifact(
                filename=name, artifact=Part.from_bytes(data=data, mime_type=mime_type or "application/octet-stream"))
        except Exception:
            _log.exception("generated skill file %s could not be saved as an artifact", name)
            continue
        saved.append(name)
        total += len(data)
    return saved


class RunSkillScriptTool(SkillToolBase):
    """``run_skill_script``: see the module."""

    TOOL_NAME = names.RUN_SKILL_SCRIPT

    def __init__(self, toolset: SkillToolset) -> None:
        super().__init__(toolset, "Runs a script from a skill's scripts/ folder.")

    def _get_declaration(self) -> FunctionDeclaration:
        return self._declare(object_schema({
            "skill_name": string_schema("Name of the skill."),
            "file_path": string_schema("Path of the script inside the skill, such as 'scripts/setup.py'."),
            "args": {"anyOf": [{"type": "object"}, {"type": "array", "items": {"type": "string"}}],
                     "description": "Optional arguments for the script: an object of long options"
                                    " (--key value), or a list of strings that is the whole command line,"
                                    " in which case neither 'short_options' nor 'positional_args' may be"
                                    " given."},
            "short_options": {"type": "object",
                              "description": "Optional single-hyphen options (-k value) as an object."
                                             " Not allowed when 'args' is a list."},
            "positional_args": {"type": "array", "items": {"type": "string"},
                                "description": "Optional positional arguments, after the options."
                                               " Not allowed when 'args' is a list."},
        }, ["skill_name", "file_path"]))

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """In order: the arguments are checked (``INVALID_ARGUMENTS``); the skill is
        fetched (``REGISTRY_ERROR``, ``SKILL_NOT_FOUND``); the script is looked up with
        or without its ``scripts/`` prefix (``SCRIPT_NOT_FOUND``, then
        ``SCRIPT_NOT_FOUND_FATAL`` from the second miss of an invocation on); a code
        executor is found (``NO_CODE_EXECUTOR``); the script is run (:meth:`_execute`)."""
        invalid = missing(args, "skill_name", "file_path") or _check_arguments(
            args.get("args"), args.get("short_options"), args.get("positional_args"))
        if invalid is not None:
            return invalid
        skill_name: str = args["skill_name"]
        file_path: str = args["file_path"]
        skill, failed = await fetch_or_error(self._toolset, skill_name, tool_context.invocation_id)
        if skill is None:
            return failed
        if skill.resources.get_script(file_path.removeprefix("scripts/")) is None:
            misses = count_failure(tool_context, "script")
            if misses > 1:
                return error(f"The skill '{skill_name}' has no script '{file_path}'. That is {misses} failed"
                             " script lookups in this turn: do not try another script; tell the user and"
                             " stop.", "SCRIPT_NOT_FOUND_FATAL")
            return error(f"The skill '{skill_name}' has no script '{file_path}'.", "SCRIPT_NOT_FOUND")
        executor = self._toolset._code_executor or getattr(tool_context._invocation_context.agent,
                                                           "code_executor", None)
        if executor is None:
            return error("No code executor is set, on the SkillToolset or on the agent, so scripts cannot"
                         " run.", "NO_CODE_EXECUTOR")
        return await self._execute(executor, tool_context, skill, file_path, args)

    async def _execute(self, executor: Any, tool_context: ToolContext, skill: models.Skill, file_path: str,
                       args: dict[str, Any]) -> dict[str, Any]:
        """In order: the path is checked (``PermissionError`` for one that climbs out,
        reported as ``EXECUTION_ERROR``) and its extension (``UNSUPPORTED_SCRIPT_TYPE``
        but for .py, .sh, .bash); the program is built and run by ``executor`` on a
        worker thread; a shell script's own output and status are read from its
        envelope; generated files, when asked for, are taken out of stdout and saved.
        An exception on the way is ``EXECUTION_ERROR`` with its type and the start of
        its message."""
        try:
            try:
                relative = safe_relative_path(file_path.replace("\\", "/").removeprefix("./").removeprefix("scripts/"))
            except ValueError as exc:
                raise PermissionError(f"{file_path!r} would leave the skill folder") from exc
            extension = relative.rsplit(".", 1)[-1].lower() if "." in relative else ""
            if extension not in _SUPPORTED:
                shown = f"'.{extension}'" if "." in file_path else "(no extension)"
                return error(f"Scripts of type {shown} cannot be run; .py, .sh and .bash can.",
                             "UNSUPPORTED_SCRIPT_TYPE")
            shell = extension in _SHELL
            toolset = self._toolset
            marker = f"{prog.GENERATED_FILES_MARKER}{secrets.token_hex(16)}:" if toolset._save_output_artifacts else ""
            code = prog.program(skill, f"scripts/{relative}",
                                prog.argv_of(args.get("args"), args.get("short_options"), args.get("positional_args")),
                                shell=shell, timeout=toolset._script_timeout, marker=marker or None)
            result = await asyncio.to_thread(executor.execute_code, tool_context._invocation_context,
                                             CodeExecutionInput(code=code))
            stdout, stderr, rc = result.stdout or "", result.stderr or "", getattr(result, "exit_code", None)
            stdout, generated, skipped = prog.take_generated(stdout, marker)
            if shell:
                stdout, stderr, rc = self._shell_result(stdout, stderr, skill, file_path)
            status = _status(rc, stdout, stderr)
            response: dict[str, Any] = {"skill_name": skill.name, "file_path": file_path, "stdout": stdout,
                                        "stderr": stderr, "status": status}
            saved = await _save_generated(tool_context, generated, skipped) if generated else []
            if saved:
                response["saved_artifacts"] = saved
            if skipped:
                response["skipped_artifacts"] = skipped
            return response
        except Exception as exc:
            _log.exception("script %r of skill %r failed to run", file_path, skill.name)
            message = str(exc) if len(str(exc)) <= 200 else str(exc)[:200] + "..."
            return error(f"The script '{file_path}' could not be run:\n{type(exc).__name__}: {message}",
                         "EXECUTION_ERROR")

    @staticmethod
    def _shell_result(stdout: str, stderr: str, skill: models.Skill, file_path: str) -> tuple[str, str, int | None]:
        """A shell script's stdout, stderr (its exit status added when non-zero and not
        a timeout) and status from the envelope; the program's own when none was
        printed (logged), with no status."""
        envelope = _shell_envelope(stdout) if stdout else None
        if envelope is None:
            if stdout:
                _log.warning("no shell result in the output of %r of skill %r", file_path, skill.name)
            return stdout, stderr, None
        out, err, rc = envelope.get("stdout", ""), envelope.get("stderr", ""), envelope.get("returncode", 0)
        if rc != 0 and not envelope.get("timeout", False):
            err = f"{err.rstrip()}\nThe script exited with status {rc}." if err else f"The script exited with status {rc}."
        return out, err, rc

    def _detect_error_in_response(self, response: Any) -> str | None:
        """google-adk's telemetry hook: the error code, or a failed run's."""
        code = super()._detect_error_in_response(response)
        if code is None and isinstance(response, dict) and response.get("status") == "error":
            return "SKILL_SCRIPT_EXECUTION_ERROR"
        return code
