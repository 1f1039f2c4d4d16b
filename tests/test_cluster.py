"""Hosts that form a cluster: Thespian's convention, sessions placed by rendezvous hashing.

Three ``adk-actors serve`` hosts, each on its own loopback address, join the first one's
convention (``[cluster] join``) on one PostgreSQL database. Sessions live at their home
(the member their key ranks highest), whichever host a caller asks; a member killed
with its whole process group has its sessions served by the next-ranked members
within the lease, and leaves the view; back, it takes its sessions again, and no
session ever has two writers (every session's events are in order, none twice).
CI runs a short soak across the hosts; ``ADK_SOAK_SECONDS=60`` runs the long one.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cluster_hosts import CHECKIN, LEASE, Cluster, holders, others_of, per_home, stored_texts, turn
from conftest import ROOT
from console_browser import browser_page, needs_chromium

from adk_actors import HostError
from adk_actors.runtime import ClusterView, Host, HostConfig, Member, ranked
from adk_actors.runtime._host import check_cluster
from adk_actors.runtime._placement import Reachability
from adk_actors.store import PostgresSessionStore
from supervision.testing import kill_marked_processes, wait_until

SOAK_SECONDS = float(os.environ.get("ADK_SOAK_SECONDS", "3"))


def test_rendezvous_ranks_alike_everywhere_spreads_keys_and_moves_only_a_leavers_sessions() -> None:
    members = [Member(f"10.0.0.{i}:1900") for i in range(1, 4)]
    keys = [f"echo/ann/s{i}" for i in range(3000)]
    homes = {key: ranked(key, members)[0].name for key in keys}
    assert homes == {key: ranked(key, list(reversed(members)))[0].name for key in keys}  # order of the list: moot
    shares = [sum(1 for home in homes.values() if home == m.name) for m in members]
    assert all(800 < share < 1200 for share in shares), shares  # about a third each
    gone = members[1].name
    after = {key: ranked(key, [m for m in members if m.name != gone])[0].name for key in keys}
    moved = [key for key in keys if after[key] != homes[key]]
    assert moved and all(homes[key] == gone for key in moved)  # only the leaver's sessions move
    assert all(after[key] == ranked(key, members)[1].name for key in moved)  # each to its next-ranked member


def test_a_callers_view_sends_a_session_home_is_asked_again_by_one_caller_and_forgets_a_dead_home(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``Host.session_home`` without a running host: the view (here a stand-in for the
    cluster actor's) routes a session at home on another member to that member's
    ``sessions`` supervisor, and one at home here to this host (None). A stale view is
    asked again by one caller while the others go on with the one they have; a home
    found gone (``forget_home``) sends its sessions to this host's partitions until the
    view is asked again."""
    config = HostConfig(apps={}, address="127.0.0.1", port=1900, cluster_join="127.0.0.1:1900")
    host = Host(config)
    me, other = Member("127.0.0.1:1900", sessions="local-sessions"), Member("127.0.0.2:1900", sessions="their-sessions")
    asked: list[float] = []
    release = threading.Event()

    def view(timeout: float = 5.0) -> ClusterView:
        asked.append(time.monotonic())
        if len(asked) > 1:
            release.wait(5)  # a slow answer: a host restarting its services
        return ClusterView(leader=me.name, members=(me, other))

    monkeypatch.setattr(host, "cluster_view", view)
    theirs = next(f"s{i}" for i in range(1000) if ranked(f"echo/ann/s{i}", [me, other])[0] is other)
    mine = next(f"s{i}" for i in range(1000) if ranked(f"echo/ann/s{i}", [me, other])[0] is me)
    assert host.session_home("echo", "ann", theirs) == "their-sessions"
    assert host.session_home("echo", "ann", mine) is None
    outside = Host(HostConfig(apps={}, address="127.0.0.1", port=1900))  # joins no cluster: asks nobody
    monkeypatch.setattr(outside, "cluster_view", lambda timeout=5.0: pytest.fail("a host outside a cluster asked"))
    assert outside.session_home("echo", "ann", theirs) is None
    host.forget_home("their-sessions")  # found gone: this host's partitions serve it meanwhile
    asking = threading.Thread(target=lambda: host.session_home("echo", "ann", mine))
    asking.start()  # asks the view again, slowly
    wait_until(lambda: len(asked) == 2, timeout=5)
    began = time.monotonic()
    assert host.session_home("echo", "ann", theirs) is None  # not waiting on the asking; the home forgotten
    assert time.monotonic() - began < 0.5
    release.set()
    asking.join(5)
    assert len(asked) == 2


