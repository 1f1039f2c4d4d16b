"""The check every path of a skill's file goes through."""

from __future__ import annotations

from pathlib import PurePosixPath, PureWindowsPath

__all__ = ["safe_relative_path"]


def safe_relative_path(path: str) -> str:
    """``path`` (``\\`` read as ``/``) as a normalised POSIX path relative to a skill
    folder; raises ``ValueError`` when it is empty or ``.``, absolute (POSIX or Windows,
    a drive letter included) or climbs out with ``..``."""
    posix = PurePosixPath(path.replace("\\", "/"))
    normal = posix.as_posix()
    windows = (PureWindowsPath(path), PureWindowsPath(normal))
    if (not normal or normal == "." or posix.is_absolute() or ".." in posix.parts
            or any(p.is_absolute() or p.drive for p in windows)):
        raise ValueError(f"Path {path!r} is not a safe path inside a skill")
    return normal
