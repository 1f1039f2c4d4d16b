"""A host kept from one test to the next of a module, for tests that kill parts of it.

``conftest.SharedHost`` hands on a host only while its tree is exactly as it started
(the same pids): right for tests that never kill. The tests here kill partitions,
pools, workers and services, and the host restarts them; :class:`KeptHost` hands the
host on when the test that had it ended well and its tree is whole again (every
actor of it reported running), and starts a fresh one otherwise. Starting a host is
~23 actor processes in sequence, stopping it (and its actor system) waits for each:
a second or two idle, many more at load, for each test that does it.

The tests that use it talk on sessions (users, run ids) of their own, and assert
nothing that a fault of an earlier test could change (a restart count, say).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from adk_actors.runtime import Host, HostConfig
from supervision import SupervisorClient
from supervision.lowlevel import load_scaled
from supervision.testing import LeftoverProcesses, pid_alive, running_actor_system, wait_until


def tree_running(host: Host) -> bool:
    """Every child of the root, and every child of the root's supervisors, reported
    running in a live process (asked from an endpoint of its own, 2 s a call); False
    while a supervisor restarts or does not answer."""
    if host.root is None:
        return False
    try:
        with host.system.private() as endpoint:
            infos = list(SupervisorClient(endpoint, host.root.address, timeout=2.0).which_children())
            for info in list(infos):
                if info.type == "supervisor" and info.address is not None:
                    infos += SupervisorClient(endpoint, info.address, timeout=2.0).which_children()
    except Exception:  # a supervisor restarting, or not answering
        return False
    return all(i.status == "running" and i.pid is not None and pid_alive(i.pid) for i in infos)


class KeptHost:
    """One host at a time, on an actor system of its own, kept across the tests of a
    module (see the module's docstring).

    :meth:`host` (a context manager) hands a test the kept host of ``name`` if there
    is one and ``whole(host)`` comes true within ``settle`` seconds (stretched by the
    load: a restart the last test caused may still be under way); else it stops the
    kept host (its system with it) and starts one of ``config(data_dir)``. A test that
    raises has its host stopped on the way out (the next test starts fresh), one that
    ends well leaves it kept. Asking for another ``name`` stops the kept one.
    :meth:`close` stops whatever is kept (leftover processes of its system raise
    :class:`LeftoverProcesses`, as the ``actor_system`` fixture's do)."""

    def __init__(self, folder: Path, whole: Callable[[Host], bool] = tree_running, settle: float = 30.0) -> None:
        self.folder, self.whole, self.settle = folder, whole, settle
        self.kept: tuple[str, Host, ExitStack] | None = None
        self.started = 0
        self._ids = count()

    def tag(self, prefix: str = "k") -> str:
        """An id part no other test of this keeper was given (for sessions, users, runs)."""
        return f"{prefix}{next(self._ids)}"

    def _reusable(self, name: str) -> bool:
        if self.kept is None or self.kept[0] != name:
            return False
        host = self.kept[1]
        try:
            wait_until(lambda: self.whole(host), timeout=load_scaled(self.settle), interval=0.05)
        except AssertionError:
            return False
        return True

    def _drop(self) -> None:
        kept, self.kept = self.kept, None
        if kept is not None:
            try:
                kept[2].close()
            except LeftoverProcesses:  # killed: the test that left them has failed, not the next one
                pass

    @contextmanager
    def host(self, name: str, config: Callable[[Path], HostConfig]) -> Iterator[Host]:
        if not self._reusable(name):
            self._drop()
            self.started += 1
            data = self.folder / f"{name}-{self.started}"
            with ExitStack() as stack:
                system = stack.enter_context(running_actor_system(data / "logs"))
                host = stack.enter_context(Host(config(data / "data"), system=system))
                self.kept = (name, host, stack.pop_all())  # (a failed start: its system is shut down on the way out)
        kept = self.kept
        assert kept is not None
        try:
            yield kept[1]
        except BaseException:
            self._drop()
            raise

    def close(self) -> None:
        kept, self.kept = self.kept, None
        if kept is not None:
            kept[2].close()


def kept_hosts(folder: str, whole: Callable[[Host], bool] = tree_running) -> Any:
    """A module-scoped pytest fixture giving the module's :class:`KeptHost` (its hosts'
    data under a temporary folder named ``folder``; ``whole``: see :class:`KeptHost`),
    closed when the module's tests are done. A module takes it as ``kept =
    kept_hosts("name")``."""

    @pytest.fixture(scope="module")
    def kept(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeptHost]:
        hosts = KeptHost(tmp_path_factory.mktemp(folder), whole=whole)
        try:
            yield hosts
        finally:
            hosts.close()

    return kept
