"""Python agent folders, google-adk's layout, loaded and reloaded in every process.

An agents folder ``DIR`` holds one folder per app: ``DIR/<name>/__init__.py`` (which
usually says ``from . import agent``) and ``DIR/<name>/agent.py`` defining
``root_agent`` (or ``app``, an :class:`~adk_actors.engine.App`); or a module file
``DIR/<name>.py`` defining them, which stands for the folder ``DIR/<name>`` (no
``__init__.py`` there: Python imports the module first). As google-adk's agent
loader does, :func:`load_folder_app` puts ``DIR`` on ``sys.path``, reads the app's
``.env`` (:func:`load_dotenv_for_agent`), imports ``<name>`` and takes its ``app`` or
``root_agent``, else imports ``<name>.agent`` and takes the same.

Reload: an app's *stamp* is the modification times and sizes of its ``*.py`` files and
of the ``.env`` file it reads. Each process keeps the app it loaded with the stamp it
loaded it at; a load that finds another stamp imports the app again (its modules are
dropped from ``sys.modules`` first), so the next turn after a save runs the new code,
while a turn already running keeps the objects it started with. A new version that
fails to import is recorded (:func:`folder_error`) and the last good version keeps
serving; with no good version yet, the load raises :class:`AgentDefinitionError`.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._exceptions import AgentDefinitionError
from ._app import App, as_app

__all__ = [
    "ENV_FILE",
    "env_stamp",
    "folder_error",
    "is_python_agent_folder",
    "is_python_agent_module",
    "load_dotenv_for_agent",
    "load_folder_app",
    "remember_explicit_env",
]

ENV_FILE = ".env"
_SKIPPED = frozenset({"__pycache__", ".adk", "tmp"})

_LOCK = threading.RLock()
_EXPLICIT_ENV: frozenset[str] | None = None


@dataclass
class _Loaded:
    stamp: tuple[Any, ...]  # the stamp of the files last tried
    app: App | None  # the last good version (None: none yet)
    error: str | None  # why the files of ``stamp`` did not load (None: they did)


_LOADED: dict[str, _Loaded] = {}  # agent folder -> what this process holds of it


def is_python_agent_folder(folder: Path) -> bool:
    """Whether ``folder`` is a Python agent (``agent.py``, or ``__init__.py`` with no
    ``root_agent.yaml`` beside it: google-adk tries the package before the YAML file)."""
    if (folder / "agent.py").is_file():
        return True
    return (folder / "__init__.py").is_file() and not (folder / "root_agent.yaml").is_file()


def is_python_agent_module(folder: Path) -> bool:
    """Whether agent ``folder``'s name is a module file beside it (``<folder>.py``) that
    Python imports by that name before the folder: one with no ``__init__.py``."""
    return folder.with_name(f"{folder.name}.py").is_file() and not (folder / "__init__.py").is_file()


def remember_explicit_env() -> frozenset[str]:
    """The environment variables set before any ``.env`` was read (taken at the first
    call: call it early, before forking, so that every process of a host shares it).
    As in google-adk, these are never overridden by a ``.env``."""
    global _EXPLICIT_ENV
    if _EXPLICIT_ENV is None:
        _EXPLICIT_ENV = frozenset(os.environ)
    return _EXPLICIT_ENV


def _env_file(folder: Path) -> Path | None:
    """The ``.env`` google-adk reads for an agent folder: the nearest one from the
    folder up to the filesystem's root (only that one)."""
    for candidate in (folder, *folder.parents):
        path = candidate / ENV_FILE
        if path.is_file():
            return path
    return None


def load_dotenv_for_agent(folder: Path) -> Path | None:
    """Read the ``.env`` of the agent in ``folder`` (the nearest one, :func:`_env_file`)
    into ``os.environ`` over values an earlier ``.env`` set, but never over a variable
    set before the first one was read (:func:`remember_explicit_env`). Nothing when
    ``ADK_DISABLE_LOAD_DOTENV`` is true (google-adk's switch). Returns the file read."""
    if os.environ.get("ADK_DISABLE_LOAD_DOTENV", "").lower() in ("1", "true", "yes"):
        return None
    from dotenv import dotenv_values  # only an agents folder needs python-dotenv

    explicit = remember_explicit_env()
    path = _env_file(folder.resolve())
    if path is None:
        return None
    for key, value in dotenv_values(path).items():
        if value is not None and key not in explicit:
            os.environ[key] = value
    return path


