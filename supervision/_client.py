"""Synchronous helpers for plain Python code (tests, CLIs, scripts) talking to servers.

Every helper takes a timeout and either returns the answer or raises a typed error:
:class:`CallTimeout` when nothing came back in time, a :class:`CallError` subclass when
the server answered with an error. Nothing here waits forever.
"""

from __future__ import annotations

import time
from typing import Any

from ._exceptions import (
    CallTimeout,
    NameNotFound,
    ServerNotRunning,
    StartFailed,
    SupervisionError,
    error_for_code,
)
from ._messages import (
    Call,
    ChildCounts,
    ChildInfo,
    CountChildren,
    DeleteChild,
    ErrorReply,
    GetChildSpec,
    GetRegistry,
    Init,
    InitFailed,
    InitOk,
    Registered,
    Reply,
    RestartChild,
    Shutdown,
    StartChild,
    Started,
    TerminateChild,
    WhereIs,
    WhichChildren,
)
from ._spec import ChildSpec, DynamicSupervisorSpec, PartitionSupervisorSpec, SupervisorSpec, import_path_of

__all__ = [
    "call",
    "cast",
    "start_server",
    "start_supervisor",
    "stop_server",
    "whereis",
    "call_name",
    "SupervisorClient",
]


def call(system: Any, address: Any, request: Any, timeout: float = 5.0) -> Any:
    """Send ``request`` as a :class:`Call` and return the reply's value.

    Raises :class:`CallTimeout` if no answer comes within ``timeout`` seconds (also
    when the server is dead: Thespian gives no error for that), or the typed
    :class:`CallError` the server answered with.
    """
    message = Call(request)
    answer = system.ask(address, message, timeout)
    return _unwrap(answer, message.ref, request, timeout)


def _unwrap(answer: Any, ref: str, request: Any, timeout: float) -> Any:
    if answer is None:
        raise CallTimeout(f"no reply to {type(request).__name__} within {timeout} s")
    if isinstance(answer, Reply):
        return answer.value
    if isinstance(answer, ErrorReply):
        raise error_for_code(answer.code, answer.detail)
    from thespian.actors import PoisonMessage

    if isinstance(answer, PoisonMessage):
        raise error_for_code("crashed", str(answer.details))
    raise SupervisionError(f"unexpected answer {answer!r} to {type(request).__name__}")


def cast(system: Any, address: Any, request: Any) -> None:
    from ._messages import Cast

    system.tell(address, Cast(request))


def start_server(system: Any, server: str | type, args: Any = None, *, timeout: float = 10.0) -> Any:
    """Create a top-level (unsupervised) server, run its ``init`` and return its address."""
    from thespian.actors import ActorExitRequest

    path = server if isinstance(server, str) else import_path_of(server)
    module_name, _, qualname = path.partition(":")
    import importlib

    target: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part)
    address = system.createActor(target)
    answer = system.ask(address, Init(args=args), timeout)
    if isinstance(answer, InitOk):
        return address
    system.tell(address, ActorExitRequest())
    if isinstance(answer, InitFailed):
        raise StartFailed(answer.reason)
    raise StartFailed(f"no answer to init within {timeout} s" if answer is None else f"unexpected {answer!r}")


def start_supervisor(
    system: Any,
    spec: SupervisorSpec | DynamicSupervisorSpec | PartitionSupervisorSpec,
    *,
    timeout: float = 30.0,
) -> SupervisorClient:
    """Start a top-level supervisor and all its children; fails as a whole (StartFailed)."""
    address = start_server(system, spec.actor_class, spec, timeout=timeout)
    return SupervisorClient(system, address)


def stop_server(system: Any, address: Any, *, timeout: float = 30.0) -> None:
    """Ask a server (or supervisor) to shut down and wait until it is gone.

    A supervisor first stops its children in reverse start order, with their
    shutdown timeouts. A supervisor never blocks its mailbox, so "gone" is when it
    stops answering: a supervisor still stopping children answers ``not_running``.
    """
    system.tell(address, Shutdown())
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if system.ask(address, Call(WhichChildren()), 0.25) is None:
            return
        time.sleep(0.02)
    raise CallTimeout(f"server did not stop within {timeout} s")


def whereis(system: Any, registry: Any, name: str, *, wait: float = 0.0, timeout: float = 5.0) -> Any:
    """The address registered under ``name``, waiting up to ``wait`` s for it; None if absent."""
    return call(system, registry, WhereIs(name, wait), timeout=max(timeout, wait + 1.0))


def call_name(system: Any, registry: Any, name: str, request: Any, *, timeout: float = 5.0) -> Any:
    """Call the server registered as ``name``; while it restarts, wait (up to ``timeout``).

    Raises :class:`NameNotFound` if no server holds the name within the timeout,
    :class:`CallTimeout` if it does not answer in time.
    """
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise NameNotFound(f"no server registered as {name!r} within {timeout} s")
        address = whereis(system, registry, name, wait=remaining, timeout=remaining)
        if address is None:
            raise NameNotFound(f"no server registered as {name!r} within {timeout} s")
        remaining = deadline - time.monotonic()
        try:
            return call(system, address, request, timeout=max(remaining, 0.05))
        except ServerNotRunning:
            time.sleep(0.01)  # it is going away; look the name up again
            continue


class SupervisorClient:
    """OTP's supervisor API as synchronous calls with timeouts.

    Errors are the typed :class:`ChildError` subclasses: ``ChildRunning``,
    ``ChildRestarting``, ``ChildNotFound``, ``ChildAlreadyPresent``,
    ``ChildAlreadyStarted``, ``MaxChildren``, ``StartFailed``.
    """

    def __init__(self, system: Any, address: Any, *, timeout: float = 10.0) -> None:
        self.system = system
        self.address = address
        self.timeout = timeout

    def _call(self, request: Any, timeout: float | None = None) -> Any:
        return call(self.system, self.address, request, timeout or self.timeout)

    def which_children(self) -> list[ChildInfo]:
        result: list[ChildInfo] = self._call(WhichChildren())
        return result

    def count_children(self) -> ChildCounts:
        result: ChildCounts = self._call(CountChildren())
        return result

    def start_child(self, spec: ChildSpec, *, key: str | None = None, timeout: float | None = None) -> Started:
        result: Started = self._call(StartChild(spec, key), timeout)
        return result

    def terminate_child(self, child_id: str, timeout: float | None = None) -> None:
        self._call(TerminateChild(child_id), timeout)

    def restart_child(self, child_id: str, timeout: float | None = None) -> Started:
        result: Started = self._call(RestartChild(child_id), timeout)
        return result

    def delete_child(self, child_id: str) -> None:
        self._call(DeleteChild(child_id))

    def get_childspec(self, child_id: str) -> ChildSpec:
        result: ChildSpec = self._call(GetChildSpec(child_id))
        return result

    def registry(self) -> Any:
        return self._call(GetRegistry())

    def registered(self) -> dict[str, Any]:
        registry = self.registry()
        if registry is None:
            return {}
        result: dict[str, Any] = call(self.system, registry, Registered(), self.timeout)
        return result

    def child(self, child_id: str) -> ChildInfo:
        for info in self.which_children():
            if info.id == child_id:
                return info
        from ._exceptions import ChildNotFound

        raise ChildNotFound(child_id)

    def pids(self) -> dict[str, int | None]:
        return {info.id: info.pid for info in self.which_children()}

    def stop(self, timeout: float = 30.0) -> None:
        stop_server(self.system, self.address, timeout=timeout)
