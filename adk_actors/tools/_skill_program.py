"""The program ``run_skill_script`` hands to a code executor: self-contained Python
that writes the skill's files into a fresh temporary folder, runs one script there and
reports, so it runs wherever the executor runs code (a sandboxed child process with
``SandboxedCodeExecutor``, a plain child interpreter with ``UnsafeLocalCodeExecutor``),
never in the agent's process.

* A ``.py`` script runs in the program's own interpreter (``runpy``, as ``__main__``,
  ``sys.argv`` set, its folder first on ``sys.path``); a non-zero ``SystemExit`` is
  the program's exit status.
* A ``.sh`` / ``.bash`` script runs under ``bash`` as a child process (which
  ``SandboxedCodeExecutor`` refuses: a shell script fails there), with a timeout; its
  output and status come back as one JSON line on stdout, ``{"__skill_shell__": true,
  "stdout", "stderr", "returncode"[, "timeout": true]}``.
* With artifact saving on, the files the run added or changed are printed at the end,
  base64, after a marker carrying a random nonce, under caps on their size and count.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from ..skills import models

__all__ = ["GENERATED_FILES_MARKER", "MAX_ARTIFACTS", "MAX_ARTIFACTS_TOTAL", "MAX_ARTIFACT_BYTES", "argv_of",
           "program", "take_generated"]

GENERATED_FILES_MARKER = "__ADK_ACTORS_SKILL_FILES__:"
MAX_ARTIFACT_BYTES = 5 * 1024 * 1024
MAX_ARTIFACTS_TOTAL = 16 * 1024 * 1024
MAX_ARTIFACTS = 50

_PROGRAM = r'''
import base64, json, os, runpy, subprocess, sys, tempfile
from pathlib import PurePosixPath, PureWindowsPath

FILES = json.loads(%(files)s)
SCRIPT = %(script)s
ARGV = json.loads(%(argv)s)
SHELL = %(shell)s
TIMEOUT = %(timeout)s
MARKER = %(marker)s
CAPS = (%(max_file)d, %(max_total)d, %(max_count)d)


def safe(root, relative):
    pure = PurePosixPath(relative)
    bad = (not relative or relative == "." or pure.is_absolute() or ".." in pure.parts
           or PureWindowsPath(relative).is_absolute() or PureWindowsPath(relative).drive)
    where = os.path.realpath(os.path.join(root, relative))
    if bad or where == root or os.path.commonpath([root, where]) != root:
        raise PermissionError("%%r would leave the skill folder" %% relative)
    return where


def unpack(root):
    for relative, (kind, data) in FILES.items():
        where = safe(root, relative)
        os.makedirs(os.path.dirname(where), exist_ok=True)
        with open(where, "wb") as handle:
            handle.write(data.encode("utf-8") if kind == "t" else base64.b64decode(data))


def snapshot(root):
    seen = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            try:
                stat = os.stat(path)
            except OSError:
                continue
            seen[os.path.relpath(path, root).replace(os.sep, "/")] = (stat.st_size, stat.st_mtime_ns)
    return seen


def report(root, before):
    files, skipped, total = [], [], 0
    for relative, mark in sorted(snapshot(root).items()):
        if "__pycache__" in relative.split("/") or relative.endswith(".pyc") or before.get(relative) == mark:
            continue
        if mark[0] > CAPS[0] or total + mark[0] > CAPS[1] or len(files) >= CAPS[2]:
            if len(skipped) < CAPS[2]:
                skipped.append(relative)
            continue
        with open(os.path.join(root, relative), "rb") as handle:
            data = handle.read()
        total += len(data)
        import mimetypes
        files.append({"path": relative, "content_b64": base64.b64encode(data).decode("ascii"),
                      "mime_type": mimetypes.guess_type(relative)[0] or "application/octet-stream"})
    if files or skipped:
        print(MARKER + json.dumps({"files": files, "skipped_paths": skipped}))


def run(root):
    if not SHELL:
        sys.argv = [SCRIPT] + ARGV
        sys.path.insert(0, os.path.dirname(os.path.abspath(SCRIPT)))
        try:
            runpy.run_path(SCRIPT, run_name="__main__")
        except SystemExit as stop:
            if stop.code not in (None, 0):
                raise
        return
    try:
        done = subprocess.run(["bash", SCRIPT] + ARGV, capture_output=True, text=True, encoding="utf-8",
                              errors="replace", timeout=TIMEOUT, cwd=root)
        result = {"stdout": done.stdout, "stderr": done.stderr, "returncode": done.returncode}
    except subprocess.TimeoutExpired as late:
        out = late.stdout or ""
        result = {"stdout": out if isinstance(out, str) else out.decode("utf-8", "replace"),
                  "stderr": "The script was stopped after %%s seconds." %% TIMEOUT, "returncode": -1, "timeout": True}
    print("\n" + json.dumps(dict(result, __skill_shell__=True)))


def main():
    back = os.getcwd()
    with tempfile.TemporaryDirectory() as made:
        root = os.path.realpath(made)
        unpack(root)
        before = snapshot(root) if MARKER else {}
        os.chdir(root)
        try:
            run(root)
        finally:
            if MARKER:
                try:
                    report(root, before)
                except Exception:
                    pass
            os.chdir(back)


main()
'''


def _files(skill: models.Skill) -> dict[str, list[str]]:
    """Every file of ``skill`` by its path in the skill folder: ``["t", text]`` or
    ``["b", base64]``."""
    files: dict[str, list[str]] = {}
    resources = skill.resources
    for folder, contents in (("references", resources.references), ("assets", resources.assets),
                             ("scripts", {k: v.src for k, v in resources.scripts.items()})):
        for name, content in contents.items():
            files[f"{folder}/{name}"] = (["t", content] if isinstance(content, str)
                                         else ["b", base64.b64encode(content).decode("ascii")])
    return files


def program(skill: models.Skill, script: str, argv: list[str], *, shell: bool, timeout: int,
            marker: str | None) -> str:
    """The program that runs ``script`` (``scripts/<name>``) of ``skill`` with ``argv``
    (see the module); ``marker`` (the files marker with its nonce) asks for the
    generated files, None for none. Every value is embedded as a Python literal."""
    return _PROGRAM % {
        "files": repr(json.dumps(_files(skill))), "script": repr(script), "argv": repr(json.dumps(argv)),
        "shell": repr(shell), "timeout": repr(timeout), "marker": repr(marker or ""),
        "max_file": MAX_ARTIFACT_BYTES, "max_total": MAX_ARTIFACTS_TOTAL, "max_count": MAX_ARTIFACTS,
    }


def argv_of(script_args: Any, short_options: dict[str, Any] | None, positional_args: list[Any] | None) -> list[str]:
    """The script's arguments: ``script_args`` as given when a list; else each long
    option as ``--key value``, each short option as ``-k value``, then ``--`` and the
    positional arguments."""
    if isinstance(script_args, list):
        return [str(v) for v in script_args]
    argv: list[str] = []
    for key, value in (script_args or {}).items():
        argv += [f"--{key}", str(value)]
    for key, value in (short_options or {}).items():
        argv += [f"-{key}", str(value)]
    if positional_args:
        argv.append("--")
        argv += [str(v) for v in positional_args]
    return argv


def take_generated(stdout: str, marker: str) -> tuple[str, list[dict[str, Any]], list[str]]:
    """``stdout`` without the lines of ``marker``, the files those lines reported and the
    paths they said were skipped (a payload that is not JSON is dropped)."""
    if not marker or marker not in stdout:
        return stdout, [], []
    kept: list[str] = []
    files: list[dict[str, Any]] = []
    skipped: list[str] = []
    for line in stdout.splitlines(keepends=True):
        at = line.find(marker)
        if at < 0:
            kept.append(line)
            continue
        if line[:at]:
            kept.append(line[:at] if line[:at].endswith("\n") else line[:at] + "\n")
        try:
            payload = json.loads(line[at + len(marker):].strip() or "null")
        except json.JSONDecodeError:
            continue
        if isinstance(payload, dict):
            files += [f for f in payload.get("files") or [] if isinstance(f, dict)]
            skipped += [p for p in payload.get("skipped_paths") or [] if isinstance(p, str)]
    return "".join(kept), files, skipped
