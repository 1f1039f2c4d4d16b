"""A session's holder stalled in the middle of a PostgreSQL transaction (cut off from the
network, or stopped) must not stall the hosts that come after it.

The holder's row locks live in the server for as long as its transaction is open, and a
transaction whose client vanished silently (its packets dropped by a network cut, its
process stopped) stays open until the server notices: by default never. A survivor's
lease request waits on those locks meanwhile: a host cut off mid-write once made the
other host's partition hang in its store (a CI run of tests/test_network_cut.py). The
store tells the server to end a transaction left idle for a third of the lease (and a
connection whose client stopped answering): the survivor is answered, the stalled
transaction is rolled back and its writer told so (a typed StoreError), and nothing of
it is committed.

The holder is a real process, stopped with SIGSTOP at the moment PostgreSQL shows its
connection idle inside a transaction: to the server, the same as a network cut."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import psycopg

from adk_actors.store import SessionLeased, open_session_store
from supervision.testing import wait_until

LEASE = 3.0
HOLDER = r"""
import sys
from adk_actors.events import Event
from adk_actors.store import StoreError, open_session_store
from adk_actors.types import Content, Part

url, lease_seconds = sys.argv[1], float(sys.argv[2])
store = open_session_store(url, application_name="stalled-holder", lease_seconds=lease_seconds)
lease = store.acquire_lease("app", "ann", "s1", "holder-a", lease_seconds)
print("holding", flush=True)
n = 0
while True:
    n += 1
    event = Event(author="user", invocation_id=f"i{n}", content=Content(role="user", parts=[Part(text=f"write {n}")]))
    try:
        store.append_events("app", "ann", "s1", [event], lease=lease)
        store.renew_leases("holder-a", lease_seconds)
    except StoreError as exc:
        print(f"StoreError {n}: {exc}", flush=True)
        break
"""


def _idle_in_transaction(admin: psycopg.Connection[Any]) -> bool:
    row = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'stalled-holder' "
                        "AND state = 'idle in transaction'").fetchone()
    return bool(row and row[0])


def _stop_inside_a_transaction(holder: subprocess.Popen[str], admin: psycopg.Connection[Any]) -> None:
    """SIGSTOP the holder until it is caught stopped with its transaction open."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if _idle_in_transaction(admin):
            os.kill(holder.pid, signal.SIGSTOP)
            time.sleep(0.05)  # the server's view of it settles (a statement it had sent ends)
            if _idle_in_transaction(admin):
                return
            os.kill(holder.pid, signal.SIGCONT)
    raise AssertionError("the holder was never caught inside a transaction")


def test_a_holder_stalled_mid_transaction_does_not_stall_the_next_holder(postgres: Any) -> None:
    url = postgres.new_database()
    survivor = open_session_store(url, application_name="survivor", lease_seconds=LEASE)
    survivor.create_session("app", "ann", "s1")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, url, str(LEASE)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        with psycopg.connect(url, autocommit=True) as admin:
            _stop_inside_a_transaction(holder, admin)
            committed = len(survivor.get_session("app", "ann", "s1").events)

            answer: list[Any] = []

            def take() -> None:
                try:
                    answer.append(survivor.acquire_lease("app", "ann", "s1", "holder-b", LEASE))
                except Exception as exc:  # the answer, whatever it is
                    answer.append(exc)

            asking = threading.Thread(target=take, daemon=True)
            asking.start()
            # Without the server's limit the request waits on the stalled holder's row locks
            # for as long as its transaction stays open: for ever.
            asking.join(timeout=30)
            assert answer, "the next holder's lease request is still waiting on the stalled transaction"
            assert isinstance(answer[0], SessionLeased) or answer[0].holder == "holder-b", answer[0]

            # Within the lease the next holder takes the session (the stalled one's ran out).
            def taken() -> bool:
                try:
                    return survivor.acquire_lease("app", "ann", "s1", "holder-b", LEASE).holder == "holder-b"
                except SessionLeased:
                    return False

            wait_until(taken, timeout=LEASE * 3, interval=0.2, message="the next holder takes the lease")
            assert not _idle_in_transaction(admin)  # the server ended the stalled transaction
            assert len(survivor.get_session("app", "ann", "s1").events) == committed  # nothing of it committed
        os.kill(holder.pid, signal.SIGCONT)
        out, _ = holder.communicate(timeout=30)
        assert "StoreError" in out, out  # the stalled writer is told its write failed
    finally:
        if holder.poll() is None:
            os.kill(holder.pid, signal.SIGCONT)
            holder.kill()
            holder.wait(timeout=30)
        survivor.close()
