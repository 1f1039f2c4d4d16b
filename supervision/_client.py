"""Synchronous helpers for plain Python code (tests, CLIs, scripts) talking to servers.

Every helper takes a timeout and either returns the answer or raises a typed error:
:class:`CallTimeout` when nothing came back in time, a :class:`CallError` subclass when
the server answered with an error. Nothing here waits forever.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ._exceptions import (
    CallTimeout,
    NameNotFound,
    ServerDiedAnswering,
    ServerNotRunning,
    StartFailed,
    error_for_code,
)
from ._messages import (
    Call,
    Cast,
    ChildCounts,
    ChildInfo,
    CountChildren,
    DeleteChild,
    ErrorReply,
    GetChildSpec,
    GetRegistry,
    Handed,
    Init,
    InitFailed,
    InitOk,
    Lookup,
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
from ._spec import (
    ChildSpec,
    DynamicSupervisorSpec,
    PartitionSupervisorSpec,
    SupervisorSpec,
    import_object,
    import_path_of,
)
from ._system import node_id, process_alive, takes_connection

__all__ = [
    "SupervisorClient",
    "call",
    "call_name",
    "cast",
    "start_server",
    "start_supervisor",
    "stop_server",
    "whereis",
]


def call(
    system: Any,
    address: Any,
    request: Any,
    timeout: float = 5.0,
    *,
    alive: Callable[[], bool] | None = None,
    poll: float = 0.2,
) -> Any:
    """Send ``request`` as a :class:`Call` and return the reply's value.

    In order: ask; a reply whose ref is not ours (a late answer to an earlier call
    that timed out), and any message that is no answer to a call at all (a late
    message of something this endpoint did before, such as a run's event), is
    dropped and listening goes on; if ``alive`` is given it is
    checked every ``poll`` seconds while waiting (OTP's monitor: a server that died
    after taking the message makes the call fail at once instead of at the timeout).
    The call carries its deadline (``Call.deadline``: now on the wall clock plus
    ``timeout``), for a server that should not act on a call its caller gave up on.
    The call asks to be told where it goes (``Call.watch``): a server that forwards it
    says so (:class:`Handed`), and from then on the server it went to is watched, by
    whether it takes a connection, every ``poll`` seconds.

    Raises :class:`ServerNotRunning` when the message cannot be delivered (a dead
    address refuses it at once) or ``alive()`` turns false (:class:`ServerDiedAnswering`
    when the server that went down is one the call was handed to: it may have acted), :class:`CallTimeout` if
    no answer comes within ``timeout`` seconds, or the typed :class:`CallError` the
    server answered with. With ``alive``, only ``alive()`` says the server is gone: a
    refusal is told from a short wait by its timing, which a wait of a few
    milliseconds cannot do reliably (a call taken for refused would be sent twice).
    """
    message = Call(request, watch=True, deadline=time.time() + timeout)
    deadline = time.monotonic() + timeout
    handed = False
    if alive is None:
        answer = ask_delivered(system, address, message, timeout)
    else:
        answer = system.ask(address, message, min(timeout, poll))
    while True:
        if _answers(answer, message):
            return _unwrap(answer)
        if isinstance(answer, Handed) and answer.ref == message.ref:
            # Forwarded (to another host's server, to a partition): that one is watched now.
            alive = _taking_connections(answer.to, alive)
            handed = True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise CallTimeout(f"no reply to {type(request).__name__} within {timeout} s")
        if alive is not None and not alive():
            if handed:
                raise ServerDiedAnswering(f"the server {type(request).__name__} was handed to died before answering")
            raise ServerNotRunning(f"the server died before answering {type(request).__name__}")
        answer = system.listen(min(poll, remaining) if alive is not None else remaining)


#: How often a call handed to another server looks whether that one takes a connection:
#: each look is a TCP connection the server must accept, and a caller polling every few
#: milliseconds filled a busy partition's listen queue, so the look failed and a server
#: that was only busy was taken for dead.
HANDED_WATCH_EVERY = 0.5


def _taking_connections(to: Any, before: Callable[[], bool] | None) -> Callable[[], bool] | None:
    """What ``call`` watches once its call was handed to ``to``: that ``to`` takes a
    connection, looked at no more often than every ``HANDED_WATCH_EVERY`` seconds
    (where that cannot be told, what it watched before)."""
    if takes_connection(to) is None:
        return before
    looked = [time.monotonic()]

    def taking() -> bool:
        now = time.monotonic()
        if now - looked[0] < HANDED_WATCH_EVERY:
            return True
        looked[0] = now
        return takes_connection(to) is not False

    return taking


def ask_delivered(system: Any, address: Any, message: Call | Cast, wait: float) -> Any:
    """``system.ask(address, message, wait)``: the first message that arrives within
    ``wait`` seconds (a reply or not; None if none came), except that a refused
    delivery raises :class:`ServerNotRunning`: Thespian gives up early when the
    address refuses the connection, because its process is gone."""
    began = time.monotonic()
    answer = system.ask(address, message, wait)
    if answer is None and time.monotonic() - began < wait * 0.9:
        raise ServerNotRunning(f"{type(message.request).__name__} could not be delivered: the server is not running")
    return answer


def _answers(answer: Any, message: Call) -> bool:
    """Is ``answer`` the answer to ``message``: our reply (or one with no ref), or
    Thespian's PoisonMessage for it?"""
    from thespian.actors import PoisonMessage

    if isinstance(answer, (Reply, ErrorReply)):
        return answer.ref is None or answer.ref == message.ref
    return isinstance(answer, PoisonMessage) and getattr(answer.poisonMessage, "ref", None) == message.ref


def _unwrap(answer: Any) -> Any:
    """The value of an answer :func:`_answers` accepted, or the error it carries."""
    if isinstance(answer, Reply):
        return answer.value
    if isinstance(answer, ErrorReply):
        raise error_for_code(answer.code, answer.detail)
    raise error_for_code("crashed", str(answer.details))  # Thespian's PoisonMessage


def cast(system: Any, address: Any, request: Any) -> None:
    system.tell(address, Cast(request))


def start_server(system: Any, server: str | type, args: Any = None, *, timeout: float = 10.0,
                 global_name: str | None = None) -> Any:
    """Create a top-level (unsupervised) server, run its ``init`` and return its address.

    With ``global_name`` other processes attached to the same actor system find it
    with :func:`find_global`.
    """
    from thespian.actors import ActorExitRequest

    target = import_object(server if isinstance(server, str) else import_path_of(server))
    address = system.createActor(target, globalName=global_name) if global_name else system.createActor(target)
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
    global_name: str | None = None,
) -> SupervisorClient:
    """Start a top-level supervisor and all its children; fails as a whole (StartFailed)."""
    address = start_server(system, spec.actor_class, spec, timeout=timeout, global_name=global_name)
    return SupervisorClient(system, address)