def test_a_hosts_reachability_is_asked_again_once_stale_and_a_success_only_when_kept() -> None:
    """The one rule both the caller's view of members and a partition's look at lease
    holders use: a refusal is believed for ``fresh`` seconds; a success too only with
    ``keep_success`` (a partition asks a holder's host again before each forward)."""
    asked: list[str] = []

    def ask(answer: bool) -> Any:
        return lambda: asked.append("asked") or answer

    kept = Reachability(1.0, keep_success=True)
    assert kept.answers("a", 0.0, ask(True)) and kept.answers("a", 0.9, ask(False)) and len(asked) == 1
    assert not kept.answers("a", 1.0, ask(False)) and len(asked) == 2  # stale: asked again
    kept.refused("b", 5.0)
    assert not kept.answers("b", 5.5, ask(True)) and len(asked) == 2
    kept.forget("b")
    assert kept.answers("b", 5.6, ask(True)) and len(asked) == 3

    rechecked = Reachability(1.0, keep_success=False)
    assert rechecked.answers("h", 0.0, ask(True)) and rechecked.answers("h", 0.1, ask(True)) and len(asked) == 5
    assert not rechecked.answers("h", 0.2, ask(False)) and not rechecked.answers("h", 1.1, ask(True))
    assert len(asked) == 6 and rechecked.answers("h", 1.2, ask(True)) and len(asked) == 7


def test_a_cluster_host_refuses_to_listen_beyond_a_private_network(tmp_path: Path) -> None:
    base = dict(apps={}, data_dir=str(tmp_path), store_url="postgresql://u@db/x", cluster_join="10.0.0.1:1900")
    assert check_cluster(HostConfig(**base, address="10.0.0.2")) == ("10.0.0.1", 1900)
    for address, why in (("0.0.0.0", "every network"), ("8.8.8.8", "public")):
        with pytest.raises(HostError, match=why):
            check_cluster(HostConfig(**base, address=address))
    assert check_cluster(HostConfig(**base, address="8.8.8.8", cluster_allow_public=True))
    with pytest.raises(HostError, match="share one store"):
        check_cluster(HostConfig(**{**base, "store_url": ""}, address="10.0.0.2"))
    with pytest.raises(HostError, match="<ip address>:<port>"):
        check_cluster(HostConfig(**{**base, "cluster_join": "leader.example"}, address="10.0.0.2"))


def sleeping(url: str, session: str) -> bool:
    """Is the ``sleepy`` turn of ann's ``session`` in its tool (its call stored)?"""
    store = PostgresSessionStore(url)
    try:
        return any(e.content is not None and e.content.function_calls
                   for e in store.get_session("sleepy", "ann", session).events)
    finally:
        store.close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, postgres: Any) -> Iterator[Cluster]:
    with contextlib.ExitStack() as stack:
        yield Cluster(tmp_path_factory.mktemp("cluster"), postgres.new_database(), stack)


