"""google-adk's ``google.adk.cli.utils.agent_loader``: :class:`AgentLoader`, the agents
of a folder by name, on the loader ``adk-actors web DIR`` serves them with
(:class:`adk_actors.engine.AppCatalog`).

The shapes loaded (google-adk's): ``AGENTS_DIR/NAME/agent.py`` defining ``root_agent``
(or ``app``, an ``App``); ``AGENTS_DIR/NAME/__init__.py`` exposing them (usually
``from . import agent``); ``AGENTS_DIR/NAME/root_agent.yaml``; a module file
``AGENTS_DIR/NAME.py`` defining them (loaded by name, not listed by
:meth:`AgentLoader.list_agents`, as in google-adk; it wins over a folder ``NAME/``
without an ``__init__.py``, as Python's import does). A folder that is itself an
agent's (:func:`is_single_agent_directory`) is loaded in single-agent mode: only its
own name loads.

What differs from google-adk's loader, by design: a Python agent is reloaded when its
files change (the catalog's rule) rather than imported once per loader; and an agent
whose code raises while importing is an :class:`AgentLoadError` (a RuntimeError)
whatever the code raised (its message names the error and where), not that error
itself.
"""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path
from typing import Any, Literal

from ..._exceptions import AgentDefinitionError
from ...agents import AgentLike
from ...engine import BUILDER_ASSISTANT, App, AppCatalog
from ...tools.computer_use import ComputerUseToolset
from ...workflow import BaseNode
from .base_agent_loader import AgentLoadError, BaseAgentLoader

__all__ = ["AgentLoadError", "AgentLoader", "is_single_agent_directory"]

logger = logging.getLogger(__name__)

_NAME = re.compile(r"[A-Za-z0-9_]+\Z")


def is_single_agent_directory(path: Path | str) -> bool:
    """Whether ``path`` is one agent's folder: a folder holding ``agent.py`` or
    ``root_agent.yaml``. False for anything else, a path that cannot be read included."""
    try:
        folder = Path(path).resolve()
        return folder.is_dir() and ((folder / "agent.py").is_file() or (folder / "root_agent.yaml").is_file())
    except (OSError, RuntimeError, ValueError):
        return False