def find_global(system: Any, server: str | type, global_name: str, *, timeout: float = 5.0) -> Any:
    """The address of a running server registered under ``global_name``, or None.

    Thespian has no look-up-only call: asking for a global name creates an actor when
    none holds it. Such a fresh actor never got ``Init`` and says so ("not
    initialised"); it is told to exit and None is returned. A server that got its
    ``Init`` and is still starting (a supervisor starting its children) says
    "starting" instead: its address is returned.
    """
    from thespian.actors import ActorExitRequest

    from ._messages import WhichChildren

    target = import_object(server if isinstance(server, str) else import_path_of(server))
    address = system.createActor(target, globalName=global_name)
    answer = system.ask(address, Call(WhichChildren()), timeout)
    if isinstance(answer, ErrorReply) and answer.code == "not_running" and "not initialised" in answer.detail:
        system.tell(address, ActorExitRequest())
        return None
    return address


def stop_server(system: Any, address: Any, *, timeout: float = 30.0) -> None:
    """Ask a server (or supervisor) to shut down and wait until it is gone.

    In order: ``Shutdown`` is sent from a daemon thread on an endpoint of its own
    (Thespian's ``tell`` blocks for a minute on a process that does not read, one
    stopped with SIGSTOP); then, until ``timeout``, the server is asked for its
    children every 0.25 s. "Gone" is a refused connection: a supervisor still stopping
    its children answers ``not_running``, and one that does not answer at all (hung)
    is not gone. Raises :class:`CallTimeout` when it is not gone in time.
    """
    sender = threading.Thread(target=_tell_shutdown, args=(system, address), daemon=True,
                              name="supervision-stop")
    sender.start()
    deadline = time.monotonic() + timeout
    sender.join(min(1.0, timeout))
    while time.monotonic() < deadline:
        try:
            ask_delivered(system, address, Call(WhichChildren()), 0.25)
        except ServerNotRunning:
            return
        time.sleep(0.02)
    raise CallTimeout(f"server did not stop within {timeout} s")


def _tell_shutdown(system: Any, address: Any) -> None:
    with system.private() as endpoint:
        endpoint.tell(address, Shutdown())


def whereis(system: Any, registry: Any, name: str, *, wait: float = 0.0, timeout: float = 5.0) -> Any:
    """The address registered under ``name``, waiting up to ``wait`` s for it; None if absent."""
    return call(system, registry, WhereIs(name, wait), timeout=max(timeout, wait + 1.0))


def call_name(system: Any, registry: Any, name: str, request: Any, *, timeout: float = 5.0) -> Any:
    """Call the server registered as ``name``; while it restarts, wait (up to ``timeout``).

    In order: look the name up (waiting while it is unregistered); call it (from a
    private endpoint, so a send to a dead address never lingers in ``system``), checking
    while waiting that the registered process is still alive; if it died before
    answering, look the name up again and call the new process (so a request can be
    delivered twice when a server dies mid-call: at-least-once, as any retry).

    Raises :class:`NameNotFound` if no server holds the name within the timeout,
    :class:`CallTimeout` if it does not answer in time.
    """
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise NameNotFound(f"no server registered as {name!r} within {timeout} s")
        entry = call(system, registry, Lookup(name, remaining), timeout=remaining + 1.0)
        if entry is None:
            raise NameNotFound(f"no server registered as {name!r} within {timeout} s")
        address, pid, node = entry
        alive = (lambda: process_alive(pid)) if pid is not None and node == node_id() else None
        remaining = deadline - time.monotonic()
        try:
            # From a private endpoint: a send to an address that just died is retried by
            # Thespian's transport, and would otherwise hold up the caller's own system
            # (its shutdown waits for pending sends, up to 10 s).
            with system.private() as endpoint:
                return call(endpoint, address, request, timeout=max(remaining, 0.05), alive=alive)
        except ServerNotRunning:
            time.sleep(0.005)  # it is going away; look the name up again


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
