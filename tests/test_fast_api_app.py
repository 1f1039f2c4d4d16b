"""google-adk's deployment ``main.py`` (its Cloud Run and GKE guides), imports rewritten
``google.adk`` -> ``adk_actors``, run as a user runs it: ``python main.py`` in a folder
that holds it and an agent folder, uvicorn on the port ``PORT`` names (issue 52).

What a user would check: ``/list-apps`` lists the agent, a session is made, ``/run``
answers with the agent's events (the model is a Gemini stand-in named by google-genai's
own environment variables), the route the user added to the app answers, the console
is served (``web=True``); the session is in the SQLite file ``session_service_uri``
names and is there again after a restart; SIGTERM stops the program and leaves no
process of it (every process it started holds a marker file: a /proc walk). Beside
it, google-adk's own ``get_fast_api_app`` serving the same program: the same apps
and the same shape of session. Parameters this host cannot honour are refused before
anything starts, each named.

One program is served for the module (started once, restarted once by the last test).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import Request  # here: a route of a test is annotated with it (FastAPI resolves it)
from google_adk_harness import on_stand_in, rewritten

from adk_actors.testing import StubServer, gemini_answers
from supervision.lowlevel import free_port, load_scaled
from supervision.testing import (
    find_marked_processes,
    kill_marked_processes,
    process_marker,
    wait_until,
)

#: google-adk's documented main.py (bound to loopback here: the guides bind 0.0.0.0).
MAIN = '''import os

import uvicorn
from google.adk.cli.fast_api import get_fast_api_app

AGENT_DIR = os.path.dirname(os.path.abspath(__file__))
SESSION_SERVICE_URI = "sqlite:///./sessions.db"
ALLOWED_ORIGINS = ["http://localhost", "http://localhost:8080", "*"]
SERVE_WEB_INTERFACE = True

app = get_fast_api_app(
    agents_dir=AGENT_DIR,
    session_service_uri=SESSION_SERVICE_URI,
    allow_origins=ALLOWED_ORIGINS,
    web=SERVE_WEB_INTERFACE,
)


@app.get("/hello")
async def read_root():
    return {"Hello": "World"}


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", 8080)))
'''

AGENT = '''from google.adk.agents import Agent

root_agent = Agent(name="greeter", model="gemini-2.0-flash", instruction="Greet the user.")
'''

REPLY = "Hello from the stand-in."
START_WAIT = 120.0  # a loaded machine imports the kit, forks the tree, imports google-adk ...
#: How long after the program exited a process of it may still be ending (stretched by
#: the machine's load): one its tree's stop killed by its parent's death. Its host not
#: stopped by the app, its processes live on ~0.6-1 s more, until the actor system's
#: owner watch shuts it down: too long.
GONE_WITHIN = 0.2


def _write_program(folder: Path, *, ours: bool) -> Path:
    """``main.py`` and the agent folder ``greeter`` in ``folder`` (rewritten for ours)."""
    text = rewritten if ours else (lambda source: source)
    (folder / "greeter").mkdir(parents=True)
    (folder / "greeter" / "__init__.py").write_text("from . import agent\n")
    (folder / "greeter" / "agent.py").write_text(text(AGENT))
    (folder / "main.py").write_text(text(MAIN))
    return folder


class Program:
    """``python main.py`` in ``folder``, every process it starts marked; ``url`` once it serves."""

    def __init__(self, folder: Path, model_url: str) -> None:
        self.folder, self.model_url = folder, model_url
        self.process: subprocess.Popen[bytes] | None = None
        self.marker: Path | None = None
        self.url = ""
        self.admin_port = free_port()  # its actor system's: the same on a restart, as a deployment's

    def start(self) -> None:
        """Start it and wait (at most START_WAIT s) until ``/list-apps`` answers."""
        port = free_port()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ADK_ACTORS_", "GOOGLE_", "GEMINI_")) and k != "PYTHONPATH"}
        env.update({"PORT": str(port), "ADK_ACTORS_HOST__PORT": str(self.admin_port),
                    "GOOGLE_API_KEY": "test-key-not-a-secret", "GOOGLE_GEMINI_BASE_URL": self.model_url,
                    "ADK_DISABLE_TELEMETRY": "1"})
        with process_marker(self.folder) as (marker, fd), open(self.folder / "out.txt", "ab") as out, \
                open(self.folder / "err.txt", "ab") as err:
            self.marker = marker
            self.process = subprocess.Popen([sys.executable, "main.py"], cwd=self.folder, stdout=out, stderr=err,
                                            pass_fds=(fd,), env=env)
        self.url = f"http://127.0.0.1:{port}"
        wait_until(lambda: self._answers() or self.process.poll() is not None,  # type: ignore[union-attr]
                   timeout=START_WAIT, interval=0.2, message="main.py serves /list-apps")
        assert self.process.poll() is None, self.errors()

    def _answers(self) -> bool:
        try:
            return httpx.get(f"{self.url}/list-apps", timeout=5).status_code == 200
        except httpx.HTTPError:
            return False

    def errors(self) -> str:
        return (self.folder / "err.txt").read_text(errors="replace")[-4000:]

    def terminate(self) -> int:
        """SIGTERM, and its exit status (waited for at most 90 s)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(90)

    def left(self) -> list[int]:
        return find_marked_processes(self.marker) if self.marker is not None else []

    def assert_none_left(self) -> None:
        """No process of the program runs ``GONE_WITHIN`` s (load-scaled) after it exited."""
        try:
            wait_until(lambda: not self.left(), timeout=load_scaled(GONE_WITHIN), interval=0.02)
        except AssertionError:
            raise AssertionError(f"processes of the program left after it exited: {self.left()}") from None

    def close(self) -> None:
        """Stop it whatever its state; kill what is left of it."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        if self.marker is not None:
            kill_marked_processes(self.marker, grace=15)


@pytest.fixture(scope="module")
def model() -> Iterator[StubServer]:
    reply = {"candidates": [{"content": {"role": "model", "parts": [{"text": REPLY}]}, "finishReason": "STOP"}],
             "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}
    with StubServer(gemini_answers(lambda body: reply)) as server:
        yield server


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory, model: StubServer) -> Iterator[Program]:
    program = Program(_write_program(tmp_path_factory.mktemp("ours"), ours=True), model.url)
    try:
        program.start()
        yield program
    finally:
        program.close()


def _run(url: str, session: str) -> list[dict[str, Any]]:
    answer = httpx.post(f"{url}/run", timeout=60, json={
        "appName": "greeter", "userId": "u1", "sessionId": session,
        "newMessage": {"role": "user", "parts": [{"text": "hi"}]}})
    assert answer.status_code == 200, answer.text
    events: list[dict[str, Any]] = answer.json()
    return events


def test_the_documented_main_py_serves_the_agent_its_sessions_and_the_users_route(ours: Program) -> None:
    with httpx.Client(base_url=ours.url, timeout=30) as http:
        assert http.get("/list-apps").json() == ["greeter"]
        assert http.get("/hello").json() == {"Hello": "World"}  # the route main.py added to the app
        page = http.get("/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")  # web=True
        ui = http.get("/dev-ui/")  # adk-web, as google-adk's web=True serves it
        assert ui.status_code == 200 and "<app-root" in ui.text
        made = http.post("/apps/greeter/users/u1/sessions", json={"state": {"tier": "gold"}})
        assert made.status_code == 200, made.text
        session = made.json()
        assert (session["appName"], session["userId"], session["state"], session["events"]) == \
            ("greeter", "u1", {"tier": "gold"}, [])
        events = _run(ours.url, session["id"])
        assert events[-1]["author"] == "greeter"
        assert events[-1]["content"]["parts"][0]["text"] == REPLY
        kept = http.get(f"/apps/greeter/users/u1/sessions/{session['id']}").json()
        assert [e["content"]["parts"][0]["text"] for e in kept["events"]] == ["hi", REPLY]


def test_a_page_on_any_origin_may_call_the_api_when_allow_origins_has_a_star(ours: Program) -> None:
    """``allow_origins=[..., "*"]``: as in google-adk, a browser page on another origin
    is let through (CORS preflight and the request itself)."""
    origin = {"origin": "http://elsewhere.example"}
    preflight = httpx.options(f"{ours.url}/list-apps", timeout=30,
                              headers={**origin, "access-control-request-method": "GET"})
    assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] in ("*", origin["origin"])
    answer = httpx.get(f"{ours.url}/list-apps", headers=origin, timeout=30)
    assert (answer.status_code, answer.text) == (200, '["greeter"]')


def test_google_adks_own_app_serves_the_same_apps_and_shape_of_session(
        ours: Program, model: StubServer, tmp_path: Path) -> None:
    """The same program on google-adk's ``get_fast_api_app`` (its original imports, a
    folder of its own): the same ``/list-apps``; a session made and run on each has the
    same fields, the same state, and its events the same authors and texts."""
    theirs = Program(_write_program(tmp_path / "theirs", ours=False), model.url)
    try:
        theirs.start()
        shapes = []
        for program in (ours, theirs):
            with httpx.Client(base_url=program.url, timeout=60) as http:
                apps = http.get("/list-apps").json()
                made = http.post("/apps/greeter/users/side/sessions", json={"state": {"k": 1}}).json()
                run = httpx.post(f"{program.url}/run", timeout=60, json={
                    "appName": "greeter", "userId": "side", "sessionId": made["id"],
                    "newMessage": {"role": "user", "parts": [{"text": "hi"}]}}).json()
                kept = http.get(f"/apps/greeter/users/side/sessions/{made['id']}").json()
            shapes.append({"apps": apps, "made": sorted(made), "state": kept["state"], "kept": sorted(kept),
                           "run": [(e["author"], e["content"]["parts"][0]["text"]) for e in run],
                           "events": [(e["author"], e["content"]["parts"][0]["text"]) for e in kept["events"]]})
        assert shapes[0] == shapes[1]
    finally:
        theirs.close()


def test_sigterm_leaves_no_process_and_the_session_is_in_the_sqlite_file_after_a_restart(ours: Program) -> None:
    """Runs last of the module's program: SIGTERM stops it and every process it started;
    its session is in its SQLite file and served again by the program started again;
    then its tree's root is killed (kill -9), and the program stops by itself, leaving
    no process."""
    made = httpx.post(f"{ours.url}/apps/greeter/users/u1/sessions", json={}, timeout=30).json()
    _run(ours.url, made["id"])
    assert ours.left(), "the program's processes are marked"
    ours.terminate()
    ours.assert_none_left()
    with sqlite3.connect(ours.folder / "sessions.db") as db:  # sqlite:///./sessions.db, from main.py's folder
        rows = db.execute("SELECT app_name, user_id FROM sessions WHERE id = ?", (made["id"],)).fetchall()
    assert rows == [("greeter", "u1")]
    ours.start()
    kept = httpx.get(f"{ours.url}/apps/greeter/users/u1/sessions/{made['id']}", timeout=30)
    assert kept.status_code == 200, kept.text
    assert [e["content"]["parts"][0]["text"] for e in kept.json()["events"]] == ["hi", REPLY]
    # Never half-alive: its supervision tree's root killed, the program stops by itself.
    from adk_actors.runtime import Host
    from supervision.lowlevel import proc_stat

    client = Host.connect(ours.admin_port)
    try:
        assert client.root is not None
        registry = client.root.pids()["registry"]
        assert registry is not None
        root = proc_stat(registry)[1]  # type: ignore[index]
    finally:
        client.disconnect()
    os.kill(root, signal.SIGKILL)
    assert ours.process is not None
    ours.process.wait(90)
    assert "the supervision tree gave up" in ours.errors()
    ours.assert_none_left()


def test_the_users_lifespan_runs_inside_the_hosts_and_a_memory_store_is_gone_after(
        tmp_path: Path, model: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process (Starlette's TestClient runs the lifespan): the user's lifespan
    starts once the host serves and ends before it stops, its state reaches the user's
    route; ``web=False`` serves no console; ``memory://`` keeps the sessions in a
    temporary folder that is gone once the app has stopped."""
    from contextlib import asynccontextmanager

    from fastapi.testclient import TestClient

    from adk_actors.cli.fast_api import get_fast_api_app

    on_stand_in(model.url, monkeypatch)
    monkeypatch.setenv("ADK_ACTORS_HOST__PORT", str(free_port()))
    _write_program(tmp_path, ours=True)
    seen: list[Any] = []
    before = set(Path(tempfile.gettempdir()).glob("adk-actors-app-*"))

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[dict[str, str]]:
        seen.append(("start", sorted(set(Path(tempfile.gettempdir()).glob("adk-actors-app-*")) - before)))
        yield {"greeting": "hi"}
        seen.append("end")

    app = get_fast_api_app(agents_dir=str(tmp_path), web=False, session_service_uri="memory://", lifespan=lifespan)

    @app.get("/greeting")
    def greeting(request: Request) -> str:
        return str(request.state.greeting)

    with TestClient(app) as client:
        assert len(seen) == 1 and len(seen[0][1]) == 1, "the host's temporary data folder is made before"
        data_dir = seen[0][1][0]
        assert client.get("/greeting").json() == "hi"
        assert client.get("/list-apps").json() == ["greeter"]
        assert client.get("/").status_code == 404  # web=False: no console
        made = client.post("/apps/greeter/users/u1/sessions", json={}).json()
        answer = client.post("/run", json={"appName": "greeter", "userId": "u1", "sessionId": made["id"],
                                           "newMessage": {"role": "user", "parts": [{"text": "hi"}]}})
        assert answer.json()[-1]["content"]["parts"][0]["text"] == REPLY
        assert (data_dir / "sessions.db").is_file()
    assert seen[1] == "end"
    assert not data_dir.exists()