@pytest.mark.timeout(240)
def test_three_hosts_place_sessions_at_home_survive_a_member_killed_and_take_them_back(cluster: Cluster) -> None:
    hosts, names, url = cluster.hosts, cluster.names, cluster.url
    cluster.formed()
    # printed just after the "listening" line the fixture waits for: read once it is there
    wait_until(lambda: "is the leader of the convention" in hosts[0]["out"].read_text(), timeout=30)
    wait_until(lambda: "is a member of the convention" in hosts[2]["out"].read_text(), timeout=30)
    member_rows = next(o for o in others_of(hosts[0]["url"]) if o["name"] == names[1])["rows"]
    assert any(r["path"] == "services/cluster" for r in member_rows)  # another host's tree, on this console
    # Sessions created through one host and run through another live at their homes.
    members = [Member(name) for name in names]
    sessions = per_home("s", members, 5)
    home = {s: ranked(f"echo/ann/{s}", members)[0].name for s in sessions}
    for i, session in enumerate(sessions):
        created = httpx.post(f"{hosts[i % 3]['url']}/apps/echo/users/ann/sessions", json={"sessionId": session},
                             timeout=30)
        assert created.status_code == 200, created.text
        assert turn(hosts[(i + 1) % 3]["url"], session, "one").status_code == 200
    assert holders(url) == home
    assert len(set(home.values())) == 3  # every host holds some

    # A member killed with all its processes while turns run on its sessions, and on
    # the other sessions through the other hosts (3 callers, each on its own sessions).
    victim = names[2]
    theirs = [s for s in sessions if home[s] == victim]
    acknowledged: dict[str, list[str]] = {s: [] for s in sessions if home[s] != victim}
    refused: list[str] = []
    stop_load = threading.Event()

    def load(caller: int) -> None:
        mine, n = list(acknowledged)[caller::3], 0
        while not stop_load.is_set():
            for session in mine:
                n += 1
                text = f"load {caller}-{n}"
                answer = turn(hosts[n % 2]["url"], session, text)
                (acknowledged[session].append(text) if answer.status_code == 200 else refused.append(answer.text))

    loaders = [threading.Thread(target=load, args=(c,)) for c in range(3)]
    for loader in loaders:
        loader.start()
    slow = next(f"z{i}" for i in range(100) if ranked(f"sleepy/ann/z{i}", members)[0].name == victim)
    answers: list[httpx.Response] = []
    assert httpx.post(f"{hosts[0]['url']}/apps/sleepy/users/ann/sessions", json={"sessionId": slow},
                      timeout=30).status_code == 200
    caller = threading.Thread(target=lambda: answers.append(turn(hosts[0]["url"], slow, "sleep 5", "sleepy", 60)))
    caller.start()
    # the turn runs on the victim, streamed to the leader's HTTP process
    wait_until(lambda: sleeping(url, slow), timeout=30, interval=0.1, message=f"the turn of {slow} in its tool")
    kill_marked_processes(hosts[2]["marker"], grace=0)
    killed = time.monotonic()
    served_again: dict[str, float] = {}
    while len(served_again) < len(theirs) and time.monotonic() - killed < LEASE + 15:
        for session in theirs:
            if session not in served_again and turn(hosts[1]["url"], session, "two").status_code == 200:
                served_again[session] = time.monotonic() - killed
        time.sleep(0.1)
    stop_load.set()
    for loader in loaders:
        loader.join(40)
    assert sorted(served_again) == sorted(theirs), "the killed member's sessions are served again"
    assert refused == [], "the other hosts' sessions went on serving"
    for session, texts in acknowledged.items():  # every acknowledged turn once, in order
        assert stored_texts(url, session)[2::2] == texts
    assert sum(len(t) for t in acknowledged.values()) > 20
    print("load turns acknowledged:", sum(len(t) for t in acknowledged.values()), "served again after",
          sorted(served_again.values()))
    assert max(served_again.values()) < LEASE + 10
    for session in theirs:  # by their next-ranked member, with every acknowledged event
        assert holders(url)[session] == ranked(f"echo/ann/{session}", members[:2])[0].name
        assert stored_texts(url, session) == ["one", "echo: one (turn 1)", "two", "echo: two (turn 2)"]
    caller.join(30)
    assert answers and answers[0].status_code >= 500, "the caller of the run in flight is answered"
    assert "interrupted" in answers[0].text or "killed" in answers[0].text, answers[0].text  # typed, not a hang
    wait_until(lambda: [o["name"] for o in others_of(hosts[0]["url"])] == [names[1]], timeout=15)

    # Back: it joins again and takes its sessions again, never with two writers, while
    # callers on the other hosts turn each of them without a pause: a busy session
    # takes no new run once its home is back, and goes home as its run ends.
    stop_turns = threading.Event()
    turned: dict[str, list[int]] = {s: [] for s in theirs}

    def turn_on(session: str) -> None:
        while not stop_turns.is_set():
            answer = turn(cluster.hosts[len(turned[session]) % 2]["url"], session, "three")
            turned[session].append(answer.status_code)

    turners = [threading.Thread(target=turn_on, args=(s,)) for s in theirs]
    for turner in turners:
        turner.start()
    try:
        cluster.restart(2)
        hosts = cluster.hosts
        cluster.formed()
        in_view = time.monotonic()
        # Home within a lease and a check-in of the view naming it (and a margin for a
        # loaded machine), however busy its callers keep it.
        wait_until(lambda: all(holders(url)[s] == victim for s in theirs), timeout=LEASE + CHECKIN + 10)
        print(f"every session home {time.monotonic() - in_view:.1f} s after the view named it")
    finally:
        stop_turns.set()
        for turner in turners:
            turner.join(60)
    assert all(turned[s] for s in theirs) and {c for codes in turned.values() for c in codes} == {200}, turned
    for session in theirs:
        texts = stored_texts(url, session)
        assert texts[:4] == ["one", "echo: one (turn 1)", "two", "echo: two (turn 2)"]
        assert texts[4::2] == ["three"] * len(texts[4::2])  # in order, none twice
        assert texts[5::2] == [f"echo: three (turn {n})" for n in range(3, 3 + len(texts[5::2]))]
        assert len(texts[4::2]) == len(turned[session])  # every answered turn, once
    for session in sessions:  # and the others stayed where they were
        if home[session] != victim:
            assert holders(url)[session] == home[session]


