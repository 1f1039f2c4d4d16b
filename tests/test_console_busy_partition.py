"""The console's tree tells a busy partition from a stopped one (issue 53, items 2 and 4),
in a real browser (Debian's chromium driven by Playwright) against a real ``adk-actors
serve`` with its default health checks:

* a session partition truly busy on legitimate work (its message loop writes state
  updates of ~1 MB each, queued by many callers at once) is shown ``busy``, never
  ``unreachable``; the sessions it holds are not listed while it is so, and the page
  says so (its row and the count of sessions); the other partition is listed as
  usual; it is not killed for being busy (same pid, no restart), and once its work is
  done its sessions are listed again;
* the same partition stopped (``kill -STOP``) is shown ``unreachable``, and then, found
  by its supervisor's health check, killed and restarted: ``running`` again with a new
  pid, its restart counted with a warning sign (why in the cell's title).
"""

from __future__ import annotations

import os
import re
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import serving
from console_browser import browser_page, needs_chromium

from adk_actors.runtime import Host
from supervision.lowlevel import read_progress
from supervision.testing import pid_alive, wait_until

pytestmark = [needs_chromium, pytest.mark.timeout(600)]  # minutes of busy work at load

#: Sessions of user ``ops`` besides ``big`` (spread over the two partitions by key).
BYSTANDERS = [f"b{n}" for n in range(8)]
#: State updates of ~0.9 MB each that the partition of ``big`` gets at once: its state
#: grows to ~40 MB and each update writes all of it, which keeps the partition's
#: message loop working for many seconds (longer than a walk waits for it, at any load).
UPDATES = 45
#: At most this many rounds of them (see the test).
BATCHES = 4

#: Every status and pid the page showed for the watched partition, in order.
WATCH = """
  window.seen = [];
  new MutationObserver(() => {
    const row = document.querySelector(`#tree tr[data-path="${window.watched}"]`);
    if (!row) return;
    const cells = row.querySelectorAll("td");
    const shown = `${cells[1].textContent} ${cells[2].textContent}`;
    if (window.seen[window.seen.length - 1] !== shown) window.seen.push(shown);
  }).observe(document, { subtree: true, childList: true, characterData: true });
"""


