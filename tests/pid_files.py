"""Pid files the tests' agents and nodes write for a test to kill them by."""

from __future__ import annotations

import os
from pathlib import Path


def write_pid(path: str | Path) -> None:
    """Write this process's pid to ``path`` whole: written beside it, then renamed, so
    a test that sees the file never reads it empty or half-written."""
    target = Path(path)
    beside = target.with_name(target.name + ".tmp")
    beside.write_text(str(os.getpid()))
    beside.replace(target)
