"""The console's supervision tree reaches every held session (issue 53, item 4), in a
real browser (Debian's chromium driven by Playwright) against a real ``adk-actors
serve`` whose one partition holds more sessions than one page of the tree (50): the
operator turns to the next page and finds a session the first page did not show, turns
back, finds another by a search, and presses kill on it; the session crashes and comes
back (a crash counted, why in the cell's title; it is read again from the store, its
state kept, on its next request, and held again)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import serving
from console_browser import browser_page, needs_chromium

pytestmark = needs_chromium

#: More sessions than one page of the tree (50) in the one partition.
SESSIONS = 61
PARTITION = "sessions/sessions-0"


def row_of(page: Any, session: str) -> Any:
    """The tree's row of session ``session`` of user ``ops`` of the weather_bot app."""
    return page.locator(f'#tree tr[data-path="{PARTITION}/weather_bot/ops/{session}"]')


@pytest.fixture
def host(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A served host of one partition holding ``SESSIONS`` sessions of user ``ops``
    (``s00`` to ``s60``, each with its number in its state)."""
    with serving(tmp_path, "partitions = 1\n") as served, \
            httpx.Client(base_url=served["url"], timeout=60) as client:
        for number in range(SESSIONS):
            made = client.post("/apps/weather_bot/users/ops/sessions",
                               json={"sessionId": f"s{number:02}", "state": {"number": number}})
            assert made.status_code == 200, made.text
        yield served


@pytest.fixture
def page(host: dict[str, Any]) -> Iterator[Any]:
    """A Chromium tab; afterwards, no error was raised in its page."""
    with browser_page() as (tab, errors):
        yield tab
        assert errors == [], f"the page raised: {errors}"


def test_a_session_past_the_first_page_is_paged_to_searched_and_killed(page: Any, host: dict[str, Any],
                                                                      tmp_path: Path) -> None:
    from playwright.sync_api import expect

    page.goto(host["url"] + "/")
    shown = page.locator("#tree-shown")
    next_page = page.get_by_role("button", name="next sessions")
    previous_page = page.get_by_role("button", name="previous sessions")
    partition = page.locator(f'#tree tr[data-path="{PARTITION}"]')

    # The first page: 50 of the 61 sessions, the partition saying it holds 61.
    expect(shown).to_have_text(f"sessions 1-50 of {SESSIONS}", timeout=30000)
    expect(partition.locator("td").first).to_have_text(f"sessions-0 ({SESSIONS} sessions)")
    expect(partition.locator("td.status-running")).to_have_count(1)
    expect(page.locator("#tree tr[data-path^='sessions/sessions-0/weather_bot/']")).to_have_count(50)
    expect(row_of(page, "s00")).to_have_count(1)
    expect(row_of(page, "s55")).to_have_count(0)
    expect(previous_page).to_be_disabled()

    # The next page: the other 11, s55 among them; no page after it.
    next_page.click()
    expect(shown).to_have_text(f"sessions 51-{SESSIONS} of {SESSIONS}", timeout=30000)
    expect(row_of(page, "s55")).to_have_count(1)
    expect(row_of(page, "s55").locator("td").first).to_have_text("ops/s55")
    expect(row_of(page, "s00")).to_have_count(0)
    expect(page.locator("#tree tr[data-path^='sessions/sessions-0/weather_bot/']")).to_have_count(SESSIONS - 50)
    expect(next_page).to_be_disabled()
    page.screenshot(path=str(tmp_path / "tree-page-2.png"))

    # Back to the first page.
    previous_page.click()
    expect(shown).to_have_text(f"sessions 1-50 of {SESSIONS}", timeout=30000)
    expect(row_of(page, "s00")).to_have_count(1)
    expect(row_of(page, "s55")).to_have_count(0)

    # A search: one session, past the first page, alone in the tree.
    page.get_by_role("textbox", name="search sessions").fill("ops/s57")
    expect(shown).to_have_text('sessions 1-1 of 1 matching "ops/s57"', timeout=30000)
    expect(page.locator("#tree tr[data-path^='sessions/sessions-0/weather_bot/']")).to_have_count(1)
    found = row_of(page, "s57")
    expect(found.locator("td.status-idle")).to_have_count(1)
    expect(found.locator("td.restarts")).to_have_text("0")
    page.screenshot(path=str(tmp_path / "tree-search.png"))

    # Kill it: the session crashes and comes back.
    found.get_by_role("button", name=f"kill {PARTITION}/weather_bot/ops/s57").click()
    expect(found.locator("td.restarts")).to_have_text("1", timeout=30000)
    expect(found.locator("td.restarts")).to_have_attribute("title", re.compile("last exit: .*killed by an operator"))
    # Crashed, it is no longer in memory: its next request reads it from the store.
    expect(found.locator("td.status-passivated")).to_have_count(1)
    page.screenshot(path=str(tmp_path / "tree-killed.png"))
    with httpx.Client(base_url=host["url"], timeout=60) as client:
        again = client.get("/apps/weather_bot/users/ops/sessions/s57")
        assert again.status_code == 200, again.text
        assert again.json()["state"]["number"] == 57
        neighbour = client.get("/apps/weather_bot/users/ops/sessions/s56")
        assert neighbour.status_code == 200 and neighbour.json()["state"]["number"] == 56
    expect(found.locator("td.status-idle")).to_have_count(1, timeout=30000)  # held again, its crash counted
    expect(found.locator("td.restarts")).to_have_text("1")
    # The page after a search is cleared: every session again, the killed one among them.
    page.get_by_role("textbox", name="search sessions").fill("")
    expect(shown).to_have_text(f"sessions 1-50 of {SESSIONS}", timeout=30000)
    next_page.click()
    expect(row_of(page, "s57").locator("td.restarts")).to_have_text("1", timeout=30000)
    expect(row_of(page, "s56").locator("td.restarts")).to_have_text("0")


def test_a_slow_walk_of_the_tree_is_waited_for_not_taken_for_a_lost_host(page: Any, host: dict[str, Any]) -> None:
    """A walk that waits for a busy partition takes up to half a minute: here the host's
    real answers to the tree's requests reach the page 6 s late (held by the browser).
    The page waits for them: the banner never says the host does not answer (its other
    requests are answered), and its polls do not pile walks up on the host: one at a time."""
    from playwright.sync_api import expect

    walks = {"out": 0, "most": 0, "asked": 0}

    def late(route: Any) -> None:
        walks["asked"] += 1
        walks["out"] += 1
        walks["most"] = max(walks["most"], walks["out"])
        try:
            answer = route.fetch()
            page.wait_for_timeout(6000)
            route.fulfill(response=answer)
        finally:
            walks["out"] -= 1

    page.add_init_script("""
      window.bannerSeen = [];
      new MutationObserver(() => {
        const banner = document.getElementById("banner");
        if (banner && !banner.hidden) window.bannerSeen.push(banner.textContent);
      }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
    """)
    page.route(re.compile(r".*/console/api/tree\?.*"), late)
    page.goto(host["url"] + "/")
    expect(page.locator("#tree-shown")).to_have_text(f"sessions 1-50 of {SESSIONS}", timeout=30000)
    page.wait_for_timeout(8000)  # more polls come due while the next walk is out
    assert walks["most"] == 1, walks
    assert walks["asked"] >= 2, walks  # the poll goes on: the next walk once the last was answered
    assert page.evaluate("window.bannerSeen") == []
    page.unroute(re.compile(r".*/console/api/tree\?.*"))
