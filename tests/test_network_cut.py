"""A network cut between hosts (issue 35): two hosts on one PostgreSQL store, the
first in a network namespace of its own, joined to the rest by a veth pair. The
network between them is cut: a blackhole route each way, so that every packet between
the two sides vanishes silently, as on a failed switch (taking the link down would
send them to the default route instead). The second host is told at once that the
session's holder does not answer, takes the session over once the cut-off holder's
lease has run out, and serves it with every acknowledged event; the link back, the
first host is refused as the session's writer (its lease was taken: the fence) and
reaches the session through the second. Needs root and iproute2 (CI has both)."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import serving

from adk_actors.testing import TemporaryPostgres
from supervision.testing import wait_until

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None,
                                reason="network namespaces need root and iproute2")

LEASE = 3.0
CUT_FOR = 12.0  # seconds: past the health checks (5 s) and the store connections' timeout (10 s)
TOKEN = "network-cut-test-token-0123456789"
APPS = 'echo = "runtime_agents:echo_agent"\n'


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


def cut(net: dict[str, str], how: str = "add") -> None:
    """Drop every packet between the namespace and this side (``how="del"``: mend it)."""
    ip("route", how, "blackhole", f"{net['inside']}/32")
    ip("netns", "exec", net["name"], "ip", "route", how, "blackhole", f"{net['outside']}/32")


@pytest.fixture
def namespace() -> Iterator[dict[str, str]]:
    """A network namespace joined to this one by a veth pair: (name, the address on
    this side, the address inside, the link on this side), removed afterwards."""
    tag = f"{os.getpid() % 10000}{random.randrange(100)}"
    name, outside_link, inside_link = f"adk{tag}", f"va{tag}", f"vb{tag}"
    subnet = f"10.{random.randrange(200, 250)}.{random.randrange(1, 250)}"
    net = {"name": name, "outside": f"{subnet}.1", "inside": f"{subnet}.2", "link": outside_link,
           "subnet": f"{subnet}.0/24"}
    ip("netns", "add", name)
    try:
        ip("link", "add", outside_link, "type", "veth", "peer", "name", inside_link)
        ip("link", "set", inside_link, "netns", name)
        ip("addr", "add", f"{net['outside']}/24", "dev", outside_link)
        ip("link", "set", outside_link, "up")
        ip("netns", "exec", name, "ip", "addr", "add", f"{net['inside']}/24", "dev", inside_link)
        ip("netns", "exec", name, "ip", "link", "set", inside_link, "up")
        ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
        yield net
    finally:
        subprocess.run(["ip", "link", "del", outside_link], capture_output=True, timeout=30)
        subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30)


def _turn(url: str, text: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(f"{url}/run", timeout=30, headers=headers, json={
        "appName": "echo", "userId": "ann", "sessionId": "s1",
        "newMessage": {"role": "user", "parts": [{"text": text}]}})


def _texts(url: str) -> list[str]:
    session = httpx.get(f"{url}/apps/echo/users/ann/sessions/s1", timeout=30).json()
    return [e["content"]["parts"][0]["text"] for e in session["events"] if e.get("content")]


@pytest.mark.timeout(360)  # two hosts to start (90 s each at most on a loaded machine), then the cut
def test_a_host_cut_off_the_network_loses_its_session_to_a_survivor_and_is_fenced_when_back(
        tmp_path: Path, namespace: dict[str, str]) -> None:
    with TemporaryPostgres(listen=("127.0.0.1", namespace["outside"]), clients=(namespace["subnet"],)) as server:
        url = server.new_database()
        from_inside = url.replace("@127.0.0.1:", f"@{namespace['outside']}:")
        store = lambda where: f'[store]\nurl = "{where}"\nlease_seconds = {LEASE}\n'  # noqa: E731
        auth = {"Authorization": f"Bearer {TOKEN}"}
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        inside_http = (f'[http]\naddress = "{namespace["inside"]}"\nport = 19551\n')
        with serving(tmp_path / "a", f'address = "{namespace["inside"]}"\n', apps=APPS,
                     more_toml=store(from_inside) + inside_http, prefix=("ip", "netns", "exec", namespace["name"]),
                     env={"ADK_ACTORS_HTTP__TOKENS": f'{{"{TOKEN}": "*"}}'}) as first, \
                serving(tmp_path / "b", f'address = "{namespace["outside"]}"\n', apps=APPS,
                        more_toml=store(url)) as second:
            a_url, b_url = first["url"], second["url"]
            assert a_url == f"http://{namespace['inside']}:19551"
            created = httpx.post(f"{a_url}/apps/echo/users/ann/sessions", json={"sessionId": "s1"}, headers=auth,
                                 timeout=30)
            assert created.status_code == 200, created.text
            assert _turn(a_url, "one", auth).status_code == 200
            assert _turn(b_url, "two").status_code == 200  # through the holder, across the link

            cut(namespace)
            began = time.monotonic()
            refused = _turn(b_url, "three")
            assert refused.status_code == 503 and "does not answer" in refused.text, refused.text
            assert time.monotonic() - began < 5  # told at once, not at a deadline

            def served() -> bool:
                return _turn(b_url, "three").status_code == 200

            wait_until(served, timeout=LEASE + 20, interval=0.2, message="the survivor serves the session")
            took = time.monotonic() - began
            assert took <= LEASE + 5, f"the survivor took {took:.1f} s"
            assert _texts(b_url) == ["one", "echo: one (turn 1)", "two", "echo: two (turn 2)", "three",
                                     "echo: three (turn 3)"]

            # The cut goes on past the first host's health checks (5 s) and its store's
            # connection timeouts (10 s): it must not give up on itself meanwhile.
            time.sleep(max(0.0, CUT_FOR - (time.monotonic() - began)))
            cut(namespace, "del")  # mended: the first host is no longer the writer

            def reached_through_the_survivor() -> bool:
                return _turn(a_url, "four", auth).status_code == 200

            wait_until(reached_through_the_survivor, timeout=30, interval=0.5,
                       message="the first host reaches the session again")
            assert _texts(b_url) == ["one", "echo: one (turn 1)", "two", "echo: two (turn 2)", "three",
                                     "echo: three (turn 3)", "four", "echo: four (turn 4)"]
            assert first["process"].poll() is None  # the host that was cut off is alive, and serves
            made = httpx.post(f"{a_url}/apps/echo/users/ann/sessions", json={"sessionId": "after"}, headers=auth,
                              timeout=30)
            assert made.status_code == 200, made.text
