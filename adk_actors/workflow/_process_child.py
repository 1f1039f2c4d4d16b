"""The process a function node's calls run in when its node asks for processes
(``node(..., processes=True)``, see ``_processes``): started as
``python -P <this file> PARENT_PID`` by its run's pool. It imports nothing of
adk_actors nor of supervision (whose package alone takes ~0.1 s to import on a busy
machine: a pool's start would pay it once per process), only the standard library
and the functions' modules, so that it starts fast; ``_processes`` takes its framing
from here.

In order: it asks Linux to kill it when the thread of its parent that started it
ends (``PR_SET_PDEATHSIG`` through ``prctl``, as supervision's
``set_parent_death_signal`` does, and as it is turned off by
``SUPERVISION_NO_PDEATHSIG=1``; a parent already gone: it dies at once); it keeps
its stdout for answers and sends what the functions print to stderr instead; then,
one call at a time until its stdin ends (or its answers' pipe is closed: the pool is
gone, and it ends quietly),
it reads a call (a length-prefixed pickle: the function's reference and its keyword
arguments), finds the function (importing its module; a node found there is
unwrapped to its function), calls it and writes the answer: ``("ok", result)``, or
``("raised", exception, class name, message, traceback)`` (the exception itself when
pickle takes it, else None), or ``("unpicklable", what)`` when the call could not be
read or its result cannot be written.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import pickle
import runpy
import signal
import struct
import sys
import traceback
import types
from typing import IO, Any

__all__ = ["main", "read_frame", "resolve", "write_frame"]

_HEADER = struct.Struct("!Q")


def read_frame(stream: IO[bytes]) -> bytes | None:
    """One length-prefixed frame from ``stream``; None at its end."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    body = stream.read(size)
    return body if len(body) == size else None


def write_frame(stream: IO[bytes], body: bytes) -> None:
    stream.write(_HEADER.pack(len(body)) + body)
    stream.flush()


def _unwrap(found: Any) -> Any:
    """A node found by a function's name (``@node`` replaced the function with it): its
    function (a parallel worker's: that of the node it runs per item)."""
    for _ in range(4):
        if isinstance(found, types.FunctionType):
            return found
        inner = getattr(found, "node", None)
        if inner is not None and hasattr(inner, "func"):
            found = inner
            continue
        func = getattr(found, "func", None)
        if func is None:
            return found
        found = func
    return found


def resolve(reference: tuple[str, str, str], cache: dict[tuple[str, str, str], Any]) -> Any:
    """The function a reference names: ``("module", name, qualname)`` or ``("path", file,
    qualname)`` (a script run as ``__main__``, loaded as ``__mp_main__`` as multiprocessing
    does), or ``("pickle", "", "")`` never (pickled callables come whole)."""
    if reference in cache:
        return cache[reference]
    kind, where, qualname = reference
    if kind == "path":
        namespace = runpy.run_path(where, run_name="__mp_main__")
        found: Any = namespace[qualname.split(".")[0]]
        rest = qualname.split(".")[1:]
    else:
        found = importlib.import_module(where)
        rest = qualname.split(".")
    for part in rest:
        found = getattr(found, part)
    cache[reference] = _unwrap(found)
    return cache[reference]


def _answer_raised(exc: BaseException) -> bytes:
    text = "".join(traceback.format_exception(exc))
    try:
        return pickle.dumps(("raised", exc, type(exc).__name__, str(exc), text))
    except Exception:
        return pickle.dumps(("raised", None, type(exc).__name__, str(exc), text))


def _serve(calls: IO[bytes], answers: IO[bytes]) -> None:
    cache: dict[tuple[str, str, str], Any] = {}
    while True:
        frame = read_frame(calls)
        if frame is None:
            return
        try:
            reference, pickled, kwargs = pickle.loads(frame)
            func = pickle.loads(pickled) if pickled is not None else resolve(reference, cache)
        except Exception as exc:
            write_frame(answers, pickle.dumps(("unpicklable", f"its call could not be read here: {exc!r}")))
            continue
        try:
            result = func(**kwargs)
        except Exception as exc:
            write_frame(answers, _answer_raised(exc))
            continue
        try:
            body = pickle.dumps(("ok", result))
        except Exception as exc:
            body = pickle.dumps(("unpicklable", f"its result {type(result).__name__} cannot be pickled: {exc!r}"))
        write_frame(answers, body)


_PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    """SIGKILL to this process when the thread of ``parent`` that started it ends; at
    once if ``parent`` is already gone (this process was re-parented). Nothing where
    Linux's ``prctl`` is missing or ``SUPERVISION_NO_PDEATHSIG=1``."""
    if not sys.platform.startswith("linux") or os.environ.get("SUPERVISION_NO_PDEATHSIG") == "1":
        return
    try:
        if ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
            return
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)


def main(argv: list[str]) -> int:
    _die_with(int(argv[1]))
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # what the functions print goes to stderr, never into the answers
    sys.stdout = sys.stderr
    try:
        _serve(sys.stdin.buffer, answers)
    except BrokenPipeError:
        pass  # the pool is gone (its run ended, or its process was killed): nobody to answer
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