def test_a_caller_from_another_machine_may_use_the_api_but_not_write_agent_files(
        tmp_path: Path, model: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """As google-adk's app served on a public address (Cloud Run: ``bind_host`` unset),
    a caller from another machine makes sessions and runs for any user, but is refused
    (403) the agent builder's writes, the eval sets and the supervision tree, which
    google-adk's ``/dev`` routes give loopback callers only; a caller on this machine
    may do all of it."""
    from fastapi.testclient import TestClient

    from adk_actors.cli.fast_api import get_fast_api_app

    on_stand_in(model.url, monkeypatch)
    monkeypatch.setenv("ADK_ACTORS_HOST__PORT", str(free_port()))
    _write_program(tmp_path, ours=True)
    app = get_fast_api_app(agents_dir=str(tmp_path), web=True, session_service_uri="memory://")
    upload = {"files": ("greeter/root_agent.yaml", b"name: greeter\nmodel: gemini-2.0-flash\n")}
    with TestClient(app, client=("203.0.113.9", 40000)) as remote:
        assert remote.post("/apps/greeter/users/ann/sessions", json={}).status_code == 200
        assert remote.post("/dev/apps/greeter/builder/save", files=upload).status_code == 403
        assert remote.get("/dev/apps/greeter/eval_sets").status_code == 403
        assert remote.get("/console/api/tree").status_code == 403
        local = TestClient(app, client=("127.0.0.1", 40001))  # the same app, its host already started
        assert local.get("/console/api/tree").status_code == 200


# -- refused before anything starts --------------------------------------------------------------


def test_parameters_this_host_cannot_honour_are_refused_each_named(tmp_path: Path) -> None:
    from adk_actors._exceptions import ConfigError
    from adk_actors.cli.fast_api import UnsupportedParameterError, get_fast_api_app

    _write_program(tmp_path, ours=True)
    with pytest.raises(UnsupportedParameterError) as refused:
        get_fast_api_app(agents_dir=str(tmp_path), web=False, agent_loader=object(), url_prefix="/api",
                         trace_to_cloud=True, max_llm_calls=3)
    assert refused.value.parameters == ("agent_loader", "trace_to_cloud", "url_prefix", "max_llm_calls")
    assert isinstance(refused.value, ConfigError) and isinstance(refused.value, ValueError)
    assert "url_prefix" in str(refused.value)
    cases: tuple[tuple[dict[str, Any], tuple[str, ...]], ...] = (
        ({"session_service_uri": "agentengine://123"}, ("session_service_uri",)),
        ({"session_service_uri": "mysql://u@db/x", "artifact_service_uri": "gs://bucket"},
         ("session_service_uri", "artifact_service_uri")),
        ({"memory_service_uri": "rag://corpus"}, ("memory_service_uri",)))
    for uris, named in cases:
        with pytest.raises(UnsupportedParameterError) as refused:
            get_fast_api_app(agents_dir=str(tmp_path), web=True, **uris)
        assert refused.value.parameters == named
    with pytest.raises(UnsupportedParameterError) as refused:
        get_fast_api_app(agents_dir=str(tmp_path / "greeter"), web=True)  # google-adk's single-agent mode
    assert refused.value.parameters == ("agents_dir",)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["greeter", "main.py"], "nothing was written"


def test_accepted_parameters_build_an_app_and_start_nothing(tmp_path: Path) -> None:
    """The parameters accepted and not used, and the URIs served, build a FastAPI app;
    nothing runs or is written until its lifespan starts."""
    from fastapi import FastAPI

    from adk_actors.cli.fast_api import IGNORED, get_fast_api_app

    _write_program(tmp_path, ours=True)
    app = get_fast_api_app(agents_dir=str(tmp_path), web=False, session_service_uri="memory://",
                           artifact_service_uri=f"file://{tmp_path / 'artifacts'}", memory_service_uri="memory://",
                           session_db_kwargs={"pool_size": 5}, host="0.0.0.0", port=9999, a2a=True,
                           logo_text="x", logo_image_url="http://x.example/logo.png", reload_agents=True)
    assert isinstance(app, FastAPI)
    assert set(IGNORED) == {"session_db_kwargs", "host", "port", "logo_text", "logo_image_url", "a2a", "reload_agents"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["greeter", "main.py"]
