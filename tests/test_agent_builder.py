"""adk-web's agent builder against a real ``adk-actors serve``: a new YAML app is drafted,
saved and answers at once (its model a real HTTP server speaking Gemini's wire
format); an edit is served on the next turn without a restart; bad uploads are
refused with a 400 and change nothing; the files are the host user's alone."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import serving

from adk_actors.testing import StubServer, gemini_response

# What adk-web's builder uploads for a new app (its generateYamlFile, field for field).
NEW_APP = b"""name: helper
model: gemini-2.5-flash
agent_class: LlmAgent
instruction: You are the root agent that coordinates other agents.
sub_agents: []
tools: []
"""


def files(*named: tuple[str, bytes]) -> list[tuple[str, tuple[str, bytes, str]]]:
    return [("files", (name, content, "application/x-yaml")) for name, content in named]


@pytest.fixture(scope="module")
def gemini() -> Iterator[StubServer]:
    with StubServer() as stub:
        yield stub


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, gemini: StubServer) -> Iterator[dict[str, Any]]:
    env = {"GEMINI_API_KEY": "test-key-not-a-secret", "GEMINI_BASE_URL": gemini.url}
    with serving(tmp_path_factory.mktemp("builder"), env=env) as info:
        yield info


@pytest.fixture
def http(served: dict[str, Any]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served["url"], timeout=30) as client:
        yield client


def run(http: httpx.Client, app: str, session: str, text: str) -> list[dict[str, Any]]:
    created = http.post(f"/apps/{app}/users/u/sessions", json={"sessionId": session})
    assert created.status_code in (200, 409), created.text
    answer = http.post("/run", json={"appName": app, "userId": "u", "sessionId": session,
                                     "newMessage": {"role": "user", "parts": [{"text": text}]}})
    assert answer.status_code == 200, answer.text
    events: list[dict[str, Any]] = answer.json()
    return events


def test_a_drafted_and_saved_app_is_served_at_once(served: dict[str, Any], http: httpx.Client,
                                                   gemini: StubServer) -> None:
    agents = Path(served["config"]).parent / "data" / "agents"
    # adk-web's "new app": the draft first (save?tmp=true), then the builder reads it back
    assert http.post("/dev/apps/helper/builder/save", params={"tmp": "true"},
                     files=files(("helper/root_agent.yaml", NEW_APP))).json() is True
    # a draft is listed (adk-web opens it by name) but is no app yet
    assert "helper" in http.get("/list-apps").json()
    not_yet = http.post("/run", json={"appName": "helper", "userId": "u", "sessionId": "x",
                                      "newMessage": {"role": "user", "parts": [{"text": "hi"}]}})
    assert not_yet.status_code == 404 and "draft" in not_yet.json()["detail"]
    draft = http.get("/dev/apps/helper/builder", params={"ts": 1, "file_path": "root_agent.yaml", "tmp": "true"})
    assert draft.text == NEW_APP.decode()
    assert http.get("/dev/apps/helper/builder", params={"ts": 1}).text == ""  # nothing saved yet

    # the user adds a sub-agent and a built-in tool, then saves
    root = NEW_APP.replace(b"sub_agents: []\ntools: []\n",
                           b"sub_agents:\n  - config_path: ./greeter.yaml\ntools:\n  - name: load_memory\n")
    greeter = b"name: greeter\nmodel: gemini-2.5-flash\nagent_class: LlmAgent\ninstruction: Greet.\n"
    assert http.post("/dev/apps/helper/builder/save", files=files(("helper/root_agent.yaml", root),
                                                                  ("helper/greeter.yaml", greeter))).json() is True
    assert "helper" in http.get("/list-apps").json()
    detailed = {a["name"]: a for a in http.get("/list-apps", params={"detailed": "true"}).json()["apps"]}
    assert detailed["helper"]["language"] == "yaml" and detailed["weather_bot"]["language"] == "python"
    info = http.get("/apps/helper/app-info").json()
    assert info["rootAgentName"] == "helper" and set(info["agents"]) == {"helper", "greeter"}
    assert http.get("/dev/apps/helper/builder", params={"ts": 2}).text == root.decode()
    assert not (agents / "helper" / "tmp").exists()  # the draft became the app
    for path in (agents / "helper").rglob("*"):
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))

    # the new app answers from its model, with its instruction and tool in the request
    gemini.add(gemini_response("Hello from a YAML agent."))
    events = run(http, "helper", "s1", "hi")
    assert events[-1]["content"]["parts"][0]["text"] == "Hello from a YAML agent."
    request = gemini.requests[-1].body
    assert "coordinates other agents" in str(request["systemInstruction"])
    names = [d["name"] for tool in request["tools"] for d in tool.get("functionDeclarations", [])]
    assert "load_memory" in names and "transfer_to_agent" in names

    # an edit is served on the next turn, without a restart
    edited = root.replace(b"coordinates other agents.", b"answers in French.")
    assert http.post("/dev/apps/helper/builder/save", files=files(("helper/root_agent.yaml", edited))).json() is True
    gemini.add(gemini_response("Bonjour."))
    assert run(http, "helper", "s1", "again")[-1]["content"]["parts"][0]["text"] == "Bonjour."
    assert "answers in French" in str(gemini.requests[-1].body["systemInstruction"])

    # cancel drops a draft and leaves the app as saved
    assert http.post("/dev/apps/helper/builder/save", params={"tmp": "true"},
                     files=files(("helper/root_agent.yaml", b"name: helper\ninstruction: draft\n"))).json() is True
    assert http.post("/dev/apps/helper/builder/cancel").json() is True
    assert http.get("/dev/apps/helper/builder", params={"ts": 3}).text == edited.decode()


@pytest.mark.parametrize(("name", "content", "problem"), [
    ("helper/root_agent.yaml", b"name: helper\ntools:\n  - name: os.system\n", "code references"),
    ("helper/root_agent.yaml", b"name: helper\nbefore_model_callbacks:\n  - name: os.abort\n", "code references"),
    ("helper/../../escape.yaml", b"name: x\n", "not a path inside the app"),
    ("helper/tmp/helper/root_agent.yaml", b"name: x\n", "draft"),
    ("helper/run.py", b"import os\n", "only .yaml"),
    ("helper/root_agent.yaml", b"name: [helper\n", "not valid YAML"),
    ("helper/root_agent.yaml", b"name: helper\nsub_agents:\n  - config_path: ./missing.yaml\n", "missing.yaml"),
    ("helper/root_agent.yaml", b"name: helper\nmodle: x\n", "modle"),
    ("helper/root_agent.yaml", b"name: helper\ntools:\n  - name: AgentTool\n    args: {agent: {config_path: ./x.yaml}}\n",
     "key 'args' is not allowed"),  # google-adk's denylist, as adk web applies it
])
def test_a_bad_upload_is_refused_and_changes_nothing(served: dict[str, Any], http: httpx.Client,
                                                     name: str, content: bytes, problem: str) -> None:
    agents = Path(served["config"]).parent / "data" / "agents"
    before = {p: p.read_bytes() for p in agents.rglob("*") if p.is_file()} if agents.exists() else {}
    refused = http.post("/dev/apps/helper/builder/save", files=files((name, content)))
    assert refused.status_code == 400 and problem in refused.json()["detail"], refused.text
    after = {p: p.read_bytes() for p in agents.rglob("*") if p.is_file()} if agents.exists() else {}
    assert after == before
    assert not (Path(served["config"]).parent / "data" / "escape.yaml").exists()


def test_a_python_app_is_not_the_builders(http: httpx.Client) -> None:
    assert http.get("/dev/apps/weather_bot/builder", params={"ts": 1}).text == ""  # as google-adk answers
    refused = http.post("/dev/apps/weather_bot/builder/save", files=files(("weather_bot/root_agent.yaml", NEW_APP)))
    assert refused.status_code == 400 and "Python app" in refused.json()["detail"]
    assert http.post("/dev/apps/bad-name/builder/save", files=files(("root_agent.yaml", NEW_APP))).status_code == 400


def test_a_configured_yaml_app_is_served(tmp_path: Path, gemini: StubServer) -> None:
    app = tmp_path / "apps" / "desk"
    app.mkdir(parents=True)
    (app / "root_agent.yaml").write_text("name: desk\nmodel: gemini-2.5-flash\ninstruction: Help at the desk.\n")
    env = {"GEMINI_API_KEY": "test-key-not-a-secret", "GEMINI_BASE_URL": gemini.url}
    with serving(tmp_path, apps=f'desk = "{app / "root_agent.yaml"}"\n', env=env) as info, \
            httpx.Client(base_url=info["url"], timeout=30) as http:
        assert http.get("/list-apps").json() == ["desk"]
        gemini.add(gemini_response("At your service."))
        assert run(http, "desk", "d1", "hello")[-1]["content"]["parts"][0]["text"] == "At your service."
        assert "Help at the desk." in str(gemini.requests[-1].body["systemInstruction"])


def test_the_builders_assistant_writes_the_draft_with_its_model(served: dict[str, Any], http: httpx.Client,
                                                               gemini: StubServer) -> None:
    """adk-web's assistant panel, as it calls it: a session of
    ``__adk_agent_builder_assistant``, then ``hello`` with the state
    ``root_directory = <app>/tmp/<app>``. The assistant's model (a real HTTP server
    speaking Gemini's wire format) writes the draft through its tool; a file naming
    code is refused and nothing of it is written; the draft the builder reads back is
    the assistant's; the assistant is not listed as an app."""
    agents = Path(served["config"]).parent / "data" / "agents"
    assistant = "__adk_agent_builder_assistant"
    assert assistant not in http.get("/list-apps").json()
    session = http.post(f"/apps/{assistant}/users/user/sessions", json=None).json()["id"]
    written = ("name: barista\nmodel: gemini-2.5-flash\nagent_class: LlmAgent\n"
               "instruction: You take coffee orders.\n")
    gemini.add(gemini_response(function_calls=[("write_config_files", {"files": {
                   "root_agent.yaml": "name: barista\ntools:\n  - name: subprocess.run\n"}})]),
               gemini_response(function_calls=[("write_config_files", {"files": {"root_agent.yaml": written}})]),
               gemini_response("I wrote barista: it takes coffee orders."))
    body = {"appName": assistant, "userId": "user", "sessionId": session, "streaming": False,
            "newMessage": {"role": "user", "parts": [{"text": "hello"}]},
            "stateDelta": {"root_directory": "barista/tmp/barista"}}
    answer = http.post("/run_sse", json=body)
    assert answer.status_code == 200, answer.text
    results = [p["functionResponse"]["response"] for line in answer.text.splitlines() if line.startswith("data: ")
               for p in json.loads(line[6:]).get("content", {}).get("parts", [])
               if "functionResponse" in p]
    assert "code references" in results[0]["error"] and "nothing was written" in results[0]["error"]
    assert results[1] == {"written": ["root_agent.yaml"], "draft_problems": None}
    assert "I wrote barista" in answer.text
    draft = agents / "barista" / "tmp" / "barista" / "root_agent.yaml"
    assert draft.read_text() == written and stat.S_IMODE(draft.stat().st_mode) == 0o600
    read_back = http.get("/dev/apps/barista/builder", params={"ts": 1, "tmp": "true"}).text
    assert read_back == written
    request = gemini.requests[-1].body
    names = [d["name"] for tool in request["tools"] for d in tool.get("functionDeclarations", [])]
    assert {"explore_project", "read_config_files", "write_config_files", "delete_files"} <= set(names)
    assert "Agent Config" in str(request["systemInstruction"])