@pytest.mark.timeout(240)
def test_the_chaos_soak_across_the_hosts_of_a_cluster_loses_nothing(cluster: Cluster) -> None:
    """``chaos soak --cluster`` through a member: sessions at their homes on all three
    hosts, processes killed on every host (SIGKILL, every 300 ms): LOST 0, HUNG 0, every
    next turn valid, every host's tree restored."""
    cluster.formed()
    done = subprocess.run(
        [sys.executable, "-m", "adk_actors.cli", "chaos", "soak", "--config", str(cluster.hosts[1]["config"]), "--app", "echo",
         "--sessions", "6", "--duration", str(SOAK_SECONDS), "--interval", "300", "--cluster", "--json",
         "--seed", "7"], cwd=ROOT, capture_output=True, text=True, timeout=200,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tests")})
    assert done.stdout.strip(), done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["passed"], json.dumps(report) + done.stderr[-3000:]
    assert report["lost"] == 0 and report["hung"] == 0 and report["next_turn_valid"] == 6
    assert sum(report["kills"].values()) >= 3
    assert len(report["faults_by_host"]) >= 2, report["faults_by_host"]  # dealt on several hosts
    assert report["turns_ok"] > 0


@pytest.mark.timeout(240)
def test_the_leader_killed_leaves_the_members_serving_and_back_it_leads_again(cluster: Cluster) -> None:
    """The leader is one more member for the sessions: killed (all its processes), its
    sessions are served by their next-ranked members within the lease while the members
    serve their own on their last view; started again, the members check in with it, it
    sends the view again and takes its sessions back."""
    cluster.formed()
    hosts, names, url = cluster.hosts, cluster.names, cluster.url
    members = [Member(name) for name in names]
    sessions = per_home("l", members, 3)
    home = {s: ranked(f"echo/ann/{s}", members)[0].name for s in sessions}
    for session in sessions:
        assert httpx.post(f"{hosts[1]['url']}/apps/echo/users/ann/sessions", json={"sessionId": session},
                          timeout=30).status_code == 200
        assert turn(hosts[2]["url"], session, "one").status_code == 200
    leaders = [s for s in sessions if home[s] == names[0]]
    assert leaders and holders(url)[leaders[0]] == names[0]

    kill_marked_processes(hosts[0]["marker"], grace=0)
    killed = time.monotonic()
    for i, session in enumerate(s for s in sessions if s not in leaders):  # the members' own: at once
        assert turn(hosts[1 + i % 2]["url"], session, "two").status_code == 200
    for i, session in enumerate(leaders):  # the leader's: once its leases ran out
        wait_until(lambda s=session, i=i: turn(hosts[1 + i % 2]["url"], s, "two").status_code == 200,
                   timeout=LEASE + 10, interval=0.1)
    for session in leaders:
        assert holders(url)[session] == ranked(f"echo/ann/{session}", members[1:])[0].name
    assert [o["name"] for o in others_of(hosts[1]["url"])] == [names[0], names[2]]  # the last view, kept
    time.sleep(max(0.0, 4 * CHECKIN - (time.monotonic() - killed)))  # down for more than three check-ins

    cluster.restart(0)
    listening = time.monotonic()
    cluster.formed()
    rejoined = time.monotonic() - listening
    print(f"leader down {listening - killed:.1f} s; every host in the view {rejoined:.1f} s after it listened")
    # Thespian's own restart period (3 min 22 s) would keep the members away this long:
    # they come back within a few check-ins instead (formed() alone waits up to 20 s a host).
    assert rejoined < 30, rejoined

    def home_again() -> bool:
        for session in leaders:
            assert turn(hosts[2]["url"], session, "three").status_code == 200
        return all(holders(url)[s] == names[0] for s in leaders)

    wait_until(home_again, timeout=20)
    for session in sessions:
        texts = stored_texts(url, session)
        assert texts[:4] == ["one", "echo: one (turn 1)", "two", "echo: two (turn 2)"]
        assert texts[5::2] == [f"echo: three (turn {n})" for n in range(3, 3 + len(texts[5::2]))]


@needs_chromium
def test_the_console_draws_every_hosts_tree(cluster: Cluster) -> None:
    """A member's console, in a real browser: its own tree with kill buttons, then each
    other host under a line naming it (the leader marked), its actors without."""
    from playwright.sync_api import expect

    cluster.formed()
    with browser_page() as (page, errors):
        page.goto(cluster.hosts[1]["url"] + "/")
        hosts = page.locator("#tree tr.host")
        expect(hosts).to_have_count(2, timeout=15_000)
        expect(page.locator(f'#tree tr.host[data-host="{cluster.names[0]}"]')).to_contain_text("(leader)")
        expect(page.locator(f'#tree tr[data-path="{cluster.names[2]}/services/cluster"]')).to_have_count(1)
        expect(page.locator('#tree tr[data-path="services/cluster"] button')).to_have_text("kill")  # its own
        expect(page.locator(f'#tree tr[data-path="{cluster.names[2]}/services/cluster"] button')).to_have_count(0)
        assert errors == [], errors


def test_a2a_through_any_member_reaches_sessions_at_every_home(cluster: Cluster) -> None:
    """google-adk's A2A wire on one member: each context's session lives at its home,
    whichever host that is, and its task completes with the agent's answer."""
    cluster.formed()
    members = [Member(name) for name in cluster.names]

    def send(context: str, text: str) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
            "messageId": f"m-{context}-{text}", "role": "ROLE_USER", "contextId": context, "parts": [{"text": text}]}}}
        answer = httpx.post(f"{cluster.hosts[1]['url']}/a2a/echo", json=body, timeout=30, headers={"A2A-Version": "1.0"})
        return dict(answer.json()["result"]["task"])

    assert send("a2a-probe", "who")["metadata"]["adk_user_id"] == "A2A_USER_a2a-probe"  # google-adk's user
    contexts = []
    for member in members:  # one context at home on each host
        contexts.append(next(f"ctx{i}" for i in range(1000)
                             if ranked(f"echo/A2A_USER_ctx{i}/ctx{i}", members)[0].name == member.name))
    for context in contexts:
        task = send(context, "hi")
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        assert "echo: hi (turn 1)" in json.dumps(task)
    held = holders(cluster.url)
    assert [held[c] for c in contexts] == cluster.names  # each at its home


