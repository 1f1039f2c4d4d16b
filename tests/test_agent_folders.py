"""``adk-actors web DIR``: every agent folder of DIR served, an edited agent reloaded
on the running host, a broken one reported while its last good version serves, and
the ``.env`` files read as google-adk reads them. A real ``adk-actors`` process, real
HTTP, every process it starts marked and killed at the end.

One ``web`` serves the module's tests (but the ``api_server`` one, and the one whose
folder is not there): each test that edits an agent's files edits an app of its own
(``hello`` or one of its copies, ``OWN_COPIES``) and turns to no other."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from console_browser import browser_page, needs_chromium

from adk_actors.testing import StubServer, gemini_response
from supervision.lowlevel import free_port
from supervision.testing import kill_marked_processes, process_marker, wait_until

ROOT = Path(__file__).resolve().parents[1]

AGENT = '''import os
import pathlib
import time

from adk_actors import LlmAgent
from adk_actors.models import ScriptedModel, call


def answer() -> str:
    """The answer, and the {x} of the environment (after the gate file, if any, is gone)."""
    gate = pathlib.Path(os.environ["{gate}"])
    if gate.exists():
        pathlib.Path(str(gate) + ".waiting").touch()
        deadline = time.monotonic() + 30
        while gate.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    return "{version} " + os.environ["{x}"]


def _model(request):
    last = request.contents[-1]
    if last.function_responses:
        return "tool said " + str(last.function_responses[0].response["result"])
    return call("answer")


root_agent = LlmAgent(name="hello", model=ScriptedModel(fallback=_model), tools=[answer])
'''



def _source(version: str, app: str = "hello") -> str:
    """``AGENT`` at ``version`` for the app ``app``: ``hello`` reads X and GATE, a copy
    ``NAME`` of it X_NAME and GATE_NAME (a ``.env`` sets ``os.environ`` of the whole
    process, as google-adk's does: apps of one DIR that read one name would read each
    other's values)."""
    suffix = "" if app == "hello" else f"_{app.upper()}"
    return AGENT.format(version=version, x=f"X{suffix}", gate=f"GATE{suffix}")


YAML_AGENT = "name: greeter\nmodel: gemini-2.5-flash\ninstruction: Greet the user.\n"


@pytest.fixture
def gemini() -> Iterator[StubServer]:
    """A real HTTP server speaking Gemini's wire format: the YAML agent's model, whose
    key and endpoint only DIR/.env gives."""
    with StubServer() as stub:
        yield stub


@pytest.fixture
def agents(tmp_path: Path, gemini: StubServer) -> Path:
    return _agents(tmp_path, gemini)


def _agents(tmp_path: Path, gemini: StubServer) -> Path:
    """DIR: a Python agent (a tool, the scripted model), a YAML one (Gemini, keyed in
    DIR/.env), one that never imports, and two .env files."""
    folder = tmp_path / "agents"
    (folder / "hello").mkdir(parents=True)
    (folder / "hello" / "__init__.py").write_text("from . import agent\n")
    (folder / "hello" / "agent.py").write_text(_source("v1"))
    (folder / ".env").write_text(f"X=from-DIR\nGATE={tmp_path / 'gate'}\n"
                                 f"GEMINI_API_KEY=test-key-not-a-secret\nGEMINI_BASE_URL={gemini.url}\n")
    (folder / "hello" / ".env").write_text(f"X=from-the-agent-folder\nGATE={tmp_path / 'gate'}\n")
    (folder / "broken").mkdir()
    (folder / "broken" / "__init__.py").write_text("from . import agent\n")
    (folder / "broken" / "agent.py").write_text("root_agent = (\n")
    (folder / "greeter").mkdir()
    (folder / "greeter" / "root_agent.yaml").write_text(YAML_AGENT)
    return folder


@pytest.fixture(scope="module")
def shared_gemini() -> Iterator[StubServer]:
    """``gemini``, for ``shared_web``'s YAML agent (only one test turns to it)."""
    with StubServer() as stub:
        yield stub


#: The copies of ``hello`` in ``shared_web``'s DIR besides ``hello`` itself: one for each
#: test that edits an agent's files (each edits its own, and turns to no other).
OWN_COPIES = ("envs", "inflight", "desk")


@pytest.fixture(scope="module")
def shared_web(tmp_path_factory: pytest.TempPathFactory, shared_gemini: StubServer) -> Iterator[dict[str, Any]]:
    """``web`` on a DIR of its own (``agents``', plus the ``OWN_COPIES`` of ``hello``,
    each with its own ``.env``, variables and gate file, see ``_source``), for the module's tests but the
    ``api_server`` one: each turns to, and edits, an app no other of them does (DIR's
    folder: ``"dir"``)."""
    folder = tmp_path_factory.mktemp("agent-folders")
    agents = _agents(folder, shared_gemini)
    for name in OWN_COPIES:
        shutil.copytree(agents / "hello", agents / name)
        (agents / name / "agent.py").write_text(_source("v1", name))
        x, gate = f"X_{name.upper()}", f"GATE_{name.upper()}"
        (agents / name / ".env").write_text(f"{x}=from-the-agent-folder\n{gate}={folder / f'gate-{name}'}\n")
    # DIR/.env: the variables of ``envs`` alone, which reads it once its own is gone
    # (read, it sets them over any other app's in that process: X, for one, is hello's)
    dir_env = (agents / ".env").read_text().replace("X=from-DIR\n", "", 1)
    (agents / ".env").write_text(f"{dir_env}X_ENVS=from-DIR\nGATE_ENVS={folder / 'gate-envs'}\n")
    with _serving("web", agents, folder) as served:
        yield {**served, "dir": agents}


@contextmanager
def _serving(command: str, agents: Path, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """``adk-actors COMMAND AGENTS`` in a subprocess on free ports, until its startup
    report is out; afterwards SIGTERM, then every process it started is killed."""
    port, admin = free_port(), free_port()
    out, err = tmp_path / "web.out", tmp_path / "web.err"
    env = {k: v for k, v in os.environ.items()
           if k not in ("X", "GATE", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_BASE_URL", "GOOGLE_GEMINI_BASE_URL")}
    with process_marker(tmp_path) as (marker, fd), open(out, "w") as stdout, open(err, "w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "adk_actors.cli", command, str(agents), "--port", str(port),
             "--admin_port", str(admin)],
            cwd=tmp_path, stdout=stdout, stderr=stderr, pass_fds=(fd,),
            env={**env, "PYTHONPATH": str(ROOT)})
    try:
        wait_until(lambda: "watching" in out.read_text() or process.poll() is not None, timeout=90)
        assert process.poll() is None, err.read_text()
        yield {"url": f"http://127.0.0.1:{port}", "out": out, "err": err, "process": process}
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
        kill_marked_processes(marker, grace=15)


TURNS: list[str] = []  # the answers of every turn of the running test, in order
# (a wait for a reload turns again every 0.1 s: each is a turn of the host, model and tool)


def _turn(http: httpx.Client, app: str = "hello") -> str:
    events = http.post("/run", json={"appName": app, "userId": "ann", "sessionId": "s1",
                                     "newMessage": {"role": "user", "parts": [{"text": "hi"}]}})
    events.raise_for_status()
    TURNS.append(str(events.json()[-1]["content"]["parts"][0]["text"]))
    return TURNS[-1]


def _load_error(http: httpx.Client, app: str = "hello") -> str | None:
    apps = {entry["name"]: entry for entry in http.get("/list-apps", params={"detailed": "true"}).json()["apps"]}
    error: str | None = apps[app].get("loadError")
    return error


def test_an_agents_folder_is_served_reloaded_and_survives_a_broken_edit(shared_web: dict[str, Any]) -> None:
    agents = shared_web["dir"]
    agent_file = agents / "hello" / "agent.py"
    TURNS.clear()
    with httpx.Client(base_url=shared_web["url"], timeout=30) as http:
        # every agent folder, and the data folder (.adk-actors) is no app
        assert http.get("/list-apps").json() == sorted(["broken", "greeter", "hello", *OWN_COPIES])
        assert http.get("/").status_code == 200  # web: the console
        assert (agents / ".adk-actors" / "sessions.db").is_file()  # embedded defaults, in DIR
        http.post("/apps/hello/users/ann/sessions/s1", json={}).raise_for_status()
        # The agent folder's .env is the one read (the nearest, as google-adk does).
        assert _turn(http) == "tool said v1 from-the-agent-folder"

        # An edit of the same size, in the same second: the next turns run the new code.
        agent_file.write_text(_source("v2"))
        wait_until(lambda: _turn(http).startswith("tool said v2"), timeout=10, interval=0.1)
        assert TURNS[-1] == "tool said v2 from-the-agent-folder"
        wait_until(lambda: "reloaded app hello" in shared_web["out"].read_text(), timeout=10)

        # A broken edit: its error is shown over HTTP and by the serving process; the last
        # good version answers.
        agent_file.write_text(_source("v3") + "\ndef broken(:\n")
        wait_until(lambda: _load_error(http) is not None, timeout=10, interval=0.1)
        assert "SyntaxError" in (_load_error(http) or "") and "agent.py" in (_load_error(http) or "")
        assert _turn(http) == "tool said v2 from-the-agent-folder"
        wait_until(lambda: "app hello does not load" in shared_web["err"].read_text(), timeout=10)
        assert "SyntaxError" in shared_web["err"].read_text()

        # Fixed again: the new code serves and the error is gone; the session kept every turn.
        agent_file.write_text(_source("v4"))
        wait_until(lambda: _turn(http).startswith("tool said v4"), timeout=10, interval=0.1)
        assert _load_error(http) is None
        session = http.get("/apps/hello/users/ann/sessions/s1").json()
        assert len([e for e in session["events"] if e["author"] == "user"]) == len(TURNS)


def test_the_agents_folder_env_is_read_when_the_agent_has_none(shared_web: dict[str, Any]) -> None:
    """``envs``, a copy of ``hello``, had a .env of its own (read while the other apps'
    are read too); without it, DIR/.env is the nearest."""
    (shared_web["dir"] / "envs" / ".env").unlink()  # a change of the files, reloaded
    with httpx.Client(base_url=shared_web["url"], timeout=30) as http:
        http.post("/apps/envs/users/ann/sessions/s1", json={}).raise_for_status()
        wait_until(lambda: _turn(http, "envs").endswith("from-DIR"), timeout=10, interval=0.1)
        assert TURNS[-1] == "tool said v1 from-DIR"


def test_a_turn_in_flight_finishes_on_the_old_code(shared_web: dict[str, Any]) -> None:
    """On ``inflight``, a copy of ``hello`` whose .env names its own gate file."""
    gate = shared_web["dir"].parent / "gate-inflight"
    with httpx.Client(base_url=shared_web["url"], timeout=60) as http:
        for session in ("s1", "s2"):
            http.post(f"/apps/inflight/users/ann/sessions/{session}", json={}).raise_for_status()
        gate.touch()
        answered: list[str] = []
        turn = threading.Thread(target=lambda: answered.append(_turn(http, "inflight")))
        turn.start()
        try:
            wait_until(lambda: Path(f"{gate}.waiting").exists(), timeout=30)  # its tool runs v1's code
            (shared_web["dir"] / "inflight" / "agent.py").write_text(_source("v2", "inflight"))
            wait_until(lambda: "reloaded app inflight" in shared_web["out"].read_text(), timeout=10)
            gate.unlink()  # only now may v1's tool return ...
            turn.join(timeout=60)
            assert answered == ["tool said v1 from-the-agent-folder"]
        finally:
            gate.unlink(missing_ok=True)
            turn.join(timeout=60)
        # ... while the next turn of any session runs v2's.
        again = http.post("/run", json={"appName": "inflight", "userId": "ann", "sessionId": "s2",
                                        "newMessage": {"role": "user", "parts": [{"text": "hi"}]}})
        assert again.json()[-1]["content"]["parts"][0]["text"] == "tool said v2 from-the-agent-folder"


def test_an_agent_broken_from_the_start_is_reported_and_its_turns_say_why(shared_web: dict[str, Any]) -> None:
    assert "app broken does not load" in shared_web["err"].read_text()
    with httpx.Client(base_url=shared_web["url"], timeout=30) as http:
        apps = {app["name"]: app for app in http.get("/list-apps", params={"detailed": "true"}).json()["apps"]}
        assert "SyntaxError" in apps["broken"]["loadError"] and "loadError" not in apps["greeter"]
        http.post("/apps/broken/users/ann/sessions/s1", json={}).raise_for_status()
        failed = http.post("/run", json={"appName": "broken", "userId": "ann", "sessionId": "s1",
                                         "newMessage": {"role": "user", "parts": [{"text": "hi"}]}})
        assert failed.status_code != 200 and "SyntaxError" in failed.text, failed.text


def test_api_server_serves_the_api_without_the_console(agents: Path, tmp_path: Path) -> None:
    with _serving("api_server", agents, tmp_path) as served, httpx.Client(base_url=served["url"], timeout=30) as http:
        assert http.get("/list-apps").json() == ["broken", "greeter", "hello"]
        assert http.get("/").status_code == 404
        http.post("/apps/hello/users/ann/sessions/s1", json={}).raise_for_status()
        assert _turn(http) == "tool said v1 from-the-agent-folder"


@needs_chromium
def test_the_console_runs_the_edited_agent_and_shows_a_broken_one(shared_web: dict[str, Any]) -> None:
    """On ``desk``, a copy of ``hello``."""
    from playwright.sync_api import expect

    agent_file = shared_web["dir"] / "desk" / "agent.py"
    with browser_page() as (page, errors):
        page.goto(shared_web["url"] + "/?app=desk")
        expect(page.locator("#banner")).to_contain_text("App broken does not load")  # broken from the start
        expect(page.locator("#banner")).to_contain_text("SyntaxError")
        page.fill("#message", "hi")
        page.click("#send")
        expect(page.locator("#events li.from-agent .bubble").last).to_have_text(
            "tool said v1 from-the-agent-folder")

        agent_file.write_text(_source("v2", "desk"))
        wait_until(lambda: "reloaded app desk" in shared_web["out"].read_text(), timeout=10)
        page.fill("#message", "again")
        page.click("#send")
        expect(page.locator("#events li.from-agent .bubble").last).to_have_text(
            "tool said v2 from-the-agent-folder")

        agent_file.write_text(_source("v3", "desk") + "\ndef broken(:\n")
        expect(page.locator("#banner")).to_contain_text("App desk does not load", timeout=10000)
        page.fill("#message", "once more")
        page.click("#send")
        expect(page.locator("#events li.from-agent .bubble")).to_have_count(3)
        expect(page.locator("#events li.from-agent .bubble").last).to_have_text(
            "tool said v2 from-the-agent-folder")

        agent_file.write_text(_source("v4", "desk"))
        expect(page.locator("#banner")).not_to_contain_text("App desk", timeout=10000)
        assert errors == [], f"the page raised: {errors}"


def test_a_yaml_agent_of_the_folder_answers_with_the_key_its_env_gives(shared_web: dict[str, Any],
                                                                      shared_gemini: StubServer) -> None:
    gemini = shared_gemini
    gemini.add(gemini_response("Hello from the YAML agent."))
    with httpx.Client(base_url=shared_web["url"], timeout=30) as http:
        http.post("/apps/greeter/users/ann/sessions/s1", json={}).raise_for_status()
        events = http.post("/run", json={"appName": "greeter", "userId": "ann", "sessionId": "s1",
                                         "newMessage": {"role": "user", "parts": [{"text": "hi"}]}})
        events.raise_for_status()
        assert events.json()[-1]["content"]["parts"][0]["text"] == "Hello from the YAML agent."
    (request,) = gemini.requests
    assert request.headers.get("x-goog-api-key") == "test-key-not-a-secret"
    assert "gemini-2.5-flash" in request.path


def test_a_folder_that_is_not_there_or_holds_no_agent_is_a_clear_error(tmp_path: Path) -> None:
    def web(folder: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "adk_actors.cli", "web", str(folder), "--port", str(free_port()),
                               "--admin_port", str(free_port())], cwd=tmp_path, capture_output=True, text=True,
                              timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})

    missing = web(tmp_path / "nowhere")
    assert missing.returncode == 2 and "no such folder" in missing.stderr
    (tmp_path / "empty").mkdir()
    empty = web(tmp_path / "empty")
    assert empty.returncode == 2 and "agent.py defining root_agent" in empty.stderr
    assert "Traceback" not in missing.stderr + empty.stderr
