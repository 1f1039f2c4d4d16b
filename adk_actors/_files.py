"""Data files readable by the host's user only: directories 0700, files 0600.

Every store creates its directory and files through these two helpers, so the rule
holds whatever the process's umask is (a library user's, a test runner's).
SQLite gives a database's ``-wal`` and ``-shm`` files the database file's own mode.
Unix sockets live in those private folders too, however deep the folder is
(:func:`socket_name`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["SOCKET_PATH_MAX", "private_dir", "private_file", "socket_name", "write_private"]

#: The longest path a Unix socket's address holds (``sun_path`` is 108 bytes with its NUL).
SOCKET_PATH_MAX = 107


def private_dir(path: str | Path) -> Path:
    """Create ``path`` if needed, and each missing parent, all 0700 (``mkdir(parents=
    True)`` would give the parents the umask's mode); make ``path`` 0700; return it."""
    folder = Path(path)
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    for created in reversed(missing):
        created.mkdir(mode=0o700, exist_ok=True)
        os.chmod(created, 0o700)
    os.chmod(folder, 0o700)
    return folder


def private_file(path: str | Path) -> Path:
    """Create ``path`` empty if missing (its folder too, 0700) and make it 0600; return it."""
    target = Path(path)
    if not target.parent.exists():
        private_dir(target.parent)
    os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o600))
    os.chmod(target, 0o600)
    return target


def write_private(path: str | Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` at once (0600; its folder made 0700 if missing):
    written to a temporary file beside it, flushed to disk, then renamed over it. A
    reader sees the old content or the new, never a part; on failure the temporary
    file is removed and ``path`` is untouched."""
    target = Path(path)
    if not target.parent.exists():
        private_dir(target.parent)
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


@contextlib.contextmanager
def socket_name(path: str | Path) -> Iterator[str]:
    """A name for ``bind`` or ``connect`` that reaches the Unix socket at ``path``:
    ``path`` itself when it fits in a socket's address; else ``/proc/self/fd/N/NAME``,
    through a descriptor of the socket's folder held open while the block runs (Linux
    resolves it as ``path``, so the socket stays in its private folder however deep the
    host's data directory is). Raises ``OSError`` when the folder cannot be opened."""
    text = str(path)
    if len(os.fsencode(text)) <= SOCKET_PATH_MAX:
        yield text
        return
    folder = os.open(os.path.dirname(text) or ".", os.O_PATH | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{folder}/{os.path.basename(text)}"
    finally:
        os.close(folder)