class AgentLoader(BaseAgentLoader):
    """The agents of ``agents_dir`` (see the module), each loaded once per loader and
    kept until :meth:`remove_agent_from_cache`."""

    def __init__(self, agents_dir: str) -> None:
        path = Path(agents_dir).resolve()
        self._is_single_agent = is_single_agent_directory(path)
        self._single_agent_name: str | None = path.name if self._is_single_agent else None
        self.agents_dir = str(path.parent if self._is_single_agent else path)
        self._agent_cache: dict[str, Any] = {}

    @property
    def is_single_agent(self) -> bool:
        """Whether the folder given was one agent's own folder."""
        return self._is_single_agent

    @property
    def single_agent_name(self) -> str | None:
        """That agent's name in single-agent mode; None otherwise."""
        return self._single_agent_name

    def _set_single_agent_mode(self, name: str, agents_dir: str) -> None:
        """Load only agent ``name`` of ``agents_dir`` from now on."""
        self._is_single_agent, self._single_agent_name, self.agents_dir = True, name, agents_dir

    def _catalog(self) -> AppCatalog:
        return AppCatalog(agents_dir=self.agents_dir)

    def _check_name(self, name: str) -> None:
        """In order: a special name (``__...``) needs ``_allow_special_agents``
        (PermissionError) and only the agent builder's assistant is one (ValueError);
        in single-agent mode only that agent's name (ValueError); letters, digits and
        ``_`` only (ValueError); a folder or a module file (``NAME.py``) of that name in
        the agents folder (ValueError)."""
        if name.startswith("__"):
            if not self._allow_special_agents:
                raise PermissionError(f"agent {name!r}: special agents are not allowed by this loader")
            if name != BUILDER_ASSISTANT:
                raise ValueError(f"agent {name!r} not found: the one special agent is {BUILDER_ASSISTANT!r}")
            return
        if self._is_single_agent and name != self._single_agent_name:
            raise ValueError(f"agent {name!r} not found: this loader serves the one agent "
                             f"{self._single_agent_name!r}")
        if not _NAME.match(name):
            raise ValueError(f"invalid agent name {name!r}: letters, digits and '_' only (a Python identifier)")
        folder = Path(self.agents_dir) / name
        if not folder.is_dir() and not folder.with_name(f"{name}.py").is_file():
            raise ValueError(f"agent {name!r} not found: {folder} is no folder and {folder}.py no module file")

    def _no_root_agent(self, name: str) -> bool:
        """Whether app ``name``'s modules imported and define no ``root_agent`` or ``app``
        (no agent there), rather than failing to import (an agent that does not load)."""
        package = sys.modules.get(name)
        if package is None:
            return False
        agent = sys.modules.get(f"{name}.agent")
        if agent is None and (Path(self.agents_dir) / name / "agent.py").is_file():
            return False
        return not any(getattr(module, "root_agent", None) is not None or getattr(module, "app", None) is not None
                       for module in (package, agent) if module is not None)

    def _not_found(self, name: str) -> ValueError:
        folder = Path(self.agents_dir) / name
        if folder.with_name(f"{name}.py").is_file() and not (folder / "__init__.py").is_file():
            return ValueError(f"no root agent found for {name!r}: the module file {folder}.py defines no "
                              f"root_agent (or app)")
        return ValueError(f"no root agent found for {name!r}: {folder} holds no agent.py defining root_agent (or "
                          f"app), no __init__.py exposing them and no root_agent.yaml (the agents folder to give is "
                          f"the one holding {name}/)")

    def _perform_load(self, name: str) -> Any:
        """Load agent ``name`` (see :meth:`load_agent`) through the catalog."""
        self._check_name(name)
        catalog = self._catalog()
        if catalog.source(name) is None:
            raise self._not_found(name)
        if self.agents_dir not in sys.path:
            sys.path.insert(0, self.agents_dir)
        try:
            app = catalog.load(name)
        except (AgentDefinitionError, ValueError) as exc:
            if self._no_root_agent(name):
                raise self._not_found(name) from exc
            raise AgentLoadError(f"agent {name!r} does not load: {exc}") from exc
        if not isinstance(app.root_agent, (AgentLike, BaseNode)):
            raise ValueError(f"agent {name!r}: its root_agent is a {type(app.root_agent).__name__}, not an agent (an "
                             f"agent class's instance, or a workflow node); an App goes in `app`")
        return app if self._exposed(name, app) else app.root_agent

    @staticmethod
    def _exposed(name: str, app: App) -> bool:
        """Whether ``app`` is the agent's own ``app`` (its module's, or an App of its own
        kind or settings) rather than the catalog's wrapping of its root agent."""
        if any(getattr(sys.modules.get(module), "app", None) is app for module in (name, f"{name}.agent")):
            return True
        return type(app) is not App or app != App(root_agent=app.root_agent)

    def load_agent(self, agent_name: str) -> Any:
        """Agent ``agent_name``: its ``app`` (an ``App``) when its module defines one,
        else its root agent; the one this loader loaded before if it did. In order:
        the name is checked (PermissionError for a special agent not allowed; ValueError
        for a bad name or one with no folder), the folder looked at (ValueError: it
        holds no agent), its ``.env`` read and its code imported or its YAML read
        (:class:`AgentLoadError`, the catalog's error as its cause, when that raises),
        its root agent checked (ValueError: it is no agent or workflow node)."""
        if agent_name not in self._agent_cache:
            self._agent_cache[agent_name] = self._perform_load(agent_name)
        return self._agent_cache[agent_name]

    def list_agents(self) -> list[str]:
        """The agents' names, sorted: in single-agent mode that agent's; else every
        folder of the agents folder that holds an agent (not a hidden one).
        FileNotFoundError when the agents folder does not exist."""
        if self._is_single_agent:
            return [str(self._single_agent_name)]
        if not Path(self.agents_dir).is_dir():
            raise FileNotFoundError(f"no agents folder {self.agents_dir}")
        return self._catalog().names()

    def _language(self, name: str) -> Literal["yaml", "python"]:
        return self._catalog().language(name)

    def list_agents_detailed(self) -> list[dict[str, Any]]:
        """For each agent of :meth:`list_agents` that loads, in order: ``name``,
        ``root_agent_name``, ``description``, ``language`` (``python`` or ``yaml``) and
        ``is_computer_use`` (a computer-use toolset among its root agent's tools). One
        that does not load is left out, its error logged."""
        found: list[dict[str, Any]] = []
        for name in self.list_agents():
            try:
                loaded = self.load_agent(name)
            except Exception as exc:  # a user's agent: any error leaves it out of the list
                logger.error("agent %r does not load: %s", name, exc)
                continue
            agent = loaded.root_agent if isinstance(loaded, App) else loaded
            if agent is None:
                continue
            found.append({
                "name": name, "root_agent_name": getattr(agent, "name", name),
                "description": getattr(agent, "description", ""), "language": self._language(name),
                "is_computer_use": any(isinstance(tool, ComputerUseToolset) for tool in getattr(agent, "tools", None)
                                       or ())})
        return found

    def remove_agent_from_cache(self, agent_name: str) -> None:
        """Forget agent ``agent_name``: its modules (and their submodules) leave
        ``sys.modules`` and the next :meth:`load_agent` asks the catalog again (which
        imports the agent anew when its files changed since it last did)."""
        for module in [m for m in sys.modules if m == agent_name or m.startswith(f"{agent_name}.")]:
            del sys.modules[module]
        self._agent_cache.pop(agent_name, None)
