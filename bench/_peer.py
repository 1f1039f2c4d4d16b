"""Our side's helpers to run google-adk as its users run it (issue 60).

The peer's files (bench/_google_adk_agent.py, bench/_google_adk_side.py,
bench/_google_adk_standalone.py) are copied into a working folder of the peer's own
and run there by the peer's interpreter with an environment cleared of the variables
that set a path or a venv (``PYTHONPATH``, ``VIRTUAL_ENV``, ...): nothing of this
repository is on its ``sys.path``. Every peer reports the modules it loaded from the repository; a
non-empty list fails the bench (:class:`PeerImportedRepo`). Each run states the
peer's setup (:func:`describe`); bench/turns.py and bench/cluster.py check
google-adk's in-bench text turn against the same turn of a standalone script
(:func:`sanity`), the HTTP benches print that standalone turn as a reference.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
AGENT_FILE = HERE / "_google_adk_agent.py"
SANITY_LIMIT = 1.5  # standalone vs in-bench text turn, either way


class PeerImportedRepo(RuntimeError):
    """google-adk's half loaded a file of this repository: its figures are not its users'."""


class PeerFailed(RuntimeError):
    """google-adk's half exited with an error or printed no result."""


# What would put a folder of ours on the peer's path, or start it from our venv.
PATH_VARIABLES = frozenset({"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONSAFEPATH",
                            "PYTHONNOUSERSITE", "PYTHONPLATLIBDIR", "PYTHONEXECUTABLE", "PYTHONINSPECT",
                            "VIRTUAL_ENV", "__PYVENV_LAUNCHER__"})


