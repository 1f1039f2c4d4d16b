"""google-adk's ``google.adk.cli.utils.envs``: an agent's ``.env`` read into the
environment, by the rule every agent folder of this kit is loaded with
(:func:`adk_actors.engine.load_dotenv_for_agent`)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ...engine import load_dotenv_for_agent as _load_agent_env
from ...engine import remember_explicit_env

__all__ = ["load_dotenv_for_agent"]

logger = logging.getLogger(__name__)


def _nearest(folder: Path, filename: str) -> Path | None:
    for candidate in (folder, *folder.parents):
        if (candidate / filename).is_file():
            return candidate / filename
    return None


def load_dotenv_for_agent(agent_name: str, agent_parent_folder: str, filename: str = ".env") -> None:
    """Read the ``.env`` of agent ``agent_name`` of ``agent_parent_folder``: the nearest
    ``filename`` from ``agent_parent_folder/agent_name`` (made absolute) up to the
    filesystem's root, its values set over those an earlier ``.env`` set but never over a
    variable set before the first ``.env`` was read. Nothing is read when
    ``ADK_DISABLE_LOAD_DOTENV`` is true, or when no such file is found (a log line says
    which). ``filename`` other than ``.env``: the same rule, for that file."""
    folder = Path(os.path.abspath(os.path.join(agent_parent_folder, agent_name)))
    if filename == ".env":
        found = _load_agent_env(folder)
    elif os.environ.get("ADK_DISABLE_LOAD_DOTENV", "").lower() in ("1", "true", "yes"):
        found = None
    else:
        # as the engine's rule: only an agents folder needs python-dotenv
        from dotenv import dotenv_values

        explicit = remember_explicit_env()
        found = _nearest(folder, filename)
        if found is not None:
            os.environ.update({key: value for key, value in dotenv_values(found).items()
                               if value is not None and key not in explicit})
    if found is None:
        logger.info("no %s read for agent %s", filename, agent_name or folder)
    else:
        logger.info("read %s for agent %s", found, agent_name or folder)
