"""Watch an agents folder and say, at once, which app reloaded and which does not load.

The reload itself needs no watcher: every process of the host loads an agent folder's
app again when its files changed (``engine._agent_folders``), so the next turn after
a save runs the new code. :class:`AgentFolderWatcher` is what ``adk-actors web DIR``
runs beside it: a thread of watchfiles notes which apps' files changed; the serving
process's main loop calls :meth:`AgentFolderWatcher.poll`, which loads each of them
in that process and reports ``reloaded`` or its import error (the last good version
keeps serving).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from pathlib import Path

from .._exceptions import AgentDefinitionError
from ..engine import APP_NAME, AppCatalog

__all__ = ["AgentFolderWatcher"]

_SOURCE_SUFFIXES = frozenset({".py", ".yaml", ".yml"})  # what an app's code is written in


class AgentFolderWatcher:
    """Watches ``catalog.agents_dir``; ``report(line, error)`` is told each outcome."""

    def __init__(self, catalog: AppCatalog, report: Callable[[str, bool], None]) -> None:
        if catalog.agents_dir is None:
            raise ValueError("AgentFolderWatcher needs a catalog with an agents_dir")
        self.catalog = catalog
        self.root = Path(catalog.agents_dir).resolve()
        self.report = report
        self._changed: queue.SimpleQueue[set[str]] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="agent-folder-watcher", daemon=True)
        self._errors: dict[str, str | None] = {}

    def start(self) -> None:
        """Note the apps' current errors (reported once), then start watching."""
        for name in self.catalog.names():
            self._check(name, quiet_when_ok=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (within watchfiles' step, 50 ms)."""
        self._stop.set()
        self._thread.join(timeout=2)

    def _names(self, paths: set[str]) -> set[str]:
        """The apps the changed ``paths`` belong to: a source file (``.py``, ``.yaml``,
        ``.yml``) or ``.env`` under ``DIR/<name>/``, outside hidden folders and
        ``__pycache__``; a ``DIR/.env`` concerns every app. Other files (an eval set, a
        saved eval result in ``.adk/eval_history``, the host's data) are no app's, as
        google-adk's reloader takes only those kinds of file."""
        names: set[str] = set()
        for path in paths:
            try:
                parts = Path(path).relative_to(self.root).parts
            except ValueError:
                continue
            if parts == (".env",):
                names.update(self.catalog.names())
            elif (len(parts) > 1 and APP_NAME.fullmatch(parts[0])
                  and not any(p.startswith(".") or p == "__pycache__" for p in parts[1:-1])
                  and (parts[-1] == ".env" or Path(parts[-1]).suffix in _SOURCE_SUFFIXES)):
                names.add(parts[0])
        return names

    def _watch(self) -> None:
        from watchfiles import watch  # only a served agents folder needs watchfiles

        for changes in watch(self.root, stop_event=self._stop, debounce=50, step=20, yield_on_timeout=False,
                             rust_timeout=200):
            names = self._names({path for _change, path in changes})
            if names:
                self._changed.put(names)

    def poll(self) -> None:
        """Load every app whose files changed since the last poll, in this process, and
        report each: reloaded, does not load (with its error), or gone."""
        names: set[str] = set()
        while True:
            try:
                names |= self._changed.get_nowait()
            except queue.Empty:
                break
        for name in sorted(names):
            self._check(name, quiet_when_ok=False)

    def _check(self, name: str, *, quiet_when_ok: bool) -> None:
        if name not in self.catalog:
            if self._errors.pop(name, "absent") != "absent":
                self.report(f"app {name} is gone from {self.root}", False)
            return
        if self.catalog.language(name) != "python":  # a YAML app is read again by its next turn
            if not quiet_when_ok:
                self.report(f"app {name} changed: its next turn reads it again", False)
            self._errors[name] = None
            return
        try:
            self.catalog.load(name)
            serving = "its last good version keeps serving"
        except AgentDefinitionError:
            serving = "its turns fail until it loads"
        error = self.catalog.load_error(name)
        self._errors[name] = error
        if error is not None:
            self.report(f"app {name} does not load: {error} ({serving})", True)
        elif not quiet_when_ok:
            self.report(f"reloaded app {name}: its next turn runs the new code", False)