def peer_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment without the variables that set an interpreter's
    path or venv (:data:`PATH_VARIABLES`; a user's shell sets none of them for
    google-adk), plus ``extra``."""
    return {**{k: v for k, v in os.environ.items() if k not in PATH_VARIABLES}, **(extra or {})}


def interpreter(python: str) -> str:
    """``python`` as an absolute path (symlinks kept: a venv's python is one), found on
    PATH if it names no folder."""
    if os.sep not in python:
        found = shutil.which(python)
        if found is None:
            raise PeerFailed(f"no interpreter {python!r} on PATH")
        return found
    return os.path.abspath(python)


def peer_folder(label: str, *files: Path) -> Path:
    """A new folder of the peer's own (outside the repository) holding a copy of ``files``."""
    folder = Path(tempfile.mkdtemp(prefix=f"bench-peer-{label}-"))
    for file in files:
        shutil.copy(file, folder / file.name)
    return folder


def check_report(report: dict[str, Any], who: str) -> None:
    """Raise :class:`PeerImportedRepo` naming the modules if ``report["repo_modules"]``
    is not empty, or if it has none (the peer did not check)."""
    if "repo_modules" not in report:
        raise PeerImportedRepo(f"{who}: no report of the modules it loaded")
    if report["repo_modules"]:
        raise PeerImportedRepo(f"{who} loaded files of this repository: {', '.join(report['repo_modules'])}")


def run_side(python: str, args: list[str], timeout: float = 1800, script: str = "_google_adk_side.py",
             env: dict[str, str] | None = None, files: tuple[str, ...] = ()) -> dict[str, Any]:
    """google-adk's half (bench/``script`` ``args``, bench/_google_adk_side.py unless
    told; with the bench/``files`` it imports beside it) run by ``python -s -E`` in a
    folder of its own, with :func:`peer_env` plus ``env``: its JSON object, once :func:`check_report` passed.
    :class:`PeerFailed` with its stderr's tail if it exits non-zero (3: it loaded
    files of the repository, raised as :class:`PeerImportedRepo`)."""
    folder = peer_folder("side", AGENT_FILE, HERE / script, *(HERE / name for name in files))
    try:
        done = subprocess.run([interpreter(python), "-s", "-E", script, str(ROOT), *args], cwd=folder,
                              env=peer_env(env), capture_output=True, text=True, timeout=timeout)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if done.returncode == 3:
        raise PeerImportedRepo(done.stderr.strip().splitlines()[-1])
    if done.returncode != 0 or not done.stdout.strip():
        raise PeerFailed(f"google-adk's half exited {done.returncode}: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    check_report(result, "google-adk's half")
    return result


def standalone_text_turn(python: str, turns: int, store: str = "", timeout: float = 600) -> dict[str, float]:
    """google-adk's text turn (``text_turn_ms``, the median, and ``text_turn_min_ms``)
    from bench/_google_adk_standalone.py run as a user runs a script: ``python
    _google_adk_standalone.py`` in its own folder, no flags, no PYTHONPATH. ``store``
    (the script's STORE: in memory if empty) may name ``{folder}`` (the script's folder)."""
    folder = peer_folder("standalone", AGENT_FILE, HERE / "_google_adk_standalone.py")
    try:
        args = [str(turns)] + ([store.format(folder=folder)] if store else [])
        done = subprocess.run([interpreter(python), "_google_adk_standalone.py", *args], cwd=folder, env=peer_env(),
                              capture_output=True, text=True, timeout=timeout)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if done.returncode != 0 or not done.stdout.strip():
        raise PeerFailed(f"google-adk's standalone turn exited {done.returncode}: {done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def read_exit_report(path: Path, who: str) -> dict[str, Any]:
    """The report a peer server wrote at its end (``report_at_exit``), checked by
    :func:`check_report`; :class:`PeerImportedRepo` if it wrote none."""
    try:
        report: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise PeerImportedRepo(f"{who} wrote no report of the modules it loaded ({error})") from error
    check_report(report, who)
    return report


def describe(setup: dict[str, Any]) -> str:
    """One line naming the peer's setup as it ran."""
    where = f"venv {setup['prefix']}" if setup.get("venv") else f"no venv ({setup['prefix']})"
    a2a = f"a2a-sdk {setup['a2a_sdk']} installed" if setup.get("a2a_sdk") else "a2a-sdk not installed"
    ours = (f"; adk-actors {setup['adk_actors']} installed there too (the project's dev venv)"
            if setup.get("adk_actors") else "")
    prefix = Path(setup["prefix"]).resolve()
    on_path = [p for p in setup.get("sys_path", []) if os.path.isabs(p) and Path(p).resolve().is_relative_to(ROOT)
               and not Path(p).resolve().is_relative_to(prefix)]
    path_note = f"; repository on its sys.path: {on_path}" if on_path else "; repository not on its sys.path"
    return (f"google-adk {setup.get('google_adk')} run by {setup['python']} (Python {setup['python_version']}), "
            f"{where}, {a2a}{ours}{path_note}")


def sanity(standalone: dict[str, float], in_bench: dict[str, Any]) -> tuple[str, bool]:
    """The sanity row: google-adk's text turn from the standalone script and in the
    bench (each a dict with ``text_turn_ms``, the median, and ``text_turn_min_ms``, the
    fastest), and whether they are within :data:`SANITY_LIMIT` of each other. The
    check is on the fastest turn: a per-turn handicap (the issue's import run again
    at every turn) moves it as much as the median, a busy shared machine much less (on
    2 cores shared with others, medians of the same script flipped between 4 and 13 ms
    from run to run, and tenth percentiles still 1.6x apart)."""
    fast_a, fast_b = standalone["text_turn_min_ms"], in_bench["text_turn_min_ms"]
    ratio = max(fast_a, fast_b) / min(fast_a, fast_b)
    ok = ratio <= SANITY_LIMIT
    verdict = "ok" if ok else f"FLAGGED: more than {SANITY_LIMIT}x apart, the in-bench peer is not as its users run it"
    return (f"sanity: google-adk's text turn, standalone script vs in the bench: median "
            f"{standalone['text_turn_ms']:.2f} vs {in_bench['text_turn_ms']:.2f} ms, fastest {fast_a:.2f} vs "
            f"{fast_b:.2f} ms ({fast_b / fast_a:.2f}x on the fastest; within {SANITY_LIMIT}x: {verdict})", ok)
