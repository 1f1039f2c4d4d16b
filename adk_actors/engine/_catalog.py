"""The apps a host serves, and where each one's definition comes from.

Two sources, one rule (:meth:`AppCatalog.source`):

* the configured apps (``[apps] name = "package.module:root_agent"`` or
  ``name = "path/to/root_agent.yaml"``), fixed when the host starts;
* with an ``agents_dir``, every folder ``<agents_dir>/<name>/`` holding an
  ``agent.py`` (or an ``__init__.py``) defining ``root_agent``, or a
  ``root_agent.yaml`` (google-adk's layout; the Python one first, as there), and a
  module file ``<agents_dir>/<name>.py`` defining ``root_agent`` (google-adk loads it
  by name but does not list it: :meth:`AppCatalog.names` neither), looked up when
  asked, so an app the agent builder saves is served at once. A configured app of
  the same name wins.

:meth:`AppCatalog.load` gives the :class:`~adk_actors.engine.App`. A YAML app is read
again when one of its files changed (their modification times are its stamp), so an
edited agent answers its next turn; so is a Python agent folder (``_agent_folders``:
its last good version serves while an edit does not import); a configured Python app
is imported once per process.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from supervision.lowlevel import import_object

from .._exceptions import AgentDefinitionError, UnknownAppError
from ._agent_config import ROOT_AGENT_FILE, load_agent_config
from ._agent_folders import (
    env_stamp,
    folder_error,
    is_python_agent_folder,
    is_python_agent_module,
    load_dotenv_for_agent,
    load_folder_app,
)
from ._app import App, as_app
from ._app_files import APP_NAME, DRAFT
from ._builder_assistant import BUILDER_ASSISTANT, builder_assistant

__all__ = ["AppCatalog", "is_yaml_source"]

_ASSISTANT_SOURCE = "adk_actors.engine:builder_assistant"

_YAML_APPS: dict[str, tuple[tuple[int, ...], App]] = {}  # root file -> (stamp, app), per process
_LOCK = threading.Lock()


def is_yaml_source(source: str) -> bool:
    return source.endswith((".yaml", ".yml"))


def _stamp(root_file: Path) -> tuple[int, ...]:
    """The modification times of the YAML files in an app's folder (its draft aside)."""
    folder = root_file.parent
    files = sorted(p for p in folder.rglob("*.y*ml") if p.relative_to(folder).parts[0] != DRAFT)
    return (*tuple(p.stat().st_mtime_ns for p in files), len(files))


