"""The processes a graph run's function nodes run in when they ask for it
(``node(fn, processes=True)``, ``FunctionNode(func=fn, processes=True)``): our
extension, which google-adk has not. A CPU-bound sync function in threads shares one
interpreter lock; in processes its calls (a parallel worker's items, a fan-out's
branches) use as many cores as there are.

How a function crosses: by reference, never as code. A module-level function is
named by its module and qualified name (a script run as ``__main__``: by its module
name when run with ``-m``, else by its file, loaded as multiprocessing loads it);
the process imports it (a node that ``@node`` put in the function's place is
unwrapped to its function). Any other callable is pickled whole. A lambda, a function
defined inside another, a callable pickle refuses, or a function that takes ``ctx``
(the run's context stays in the run) is an :class:`UnpicklableNodeError` (or a
:class:`WorkflowConfigurationError` for ``ctx``, an async function or a generator)
when the node is built; arguments or a result pickle refuses, one when the call is
made.

The pool (:class:`ProcessPool`) belongs to one graph run, which closes it when it
ends, whichever way. In order, for a call: it waits for one of at most ``size``
processes (None: the machine's cores) that is idle, or starts one
(``python -P .../_process_child.py``, with this process's ``sys.path``, in a session
of its own so that its process group is its own); sends it the call on its stdin and
waits, on a thread of the pool, for its answer on its stdout. The answer is the
result, or the function's exception raised again here (the same class when pickle
can carry it, with the process's traceback as a note; else :class:`NodeProcessError`
with its class name and text), or :class:`UnpicklableNodeError`. A call whose task is cancelled (the run
was cancelled, the node timed out) kills its process's group at once (SIGKILL); a
process that dies before it answers is :class:`NodeProcessError`. Closing kills every
process's group and reaps it. And should the run's process itself die (kill -9 of
its run worker), its item processes die with it: each asked Linux, as it started, for
SIGKILL when the thread that started it ends (``PR_SET_PDEATHSIG``, supervision's
``set_parent_death_signal``); the pool starts them from the thread of the run's event
loop, which ends only with the run's process. (Processes a function itself starts are
killed with its group on cancel and close; on a kill -9 of the run's process, only if
they too ask for PR_SET_PDEATHSIG.)
"""

from __future__ import annotations

import asyncio
import inspect
import os
import pickle
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from . import _process_child
from ._errors import NodeProcessError, UnpicklableNodeError, WorkflowConfigurationError
from ._process_child import read_frame, write_frame

__all__ = ["ProcessPool", "Shipment", "shipment"]

#: How a function crosses to a process: a reference (see the module) and, for a
#: callable that has none, its pickle.
Shipment = tuple[tuple[str, str, str], bytes | None]


#: The item processes' program, run by its path (``-P``: its folder is not put on
#: ``sys.path``), so that a process imports neither this package nor more than the
#: functions it calls need.
_CHILD = os.path.abspath(_process_child.__file__ or "")