def test_a_caller_sends_a_session_at_home_elsewhere_straight_there(cluster: Cluster) -> None:
    """Routing by the view at the caller: a host's HTTP API sends a request for a
    session at home on another member to that member's ``sessions`` supervisor, not
    through its own partitions. Shown with those partitions stopped (SIGSTOP): a
    session at home elsewhere is still served through this host, by ``/run`` and by
    ``/run_sse``, at once; before, every such request waited on the stopped partition
    until the host's health check killed it."""
    cluster.formed()
    hosts, members = cluster.hosts, [Member(name) for name in cluster.names]
    session = next(f"r{i}" for i in range(1000) if ranked(f"echo/ann/r{i}", members)[0].name == cluster.names[1])
    assert httpx.post(f"{hosts[1]['url']}/apps/echo/users/ann/sessions", json={"sessionId": session},
                      timeout=30).status_code == 200
    assert turn(hosts[0]["url"], session, "before").status_code == 200  # the view is known to host 0's HTTP
    # the walk of three hosts' trees waits for each busy actor (BUSY_WAIT_FACTOR): on
    # a loaded machine it takes longer than a turn, so its deadline is the walk's own
    rows = httpx.get(f"{hosts[0]['url']}/console/api/tree", timeout=120).json()["rows"]
    partitions = [r["pid"] for r in rows if r["path"] in ("sessions/sessions-0", "sessions/sessions-1") and r["pid"]]
    assert len(partitions) == 2
    for pid in partitions:
        os.kill(pid, signal.SIGSTOP)
    try:
        began = time.monotonic()
        answer = turn(hosts[0]["url"], session, "while stopped", timeout=10)
        assert answer.status_code == 200, answer.text
        assert answer.json()[-1]["content"]["parts"][0]["text"] == "echo: while stopped (turn 2)"
        streamed = httpx.post(f"{hosts[0]['url']}/run_sse", timeout=10, json={
            "appName": "echo", "userId": "ann", "sessionId": session, "streaming": False,
            "newMessage": {"role": "user", "parts": [{"text": "streamed"}]}})
        assert streamed.status_code == 200 and "echo: streamed (turn 3)" in streamed.text
        # 0.05 s here; through the stopped partitions, ~6 s (until their health check
        # killed them and their restarted selves forwarded the turns)
        assert time.monotonic() - began < 2.5
    finally:
        for pid in partitions:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    assert stored_texts(cluster.url, session)[-2:] == ["streamed", "echo: streamed (turn 3)"]
    assert holders(cluster.url)[session] == cluster.names[1]
