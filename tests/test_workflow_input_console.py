"""Human input in workflow graphs (issue 55) in the web console: a question a node asks
(``RequestInput``) is shown in the conversation with its message, its payload and a
form shaped by its response schema (a field per property of an object, a checkbox for
a boolean, a number for an integer; one text box when there is no schema); the answer
sent from it continues the graph at that node, the form goes, and a reload shows the
question answered. An answer the schema refuses leaves the form open with the reason.

Headless Chromium (Debian's, driven by Playwright) against a real ``adk-actors
serve`` whose apps are the graphs below (imported by the host from ``tests/``); each
node records its run in a file outside the host (``INPUT_CONSOLE_WORK``).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import serving
from console_browser import browser_page, needs_chromium
from pydantic import BaseModel

from adk_actors.events import RequestInput
from adk_actors.workflow import START, Workflow

pytestmark = needs_chromium

APPS = ('orders = "test_workflow_input_console:orders_app"\n'
        'notes = "test_workflow_input_console:notes_app"\n')


def _mark(name: str) -> None:
    with open(Path(os.environ["INPUT_CONSOLE_WORK"], "done.txt"), "a") as done:
        done.write(name + "\n")


class Order(BaseModel):
    quantity: int
    gift: bool
    note: str = ""


def prepare(node_input: str) -> str:
    _mark("prepare")
    return node_input.upper()


def ask_order(node_input: str) -> RequestInput:
    _mark("ask")
    return RequestInput(interrupt_id="order", message=f"How many {node_input}?", payload={"item": node_input,
                        "stock": 12}, response_schema=Order)


def place(node_input: dict[str, Any], ctx: Any) -> str:
    _mark("place")
    ctx.state["order"] = node_input
    return f"placed {node_input['quantity']}"


orders_app = Workflow(name="orders", edges=[(START, prepare, ask_order, place)])


def ask_note(node_input: Any) -> RequestInput:
    _mark("ask-note")
    return RequestInput(interrupt_id="note", message="Any note?")


def keep(node_input: Any, ctx: Any) -> str:
    _mark("keep")
    ctx.state["note"] = node_input
    return "kept"


notes_app = Workflow(name="notes", edges=[(START, ask_note, keep)])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("input-console")
    with serving(work, apps=APPS, env={"INPUT_CONSOLE_WORK": str(work)}) as info:
        info["work"] = work
        yield info


@pytest.fixture
def page(served: dict[str, Any]) -> Iterator[Any]:
    (served["work"] / "done.txt").write_text("")
    with browser_page() as (tab, errors):
        yield tab
        assert errors == [], f"the page raised: {errors}"


def _done(served: dict[str, Any]) -> Counter[str]:
    return Counter((served["work"] / "done.txt").read_text().split())


def _state(served: dict[str, Any], app: str, session: str) -> dict[str, Any]:
    found: dict[str, Any] = httpx.get(f"{served['url']}/apps/{app}/users/user/sessions/{session}",
                                      timeout=30).json()["state"]
    return found


def _session_id(page: Any) -> str:
    from urllib.parse import parse_qs, urlparse

    return parse_qs(urlparse(page.url).query)["session"][0]


def test_a_question_is_answered_from_its_form_and_the_graph_goes_on(page: Any, served: dict[str, Any],
                                                                    tmp_path: Path) -> None:
    """The question shows its message and payload, a number field for ``quantity``, a
    checkbox for ``gift`` and a text for the optional ``note``; an answer the schema
    refuses (no quantity: the browser's own check lets a blank number through only
    when not required, so the quantity is given as a fraction) is not taken, the form
    stays with the reason; the good answer runs ``place`` with the checked answer,
    shows its output, and the form goes; reloaded, the question shows answered.
    ``prepare`` and ``ask`` ran once."""
    from playwright.sync_api import expect

    page.goto(served["url"] + "/?app=orders")
    expect(page.locator("#whoami")).to_have_text("operator")
    page.fill("#message", "tea")
    page.click("#send")
    question = page.locator("#events .question")
    expect(question.locator(".bubble")).to_have_text("How many TEA?")
    expect(question.locator(".payload")).to_contain_text('"stock": 12')
    quantity = question.get_by_label("quantity")
    expect(quantity).to_have_attribute("type", "number")
    expect(question.get_by_label("gift")).to_have_attribute("type", "checkbox")
    expect(question.get_by_label("note")).to_have_attribute("type", "text")
    page.screenshot(path=str(tmp_path / "question.png"))

    quantity.evaluate("input => { input.step = 'any'; }")  # let the browser send 2.5: the host must refuse it
    quantity.fill("2.5")
    question.get_by_role("button", name="Answer").click()
    expect(question.locator(".form-error")).to_contain_text("response_schema")
    expect(quantity).to_be_enabled()
    assert _done(served) == Counter(prepare=1, ask=1)

    quantity.fill("3")
    question.get_by_label("gift").check()
    question.get_by_label("note").fill("green")
    question.get_by_role("button", name="Answer").click()
    expect(page.locator("#events .tool", has_text="orders@1/place@1")).to_contain_text('"placed 3"')
    expect(question.locator("form")).to_have_count(0)
    expect(question.locator(".answered")).to_have_text("answered")
    expect(page.locator("#state")).to_contain_text('"quantity": 3')
    session = _session_id(page)
    assert _state(served, "orders", session)["order"] == {"quantity": 3, "gift": True, "note": "green"}
    assert _done(served) == Counter(prepare=1, ask=1, place=1)
    page.screenshot(path=str(tmp_path / "answered.png"))

    page.reload()
    expect(page.locator("#events .question .bubble")).to_have_text("How many TEA?")
    expect(page.locator("#events .question .answered")).to_have_text("answered")
    expect(page.locator("#events .question form")).to_have_count(0)


def test_a_question_without_a_schema_takes_text_and_a_reloaded_page_can_answer_it(
        page: Any, served: dict[str, Any]) -> None:
    """No schema: one text box; the question asked, the page is reloaded (the question
    comes back from the session, its form open), and the typed text is the answer."""
    from playwright.sync_api import expect

    page.goto(served["url"] + "/?app=notes")
    page.fill("#message", "go")
    page.click("#send")
    expect(page.locator("#events .question .bubble")).to_have_text("Any note?")
    page.reload()
    question = page.locator("#events .question")
    expect(question.locator(".bubble")).to_have_text("Any note?")
    box = question.get_by_label("answer to note")
    expect(box).to_be_enabled()
    box.fill("call me after five")
    question.get_by_role("button", name="Answer").click()
    expect(question.locator(".answered")).to_have_text("answered")
    assert _state(served, "notes", _session_id(page))["note"] == "call me after five"
    assert _done(served) == Counter({"ask-note": 1, "keep": 1})
