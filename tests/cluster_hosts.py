"""Hosts of a cluster for the tests: ``adk-actors serve`` processes on loopback addresses.

:class:`Cluster` starts N hosts (``tests/test_cluster.py`` three, ``tests/test_many_hosts.py``
up to ten) in one convention led by the first, on one PostgreSQL database; the helpers
read what a user would see: a console's other hosts, a turn's answer, who holds each
session's lease and a session's stored texts (behind the hosts' backs).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
from conftest import serving

from adk_actors.runtime import Member, ranked
from adk_actors.store import PostgresSessionStore
from supervision.lowlevel import free_port
from supervision.testing import wait_until

__all__ = ["APPS", "CHECKIN", "HOLDERS_READER", "LEASE", "Cluster", "held_at_home", "holders", "others_of", "per_home",
           "stored_texts", "turn"]

LEASE = 2.0
CHECKIN = 1.0  # [cluster] checkin_seconds of the hosts
HOLDERS_READER = "tests: lease holders"  # what holders() is called in pg_stat_activity
APPS = 'echo = "runtime_agents:echo_agent"\nsleepy = "runtime_agents:sleepy_agent"\n'


def others_of(url: str) -> list[dict[str, Any]]:
    """The other hosts of the cluster as the console of ``url`` shows them."""
    return list(httpx.get(f"{url}/console/api/tree", timeout=120).json()["others"])


def turn(url: str, session: str, text: str, app: str = "echo", timeout: float = 30) -> httpx.Response:
    """One turn of ``ann``'s ``session`` over ``url``'s ``/run``."""
    return httpx.post(f"{url}/run", timeout=timeout, json={
        "appName": app, "userId": "ann", "sessionId": session,
        "newMessage": {"role": "user", "parts": [{"text": text}]}})


def holders(url: str) -> dict[str, str]:
    """Session id -> the host holding its lease (read behind the hosts' backs)."""
    with psycopg.connect(url, application_name=HOLDERS_READER) as conn:
        rows = conn.execute("SELECT session_id, holder FROM session_leases WHERE app_name='echo'").fetchall()
    return {str(session): str(holder).split("/", 1)[0] for session, holder in rows if holder}


def held_at_home(url: str, homes: dict[str, str], via: list[str], timeout: float) -> tuple[dict[str, str], int]:
    """Session id -> the host holding its lease once every session of ``homes`` is held
    by its home (or as it stands at ``timeout``), and how many were not at first. A
    partition passes over a home that took no connection within ``HOLDER_CONNECT_WAIT``
    when asked (as a loaded machine's may not) and holds the session itself; it lets
    the session go once the home answers (``AWAY_RECHECK``), and the session's next
    request (here a read, which writes nothing, through a host of ``via``) activates it
    at home."""
    deadline, first = time.monotonic() + timeout, None
    while True:
        with psycopg.connect(url, application_name=HOLDERS_READER) as conn:
            rows = conn.execute("SELECT session_id, holder, expires FROM session_leases WHERE app_name='echo'").fetchall()
        held = {str(session): (str(holder).split("/", 1)[0], float(expires) == 0) for session, holder, expires in rows}
        away = [s for s in homes if held.get(s, ("", False))[0] != homes[s]]
        first = len(away) if first is None else first
        if not away or time.monotonic() > deadline:
            return {s: holder for s, (holder, _) in held.items()}, first
        for n, session in enumerate(away):
            if held.get(session, ("", True))[1]:  # let go: its next request activates it at home
                httpx.get(f"{via[n % len(via)]}/apps/echo/users/ann/sessions/{session}", timeout=30)
        time.sleep(0.2)


def per_home(prefix: str, members: list[Member], each: int) -> list[str]:
    """Session ids, ``each`` of them at home on every member (in the order found)."""
    chosen: dict[str, list[str]] = {m.name: [] for m in members}
    for i in range(10_000):
        home = chosen[ranked(f"echo/ann/{prefix}{i}", members)[0].name]
        if len(home) < each:
            home.append(f"{prefix}{i}")
        if all(len(ids) == each for ids in chosen.values()):
            break
    return sorted((s for ids in chosen.values() for s in ids), key=lambda s: int(s[len(prefix):]))


def stored_texts(url: str, session: str, store: PostgresSessionStore | None = None) -> list[str]:
    """The texts of a session's events, in the store's order (read behind the hosts'
    backs, through ``store`` when given, else a store opened for this read)."""
    reader = store or PostgresSessionStore(url)
    try:
        events = reader.get_session("echo", "ann", session).events
    finally:
        if store is None:
            reader.close()
    return [e.content.text for e in events if e.content and e.content.text]


class Cluster:
    """``count`` ``adk-actors serve`` hosts (three unless told) in one convention led by
    the first, host i on loopback address ``127.0.0.<i+1>``, on one PostgreSQL database
    (``url``); the members start together (a thread each) once the leader listens;
    ``restart(i)`` starts host i again (on its port and data) after it was killed. Every
    host is stopped, and its processes killed, when ``stack`` closes."""

    def __init__(self, tmp_path: Path, url: str, stack: contextlib.ExitStack, count: int = 3) -> None:
        self.tmp_path, self.url, self.stack = tmp_path, url, stack
        self.addresses = [f"127.0.0.{i + 1}" for i in range(count)]
        self.ports = [free_port(address) for address in self.addresses]
        self.names = [f"{a}:{p}" for a, p in zip(self.addresses, self.ports, strict=True)]
        self.toml = (f'[store]\nurl = "{url}"\nlease_seconds = {LEASE}\n'
                     f'[cluster]\njoin = "{self.names[0]}"\ncheckin_seconds = {CHECKIN:g}\nrefresh_seconds = 0.3\n')
        self.hosts: list[dict[str, Any]] = [self.start(0)]
        self.hosts += self._start_together(range(1, count))

    def _serving(self, i: int) -> contextlib.AbstractContextManager[dict[str, Any]]:
        folder = self.tmp_path / f"h{i}"
        folder.mkdir(exist_ok=True)
        return serving(folder, f'address = "{self.addresses[i]}"\n', more_toml=self.toml, apps=APPS,
                       port=self.ports[i])

    def start(self, i: int) -> dict[str, Any]:
        return self.stack.enter_context(self._serving(i))

    def _start_together(self, indexes: Iterable[int]) -> list[dict[str, Any]]:
        """Start hosts ``indexes``, each in a thread of its own; every one that started
        is stopped with the stack, and the first failure (if any) raised once all ended."""
        contexts = {i: self._serving(i) for i in indexes}
        started: dict[int, dict[str, Any]] = {}
        failures: list[BaseException] = []

        def enter(i: int) -> None:
            try:
                started[i] = contexts[i].__enter__()
            except BaseException as exc:  # raised below, in the caller's thread
                failures.append(exc)

        threads = [threading.Thread(target=enter, args=(i,)) for i in contexts]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()  # serving() waits for "listening" with a deadline of its own
        for i, context in contexts.items():
            if i in started:
                self.stack.push(context.__exit__)
        if failures:
            raise failures[0]
        return [started[i] for i in contexts]

    def restart(self, i: int) -> None:
        self.hosts[i] = self.start(i)

    def formed(self, timeout: float = 20) -> None:
        """Wait (up to ``timeout`` s a host) until the leader knows every member and
        every host has its view."""
        wait_until(lambda: sorted(o["name"] for o in others_of(self.hosts[0]["url"])) == sorted(self.names[1:]),
                   timeout=timeout)
        for entry in self.hosts[1:]:
            wait_until(lambda e=entry: len(others_of(e["url"])) == len(self.names) - 1, timeout=timeout)


@contextlib.contextmanager
def formed_cluster(tmp_path: Path, url: str, count: int) -> Iterator[Cluster]:
    """``count`` hosts on the database at ``url``, started and waited for until every
    host is in every host's view (printing how long that took); stopped at the end."""
    with contextlib.ExitStack() as stack:
        began = time.monotonic()
        started = Cluster(tmp_path, url, stack, count=count)
        started.formed(timeout=30 + 3 * count)
        print(f"\n{count} hosts listening and in every host's view {time.monotonic() - began:.1f} s after the start")
        yield started
