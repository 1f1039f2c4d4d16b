"""Failover at load: hosts of a cluster killed (SIGKILL, every process group of the host)
while callers keep turning sessions on every host, as a user of the cluster sees it.

``ADK_FAILOVER_HOSTS`` ``adk-actors serve`` hosts (default 3) in one convention on one
PostgreSQL database (``cluster_hosts.Cluster``: lease 2 s, check-in 1 s), and
``ADK_FAILOVER_SESSIONS_PER_HOST`` echo sessions at home on each (default 7); one caller
thread a session turns it over HTTP ``/run`` without a pause, through the hosts that live,
one after another (a load balancer without affinity). After ``ADK_SOAK_SECONDS / 2`` s of
load (default 3: 1.5 s), with a long run in flight on the victim and another on a
survivor (``/run_sse``), a member is killed; once its sessions are served again and the
load went on ``ADK_SOAK_SECONDS / 2`` s more, the leader is killed the same way. Shown,
for each kill:

- every session at home on the killed host is served again, by its next-ranked living
  host, within :data:`BOUND` (docs/scaling.md, "Tested: failover at load":
  ``lease_seconds + checkin_seconds + 20 s``, a correctness bound for a loaded machine;
  the figure is ``bench/cluster.py --failover-at-load``);
- the other hosts' sessions kept being served during the failover: none of their turns
  through a living host was refused, and each living host answered turns on its
  sessions between the kill and the end of the failover;
- every turn ended with one outcome, never a hang: an answer, a typed refusal (500
  ``interrupted``/``killed`` or 503) on a session of the killed host, or a broken
  connection to the killed host's own front door; the run in flight on the victim ends
  with one typed failure (its stream's one and last error line, or a 500 before any
  event reached its caller's host), and ``runs/last`` reads it ended (``interrupted``)
  once the dead host's lease ran out, with no turn on its session before (the read
  activates the session on its next home, which ends the dead host's runs); the
  run in flight on a survivor ends with its answer; no run is left ``running``;
- no acknowledged turn is lost and no session had two writers: each session's stored
  user texts are texts its caller sent, none twice, the acknowledged ones in the order
  sent, each with its answer right after it (numbered by the turns stored before it:
  the model saw the whole history) and its run ``done``;
- no session is stuck: after the load, every session answers a turn.

No turn answered 503 ``session_elsewhere`` (which promises nothing was written) was
written. (It was, at times, before: its holder committed it and was killed before
answering, and the forwarding host's Runner, asking again, met the dead holder's
lease; a call handed to a server that dies now raises ``ServerDiedAnswering`` and the
Runner asks again with the same run id until the next holder answers it.)

Every session's stored user texts are in the order its caller sent them, the
unacknowledged ones too: a turn in flight through a host when it died (its caller
answered with a broken connection) is written before the caller's next turn or never.
(It was, at times, written after: it waited on a hop of a loaded survivor while the
caller's next turn reached the session another way; a session now takes no turn whose
caller is gone: tests/test_late_turns.py.) A session out of order fails the test, once
every other check passed, with what tells how (:func:`late_evidence`).

The short form (3 hosts, 21 sessions, 3 s of load) runs in the default suite; the long
form by hand, e.g. ``ADK_FAILOVER_HOSTS=5 ADK_FAILOVER_SESSIONS_PER_HOST=20
ADK_SOAK_SECONDS=30``. The figures are printed: ``pytest -s``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import statistics
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from cluster_hosts import CHECKIN, LEASE, Cluster, formed_cluster, holders, others_of

from adk_actors.runtime import Member, ranked
from adk_actors.store import PostgresSessionStore
from supervision.testing import find_marked_processes, kill_marked_processes, wait_until

HOSTS = int(os.environ.get("ADK_FAILOVER_HOSTS", "3"))
SESSIONS_PER_HOST = int(os.environ.get("ADK_FAILOVER_SESSIONS_PER_HOST", "7"))
SECONDS = float(os.environ.get("ADK_SOAK_SECONDS", "3"))
#: docs/scaling.md: a killed host's sessions are served again within this many seconds
#: of the kill (lease + check-in + 20 s: generous, for a machine at load ~20).
BOUND = LEASE + CHECKIN + 20
TURN_TIMEOUT = 60.0  # a turn not answered by then hung
#: The refusals a turn on a session of a killed host may meet while it fails over.
TYPED_REFUSALS = {500: ("interrupted", "killed"), 503: ("",)}


@dataclass
class Outcome:
    """One turn as its caller saw it."""

    session: str
    text: str
    entry: str  # the front door it went through
    sent: float
    ended: float
    status: int | None  # None: no HTTP answer
    detail: str  # the error's detail, the transport error, or "hung"
    invocation: str = ""


@dataclass
class Load:
    """One caller thread a session, each turning its session through ``alive`` (the
    front doors of the hosts that live, taken one after another) until ``stop``; a turn
    that is not answered 200 is tried again 0.1 s later."""

    sessions: list[str]
    alive: list[str]
    outcomes: list[Outcome] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)

    def __enter__(self) -> Load:
        self.threads = [threading.Thread(target=self._turn_on, args=(i, s), daemon=True)
                        for i, s in enumerate(self.sessions)]
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(TURN_TIMEOUT + 10)
        assert not any(t.is_alive() for t in self.threads), "a caller did not end"

    def _turn_on(self, i: int, session: str) -> None:
        with httpx.Client(timeout=TURN_TIMEOUT) as client:
            n = 0
            while not self.stop.is_set():
                n += 1
                alive = list(self.alive)
                entry, text = alive[(i + n) % len(alive)], f"{session} t{n}"
                sent = time.monotonic()
                try:
                    answer = client.post(f"{entry}/run", json={
                        "appName": "echo", "userId": "ann", "sessionId": session,
                        "newMessage": {"role": "user", "parts": [{"text": text}]}})
                except httpx.TimeoutException:
                    self.outcomes.append(Outcome(session, text, entry, sent, time.monotonic(), None, "hung"))
                    continue
                except httpx.TransportError as exc:
                    self.outcomes.append(Outcome(session, text, entry, sent, time.monotonic(), None, repr(exc)))
                    time.sleep(0.1)
                    continue
                ended = time.monotonic()
                try:
                    detail, invocation = "", ""
                    if answer.status_code == 200:
                        events = answer.json()
                        reply = events[-1]["content"]["parts"][0]["text"] if events else ""
                        invocation = events[-1].get("invocationId", "") if events else ""
                        if not reply.startswith(f"echo: {text} (turn "):
                            detail = f"a wrong answer: {reply!r}"
                    else:
                        detail = str(answer.json().get("detail", answer.text))
                except ValueError:  # not the JSON of an answer
                    detail = f"not an answer: {answer.text[:200]!r}"
                self.outcomes.append(Outcome(session, text, entry, sent, ended, answer.status_code, detail, invocation))
                if answer.status_code != 200:
                    time.sleep(0.1)

    def of(self, session: str) -> list[Outcome]:
        return [o for o in list(self.outcomes) if o.session == session]


class Streamed:
    """A long run of the ``sleepy`` app over ``/run_sse`` on a thread (on a session that
    exists): its ``data:`` lines, and when the stream ended (None while it runs)."""

    def __init__(self, entry: str, session: str, seconds: float, marker: Path) -> None:
        self.lines: list[dict[str, Any]] = []
        self.ended: float | None = None
        self.status = 0
        self.failure = ""
        self.session = session
        body = {"appName": "sleepy", "userId": "ann", "sessionId": session, "streaming": False,
                "newMessage": {"role": "user", "parts": [{"text": f"sleep {seconds} {marker}"}]}}
        self.thread = threading.Thread(target=self._read, args=(entry, body), daemon=True)
        self.thread.start()

    def _read(self, entry: str, body: dict[str, Any]) -> None:
        try:
            with httpx.stream("POST", f"{entry}/run_sse", json=body, timeout=TURN_TIMEOUT) as answer:
                self.status = answer.status_code
                if answer.status_code != 200:
                    self.failure = answer.read().decode(errors="replace")
                for line in answer.iter_lines():
                    if line.startswith("data: "):
                        self.lines.append(json.loads(line[len("data: "):]))
        except httpx.HTTPError as exc:
            self.failure = repr(exc)
        self.ended = time.monotonic()

    def errors(self) -> list[int]:
        return [i for i, line in enumerate(self.lines) if "error" in line]


def kill_host(marker: str) -> float:
    """SIGKILL every process group a host's processes are in (but the test's own), then
    any of its processes left: all of the host at once, as an operator's kill -9 of it.
    Returns when the first signal went (``time.monotonic()``), once none of them is left."""
    pids = find_marked_processes(marker)
    groups: set[int] = set()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            groups.add(os.getpgid(pid))
    began = time.monotonic()
    for group in groups - {os.getpgrp()}:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    kill_marked_processes(marker, grace=0)  # (any it forked meanwhile)
    wait_until(lambda: not find_marked_processes(marker), timeout=10)
    return began


def stored(store: PostgresSessionStore, app: str, session: str) -> list[tuple[str, str, str]]:
    """(author, text, invocation id) of a session's events with text, in the store's order."""
    return [(str(e.author), e.content.text, str(e.invocation_id))
            for e in store.get_session(app, "ann", session).events if e.content and e.content.text]


def late_evidence(url: str, session: str, late: list[str], mine: list[Outcome],
                  phases: list[dict[str, Any]]) -> str:
    """What tells how a turn came to be stored late: each caller's turn around it (front
    door, sent and ended) and each stored user event (seq, written when, its run's
    start, end and status), in seconds since the first kill, on one clock."""
    first_kill = phases[0]["killed"] if phases else 0.0
    wall_offset = time.time() - time.monotonic()  # monotonic + offset = wall clock
    kills = [round(p["killed"] - first_kill, 2) for p in phases]
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT e.seq, e.timestamp, e.event, r.started, r.ended, r.status FROM events e LEFT JOIN runs r "
            "ON r.invocation_id = e.invocation_id WHERE e.app_name='echo' AND e.session_id=%s AND e.author='user' "
            "ORDER BY e.seq", (session,)).fetchall()
    wall_zero = first_kill + wall_offset

    def at(wall: float | None) -> str:
        return "-" if wall is None else f"{wall - wall_zero:.2f}"

    stored_turns = []
    for seq, stamp, event, started, ended, status in rows:
        text = json.loads(event).get("content", {}).get("parts", [{}])[0].get("text", "")
        stored_turns.append(f"#{seq} {text!r} written {at(stamp)} run {at(started)}..{at(ended)} {status}")
    index = {o.text: i for i, o in enumerate(mine)}
    near = sorted({j for t in late if t in index for j in range(index[t] - 2, index[t] + 4) if 0 <= j < len(mine)})
    turns = [f"{mine[j].text!r} via {mine[j].entry} {mine[j].sent - first_kill:.2f}..{mine[j].ended - first_kill:.2f}"
             f" -> {mine[j].status} {mine[j].detail[:80]!r}" for j in near]
    return f"kills at {kills}; turns sent: {turns}; stored: {stored_turns}"


@pytest.fixture
def cluster(tmp_path: Path, postgres: Any) -> Iterator[Cluster]:
    with formed_cluster(tmp_path, postgres.new_database(), HOSTS) as started:
        yield started


@pytest.mark.timeout(300 + 4 * SECONDS + HOSTS * SESSIONS_PER_HOST)
def test_a_member_and_then_the_leader_killed_at_load_lose_nothing_and_their_sessions_serve_again(
        cluster: Cluster, tmp_path: Path) -> None:
    hosts, names, url = cluster.hosts, cluster.names, cluster.url
    members = [Member(name) for name in names]
    urls = {name: entry["url"] for name, entry in zip(names, hosts, strict=True)}
    per_host: dict[str, list[str]] = {name: [] for name in names}
    for i in range(100_000):
        home = per_host[ranked(f"echo/ann/f{i}", members)[0].name]
        if len(home) < SESSIONS_PER_HOST:
            home.append(f"f{i}")
        if all(len(s) == SESSIONS_PER_HOST for s in per_host.values()):
            break
    sessions = sorted((s for ids in per_host.values() for s in ids), key=lambda s: int(s[1:]))
    # For each kill (a member, then the leader), a sleepy session at home on the victim
    # and one on a survivor: a long run will be in flight on each when the victim dies.
    kills = [(names[-1], names), (names[0], names[:-1])]
    slow: dict[tuple[int, str], str] = {}
    for k, (victim, living) in enumerate(kills):
        for where in (victim, next(n for n in living if n != victim)):
            slow[k, where] = next(f"z{k}{names.index(where)}-{i}" for i in range(1000) if ranked(
                f"sleepy/ann/z{k}{names.index(where)}-{i}", [Member(n) for n in living])[0].name == where)

    def create(i: int, app: str, session: str) -> int:
        return httpx.post(f"{hosts[i % HOSTS]['url']}/apps/{app}/users/ann/sessions", json={"sessionId": session},
                          timeout=30).status_code

    with ThreadPoolExecutor(4) as creators:
        created = list(creators.map(create, range(len(sessions) + len(slow)),
                                    ["echo"] * len(sessions) + ["sleepy"] * len(slow), [*sessions, *slow.values()]))
    assert created == [200] * len(created)

    living = list(names)
    phases: list[dict[str, Any]] = []
    with Load(sessions, [urls[n] for n in living]) as load:
        for k, (victim, _) in enumerate(kills):
            time.sleep(SECONDS / 2)
            survivors = [n for n in living if n != victim]
            ranks = {s: ranked(f"echo/ann/{s}", [Member(n) for n in living]) for s in sessions}
            theirs = [s for s in sessions if ranks[s][0].name == victim]
            assert theirs
            # A long run in flight on the victim, and one on a survivor, when it dies.
            long_runs = {where: Streamed(urls[survivors[-1]], session, 30 if where == victim else 3,
                                         tmp_path / f"{session}.running")
                         for (at, where), session in slow.items() if at == k}
            for where, streamed in long_runs.items():
                marker = tmp_path / f"{streamed.session}.running"
                with contextlib.suppress(AssertionError):  # (asserted below, with what was answered)
                    wait_until(lambda m=marker, r=streamed: m.exists() or r.ended, timeout=30)
                assert marker.exists(), f"the long run on {where} did not begin within 30 s: {streamed.__dict__}"

            killed = kill_host(hosts[names.index(victim)]["marker"])
            dead = time.monotonic()  # (a turn sent before may have been served by the victim)
            load.alive[:] = [urls[n] for n in survivors]  # the load balancer sees it gone
            living = survivors

            def served_again(s: str, after: float = dead) -> float | None:
                return next((o.ended for o in load.of(s) if o.status == 200 and o.sent > after), None)

            with contextlib.suppress(AssertionError):  # (asserted below, with what was missing)
                wait_until(lambda: all(served_again(s) for s in theirs), timeout=BOUND + 10, interval=0.1)
            done = time.monotonic()
            missing = [s for s in theirs if served_again(s) is None]
            assert not missing, f"{victim}'s sessions {missing} not served again {done - killed:.1f} s after the kill"
            took = sorted(float(served_again(s) or 0) - killed for s in theirs)
            held = holders(url)
            for session in theirs:  # by its next-ranked living host
                assert held[session] == ranks[session][1].name, (session, held.get(session))
            for streamed in long_runs.values():
                streamed.thread.join(TURN_TIMEOUT + 5)
                assert streamed.ended is not None, "a long run's caller hung"
            phases.append({"victim": victim, "killed": killed, "dead": dead, "done": done, "took": took, "theirs": theirs,
                           "ranks": ranks, "long_runs": long_runs, "survivors": survivors})
            print(f"{'leader' if victim == names[0] else 'member'} {victim} killed: its {len(theirs)} sessions "
                  f"served again {took[0]:.1f}-{took[-1]:.1f} s after the kill (median "
                  f"{statistics.median(took):.1f} s, bound {BOUND:g} s)")
            if victim != names[0]:  # the leader drops the dead member from its view
                wait_until(lambda: sorted(o["name"] for o in others_of(hosts[0]["url"])) == sorted(survivors[1:]),
                           timeout=30)
            time.sleep(max(0.0, done + SECONDS / 2 - time.monotonic()))  # the load goes on after the failover
    outcomes = list(load.outcomes)
    print(f"turns: {sum(o.status == 200 for o in outcomes)} acknowledged, "
          f"{sum(o.status != 200 for o in outcomes)} not (refused during a failover, or a dead front door)")

    # Every turn ended with one outcome, never a hang.
    assert [o for o in outcomes if o.detail == "hung"] == []
    killed_at = {urls[p["victim"]]: p["killed"] for p in phases}
    failovers: dict[str, list[tuple[float, float]]] = {}  # session -> its failovers (kill, served again)
    for phase in phases:
        for session in phase["theirs"]:
            back = next(o.ended for o in load.of(session) if o.status == 200 and o.sent > phase["dead"])
            failovers.setdefault(session, []).append((phase["killed"], back))
    for o in outcomes:
        if o.status == 200:
            assert o.detail == "", o
            continue
        if o.status is None:  # a broken connection: only to a front door that was killed, as it died
            assert o.entry in killed_at and o.ended >= killed_at[o.entry], o
            continue
        # A refusal: typed, and only on a killed host's session, before it was served again.
        assert o.status in TYPED_REFUSALS and o.detail.startswith(TYPED_REFUSALS[o.status]), o
        assert any(o.ended >= kill and o.sent < back for kill, back in failovers.get(o.session, [])), (
            o, "refused outside its failovers (kill, served again):", failovers.get(o.session))

    for phase in phases:
        killed, done = phase["killed"], phase["done"]
        assert phase["took"][-1] < BOUND, phase["took"]
        # The living hosts' own sessions kept being served during the failover.
        for survivor in phase["survivors"]:
            own = [s for s in sessions if phase["ranks"][s][0].name == survivor]
            during = [o for o in outcomes if o.session in own and o.status == 200 and killed <= o.sent and o.ended <= done]
            print(f"  while {phase['victim']} failed over ({done - killed:.1f} s): {len(during)} turns on "
                  f"{survivor}'s {len(own)} sessions")
            assert own and during, f"{survivor}'s sessions not served while {phase['victim']} failed over"
        # The run in flight on the victim: one typed failure, an error line that ends its
        # stream or (no event had reached its caller's host yet) a 500 instead of a stream.
        on_victim, on_survivor = phase["long_runs"].values()
        if on_victim.status == 200:
            assert on_victim.failure == "" and on_victim.errors() == [len(on_victim.lines) - 1], on_victim.lines
            error = on_victim.lines[-1]["error_details"]  # typed: its reason first
            assert error["error_type"] and error["error_message"].startswith(("interrupted:", "killed:")), error
        else:
            assert on_victim.status == 500 and on_victim.lines == [], (on_victim.status, on_victim.lines)
            assert json.loads(on_victim.failure)["detail"].startswith(("interrupted:", "killed:")), on_victim.failure
        assert on_survivor.status == 200 and on_survivor.errors() == [], on_survivor.lines
        assert on_survivor.lines[-1]["content"]["parts"][0]["text"] == "woke up"

    # No session stuck: every one answers a turn, the long runs' too, whose runs ended.
    last = urls[living[0]]
    for session in sessions:
        answer = httpx.post(f"{last}/run", timeout=TURN_TIMEOUT, json={
            "appName": "echo", "userId": "ann", "sessionId": session,
            "newMessage": {"role": "user", "parts": [{"text": f"{session} last"}]}})
        assert answer.status_code == 200, (session, answer.text)
    for phase in phases:  # the long run killed with its host: its session serves on, the run stored ended
        session = phase["long_runs"][phase["victim"]].session
        run = httpx.get(f"{last}/apps/sleepy/users/ann/sessions/{session}/runs/last", timeout=30).json()
        assert run["status"] in ("interrupted", "killed") and run["resumable"], run
        answer = httpx.post(f"{last}/run", timeout=TURN_TIMEOUT, json={
            "appName": "sleepy", "userId": "ann", "sessionId": session,
            "newMessage": {"role": "user", "parts": [{"text": "hello"}]}})
        assert answer.status_code == 200 and answer.json()[-1]["content"]["parts"][0]["text"] == "awake: hello"
        with psycopg.connect(url) as conn:
            ended = conn.execute("SELECT status FROM runs WHERE run_id=%s", (run["runId"],)).fetchone()
        assert ended and ended[0] in ("interrupted", "killed"), (run, ended)
    with psycopg.connect(url) as conn:
        runs = conn.execute("SELECT app_name, session_id, invocation_id, status FROM runs").fetchall()
    assert [r for r in runs if r[3] == "running"] == [], "no run is left running"
    status_of = {str(invocation): str(status) for _, _, invocation, status in runs}

    # No acknowledged turn lost, no session with two writers.
    store = PostgresSessionStore(url, application_name="failover reader")
    late_turns: list[str] = []  # sessions whose turns are stored out of the order sent, and how
    try:
        for session in sessions:
            mine = load.of(session)
            sent = [o.text for o in mine] + [f"{session} last"]
            acknowledged = [o for o in mine if o.status == 200]
            events = stored(store, "echo", session)
            said = [text for author, text, _ in events if author == "user"]
            assert len(said) == len(set(said)), f"{session}: a turn stored twice"
            assert all(text in sent for text in said), f"{session}: a text no caller sent"
            order = [sent.index(t) for t in said]
            ours = [sent.index(o.text) for o in acknowledged]
            assert [i for i in order if i in ours] == ours, f"{session}: an acknowledged turn lost or out of order"
            outcome = {o.text: o for o in mine}
            if order != sorted(order):  # a turn its caller did not see answered, written after later ones
                late = [said[i] for i in range(1, len(said)) if order[i] < max(order[:i])]
                late_turns.append(f"{session}: {[(t, outcome[t].status, outcome[t].detail[:60]) for t in late]} stored "
                             f"after turns its caller sent later; {late_evidence(url, session, late, mine, phases)}")
            refused = [o.text for o in mine if o.status == 503 and "is held by" in o.detail]
            assert not set(refused) & set(said), (  # a refusal that promises nothing was written
                f"{session}: {sorted(set(refused) & set(said))} answered 503 session_elsewhere and written: "
                f"{[(t, outcome[t].entry, round(outcome[t].sent, 2), round(outcome[t].ended, 2), outcome[t].detail) for t in sorted(set(refused) & set(said))]}; "
                f"{late_evidence(url, session, sorted(set(refused) & set(said)), mine, phases)}")
            turns = 0
            for i, (author, text, _) in enumerate(events):
                if author == "user":
                    turns += 1
                    continue
                assert author == "echo" and i > 0 and events[i - 1][0] == "user", (session, events[i - 1:i + 1])
                assert text == f"echo: {events[i - 1][1]} (turn {turns})", (session, text)
            replies = {events[i - 1][1]: invocation for i, (author, _, invocation) in enumerate(events)
                       if author == "echo"}
            for o in acknowledged:
                assert o.text in replies, f"{session}: acknowledged turn {o.text!r} lost"
                assert replies[o.text] == o.invocation and status_of.get(o.invocation) == "done", (session, o)
    finally:
        store.close()
    for name in living:  # (killed too: the stack's orderly stop of a host takes seconds)
        kill_host(hosts[names.index(name)]["marker"])
    assert late_turns == [], late_turns  # (asserted last: every other check passed, so this is all that failed)
