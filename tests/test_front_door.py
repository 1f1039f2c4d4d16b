"""The front door never closes while the host lives.

``serve`` owns the HTTP listening socket and hands it to every server process the
``http`` actor starts, so a restart anywhere in the tree (a root child killed, and
with rest_for_one every child after it, ``http`` last; the ``http`` actor; the
uvicorn process itself) leaves connections waiting in the backlog until the next
server answers them: a caller polling the port never sees "connection refused".
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import serving

from adk_actors.runtime import Host
from supervision import call
from supervision.lowlevel import process_alive
from supervision.testing import wait_until

#: A connection is opened at once or never (the port is local); an answer may wait in
#: the backlog while the tree restarts (a new server process imports the web stack: 2-3 s
#: on an idle machine, over 10 s on a loaded one), up to this deadline.
CONNECT_TIMEOUT = 1.0
READ_DEADLINE = 30.0
POLL_EVERY = 0.05
ROOT_CHILDREN = ("run_pools", "sessions", "services", "jobs", "http")


@dataclass(frozen=True)
class Outcome:
    path: str
    began: float
    ended: float
    status: int | None = None
    retry_after: str | None = None
    error: BaseException | None = None


class Poller:
    """GETs each of ``paths`` in turn every ``POLL_EVERY`` s on a thread, each request on
    a new connection (as a load balancer's health check does), and keeps every outcome."""

    def __init__(self, base_url: str, paths: tuple[str, ...]) -> None:
        self.base_url, self.paths = base_url, paths
        self.outcomes: list[Outcome] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="front-door-poller", daemon=True)

    def __enter__(self) -> Poller:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(READ_DEADLINE + CONNECT_TIMEOUT + 5)

    def _run(self) -> None:
        timeout = httpx.Timeout(READ_DEADLINE, connect=CONNECT_TIMEOUT)
        while not self._stop.is_set():
            for path in self.paths:
                began = time.monotonic()
                try:
                    with httpx.Client(base_url=self.base_url, timeout=timeout) as client:
                        response = client.get(path)
                    self.outcomes.append(Outcome(path, began, time.monotonic(), response.status_code,
                                                 response.headers.get("retry-after")))
                except httpx.HTTPError as exc:
                    self.outcomes.append(Outcome(path, began, time.monotonic(), error=exc))
            self._stop.wait(POLL_EVERY)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[dict[str, Any]]:
    with serving(tmp_path) as running:
        yield running


@pytest.mark.timeout(600)  # six kills, each waited out up to 90 s on a loaded machine
def test_the_front_door_never_refuses_a_connection_through_any_restart(served: dict[str, Any]) -> None:
    url = served["url"]
    created = httpx.post(f"{url}/apps/weather_bot/users/ann/sessions/s1", json={}, timeout=30)
    assert created.status_code == 200, created.text
    session = "/apps/weather_bot/users/ann/sessions/s1"
    host = Host.connect(served["port"])

    def children() -> dict[str, Any]:
        assert host.root is not None
        return {c.id: c for c in host.root.which_children()}

    def restored(killed: str, before: dict[str, Any]) -> bool:
        """Every root child runs again, the killed one (and ``http``, always after it)
        as a new process, and the front door answers."""
        try:
            now = children()
        except Exception:  # the root is busy restarting
            return False
        if any(c.pid is None or c.address is None for c in now.values()):
            return False
        if killed in now and now[killed].pid == before[killed].pid:
            return False
        if now["http"].pid == before["http"].pid:
            return False
        try:
            return httpx.get(f"{url}/list-apps", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    # (what was killed, when, when the tree was back)
    kills: list[tuple[str, float, float]] = []
    try:
        assert set(ROOT_CHILDREN) <= set(children())
        with Poller(url, ("/list-apps", session)) as poller:
            wait_until(lambda: len(poller.outcomes) >= 4, timeout=10)
            for target in (*ROOT_CHILDREN, "server"):
                before = children()
                if target == "server":  # the uvicorn process itself
                    pid: int = call(host.system, before["http"].address, "server_pid")
                    killed = "http"
                else:
                    pid, killed = before[target].pid, target
                assert pid is not None and process_alive(pid)
                at = time.monotonic()
                os.kill(pid, signal.SIGKILL)
                wait_until(lambda: restored(killed, before), timeout=90,
                           message=f"the tree restored after a kill of {target}")
                kills.append((target, at, time.monotonic()))
                seen = len(poller.outcomes)
                wait_until(lambda: len(poller.outcomes) >= seen + 2, timeout=READ_DEADLINE + 5)
    finally:
        host.disconnect()

    outcomes = poller.outcomes
    for target, at, back in kills:  # the poller was asking all through each restart
        assert any(o.began <= back and o.ended >= at for o in outcomes), f"no request while {target} restarted"
    refused = [o for o in outcomes if isinstance(o.error, httpx.ConnectError | httpx.ConnectTimeout)]
    assert not refused, [(o.path, repr(o.error)) for o in refused]

    # Killing the http actor takes its uvicorn process down too, as killing that process does.
    server_kills = [at for target, at, _ in kills if target in ("http", "server")]

    def in_flight_at_server_kill(o: Outcome) -> bool:
        """A request the killed uvicorn process had accepted: kill -9 drops it, nobody can answer it."""
        return isinstance(o.error, httpx.RemoteProtocolError | httpx.ReadError) and any(
            o.began <= at <= o.ended for at in server_kills)

    failed = [o for o in outcomes if o.error is not None and not in_flight_at_server_kill(o)]
    assert not failed, ([(o.path, repr(o.error), round(o.began - outcomes[0].began, 2),
                          round(o.ended - outcomes[0].began, 2)) for o in failed],
                        [(t, round(at - outcomes[0].began, 2), round(back - outcomes[0].began, 2))
                         for t, at, back in kills])
    assert sum(1 for o in outcomes if o.error is not None) <= 1  # at most the one in flight
    answered = [o for o in outcomes if o.error is None]
    wrong = [(o.path, o.status, o.retry_after) for o in answered
             if not (o.status == 200 or (o.status == 503 and o.retry_after is not None and o.retry_after.isdigit()))]
    assert not wrong
    assert sum(1 for o in answered if o.path == "/list-apps" and o.status == 200) > len(kills)
