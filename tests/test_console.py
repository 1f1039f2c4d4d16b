"""The web console in a real browser (Debian's chromium driven by Playwright) against a
real ``adk-actors serve``: chat with streaming, a tool call drawn, a payment approved from
the approvals panel, an actor killed from the live tree and seen coming back, and the
page on a phone-sized screen. Screenshots go to the test's directory."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import serving
from console_browser import CHROMIUM, needs_chromium

from adk_actors.testing import StubServer, gemini_response
from supervision.testing import wait_until

pytestmark = needs_chromium

APPS = ('weather_bot = "examples.weather_bot.agent:root_agent"\n'
        'hitl = "examples.hitl.agent:root_agent"\n'
        'streaming = "runtime_agents:streaming_agent"\n'
        'notes = "runtime_agents:notes_agent"\n'
        'durable = "durable_agents:root_agent"\n')


@pytest.fixture(scope="module")
def gemini() -> Iterator[StubServer]:
    """A real HTTP server speaking Gemini's wire format: the model of YAML agents made
    in adk-web's agent builder (gemini-2.5-flash, its default)."""
    with StubServer() as stub:
        yield stub


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, gemini: StubServer) -> Iterator[dict[str, Any]]:
    env = {"GEMINI_API_KEY": "test-key-not-a-secret", "GEMINI_BASE_URL": gemini.url}
    with serving(tmp_path_factory.mktemp("console"), apps=APPS, env=env) as info:
        yield info


