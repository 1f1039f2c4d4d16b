"""A developer's first hour (issue 54): nothing waits silently, one default user, a
missing extra says which and how to install it, and no stale or misleading words.
Each test reads the message a user would read: the CLI's output, an HTTP answer, the
host's log, the console in Chromium.

The a2a-sdk extra is made missing honestly: a ``sitecustomize`` on the host's
``PYTHONPATH`` puts ``None`` in ``sys.modules['a2a']`` before anything runs, so every
process of the host fails ``import a2a`` with ``ModuleNotFoundError`` exactly as it
would without the package (the dev install has it, so it cannot be uninstalled here).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import ROOT, serving
from console_browser import CHROMIUM, needs_chromium

from adk_actors.cli import DEFAULT_USER
from adk_actors.runtime import Host
from supervision import call
from supervision.lowlevel import free_port
from supervision.testing import wait_until

APPS = ('weather_bot = "examples.weather_bot.agent:root_agent"\n'
        'hitl = "examples.hitl.agent:root_agent"\n'
        'a2a_router = "examples.a2a_router.agent:root_agent"\n')
PIP_A2A = "pip install 'adk-actors[a2a]'"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One host: weather_bot, hitl, and a2a_router whose specialist's card is on a port
    where nothing listens (its weather turns end ``a2a_unavailable``)."""
    dead_card = f"http://127.0.0.1:{free_port()}/a2a/weather_bot/.well-known/agent-card.json"
    with serving(tmp_path_factory.mktemp("first-hour"), apps=APPS,
                 env={"ADK_A2A_SPECIALIST_CARD": dead_card}) as info:
        yield info


