"""A run worker's way to the host's services (breakers, artifacts ...), from any thread.

:class:`WorkerServices` is the part of ``_run.RunActor`` (which inherits it) that the
worker and tool threads call (``service_call``, ``service_result``, ``service_cast``,
``service_forget``; ``_services_client.service_bridges`` wraps them for the engine).
In order: a thread posts its request and rings the doorbell; the main thread
(``_serve_requests``) sends it to the service's address, looked up in the host's
registry first when it is not known (requests wait for the look-up's answer; a run
with no registry gets ``ServiceError(not_running)``); a call's answer settles its
future (``RunActor.handle_info``). A service that does not answer within
``SERVICE_WAIT`` is forgotten, and looked up again next time.
"""

from __future__ import annotations

import concurrent.futures
import queue
import time
from typing import Any

from supervision import GenServer
from supervision.lowlevel import process_alive
from supervision.protocol import Call, Cast, Lookup

from ._run_wake import Doorbell
from ._services_client import SERVICE_WAIT, ServiceError

__all__ = ["SERVICE_POLL", "WorkerServices"]

#: How often a tool's thread waiting on a service looks whether the service's process
#: is still there (a read of /proc: microseconds).
SERVICE_POLL = 0.05


class WorkerServices(GenServer):
    """Service requests from the worker's threads, sent by its main thread (see the module)."""

    _bell: Doorbell
    _requests: queue.SimpleQueue[tuple[str, str, Any, Any]]
    _registry: Any  # the host's registry (None: runs use no service)
    _services: dict[str, Any]  # service name -> its address, once looked up
    _service_pids: dict[str, int]  # service name -> its process, as the registry answered
    _lookups: dict[str, str]  # look-up call ref -> service name
    _waiting: dict[str, list[tuple[str, Any, Any]]]  # service name -> requests waiting for its look-up
    _service_calls: dict[str, concurrent.futures.Future[Any]]  # call ref -> its future

    def _post(self, item: tuple[str, str, Any, Any]) -> None:
        """Any thread: hand a service request to the main thread."""
        self._requests.put(item)
        self._bell.ring()

    def service_call(self, name: str, request: Any) -> concurrent.futures.Future[Any]:
        """Call the host service registered as ``name``; the answer arrives in the future."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._post(("call", name, request, future))
        return future

    def service_result(self, name: str, request: Any, timeout_error: type[Exception] = RuntimeError) -> Any:
        """From a tool's thread: call the host service ``name`` and wait for its answer,
        at most ``SERVICE_WAIT`` seconds, looking every ``SERVICE_POLL`` whether the
        service's process (its pid, as the registry answered the look-up) is still
        there. Gone: forget its address and raise :class:`ServiceError` ``not_running``
        at once (it died with the call; its restart answers the next one). No answer in
        time: forget its address (it may have restarted) and raise ``timeout_error``; a
        refusal raises :class:`ServiceError`."""
        future = self.service_call(name, request)
        deadline = time.monotonic() + SERVICE_WAIT
        while True:
            try:
                return future.result(timeout=max(0.0, min(SERVICE_POLL, deadline - time.monotonic())))
            except concurrent.futures.TimeoutError:
                pid = self._service_pids.get(name)
                if pid is not None and not process_alive(pid):
                    self.service_forget(name)
                    raise ServiceError(name, "not_running", f"the {name} service stopped before it answered "
                                       "(it is being restarted: ask again)") from None
                if time.monotonic() >= deadline:
                    self.service_forget(name)
                    raise timeout_error(f"the {name} service did not answer within {SERVICE_WAIT} s") from None

    def service_cast(self, name: str, request: Any) -> None:
        self._post(("cast", name, request, None))

    def service_forget(self, name: str) -> None:
        """Look the service up again next time (it did not answer: it may have restarted)."""
        self._post(("forget", name, None, None))

    def _serve_requests(self) -> None:
        while True:
            try:
                kind, name, request, future = self._requests.get_nowait()
            except queue.Empty:
                return
            if kind == "forget":
                self._services.pop(name, None)
                self._service_pids.pop(name, None)
                continue
            address = self._services.get(name)
            if address is not None:
                self._send_to_service(kind, address, request, future)
                continue
            if self._registry is None:
                if future is not None:
                    future.set_exception(ServiceError(name, "not_running", "this run has no service registry"))
                continue
            self._waiting.setdefault(name, []).append((kind, request, future))
            if name not in self._lookups.values():
                lookup = Call(Lookup(name, 0.5))
                self._lookups[lookup.ref] = name
                self.send(self._registry, lookup)

    def _send_to_service(self, kind: str, address: Any, request: Any, future: Any) -> None:
        if kind == "cast":
            self.send(address, Cast(request))
        else:
            call = Call(request)
            self._service_calls[call.ref] = future
            self.send(address, call)
