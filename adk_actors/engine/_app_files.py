"""Where an app's files are: the names and paths the agent builder and its assistant accept."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

__all__ = ["APP_NAME", "DRAFT", "YAML_SUFFIXES", "app_file_path"]

#: the names an app in ``agents_dir`` may have (adk-web's builder asks for the same)
APP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: the agent builder keeps an app's unsaved draft in ``<app folder>/tmp/<app>/`` (google-adk's place)
DRAFT = "tmp"
#: the files an app's folder may hold
YAML_SUFFIXES = (".yaml", ".yml")


def app_file_path(app: str, name: str | None) -> PurePosixPath:
    """A YAML file name the agent builder was given (``<app>/<path>`` or ``<path>``) as
    a path inside app ``app``'s folder; ValueError if it is none (outside the app, in
    its draft folder, not ``.yaml`` / ``.yml``)."""
    if not name:
        raise ValueError("a file has no name")
    path = PurePosixPath(name.replace("\\", "/").lstrip("/"))
    if path.parts and path.parts[0] == app:
        path = PurePosixPath(*path.parts[1:])
    if not path.parts or any(part in ("", ".", "..") for part in path.parts):
        raise ValueError(f"{name!r} is not a path inside the app")
    if path.parts[0] == DRAFT:
        raise ValueError(f"{name!r}: {DRAFT}/ holds the builder's draft")
    if path.suffix.lower() not in YAML_SUFFIXES:
        raise ValueError(f"{name!r}: only .yaml and .yml files")
    return path