@pytest.fixture
def host(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A served host (two partitions, the default health checks) with sessions ``big``
    and ``BYSTANDERS`` of user ``ops``."""
    with serving(tmp_path) as served, httpx.Client(base_url=served["url"], timeout=60) as client:
        for session in ["big", *BYSTANDERS]:
            made = client.post("/apps/weather_bot/users/ops/sessions", json={"sessionId": session})
            assert made.status_code == 200, made.text
        yield served


@pytest.fixture
def page(host: dict[str, Any]) -> Iterator[Any]:
    """A Chromium tab; afterwards, no error was raised in its page."""
    with browser_page() as (tab, errors):
        yield tab
        assert errors == [], f"the page raised: {errors}"


def session_path(rows: list[dict[str, Any]], session: str) -> str:
    return next(r["path"] for r in rows if r["type"] == "session" and r["session"] == session)


def test_a_busy_partition_is_shown_busy_and_a_stopped_one_unreachable(page: Any, host: dict[str, Any],
                                                                      tmp_path: Path) -> None:
    from playwright.sync_api import expect

    tree = httpx.get(f"{host['url']}/console/api/tree", timeout=60).json()["rows"]
    busy_path = session_path(tree, "big").rsplit("/", 3)[0]  # sessions/sessions-N
    other_path = next(r["path"] for r in tree if r["path"].startswith("sessions/sessions-") and r["depth"] == 1
                      and r["path"] != busy_path)
    pid = int(next(r["pid"] for r in tree if r["path"] == busy_path))
    on_it = [s for s in BYSTANDERS if session_path(tree, s).startswith(busy_path + "/")]
    elsewhere = [s for s in BYSTANDERS if s not in on_it]
    assert on_it and elsewhere, tree  # both partitions hold bystanders (keys spread by hash)

    def row(path: str) -> Any:
        return page.locator(f'#tree tr[data-path="{path}"]')

    def session_row(session: str) -> Any:
        return page.locator(f'#tree tr[data-path$="/weather_bot/ops/{session}"]')

    page.add_init_script(f"window.watched = {busy_path!r};\n{WATCH}")
    page.goto(host["url"] + "/")
    name = busy_path.rsplit("/", 1)[1]
    expect(row(busy_path).locator("td").first).to_have_text(f"{name} ({len(on_it) + 1} sessions)", timeout=30000)
    expect(session_row(on_it[0])).to_have_count(1)

    # Busy: the partition's message loop works through the updates; the page's walks wait
    # for it, then show it busy, its sessions not listed, and say so.
    client = Host.connect(host["port"])
    runner = client.runner("weather_bot", call_timeout=600.0)
    started = read_progress(pid)
    assert started is not None
    failures: list[BaseException] = []

    def update(number: int) -> None:
        try:
            runner.update_state("ops", "big", {f"k{number}": "x" * 900_000})
        except BaseException as exc:  # said below, in the test's thread
            failures.append(exc)

    # A walk waits for a busy partition up to its deadline scaled to the 1-minute load
    # average, which lags the real load: while the page has not shown it busy, another
    # batch of updates (of the same keys: ~40 MB written each) keeps it working.
    busy_cell = row(busy_path).locator("td.status-busy")
    updaters: list[threading.Thread] = []
    try:
        for _ in range(BATCHES):
            batch = [threading.Thread(target=update, args=(n,)) for n in range(UPDATES)]
            updaters.extend(batch)
            for updater in batch:
                updater.start()
            wait_until(lambda: (read_progress(pid) or started).cpu > started.cpu, timeout=60)
            while any(u.is_alive() for u in batch) and busy_cell.count() == 0:
                page.wait_for_timeout(500)
            if busy_cell.count():
                break
        expect(busy_cell).to_have_count(1, timeout=60000)
        expect(row(busy_path).locator("td.status-busy")).to_have_attribute("title", re.compile(r"^busy: .*worked"))
        expect(row(busy_path).locator("td").first).to_have_text(f"{name} (busy: its sessions not listed)")
        expect(page.locator("#tree-shown")).to_contain_text("not counting the sessions of 1 busy partition")
        expect(row(other_path).locator("td.status-running")).to_have_count(1)
        expect(session_row(elsewhere[0])).to_have_count(1)  # the other partition's sessions are listed
        expect(session_row(on_it[0])).to_have_count(0)
        page.screenshot(path=str(tmp_path / "tree-busy.png"), full_page=True)
    finally:
        for updater in updaters:
            updater.join(600)
        client.disconnect()
    assert failures == [] and not any(u.is_alive() for u in updaters), failures

    # Its work done, it lists its sessions again: the same process, never restarted.
    expect(row(busy_path).locator("td").first).to_have_text(f"{name} ({len(on_it) + 1} sessions)", timeout=120000)
    expect(row(busy_path).locator("td.status-running")).to_have_count(1)
    expect(row(busy_path).locator("td.pid")).to_have_text(str(pid))
    expect(row(busy_path).locator("td.restarts")).to_have_text("0")
    expect(session_row(on_it[0])).to_have_count(1)
    seen = page.evaluate("window.seen")
    assert f"busy {pid}" in seen and not any(s.startswith("unreachable") for s in seen), seen

    # Stopped: unreachable (not waited for as busy); then found by the health check,
    # killed and restarted.
    os.kill(pid, signal.SIGSTOP)
    try:
        expect(row(busy_path).locator("td.pid")).not_to_have_text(str(pid), timeout=120000)
        expect(row(busy_path).locator("td.status-running")).to_have_count(1, timeout=120000)
        wait_until(lambda: not pid_alive(pid), timeout=60)
    finally:
        if pid_alive(pid):
            os.kill(pid, signal.SIGCONT)
    seen = page.evaluate("window.seen")
    after = seen[seen.index(f"busy {pid}"):]
    assert f"unreachable {pid}" in after, seen
    assert after.index(f"unreachable {pid}") < max(i for i, s in enumerate(after) if s.startswith("running"))
    restarts = row(busy_path).locator("td.restarts")
    expect(restarts).to_have_text("1 \u26a0")
    expect(restarts).to_have_attribute("title", re.compile("last exit: .*unresponsive: stopped"))
    page.screenshot(path=str(tmp_path / "tree-restarted.png"), full_page=True)