def cli(served: dict[str, Any], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adk_actors.cli", "--config", str(served["config"]), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "tests")})


def no_a2a_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a host without a2a-sdk (see the module)."""
    folder = tmp_path / "no_a2a"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text("import sys\nsys.modules['a2a'] = None  # a2a-sdk not installed\n")
    return {"PYTHONPATH": f"{folder}{os.pathsep}{ROOT / 'tests'}"}


# -- waits are announced -----------------------------------------------------------------


def _read_until_deny(run: subprocess.Popen[str]) -> str:
    """What ``run`` printed up to its line announcing how to deny the approval it waits
    for (or its end, or 60 s)."""
    assert run.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60
    while not any("deny: " in line for line in lines) and time.monotonic() < deadline:
        line = run.stdout.readline()
        if not line:
            break
        lines.append(line)
    return "".join(lines)


def test_a_run_waiting_for_approval_prints_the_id_and_the_commands_that_end_the_wait(
        served: dict[str, Any]) -> None:
    """``run hitl "pay 100 to bob"`` says which approval it waits for and how to approve
    or deny it; the printed command, run as printed, ends the wait; the session and the
    approval are the default user's, the console's (seen over HTTP as ``user``)."""
    run = subprocess.Popen([sys.executable, "-m", "adk_actors.cli", "--config", str(served["config"]),
                            "run", "hitl", "pay 100 to bob", "--session", "first-hour-pay"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        text = _read_until_deny(run)
        waiting = re.search(r"waiting for approval (approval-[0-9a-f]+): wire_money\(.*\"bob\".*\) "
                            r"\(a payment needs your approval\)", text)
        assert waiting, text + (run.stderr.read() if run.poll() is not None and run.stderr else "")
        approval = waiting.group(1)
        approve = re.search(r"approve: (adk-actors approvals approve hitl .+)", text)
        # the flags that chose the host come along: the command reaches the same host
        config = shlex.quote(str(served["config"]))
        assert approve and approve.group(1) == f"adk-actors approvals approve hitl {approval} --config {config}"
        assert f"deny:    adk-actors approvals deny hitl {approval} --reason '...' --config {config}" in text
        # the console's user sees the CLI's session and its waiting approval
        pending = httpx.get(f"{served['url']}/apps/hitl/users/{DEFAULT_USER}/approvals", timeout=30).json()
        assert [a["id"] for a in pending] == [approval]
        sessions = httpx.get(f"{served['url']}/apps/hitl/users/{DEFAULT_USER}/sessions", timeout=30).json()
        assert "first-hour-pay" in [s["id"] for s in sessions]
        # the printed command, as printed (the executable `adk-actors` is this package's CLI),
        # with no flag of ours added
        decided = subprocess.run([sys.executable, "-m", "adk_actors.cli", *shlex.split(approve.group(1))[1:]],
                                 capture_output=True, text=True, timeout=120, cwd=ROOT,
                                 env={**os.environ, "PYTHONPATH": str(ROOT / "tests")})
        assert decided.returncode == 0 and decided.stdout.strip() == f"approved {approval}", decided.stderr
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, err
    assert "Sent 100 to bob (ref TX-100-BOB)." in out
    assert out.count("waiting for approval") == 0  # announced once (the rest of the output follows it)


@pytest.mark.skipif(shutil.which("curl") is None, reason="runs the printed curl command")
def test_a_run_over_http_waiting_for_approval_prints_the_http_request_that_ends_the_wait(
        served: dict[str, Any]) -> None:
    """``run --url``: the approval is announced with the HTTP request that decides it;
    that request, run as printed (curl), denies it and the run ends with the refusal."""
    run = subprocess.Popen([sys.executable, "-m", "adk_actors.cli", "run", "hitl", "pay 7 to eve", "--url",
                            served["url"], "--session", "first-hour-http"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        text = _read_until_deny(run)
        waiting = re.search(r"waiting for approval (approval-[0-9a-f]+): wire_money", text)
        assert waiting, text
        deny = re.search(r"deny: +(curl .*)$", text, re.MULTILINE)
        assert deny and f"{served['url']}/apps/hitl/users/{DEFAULT_USER}/approvals/{waiting.group(1)}" in deny.group(1)
        decided = subprocess.run(deny.group(1), shell=True, capture_output=True, text=True, timeout=60)
        assert json.loads(decided.stdout) == {"id": waiting.group(1), "status": "denied"}, decided.stdout
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, err  # the run ended well: the agent answered the refusal
    assert "The payment did not go through" in out and "was not approved" in out


def test_a_soak_says_how_far_it_is_on_stderr_and_keeps_its_json_on_stdout(served: dict[str, Any]) -> None:
    soak = cli(served, "chaos", "soak", "--json", "--app", "weather_bot", "--sessions", "2", "--duration", "7",
               "--interval", "500", "--targets", "sessions", "--seed", "5", timeout=180)
    report = json.loads(soak.stdout)  # nothing but the report on standard output
    assert soak.stdout.strip().count("\n") == 0 and "passed" in report, soak.stdout
    ticks = re.findall(r"^soak: (\d+) s: ", soak.stderr, re.MULTILINE)
    assert len(ticks) >= 2 and ticks == sorted(ticks, key=int), soak.stderr  # every few seconds, in order
    assert "soak: dealing faults for 7 s while sessions talk (Ctrl-C to stop)" in soak.stderr
    assert "waiting for the turns in flight" in soak.stderr and "reading every session back" in soak.stderr
    assert soak.returncode == (0 if report["passed"] else 1)


# -- extras -------------------------------------------------------------------------------


def test_without_the_a2a_extra_a_card_is_a_501_naming_the_pip_command_and_logged(tmp_path: Path) -> None:
    with serving(tmp_path, env=no_a2a_env(tmp_path)) as host:
        answer = httpx.get(f"{host['url']}/a2a/weather_bot/.well-known/agent-card.json", timeout=30)
        assert answer.status_code == 501
        assert PIP_A2A in answer.json()["detail"] and "a2a-sdk" in answer.json()["detail"]
        assert httpx.get(f"{host['url']}/health", timeout=30).status_code == 200  # the rest serves on
        log = Path(host["config"]).parent / "data" / "http.log"
        wait_until(lambda: log.exists() and PIP_A2A in log.read_text(), timeout=30)
        assert "/a2a/weather_bot/.well-known/agent-card.json" in log.read_text()


def test_a_host_whose_app_needs_a_missing_extra_fails_with_one_line_naming_the_pip_command(tmp_path: Path) -> None:
    config = tmp_path / "host.toml"
    config.write_text(f'[host]\nport = {free_port()}\ndata_dir = "{tmp_path / "data"}"\nshutdown_timeout = 10\n'
                      f'[http]\nport = {free_port()}\n[apps]\n{APPS}')
    serve = subprocess.run([sys.executable, "-m", "adk_actors.cli", "serve", "--config", str(config)],
                           capture_output=True, text=True, timeout=120, cwd=ROOT,
                           env={**os.environ, **no_a2a_env(tmp_path)})
    assert serve.returncode == 1
    lines = serve.stderr.strip().splitlines()
    assert lines[-1] == ("error: app 'a2a_router': cannot load its agent 'examples.a2a_router.agent:root_agent': "
                         f"the a2a extra (a2a-sdk) is not installed: {PIP_A2A}"), serve.stderr
    assert "No module named" not in serve.stderr and "Traceback" not in serve.stderr
    assert "listening" not in serve.stdout


# -- no stale or misleading words ------------------------------------------------------------


def test_a_port_held_by_a_live_host_is_named_so_and_no_stop_command_is_advised(served: dict[str, Any]) -> None:
    again = subprocess.run([sys.executable, "-m", "adk_actors.cli", "serve", "--config", str(served["config"])],
                           capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert again.returncode == 1
    assert f"another adk-actors host is serving on port {served['port']}" in again.stderr, again.stderr
    assert "supervision stop" not in again.stderr
    assert httpx.get(f"{served['url']}/health", timeout=30).status_code == 200  # the live host was not touched


def test_jobs_show_prints_the_result(served: dict[str, Any], tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    enqueued = cli(served, "jobs", "enqueue", "--json", "--function", "job_functions:record",
                   "--args", json.dumps({"log": str(log), "value": "forty-two"}))
    assert enqueued.returncode == 0, enqueued.stderr
    job_id = json.loads(enqueued.stdout)[0]["id"]

    def shown() -> str:
        return cli(served, "jobs", "show", job_id).stdout

    # the job has run (its log says so, read here at no cost) before `jobs show`, a
    # process each time, is asked until it says completed
    wait_until(lambda: log.exists() and f"end {job_id} 1" in log.read_text(), timeout=60, interval=0.05)
    wait_until(lambda: "completed" in shown(), timeout=60, interval=0.2)
    assert '  result: {"value": "forty-two", "attempt": 1}' in shown().splitlines()


def test_status_into_a_reader_that_goes_away_ends_quietly(served: dict[str, Any]) -> None:
    """``status | head``: the reader has gone before the tree is printed; no
    BrokenPipeError, no traceback, exit 0."""
    reader_gone = subprocess.Popen([sys.executable, "-m", "adk_actors.cli", "--config", str(served["config"]),
                                    "status"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert reader_gone.stdout is not None and reader_gone.stderr is not None
    reader_gone.stdout.close()  # before the CLI has reached the host, let alone printed
    err = reader_gone.stderr.read().decode()
    assert reader_gone.wait(60) == 0, err
    assert "BrokenPipeError" not in err and "Traceback" not in err and "Exception ignored" not in err
    piped = subprocess.run(f"{sys.executable} -m adk_actors.cli --config {served['config']} status | head -1",
                           shell=True, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert piped.stdout.startswith("child") and "Error" not in piped.stderr, piped.stderr


def test_a_run_that_ends_with_an_error_event_exits_1(served: dict[str, Any]) -> None:
    failed = cli(served, "run", "a2a_router", "what is the weather in Paris?")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "error a2a_unavailable" in failed.stdout
    fine = cli(served, "run", "a2a_router", "hello")
    assert fine.returncode == 0 and "router: hello" in fine.stdout, fine.stdout + fine.stderr


def test_eval_failures_print_expected_against_actual(served: dict[str, Any], tmp_path: Path) -> None:
    eval_set = json.loads((ROOT / "examples" / "weather_bot" / "weather.evalset.json").read_text())
    eval_set["eval_set_id"] = "wrong"
    eval_set["eval_cases"][0]["conversation"][0]["final_response"]["parts"][0]["text"] = "No idea, sorry."
    (tmp_path / "wrong.evalset.json").write_text(json.dumps(eval_set))
    evaluated = cli(served, "eval", "weather_bot", str(tmp_path / "wrong.evalset.json"), "--url", served["url"])
    assert evaluated.returncode == 1
    lines = evaluated.stdout.splitlines()
    failed = lines.index(next(line for line in lines if line.startswith("FAILED wrong/paris")))
    detail = "\n".join(lines[failed + 1:failed + 6])
    asked = eval_set["eval_cases"][0]["conversation"][0]["user_content"]["parts"][0]["text"]
    assert f"invocation 1: {asked!r}; response_match_score 0.00 < 0.8" in detail, evaluated.stdout
    assert 'expected tools:    get_weather({"city": "Paris"})' in detail
    assert 'actual tools:      get_weather({"city": "Paris"})' in detail
    assert "expected response: 'No idea, sorry.'" in detail
    assert "actual response:   'It is 21 °C and clear in Paris.'" in detail
    assert any(line.startswith("PASS wrong/oslo_then_london") for line in lines)  # a pass prints one line


def test_docs_jobs_md_says_what_the_jobs_store_is() -> None:
    text = (ROOT / "docs" / "jobs.md").read_text()
    assert "not built" not in text and "PostgreSQL" in text and "SKIP LOCKED" in text


# -- the console -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One Chromium (``console_browser``'s: Debian's, driven by Playwright) for the
    module's console tests, each in a browser context of its own (``browser_page``);
    closed at the module's end, whatever happened."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def browser_page(chromium: Any) -> Iterator[tuple[Any, list[str]]]:
    """A tab of ``chromium`` in a context of its own (1400 x 900, nothing shared with
    another test's: cookies, storage, routes) and the list the errors its page raises
    are appended to; the context is closed afterwards, whatever happened."""
    context = chromium.new_context(viewport={"width": 1400, "height": 900})
    try:
        tab = context.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda error: errors.append(str(error)))
        yield tab, errors
    finally:
        context.close()

@needs_chromium
def test_the_console_titles_by_the_first_message_and_hides_internal_state(served: dict[str, Any],
                                                                         chromium: Any) -> None:
    """A session the CLI made (the default user's) opens in the console titled by its
    first message; its state panel shows the app's state, wrapped, without
    ``__session_metadata__``."""
    from playwright.sync_api import expect

    long_city = "Paris" + "-very-long-name" * 12
    made = cli(served, "run", "weather_bot", f"What's the weather in {long_city}?", "--session", "console-title")
    assert made.returncode == 0, made.stderr
    named = cli(served, "run", "weather_bot", "Weather in Oslo?", "--session", "console-named")
    assert named.returncode == 0, named.stderr
    # the CLI named its session by its message; replacing the internal key drops that
    # name, so the conversation is titled by its first message
    httpx.patch(f"{served['url']}/apps/weather_bot/users/{DEFAULT_USER}/sessions/console-title", timeout=30,
                json={"stateDelta": {"__session_metadata__": {"note": "internal"}, "city": long_city}})
    with browser_page(chromium) as (page, errors):
        page.goto(served["url"] + "/?app=weather_bot&session=console-title")
        expect(page.locator("#chat-title")).to_have_text(f"What's the weather in {long_city}?"[:60] + "…")
        expect(page.locator("#state")).to_contain_text(long_city)
        assert "__session_metadata__" not in page.locator("#state").inner_text()
        box = page.locator("#state")
        assert box.evaluate("e => e.scrollWidth <= e.clientWidth")  # wrapped, nothing cut off to the right
        # the session list names the CLI's sessions by their first message too, not by their ids
        expect(page.locator("#sessions button[title='console-named']")).to_have_text("Weather in Oslo?")
        assert errors == []


def http_server_pid(served: dict[str, Any]) -> int:
    """The pid of the served host's HTTP server process (its ``http`` actor's)."""
    host = Host.connect(served["port"])
    try:
        assert host.root is not None
        http_actor = next(c for c in host.root.which_children() if c.id == "http")
        server: int = call(host.system, http_actor.address, "server_pid")
        return server
    finally:
        host.disconnect()


def requests_out(page: Any) -> dict[Any, str]:
    """The URLs of the requests ``page`` has sent and not yet had answered, kept up to
    date (to name them when a banner does not come)."""
    out: dict[Any, str] = {}
    page.on("request", lambda request: out.__setitem__(request, request.url))
    page.on("requestfinished", lambda request: out.pop(request, None))
    page.on("requestfailed", lambda request: out.pop(request, None))
    return out


def expect_reconnecting_banner(page: Any, out: dict[Any, str]) -> None:
    """The banner says the page is reconnecting within 20 s (its polls' 3 s, at load);
    else the failure names the requests the page was still waiting for."""
    from playwright.sync_api import expect

    try:
        expect(page.locator("#banner")).to_contain_text("reconnecting", timeout=20_000)
    except AssertionError as failure:
        raise AssertionError(f"{failure}\nrequests still out: {sorted(out.values())}") from None


@needs_chromium
def test_the_console_shows_a_banner_while_the_http_process_does_not_answer(served: dict[str, Any],
                                                                          chromium: Any) -> None:
    """The HTTP server's process stopped (SIGSTOP; the ``http`` actor, its owner, goes
    on) on a console that has drawn its tree: the console's polls wait in the front
    door's backlog, and after 3 s a banner says it is reconnecting; SIGCONT lets the
    server answer, and the banner goes."""
    from playwright.sync_api import expect

    server = http_server_pid(served)
    with browser_page(chromium) as (page, _errors):
        out = requests_out(page)
        page.goto(served["url"] + "/?app=weather_bot")
        expect(page.locator("#whoami")).to_have_text("operator")
        expect(page.locator("#tree tr[data-path]").first).to_be_visible()
        expect(page.locator("#banner")).to_be_hidden()
        os.kill(server, signal.SIGSTOP)
        try:
            expect_reconnecting_banner(page, out)
        finally:
            os.kill(server, signal.SIGCONT)
        expect(page.locator("#banner")).to_be_hidden(timeout=60_000)
        expect(page.locator("#tree tr[data-path]").first).to_be_visible()


@needs_chromium
def test_the_console_polls_and_shows_the_banner_while_its_first_tree_walk_is_still_out(
        served: dict[str, Any], chromium: Any) -> None:
    """The console's first walk of the tree held in the browser (as one that waits for a
    busy partition: a walk sets no 3 s timer), and the HTTP server's process stopped:
    the page's other polls have started anyway, so the banner says it is reconnecting;
    SIGCONT and the walk let go, the banner goes and the tree is drawn. (Before, the
    polls started only once the first walk was answered: a server stopped in that
    window left the page silent, which made the test above flaky.)"""
    from playwright.sync_api import expect

    server = http_server_pid(served)
    held: list[Any] = []
    holding = [True]

    def walk(route: Any) -> None:  # held: the walk waits until it is let go below
        if holding[0]:
            held.append(route)
        else:
            route.continue_()

    with browser_page(chromium) as (page, _errors):
        out = requests_out(page)
        page.route("**/console/api/tree?*", walk)
        page.goto(served["url"] + "/?app=weather_bot")
        expect(page.locator("#whoami")).to_have_text("operator")
        # the first answers are in (the sessions, and the approvals and jobs asked with
        # them): the page waits for nothing but the walk
        expect(page.locator("#sessions li").first).to_be_visible()  # listed, or "no sessions yet"
        deadline = time.monotonic() + 30
        while not (held and all("/console/api/tree?" in url for url in out.values())):
            assert time.monotonic() < deadline, f"the page waits for {sorted(out.values())}, {len(held)} walks held"
            page.wait_for_timeout(20)
        expect(page.locator("#banner")).to_be_hidden()
        os.kill(server, signal.SIGSTOP)
        try:
            expect_reconnecting_banner(page, out)
            assert page.locator("#tree tr[data-path]").count() == 0  # the first walk is still out
        finally:
            os.kill(server, signal.SIGCONT)
        holding[0] = False
        for route in held:
            route.continue_()
        expect(page.locator("#banner")).to_be_hidden(timeout=60_000)
        expect(page.locator("#tree tr[data-path]").first).to_be_visible()


@needs_chromium
def test_the_console_asks_its_first_questions_again_until_the_host_answers(served: dict[str, Any],
                                                                          chromium: Any) -> None:
    """The page's first questions fail as they do while the host restarts (``whoami``
    answered 503, ``/list-apps``'s connection refused): the page asks again until they
    are answered, then works (before, it stopped at the first failure until reloaded)."""
    from playwright.sync_api import expect

    failed: list[str] = []

    def once_503(route: Any) -> None:
        if "whoami" not in failed:
            failed.append("whoami")
            route.fulfill(status=503, content_type="application/json", body='{"detail": "restarting"}')
        else:
            route.continue_()

    def once_refused(route: Any) -> None:
        if "list-apps" not in failed:
            failed.append("list-apps")
            route.abort("connectionrefused")
        else:
            route.continue_()

    with browser_page(chromium) as (page, _errors):
        page.route("**/console/api/whoami", once_503)
        page.route("**/list-apps", once_refused)
        page.goto(served["url"] + "/?app=weather_bot")
        expect(page.locator("#whoami")).to_have_text("operator", timeout=30_000)
        expect(page.locator("#app")).to_have_value("weather_bot", timeout=30_000)
        expect(page.locator("#sessions li").first).to_be_visible()
        expect(page.locator("#banner")).to_be_hidden(timeout=30_000)
    assert failed == ["whoami", "list-apps"]