@pytest.fixture(scope="module")
def playwright() -> Iterator[Any]:
    """Playwright for the module's tests (its sync API runs one at a time in a thread)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as started:
        yield started


class Browser:
    """The module's Chromium, launched once (a launch is most of a short test's time);
    each test gets a context of its own from it. One found disconnected (crashed) is
    launched again, so that a test that crashed it fails alone."""

    def __init__(self, playwright: Any) -> None:
        self.playwright = playwright
        self.browser: Any = None

    @contextmanager
    def page(self, **context: Any) -> Iterator[tuple[Any, list[str]]]:
        """A tab in a new context (``context``: Playwright's ``new_context`` options; a
        1400 x 900 viewport unless given), and the list the errors its page raises are
        appended to; the context is closed afterwards, whatever happened."""
        if self.browser is None or not self.browser.is_connected():
            self.browser = self.playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        opened = self.browser.new_context(**{"viewport": {"width": 1400, "height": 900}, **context})
        try:
            tab = opened.new_page()
            errors: list[str] = []
            tab.on("pageerror", lambda error: errors.append(str(error)))
            yield tab, errors
        finally:
            opened.close()

    def close(self) -> None:
        if self.browser is not None:
            self.browser.close()


@pytest.fixture(scope="module")
def browser(playwright: Any) -> Iterator[Browser]:
    shared = Browser(playwright)
    try:
        yield shared
    finally:
        shared.close()


@pytest.fixture
def page(served: dict[str, Any], browser: Browser) -> Iterator[Any]:
    with browser.page() as (tab, errors):
        yield tab
        assert errors == [], f"the page raised: {errors}"


def test_chat_streams_and_draws_tool_calls(page: Any, served: dict[str, Any], tmp_path: Path) -> None:
    from playwright.sync_api import expect

    page.goto(served["url"] + "/?app=weather_bot")
    expect(page.locator("#whoami")).to_have_text("operator")
    page.fill("#message", "What's the weather in Paris?")
    page.click("#send")
    expect(page.locator("#events .tool").first).to_contain_text("→ get_weather")
    expect(page.locator("#events .bubble").last).to_have_text("It is 21 °C and clear in Paris.")
    expect(page.locator("#state")).to_contain_text('"last_city": "Paris"')
    expect(page.locator("#sessions li")).to_have_count(1)
    # The turn's trace: the agent's span, with its model and tool calls inside it.
    expect(page.locator("#trace .span summary").first).to_contain_text("invoke_agent weather_bot")
    expect(page.locator("#trace .span")).to_have_count(4)
    tool_span = page.locator("#trace .span", has_text="execute_tool get_weather")
    tool_span.locator("summary").click()
    expect(tool_span.locator("pre")).to_contain_text('"temp_c": 21')
    page.screenshot(path=str(tmp_path / "chat.png"))

    page.select_option("#app", "streaming")
    page.fill("#message", "slow tokens")
    page.click("#send")
    streamed = page.locator("#events li.partial .bubble")
    expect(streamed).to_have_text("You said: ", timeout=5000)  # the first token, before the rest exists
    expect(page.locator("#events li.from-agent .bubble").last).to_have_text("You said: slow tokens.", timeout=10000)
    expect(page.locator("#events li.partial")).to_have_count(0)  # the final event replaced the streamed one
    page.reload()  # the URL names the app and the session: the conversation comes back from the host
    expect(page.locator("#app")).to_have_value("streaming")
    expect(page.locator("#events li.from-agent .bubble").last).to_have_text("You said: slow tokens.")
    expect(page.locator("#events li.from-user .bubble").first).to_have_text("slow tokens")


def test_an_event_that_saved_an_artifact_is_drawn_once(page: Any, served: dict[str, Any]) -> None:
    """SSE sends such an event twice (google-adk's framing): the console draws one
    entry, with the tool's answer and the artifact it saved."""
    from playwright.sync_api import expect

    page.goto(served["url"] + "/?app=notes")
    page.fill("#message", "save buy bread")
    page.click("#send")
    saved = page.locator("#events li", has_text="artifact note.txt v0 saved")
    expect(saved).to_have_count(1, timeout=10000)
    expect(saved).to_contain_text("← save_note")
    event_id = saved.get_attribute("data-event")
    assert page.locator(f'#events li[data-event="{event_id}"]').count() == 1


def test_a_payment_waits_for_the_approve_button(page: Any, served: dict[str, Any], tmp_path: Path) -> None:
    from playwright.sync_api import expect

    page.goto(served["url"] + "/?app=hitl")
    page.fill("#message", "pay 100 to bob")
    page.click("#send")
    approval = page.locator("#approvals .approval")
    expect(approval).to_contain_text("wire_money", timeout=10000)
    page.screenshot(path=str(tmp_path / "approval.png"))
    approval.get_by_role("button", name="Approve").click()
    expect(page.locator("#events .bubble").last).to_have_text("Sent 100 to bob (ref TX-100-BOB).", timeout=15000)
    expect(page.locator("#approvals .approval")).to_have_count(0)


def test_a_killed_run_is_resumed_from_the_console_and_its_pending_call_decided(
        page: Any, served: dict[str, Any], tmp_path: Path) -> None:
    """Durable runs: the run's worker is killed during a call of a tool that is not
    idempotent; the interrupted-run panel resumes it, shows the call, and the human says
    it ran (with its result): the run completes, and the tool ran once."""
    import httpx
    from playwright.sync_api import expect

    counts = tmp_path / "console-counts.txt"
    sessions = served["url"] + "/apps/durable/users/user/sessions"
    assert httpx.post(f"{sessions}/resume-me", json={"counts_file": str(counts), "pause_at": ["first"]}).status_code == 200
    page.goto(served["url"] + "/?app=durable&session=resume-me")
    expect(page.locator("#chat-title")).to_contain_text("resume-me")  # the session's, not a new one
    page.fill("#message", "go")
    page.click("#send")
    wait_until(lambda: Path(f"{counts}.pid").exists(), timeout=20)
    os.kill(int(Path(f"{counts}.pid").read_text()), signal.SIGKILL)
    panel = page.locator("#resume")
    expect(panel.locator(".run-status")).to_contain_text("ended killed", timeout=15000)
    httpx.patch(f"{sessions}/resume-me", json={"stateDelta": {"pause_at": []}})
    panel.get_by_role("button", name="Resume").click()
    call = panel.locator(".pending-call")
    expect(call).to_contain_text('first → send({"step":"first"})', timeout=15000)
    call.get_by_label(re.compile("result of")).fill('{"sent": "first"}')
    call.get_by_role("button", name="It ran: this result").click()
    expect(call.locator(".chosen")).to_have_text(" chosen: result")
    page.screenshot(path=str(tmp_path / "resume.png"))
    panel.get_by_role("button", name="Resume with these decisions").click()
    expect(page.locator("#events .bubble").last).to_have_text("last done", timeout=15000)
    expect(panel).to_contain_text("no interrupted run")
    assert Path(counts).read_text().split().count("send:first") == 1


def test_kill_an_actor_from_the_tree_and_watch_it_come_back(page: Any, served: dict[str, Any],
                                                           tmp_path: Path) -> None:
    from playwright.sync_api import expect

    page.goto(served["url"] + "/")
    row = page.locator('#tree tr[data-path="services/memory"]')
    expect(row.locator("td.pid")).to_have_text(lambda_text_is_pid(), timeout=10000)
    before = row.locator("td.pid").inner_text()
    page.screenshot(path=str(tmp_path / "tree-before.png"))
    row.get_by_role("button", name="kill services/memory").click()
    expect(row.locator("td.pid")).not_to_have_text(before, timeout=10000)
    expect(row.locator("td.status-running")).to_have_count(1, timeout=10000)
    assert row.locator("td.pid").inner_text().isdigit()
    expect(row.locator("td.restarts")).to_have_attribute("title", re.compile("last exit: killed"), timeout=10000)
    page.screenshot(path=str(tmp_path / "tree-after.png"))


def test_a_stopped_actor_is_shown_restarted_as_unresponsive(page: Any, served: dict[str, Any],
                                                           tmp_path: Path) -> None:
    """kill -STOP of a service: its supervisor's health check (1 s, 5 s by default) kills
    and restarts it, and the tree says why."""
    import os
    import signal

    from playwright.sync_api import expect

    page.goto(served["url"] + "/")
    row = page.locator('#tree tr[data-path="services/approvals"]')
    expect(row.locator("td.pid")).to_have_text(lambda_text_is_pid(), timeout=10000)
    before = int(row.locator("td.pid").inner_text())
    os.kill(before, signal.SIGSTOP)
    try:
        expect(row.locator("td.restarts")).to_have_attribute("title", re.compile("unresponsive: stopped"),
                                                             timeout=30000)
        expect(row.locator("td.restarts")).to_contain_text("\u26a0")
        expect(row.locator("td.status-running")).to_have_count(1, timeout=10000)
        assert int(row.locator("td.pid").inner_text()) != before
    finally:
        try:
            os.kill(before, signal.SIGCONT)
        except ProcessLookupError:
            pass  # killed by its supervisor, as it should be
    page.screenshot(path=str(tmp_path / "tree-unresponsive.png"))


def test_the_console_fits_a_phone(served: dict[str, Any], browser: Browser, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with browser.page(viewport={"width": 390, "height": 844}, is_mobile=True) as (phone, _errors):
        phone.goto(served["url"] + "/?app=weather_bot")
        expect(phone.locator("#message")).to_be_visible()
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the page is {width} px wide on a 390 px screen"
        phone.screenshot(path=str(tmp_path / "phone.png"), full_page=True)


def lambda_text_is_pid() -> Any:
    import re

    return re.compile(r"^\d+$")


def chat_in_adk_web(page: Any, served: dict[str, Any], text: str, answer: str) -> None:
    """Open google-adk's adk-web UI (skip the test when google-adk is not installed),
    send ``text`` to weather_bot and wait for ``answer``."""
    from playwright.sync_api import expect

    from adk_actors.http._adk_web import adk_web_files

    if adk_web_files() is None:
        pytest.skip("google-adk is not installed")
    page.goto(served["url"] + "/dev-ui/?app=weather_bot")
    page.fill("textarea", text)
    page.keyboard.press("Enter")
    expect(page.get_by_text(answer)).to_be_visible(timeout=15000)


def test_google_adks_own_web_ui_chats_with_the_host(page: Any, served: dict[str, Any], tmp_path: Path) -> None:
    """google-adk's adk-web UI, served from the installed google-adk package at
    /dev-ui/, unchanged: it chats with our host through google-adk's API."""
    import httpx
    from playwright.sync_api import expect

    chat_in_adk_web(page, served, "What's the weather in Paris?", "It is 21 °C and clear in Paris.")
    page.screenshot(path=str(tmp_path / "adk-web.png"))
    page.get_by_text("Traces", exact=True).click()  # adk-web's trace view draws our stored spans
    expect(page.get_by_text("execute_tool get_weather").or_(page.get_by_text("get_weather", exact=True)).first) \
        .to_be_visible(timeout=10000)
    expect(page.get_by_text("generate_content scripted").first).to_be_visible()
    page.screenshot(path=str(tmp_path / "adk-web-trace.png"))
    page.get_by_text("Events", exact=True).click()  # an event's model request, from its stored span
    page.get_by_text("It is 21 °C and clear in Paris.").click()
    page.get_by_text("input", exact=True).click()
    expect(page.get_by_text("function_declarations").first).to_be_visible(timeout=10000)
    page.screenshot(path=str(tmp_path / "adk-web-request.png"))
    session_id = page.url.split("session=")[1].split("&")[0]
    stored = httpx.get(f"{served['url']}/apps/weather_bot/users/user/sessions/{session_id}").json()
    assert stored["events"][-1]["content"]["parts"][0]["text"] == "It is 21 °C and clear in Paris."


def test_google_adks_web_ui_makes_and_runs_an_eval_set(page: Any, served: dict[str, Any], tmp_path: Path) -> None:
    """adk-web's eval tab, unchanged, on our host: a new eval set, the current session
    added as a case, a run with its two default metrics, and the case passing."""
    from playwright.sync_api import expect

    chat_in_adk_web(page, served, "What's the weather in Oslo?", "It is -3 °C and snow in Oslo.")
    page.get_by_role("tab", name="Evals").click()
    page.get_by_text("Create Evaluation Set").click()
    dialog = page.locator("[role=dialog]")
    dialog.locator("input").first.fill("browser_set")
    dialog.get_by_text("Create", exact=True).click()
    page.get_by_text("browser_set").first.click()
    page.get_by_text("From Current Session").click()
    dialog.locator("input").first.fill("oslo_case")
    dialog.get_by_text("Create", exact=True).click()
    expect(page.get_by_text("oslo_case")).to_be_visible(timeout=10000)
    page.get_by_text("Run All").click()
    dialog.get_by_role("button", name="Run").click()
    expect(page.get_by_text("1 PASS")).to_be_visible(timeout=30000)
    page.screenshot(path=str(tmp_path / "adk-web-eval.png"))


def test_google_adks_agent_builder_makes_an_app_that_answers(served: dict[str, Any], gemini: StubServer,
                                                            browser: Browser, tmp_path: Path) -> None:
    """adk-web's agent builder, unchanged, on our host: a new app is created and its
    assistant panel greets the user (our builder assistant, its model a real HTTP
    server speaking Gemini's wire format); the instruction is written in the form and
    saved; the app is then chosen and answers, with that instruction in its model's
    request. No request fails and the page raises no error."""
    import httpx
    from playwright.sync_api import expect

    from adk_actors.http._adk_web import adk_web_files

    if adk_web_files() is None:
        pytest.skip("google-adk is not installed")
    with browser.page() as (page, errors):
        refused: list[str] = []
        page.on("response", lambda r: refused.append(r.url) if r.status >= 400 and "/dev-ui/" not in r.url else None)
        page.goto(served["url"] + "/dev-ui/?app=weather_bot")
        gemini.add(gemini_response("Hello! What should your new agent do?"))  # the assistant's greeting
        asked = len(gemini.requests)
        page.locator("button").filter(has_text="arrow_drop_down").first.click()  # the app menu
        page.locator("div:has(> span:text-is('Select an App')) button").first.click()  # "add": a new app
        dialog = page.locator("[role=dialog]")
        dialog.locator("input").first.fill("shop_helper")
        dialog.get_by_role("button", name="Create").click()
        wait_until(lambda: len(gemini.requests) > asked, timeout=15)
        expect(page.get_by_placeholder("Ask Gemini to build your agent")).to_be_visible(timeout=15000)
        # adk-web's assistant panel draws an answer at the page's next event (its own
        # change detection; the same with google-adk's server): a click on the panel
        page.wait_for_timeout(500)
        page.locator(".builder-assistant-panel").click()
        expect(page.get_by_text("Hello! What should your new agent do?")).to_be_visible(timeout=15000)
        assert "Agent Config" in str(gemini.requests[asked].body["systemInstruction"])
        instructions = page.get_by_label("Instructions")
        expect(instructions).to_be_visible(timeout=15000)
        instructions.fill("You answer questions about the shop's opening hours.")
        page.screenshot(path=str(tmp_path / "adk-web-builder.png"))
        page.get_by_role("button", name="Save", exact=True).click()
        page.wait_for_url("**/dev-ui/?app=shop_helper", timeout=15000)

        saved = httpx.get(f"{served['url']}/dev/apps/shop_helper/builder", params={"ts": 1}).text
        assert "opening hours" in saved and "agent_class: LlmAgent" in saved
        gemini.add(gemini_response("We open at nine."))
        page.fill("textarea", "When do you open?")
        page.keyboard.press("Enter")
        expect(page.get_by_text("We open at nine.")).to_be_visible(timeout=15000)
        page.screenshot(path=str(tmp_path / "adk-web-builder-chat.png"))
        assert "opening hours" in str(gemini.requests[-1].body["systemInstruction"])
        assert refused == [] and errors == [], (refused, errors)


def test_google_adks_web_ui_talks_to_an_app_through_the_microphone(served: dict[str, Any], playwright: Any,
                                                                  tmp_path: Path) -> None:
    """adk-web's microphone button, unchanged, on our host: Chromium's fake microphone
    streams audio over ``/run_live``; the scripted voice model hears a second of it and
    answers in speech; adk-web draws both transcriptions; stopping the call leaves the
    conversation stored in the session as text."""
    import httpx
    from playwright.sync_api import expect

    from adk_actors.http._adk_web import adk_web_files

    if adk_web_files() is None:
        pytest.skip("google-adk is not installed")
    # a browser of its own: a fake microphone, and leave to use it without asking
    microphone = playwright.chromium.launch(executable_path=CHROMIUM, args=[
        "--no-sandbox", "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
        "--autoplay-policy=no-user-gesture-required"])
    try:
        context = microphone.new_context(viewport={"width": 1400, "height": 900}, permissions=["microphone"])
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        sockets: list[str] = []
        page.on("websocket", lambda socket: sockets.append(socket.url))
        page.goto(served["url"] + "/dev-ui/?app=streaming")
        call_button = page.locator("app-call-controls button").last
        expect(call_button).to_be_enabled(timeout=15000)
        call_button.click()
        # A second of audio at least makes a turn (more when the machine is slow to pass it on).
        heard = re.compile(r"^\(\d+\.\d s of audio\)$")
        expect(page.get_by_text(heard).first).to_be_visible(timeout=20000)
        expect(page.get_by_text(re.compile(r"^You said: \(\d+\.\d s of audio\)\.$")).first).to_be_visible(
            timeout=20000)
        page.screenshot(path=str(tmp_path / "adk-web-voice.png"))
        call_button.click()  # hang up
        assert sockets and "/run_live?" in sockets[0] and "modalities=AUDIO" in sockets[0]
        session_id = sockets[0].split("session_id=")[1].split("&")[0]
        url = f"{served['url']}/apps/streaming/users/user/sessions/{session_id}"
        events = httpx.get(url).json()["events"]
        texts = [(e["author"], e["content"]["parts"][0]["text"]) for e in events if "content" in e]
        (user, said), (agent, answer) = texts[:2]
        assert (user, agent) == ("user", "streamer") and heard.match(said), texts
        assert float(said[1:].split()[0]) >= 1.0 and answer == f"You said: {said}.", texts
        assert errors == [], errors
    finally:
        microphone.close()


def test_the_jobs_panel_shows_states_and_errors_and_retries_a_discarded_job(page: Any, served: dict[str, Any],
                                                                             tmp_path: Path) -> None:
    """A job that failed its only attempt is shown discarded with its error; its retry
    button runs it again (it fails again: the retry happened); a scheduled job can be
    cancelled from the panel."""
    from playwright.sync_api import expect

    from adk_actors.runtime import Host

    host = Host.connect(served["port"])
    try:
        failing = host.jobs.enqueue_function("job_functions:flaky", {"log": str(tmp_path / "log"), "fail_times": 9},
                                             max_attempts=1)
        later = host.jobs.enqueue_run("weather_bot", "Weather in Oslo?", user_id="ann", schedule_in=600)
        wait_until(lambda: host.jobs.get(failing.id).state == "discarded", timeout=15)
        page.goto(served["url"] + "/")
        row = page.locator(f'#jobs tr[data-job="{failing.id}"]')
        expect(row.locator("td.job-discarded")).to_have_attribute(
            "title", re.compile("RuntimeError: attempt 1 failed on purpose"), timeout=10000)
        expect(page.locator("#jobs-summary")).to_contain_text("default:", timeout=10000)
        page.screenshot(path=str(tmp_path / "jobs.png"))
        row.get_by_role("button", name=f"retry {failing.id}").click()
        expect(row.locator("td").nth(2)).to_have_text("2/2", timeout=10000)  # attempted once more
        scheduled = page.locator(f'#jobs tr[data-job="{later.id}"]')
        expect(scheduled.locator("td.job-scheduled")).to_have_count(1, timeout=10000)
        scheduled.get_by_role("button", name=f"cancel {later.id}").click()
        # the panel shows it at its next refresh after the cancel is stored: at load, later
        expect(scheduled.locator("td.job-cancelled")).to_have_count(1, timeout=30000)
        assert host.jobs.get(later.id).state == "cancelled"
    finally:
        host.disconnect()


def test_normal_use_of_a_plain_host_makes_no_failing_request_and_no_console_error(browser: Browser,
                                                                                 tmp_path: Path) -> None:
    """The console on a fresh host, used as a person would: open it, make a session
    (no run yet), chat, open another app, come back by reload. No request the page makes
    answers 4xx/5xx (a session without a run gets an empty answer), and the browser's
    console shows no error."""
    from playwright.sync_api import expect

    apps = ('weather_bot = "examples.weather_bot.agent:root_agent"\n'
            'notes = "runtime_agents:notes_agent"\n')
    with serving(tmp_path, apps=apps) as plain, browser.page() as (tab, errors):
        failed: list[str] = []
        logged: list[str] = []
        tab.on("response", lambda response: failed.append(f"{response.status} {response.request.method} "
                                                           f"{response.url}") if response.status >= 400 else None)
        tab.on("console", lambda message: logged.append(f"{message.text} ({message.location.get('url')})")
               if message.type == "error" else None)
        tab.goto(plain["url"] + "/?app=weather_bot")
        expect(tab.locator("#whoami")).to_have_text("operator")
        tab.click("#new-session")  # a session with no run: its panels are asked about it
        expect(tab.locator("#sessions li")).to_have_count(1)
        expect(tab.locator("#resume")).to_have_text("no interrupted run")
        tab.fill("#message", "What's the weather in Paris?")
        tab.click("#send")
        expect(tab.locator("#events .bubble").last).to_have_text("It is 21 °C and clear in Paris.", timeout=15000)
        tab.select_option("#app", "notes")
        tab.click("#new-session")
        expect(tab.locator("#sessions li")).to_have_count(1)
        tab.reload()  # the URL names the app and its new session, which has had no run
        expect(tab.locator("#app")).to_have_value("notes")
        expect(tab.locator("#tree tbody tr").first).to_be_visible()
        for _ in range(2):  # two more rounds of the page's polls (approvals, tree, jobs: each second)
            tab.wait_for_event("requestfinished", lambda request: "/console/api/tree" in request.url, timeout=15000)
        assert failed == [], f"requests of the page that failed: {failed}"
        assert logged == [], f"errors in the browser's console: {logged}"
        assert errors == [], f"the page raised: {errors}"