def env_stamp(folder: Path) -> tuple[Any, ...]:
    """The path, modification time and size of the ``.env`` an agent folder reads (empty: none)."""
    path = _env_file(folder.resolve())
    if path is None:
        return ()
    try:
        stat = path.stat()
    except OSError:
        return ()
    return (str(path), stat.st_mtime_ns, stat.st_size)


def _stamp(folder: Path) -> tuple[Any, ...]:
    files = sorted(p for p in folder.rglob("*.py") if not _SKIPPED.intersection(p.relative_to(folder).parts))
    if is_python_agent_module(folder):
        files.append(folder.with_name(f"{folder.name}.py"))
    env = _env_file(folder)
    if env is not None:
        files.append(env)
    stamp: list[Any] = []
    for path in files:
        try:
            stat = path.stat()
        except OSError:  # deleted meanwhile: the next load sees it gone
            continue
        stamp.append((str(path), stat.st_mtime_ns, stat.st_size))
    return tuple(stamp)


def _describe(exc: BaseException, folder: Path) -> str:
    """One line of the error, with the place in the agent's files it comes from."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}: {type(exc).__name__}: {exc.msg}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(str(folder))]
    where = f"{frames[-1].filename}:{frames[-1].lineno}: " if frames else ""
    return where + "".join(traceback.format_exception_only(type(exc), exc)).strip().replace("\n", " ")


def _import(name: str, folder: Path) -> App:
    """Import app ``name`` from the agents folder above ``folder``, afresh."""
    agents_dir = str(folder.parent)
    if agents_dir not in sys.path:
        sys.path.insert(0, agents_dir)
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]
    importlib.invalidate_caches()
    load_dotenv_for_agent(folder)
    package = importlib.import_module(name)
    for candidate in (package, None):
        if candidate is None:
            try:
                candidate = importlib.import_module(f"{name}.agent")
            except ModuleNotFoundError as exc:
                if exc.name != f"{name}.agent":
                    raise
                break
        found = getattr(candidate, "app", None)
        if isinstance(found, App):
            return found
        if getattr(candidate, "root_agent", None) is not None:
            return as_app(candidate.root_agent)
    if is_python_agent_module(folder):
        raise AgentDefinitionError(f"no root_agent found for {name!r}: define root_agent in {folder}.py")
    raise AgentDefinitionError(f"no root_agent found for {name!r}: define root_agent in {folder / 'agent.py'} "
                               f"(and `from . import agent` in {folder / '__init__.py'})")


def load_folder_app(folder: Path) -> App:
    """The app of agent folder ``folder`` (its name is the folder's), imported again
    if its files changed since this process last loaded it. A version that does not
    import: the last good one (its error kept for :func:`folder_error`), or
    :class:`AgentDefinitionError` naming the error when there is none."""
    folder = folder.resolve()
    key = str(folder)
    with _LOCK:
        stamp = _stamp(folder)
        held = _LOADED.get(key)
        if held is None or held.stamp != stamp:
            try:
                app = _import(folder.name, folder)
            except Exception as exc:  # the user's code: any error it raises while importing
                error = _describe(exc, folder)
                held = _LOADED[key] = _Loaded(stamp, held.app if held is not None else None, error)
            else:
                held = _LOADED[key] = _Loaded(stamp, app, None)
        if held.app is None:
            raise AgentDefinitionError(f"app {folder.name!r} does not load: {held.error}")
        return held.app


def folder_error(folder: Path) -> str | None:
    """Why the current files of agent folder ``folder`` do not load (they are loaded
    first if they changed), or None when they do."""
    try:
        load_folder_app(folder)
    except AgentDefinitionError:
        pass
    held = _LOADED.get(str(folder.resolve()))
    return held.error if held is not None else None