@dataclass(frozen=True)
class AppCatalog:
    """``apps``: configured name -> import path or YAML file; ``agents_dir``: a folder
    of YAML apps (None: none)."""

    apps: Mapping[str, str] = field(default_factory=dict)
    agents_dir: str | None = None

    def _folder_app(self, name: str) -> Path | None:
        """The file app ``name`` of the agents folder is defined in: a module file
        ``<name>.py`` beside the folders when ``<name>/`` holds no ``__init__.py``
        (Python imports such a module before a folder without one, as google-adk's
        loader does); else its ``agent.py`` (or ``__init__.py``) for a Python folder,
        else its ``root_agent.yaml``; None if none."""
        if self.agents_dir is None or not APP_NAME.fullmatch(name):
            return None
        folder = Path(self.agents_dir) / name
        if is_python_agent_module(folder):
            return folder.with_name(f"{name}.py")
        if is_python_agent_folder(folder):
            return folder / ("agent.py" if (folder / "agent.py").is_file() else "__init__.py")
        root_file = folder / ROOT_AGENT_FILE
        return root_file if root_file.is_file() else None

    def _python_folder(self, name: str) -> Path | None:
        """App ``name``'s folder, when it is a Python app of the agents folder (for a
        module file ``<name>.py``, the folder ``<name>`` it stands for)."""
        if name in self.apps:
            return None
        folder_app = self._folder_app(name)
        return Path(str(self.agents_dir)) / name if folder_app is not None and folder_app.suffix == ".py" else None

    def load_error(self, name: str) -> str | None:
        """Why the current files of app ``name`` (a Python app of the agents folder) do
        not import, while its last good version serves; None when they do (or for any
        other app: its turns say what is wrong)."""
        folder = self._python_folder(name)
        return folder_error(folder) if folder is not None else None

    def source(self, name: str) -> str | None:
        """Where app ``name`` is defined (an import path or a YAML file), or None. With
        an ``agents_dir``, the agent builder's assistant is an app too (its import path;
        listed nowhere)."""
        if name in self.apps:
            return self.apps[name]
        if name == BUILDER_ASSISTANT and self.agents_dir is not None:
            return _ASSISTANT_SOURCE
        folder_app = self._folder_app(name)
        return str(folder_app) if folder_app is not None else None

    def names(self) -> list[str]:
        """Every app's name, sorted (a module file ``<name>.py`` of the agents folder
        is not listed, as google-adk lists folders only)."""
        found = set(self.apps)
        if self.agents_dir is not None and Path(self.agents_dir).is_dir():
            found.update(p.name for p in Path(self.agents_dir).iterdir() if self._folder_app(p.name) is not None)
        return sorted(found)

    def is_draft(self, name: str) -> bool:
        """Whether the agent builder has drafted app ``name`` in ``agents_dir``
        (``<name>/tmp/<name>/``) and not saved it yet: it is no app."""
        if self.agents_dir is None or not APP_NAME.fullmatch(name) or name in self:
            return False
        return (Path(self.agents_dir) / name / DRAFT / name).is_dir()

    def drafts(self) -> list[str]:
        """The names :meth:`is_draft` holds for, sorted."""
        if self.agents_dir is None or not Path(self.agents_dir).is_dir():
            return []
        return sorted(p.name for p in Path(self.agents_dir).iterdir() if self.is_draft(p.name))

    def draft_folder(self, name: str) -> Path | None:
        """Where the agent builder keeps app ``name``'s draft (None for a Python app)."""
        folder = self.folder(name)
        return folder / DRAFT / name if folder is not None else None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.source(name) is not None

    def language(self, name: str) -> Literal["python", "yaml"]:
        """"yaml" for a YAML app or a draft, else "python"."""
        source = self.source(name)
        yaml_app = is_yaml_source(source) if source is not None else self.is_draft(name)
        return "yaml" if yaml_app else "python"

    def folder(self, name: str) -> Path | None:
        """The folder a YAML app's files live in (None for a Python app). For a name
        that is no app yet, where the agent builder would create it."""
        source = self.source(name)
        if source is not None:
            return Path(source).resolve().parent if is_yaml_source(source) else None
        if self.agents_dir is None or not APP_NAME.fullmatch(name):
            return None
        return Path(self.agents_dir).resolve() / name

    def load(self, name: str) -> App:
        """App ``name``: UnknownAppError if there is none, AgentDefinitionError (or the
        import's error) if its definition is broken."""
        source = self.source(name)
        if source is None:
            raise UnknownAppError(f"unknown app {name!r}; known apps: {self.names()}")
        if source == _ASSISTANT_SOURCE and self.agents_dir is not None:
            return builder_assistant(self.agents_dir)
        python_folder = self._python_folder(name)
        if python_folder is not None:
            return load_folder_app(python_folder)
        if not is_yaml_source(source):
            return as_app(import_object(source))
        root_file = Path(source).resolve()
        in_folder = name not in self.apps  # an app of the agents folder: its .env is read, as google-adk does
        try:
            stamp = (*_stamp(root_file), *(env_stamp(root_file.parent) if in_folder else ()))
        except OSError as exc:
            raise AgentDefinitionError(f"app {name!r}: cannot read {root_file}: {exc}") from None
        with _LOCK:
            cached = _YAML_APPS.get(str(root_file))
            if cached is not None and cached[0] == stamp:
                return cached[1]
        if in_folder:
            load_dotenv_for_agent(root_file.parent)
        app = App(root_agent=load_agent_config(root_file))
        with _LOCK:
            _YAML_APPS[str(root_file)] = (stamp, app)
        return app