def _main_reference() -> tuple[str, str]:
    """Where a process finds this process's ``__main__`` module."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name and not spec.name.endswith(".__main__"):
        return "module", spec.name
    path = getattr(main, "__file__", None)
    if path:
        return "path", os.path.abspath(path)
    raise ValueError("it is defined in an interactive __main__, which another process cannot import")


def shipment(func: Any, node_name: str) -> Shipment:
    """How ``func`` of node ``node_name`` crosses to a process (see the module). Raises
    :class:`WorkflowConfigurationError` for a function that takes ``ctx``, an async
    function or a generator; :class:`UnpicklableNodeError` for one that cannot cross."""
    if inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func) or inspect.isgeneratorfunction(func):
        raise WorkflowConfigurationError(
            f"node {node_name!r} runs in processes: give it a plain (sync, not generator) function")
    try:
        parameters = inspect.signature(func).parameters
    except (TypeError, ValueError):
        parameters = {}  # type: ignore[assignment]
    if "ctx" in parameters:
        raise WorkflowConfigurationError(
            f"node {node_name!r} runs in processes, where the run's context is not: its function cannot take ctx "
            f"(read the state through its parameters, write it from a node in the run)")
    if inspect.isfunction(func):
        qualname = func.__qualname__
        if "<lambda>" in qualname:
            raise UnpicklableNodeError(node_name=node_name, reason=(
                "its function is a lambda; a process finds a function by its module and name: define it with def "
                "at module level"))
        if "<locals>" in qualname:
            raise UnpicklableNodeError(node_name=node_name, reason=(
                f"its function {qualname} is defined inside another function; a process finds a function by its "
                f"module and name: define it at module level"))
        module = func.__module__
        try:
            kind, where = _main_reference() if module == "__main__" else ("module", module)
        except ValueError as exc:
            raise UnpicklableNodeError(node_name=node_name, reason=str(exc)) from None
        if kind == "module" and getattr(sys.modules.get(where), "__spec__", None) is None:
            raise UnpicklableNodeError(node_name=node_name, reason=(
                f"its module {where!r} was not imported from a file, so another process cannot import it"))
        return (kind, where, qualname), None
    try:
        return ("pickle", "", ""), pickle.dumps(func)
    except Exception as exc:
        raise UnpicklableNodeError(node_name=node_name, reason=f"its callable cannot be pickled: {exc}") from None


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL to ``process``'s group (it leads it), then reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass  # gone already
    for stream in (process.stdin, process.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    process.wait()


def _exchange(process: subprocess.Popen[bytes], payload: bytes) -> tuple[Any, ...] | None:
    """Send one call to ``process``, return its answer (None: the process died first)."""
    assert process.stdin is not None and process.stdout is not None
    try:
        write_frame(process.stdin, payload)
        frame = read_frame(process.stdout)
    except (OSError, ValueError):
        return None
    if frame is None:
        return None
    try:
        answer = pickle.loads(frame)
    except Exception as exc:
        return ("unpicklable", f"its answer could not be read here: {exc!r}")
    return answer if isinstance(answer, tuple) else None


class ProcessPool:
    """At most ``size`` processes (None: the machine's cores), started as calls need
    them, owned by one graph run (see the module)."""

    def __init__(self, size: int | None = None) -> None:
        self.size = max(1, size or os.cpu_count() or 1)
        self._idle: list[subprocess.Popen[bytes]] = []
        self._all: set[subprocess.Popen[bytes]] = set()
        self._slots: asyncio.Semaphore | None = None
        self._threads: ThreadPoolExecutor | None = None
        self._closed = False

    @property
    def pids(self) -> list[int]:
        """The pids of the processes alive in the pool."""
        return sorted(process.pid for process in self._all)

    def _start(self, node_name: str) -> subprocess.Popen[bytes]:
        env = dict(os.environ)
        # ("" on sys.path, as ``python -c`` or ``-`` put it, is the current folder, which
        # PYTHONPATH cannot carry as such: the process is given the folder by name.)
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(path or os.curdir) for path in sys.path)
        try:
            process = subprocess.Popen(
                [sys.executable, "-P", _CHILD, str(os.getpid())],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, start_new_session=True)
        except OSError as exc:
            raise NodeProcessError(node_name=node_name, reason=f"could not start: {exc}") from None
        self._all.add(process)
        return process

    def _drop(self, process: subprocess.Popen[bytes]) -> None:
        self._all.discard(process)
        _kill_group(process)

    async def call(self, node_name: str, shipped: Shipment, kwargs: dict[str, Any]) -> Any:
        """Call the shipped function with ``kwargs`` in one of the pool's processes (see
        the module); its result, or its exception raised here."""
        if self._closed:
            raise NodeProcessError(node_name=node_name, reason="pool was closed: its run ended")
        reference, pickled = shipped
        try:
            payload = pickle.dumps((reference, pickled, kwargs))
        except Exception as exc:
            raise UnpicklableNodeError(node_name=node_name, reason=f"its arguments cannot be pickled: {exc}") from None
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.size)
            self._threads = ThreadPoolExecutor(max_workers=self.size, thread_name_prefix="node-process")
        async with self._slots:
            process = self._idle.pop() if self._idle else self._start(node_name)
            try:
                answer = await asyncio.get_running_loop().run_in_executor(self._threads, _exchange, process, payload)
            except BaseException:
                self._drop(process)  # cancelled (or timed out) while it computes: it stops now
                raise
            if answer is None:
                code = process.poll()
                self._drop(process)
                raise NodeProcessError(node_name=node_name, reason=(
                    f"(pid {process.pid}) died before it answered" + (f" (exit status {code})" if code else "")))
            self._idle.append(process)
        kind = answer[0]
        if kind == "ok":
            return answer[1]
        if kind == "raised":
            _, raised, class_name, message, text = answer
            if isinstance(raised, BaseException):
                raised.add_note(f"raised in node {node_name!r}'s process (pid {process.pid}):\n{text}")
                raise raised
            raise NodeProcessError(node_name=node_name, reason=f"raised {class_name}: {message}\n{text}")
        raise UnpicklableNodeError(node_name=node_name, reason=str(answer[1]))

    def close(self) -> None:
        """Kill every process's group and reap it; the pool takes no more calls."""
        self._closed = True
        for process in list(self._all):
            self._drop(process)
        self._idle.clear()
        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)
