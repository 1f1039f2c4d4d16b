"""Follow-ups of issue 52's google-adk names: the environment simulator on a real host,
google-adk's module-file agents (``AGENTS_DIR/NAME.py``) on the one agent loader,
``adk-actors run``'s ``--artifact_service_uri`` / ``--memory_service_uri``, and
``get_fast_api_app(agent_loader=...)``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import ROOT, serving

from adk_actors.testing import RecordedRequest, StubResponse, StubServer, gemini_response

# -- 1. the environment simulator in an app a host serves ---------------------------------

SIMULATED_APP = '''
import os

from adk_actors import Agent
from adk_actors.apps import App
from adk_actors.tools.environment_simulation import EnvironmentSimulationFactory
from adk_actors.tools.environment_simulation.environment_simulation_config import (
    EnvironmentSimulationConfig, MockStrategy, ToolSimulationConfig)


def create_ticket(title: str, priority: int = 2) -> dict:
    """Open a support ticket."""
    with open(os.environ["REAL_TOOL_CALLS"], "a") as calls:
        calls.write(title + "\\n")
    return {"real": True}


config = EnvironmentSimulationConfig(tool_simulation_configs=[
    ToolSimulationConfig(tool_name="create_ticket", mock_strategy_type=MockStrategy.MOCK_STRATEGY_TOOL_SPEC)])
app = App(name="desk", root_agent=Agent(name="helper", model="gemini-2.5-flash", instruction="Help with tickets.",
                                        tools=[create_ticket]),
          plugins=[EnvironmentSimulationFactory.create_plugin(config)])
'''

ANALYSIS = {"stateful_parameters": [{"parameter_name": "ticket_id", "creating_tools": ["create_ticket"],
                                     "consuming_tools": []}]}
TICKET = {"ticket_id": "T-7", "status": "open"}


def _gemini(request: RecordedRequest) -> StubResponse:
    """The agent's model (its requests carry a system instruction): a call of
    create_ticket, then, once the tool's result is back, a text; the simulator's model
    (no system instruction): the analysis, then the invented ticket."""
    body = request.body
    if "systemInstruction" not in body:
        prompt = body["contents"][0]["parts"][0]["text"]
        return gemini_response(json.dumps(ANALYSIS) if "creating_tools" in prompt and "Tool declarations" in prompt
                               else "```json\n" + json.dumps(TICKET) + "\n```")
    last = body["contents"][-1]["parts"][0]
    if "functionResponse" in last:
        return gemini_response(f"done: {json.dumps(last['functionResponse']['response'], sort_keys=True)}")
    return gemini_response(function_calls=[("create_ticket", {"title": "printer"})])


def test_a_served_app_answers_tool_calls_from_the_simulators_model(tmp_path: Path) -> None:
    """``adk-actors serve`` with an App whose plugins hold the environment simulator:
    the call of the simulated tool is answered by the simulator's model (the Gemini
    stand-in, named to the run workers by the environment they inherit), the agent sees
    that answer, and the real tool function never runs (it would write a file)."""
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "simulated_desk.py").write_text(SIMULATED_APP)
    real_calls = tmp_path / "real-calls.txt"
    with StubServer(respond=_gemini) as model:
        env = {"PYTHONPATH": f"{ROOT / 'tests'}:{tmp_path / 'code'}", "GOOGLE_API_KEY": "test-key-not-a-secret",
               "GOOGLE_GEMINI_BASE_URL": model.url, "ADK_DISABLE_TELEMETRY": "1", "REAL_TOOL_CALLS": str(real_calls)}
        with serving(tmp_path, apps='desk = "simulated_desk:app"\n', env=env) as served, \
                httpx.Client(base_url=served["url"], timeout=60) as http:
            session = http.post("/apps/desk/users/ann/sessions", json={}).json()["id"]
            reply = http.post("/run", json={"appName": "desk", "userId": "ann", "sessionId": session,
                                            "newMessage": {"role": "user", "parts": [{"text": "A ticket, please."}]}})
        seen = [r.body for r in model.requests]
    assert reply.status_code == 200, reply.text
    events: list[dict[str, Any]] = reply.json()
    responses = [part["functionResponse"] for event in events for part in event["content"]["parts"]
                 if "functionResponse" in part]
    assert [(r["name"], r["response"]) for r in responses] == [("create_ticket", TICKET)]
    assert events[-1]["content"]["parts"][0]["text"] == f"done: {json.dumps(TICKET, sort_keys=True)}"
    simulator = [body for body in seen if "systemInstruction" not in body]
    assert len(simulator) == 2 and "tools" not in simulator[1]  # the analysis, then the mock
    assert "create_ticket" in simulator[1]["contents"][0]["parts"][0]["text"]
    assert not real_calls.exists(), real_calls.read_text()


# -- 2. google-adk's module-file agents (AGENTS_DIR/NAME.py) on the one loader ------------

MODULE_AGENT = '''from {package}.agents import LlmAgent

root_agent = LlmAgent(name="{name}", model="gemini-2.5-flash", description="the {name} agent")
'''
MODULE_APP = '''from {package}.agents import LlmAgent
from {package}.apps import App

app = App(name="modapp", root_agent=LlmAgent(name="inner", model="gemini-2.5-flash"))
'''
MODULES = {"modagent": MODULE_AGENT, "modapp": MODULE_APP, "modnoroot": "X = 1\n",
           "modbroken": "raise ValueError('bad module')\n", "modstr": "root_agent = 'not an agent'\n"}


def _module_agents(folder: Path, package: str) -> Path:
    """Module files of every kind, beside one agent folder (listed, unlike them)."""
    (folder / "pyagent").mkdir(parents=True)
    (folder / "pyagent" / "agent.py").write_text(MODULE_AGENT.format(package=package, name="pyagent"))
    for name, text in MODULES.items():
        (folder / f"{name}.py").write_text(text.format(package=package, name=name))
    return folder


@pytest.fixture
def forget_modules() -> Any:
    """The module agents' modules and their folders leave this process after the test."""
    import sys

    path = list(sys.path)
    yield
    sys.path[:] = path
    for name in [m for m in sys.modules if m.split(".")[0] in (*MODULES, "pyagent")]:
        del sys.modules[name]


def _kind(error: BaseException) -> str:
    return ("PermissionError" if isinstance(error, PermissionError) else "RuntimeError"
            if isinstance(error, RuntimeError) else "ValueError" if isinstance(error, ValueError)
            else type(error).__name__)


def test_the_agent_loader_loads_module_files_as_google_adks_does(tmp_path: Path, forget_modules: None) -> None:
    """google-adk's loader and ours on the same shapes of module file
    ``AGENTS_DIR/NAME.py``: an agent, an App, no root agent, a module that raises, a
    root_agent that is no agent; module files load by name but are not listed."""
    import sys

    from google.adk.apps import App as GoogleApp
    from google.adk.cli.utils import agent_loader as g_loader

    from adk_actors.apps import App
    from adk_actors.cli.utils import agent_loader as o_loader

    seen = []
    for side, package, loader_module, app_class in (("google", "google.adk", g_loader, GoogleApp),
                                                     ("ours", "adk_actors", o_loader, App)):
        folder = _module_agents(tmp_path / side, package)
        loader = loader_module.AgentLoader(str(folder))
        found: dict[str, Any] = {"list": loader.list_agents()}
        for name in ("modagent", "modapp"):
            loaded = loader.load_agent(name)
            assert loader.load_agent(name) is loaded
            found[name] = ("App", loaded.root_agent.name) if isinstance(loaded, app_class) else ("agent", loaded.name)
        errors = {}
        for name in ("modnoroot", "modbroken", "modstr", "modmissing"):
            with pytest.raises(Exception) as caught:
                loader.load_agent(name)
            errors[name] = _kind(caught.value)
        found["errors"] = errors
        seen.append(found)
        for module in [m for m in sys.modules if m.split(".")[0] in (*MODULES, "pyagent")]:
            del sys.modules[module]
        sys.path.remove(str(folder))
    google, ours = seen
    assert ours == google
    assert google["list"] == ["pyagent"]
    assert google["modagent"] == ("agent", "modagent") and google["modapp"] == ("App", "inner")
    assert google["errors"] == {"modnoroot": "ValueError", "modbroken": "RuntimeError", "modstr": "ValueError",
                                "modmissing": "ValueError"}


def test_the_catalog_serves_a_module_file_and_reloads_it_when_edited(tmp_path: Path,
                                                                      forget_modules: None) -> None:
    """The engine's catalog (what ``adk-actors web|api_server|serve DIR`` and ``run``
    load through): a module file is an app by its name (not listed), read again when it
    changes; a folder with an ``__init__.py`` of the same name wins, as Python's import."""
    import os

    from adk_actors import AgentDefinitionError
    from adk_actors.engine import AppCatalog

    folder = _module_agents(tmp_path / "agents", "adk_actors")
    catalog = AppCatalog(agents_dir=str(folder))
    assert "modagent" in catalog and catalog.language("modagent") == "python"
    assert catalog.names() == ["pyagent"]
    assert catalog.load("modagent").root_agent.name == "modagent"
    assert catalog.load_error("modagent") is None
    with pytest.raises(AgentDefinitionError, match=r"define root_agent in .*modnoroot\.py"):
        catalog.load("modnoroot")
    module = folder / "modagent.py"
    module.write_text(MODULE_AGENT.format(package="adk_actors", name="edited"))
    os.utime(module, ns=(module.stat().st_atime_ns, module.stat().st_mtime_ns + 10**9))
    assert catalog.load("modagent").root_agent.name == "edited"
    (folder / "modapp").mkdir()
    (folder / "modapp" / "__init__.py").write_text(MODULE_AGENT.format(package="adk_actors", name="package"))
    assert catalog.load("modapp").root_agent.name == "package"


# -- 3. adk-actors run AGENT_DIR --artifact_service_uri / --memory_service_uri -------------

KEEPER = '''from adk_actors.agents import LlmAgent
from adk_actors.models import ScriptedModel
from adk_actors.types import Content, FunctionCall, Part


async def keep(note: str, tool_context) -> dict:
    """Keep a note as an artifact and look it up in memory."""
    version = await tool_context.save_artifact("note.txt", Part.from_bytes(data=note.encode(), mime_type="text/plain"))
    found = await tool_context.search_memory(note)
    return {"version": version, "memories": len(found.memories)}


def _model(request):
    last = request.contents[-1]
    for part in last.parts:
        if part.function_response is not None:
            return "kept " + str(part.function_response.response)
    return [FunctionCall(name="keep", args={"note": last.parts[0].text})]


root_agent = LlmAgent(name="keeper", model=ScriptedModel(fallback=_model), tools=[keep])
'''

RUN_SERVICES = '''import json
import os
from pathlib import Path

from adk_actors.artifacts import InMemoryArtifactService
from adk_actors.cli.service_registry import get_service_registry
from adk_actors.memory import InMemoryMemoryService


def _mark(*row):
    with open(os.environ["FU52_MARK"], "a") as marks:
        marks.write(json.dumps(row) + "\\n")


class Artifacts(InMemoryArtifactService):
    async def save_artifact(self, **kwargs):
        _mark("saved", kwargs["filename"])
        return await super().save_artifact(**kwargs)


class Memory(InMemoryMemoryService):
    async def search_memory(self, **kwargs):
        _mark("searched", kwargs["query"])
        return await super().search_memory(**kwargs)


def artifacts(uri, **kwargs):
    _mark("artifact service", uri, kwargs)
    return Artifacts()


def memory(uri, **kwargs):
    if "fail" in uri:
        raise RuntimeError("no such memory")
    _mark("memory service", uri, kwargs)
    return Memory()


get_service_registry().register_artifact_service("fu52art", artifacts)
get_service_registry().register_memory_service("fu52mem", memory)
'''


def _run_cli(*args: str, cwd: Path, mark: Path) -> Any:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env.update(PYTHONPATH=str(ROOT), ADK_DISABLE_TELEMETRY="1", FU52_MARK=str(mark))
    return subprocess.run([sys.executable, "-m", "adk_actors.cli", "run", *args], cwd=cwd, input="",
                          capture_output=True, text=True, env=env, timeout=120)


def _keeper(tmp_path: Path) -> Path:
    agents = tmp_path / "agents"
    (agents / "keeper").mkdir(parents=True)
    (agents / "keeper" / "agent.py").write_text(KEEPER)
    (agents / "keeper" / "services.py").write_text(RUN_SERVICES)
    return agents


def test_run_takes_artifact_and_memory_services_of_builtin_schemes(tmp_path: Path) -> None:
    """``--artifact_service_uri file:///PATH`` keeps the tool's artifact in that folder;
    ``--memory_service_uri sqlite:///PATH`` searches a SQLite memory there."""
    agents = _keeper(tmp_path)
    store = tmp_path / "artifacts"
    done = _run_cli("keeper", "hello", "--artifact_service_uri", f"file://{store}", "--memory_service_uri",
                    f"sqlite:///{tmp_path / 'memory.db'}", cwd=agents, mark=tmp_path / "marks")
    assert done.returncode == 0, done.stderr
    assert "kept {'version': 0, 'memories': 0}" in done.stdout
    saved = [p for p in store.rglob("*") if p.is_file() and p.read_bytes() == b"hello"]
    assert saved, sorted(str(p) for p in store.rglob("*"))
    assert (tmp_path / "memory.db").is_file()
    assert not (tmp_path / "marks").exists()


def test_run_takes_artifact_and_memory_schemes_its_services_py_registers(tmp_path: Path) -> None:
    """Schemes the agent folder's services.py registers: each factory called with the URI
    and the agents folder, the tool's artifact saved and its memory search made in the
    services they made; an unknown memory scheme, or a factory that fails, is exit 2
    naming the flag; an unknown artifact scheme is kept in memory (google-adk's rule)."""
    agents = _keeper(tmp_path)
    mark = tmp_path / "marks"
    done = _run_cli("keeper", "hello", "--artifact_service_uri", "fu52art://box", "--memory_service_uri",
                    "fu52mem://mind", cwd=agents, mark=mark)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in mark.read_text().splitlines()]
    folder = str(agents.resolve())
    assert rows == [["artifact service", "fu52art://box", {"agents_dir": folder}],
                    ["memory service", "fu52mem://mind", {"agents_dir": folder}],
                    ["saved", "note.txt"], ["searched", "hello"]]
    mark.unlink()
    for flags, said in ((("--memory_service_uri", "nowhere52://x"), "--memory_service_uri"),
                        (("--memory_service_uri", "fu52mem://fail"), "no such memory"),
                        (("--in_memory", "--artifact_service_uri", "fu52art://box"), "--in_memory")):
        failed = _run_cli("keeper", "hello", *flags, cwd=agents, mark=mark)
        assert failed.returncode == 2 and said in failed.stderr, (flags, failed.stderr)
    kept = _run_cli("keeper", "hello", "--artifact_service_uri", "nowhere52://x", cwd=agents, mark=mark)
    assert kept.returncode == 0 and "kept {'version': 0, 'memories': 0}" in kept.stdout, kept.stderr
    assert not mark.exists()


def test_run_refuses_the_service_flags_for_an_app_of_a_host(tmp_path: Path) -> None:
    done = _run_cli("some_app", "hello", "--memory_service_uri", "memory://", cwd=tmp_path, mark=tmp_path / "m")
    assert done.returncode == 2 and "--memory_service_uri goes with an AGENT_DIR" in done.stderr, done.stderr


# -- 4. get_fast_api_app(agent_loader=...) --------------------------------------------------

LOADER_MAIN = '''import os

import uvicorn
from adk_actors.cli.fast_api import get_fast_api_app
from adk_actors.cli.utils.agent_loader import AgentLoader

AGENT_DIR = os.path.dirname(os.path.abspath(__file__))

app = get_fast_api_app(agents_dir=AGENT_DIR, agent_loader=AgentLoader(AGENT_DIR), session_service_uri="memory://",
                       web=False)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", 8080)))
'''

ECHO = '''from adk_actors.agents import LlmAgent
from adk_actors.models import ScriptedModel

root_agent = LlmAgent(name="{name}", model=ScriptedModel(fallback=lambda request: "{name} heard "
                                                         + request.contents[-1].parts[0].text))
'''


def _loader_folder(folder: Path) -> Path:
    """An agent folder ``memo`` and a module-file agent ``solo.py``."""
    (folder / "memo").mkdir(parents=True)
    (folder / "memo" / "agent.py").write_text(ECHO.format(name="memo"))
    (folder / "solo.py").write_text(ECHO.format(name="solo"))
    return folder


def test_get_fast_api_app_takes_an_agent_loader_of_its_agents_dir_and_refuses_others(tmp_path: Path) -> None:
    """An AgentLoader (ours or google-adk's) of agents_dir is taken (nothing starts);
    a loader of another folder, one in single-agent mode, a custom loader and a
    subclass are each refused as ``agent_loader``, saying why."""
    from google.adk.cli.utils.agent_loader import AgentLoader as GoogleAgentLoader

    from adk_actors.cli.fast_api import UnsupportedParameterError, get_fast_api_app
    from adk_actors.cli.utils.agent_loader import AgentLoader
    from adk_actors.cli.utils.base_agent_loader import BaseAgentLoader

    agents = _loader_folder(tmp_path / "agents")
    other = _loader_folder(tmp_path / "other")
    for loader in (AgentLoader(str(agents)), GoogleAgentLoader(str(agents))):
        assert get_fast_api_app(agents_dir=str(agents), web=False, agent_loader=loader) is not None

    class Custom(BaseAgentLoader):
        def load_agent(self, agent_name: str) -> Any:
            raise ValueError(agent_name)

        def list_agents(self) -> list[str]:
            return []

    class Mine(AgentLoader):
        pass

    for loader, said in ((AgentLoader(str(other)), f"loads the agents of {other}"),
                         (GoogleAgentLoader(str(other)), f"loads the agents of {other}"),
                         (AgentLoader(str(agents / "memo")), "single-agent mode"),
                         (Custom(), "a Custom would load agents in this process"),
                         (Mine(str(agents)), "a Mine would load agents")):
        with pytest.raises(UnsupportedParameterError) as refused:
            get_fast_api_app(agents_dir=str(agents), web=False, agent_loader=loader)
        assert refused.value.parameters == ("agent_loader",)
        assert said in str(refused.value), str(refused.value)


def test_a_main_py_with_an_agent_loader_serves_its_folder(tmp_path: Path) -> None:
    """google-adk's deployment main.py given ``agent_loader=AgentLoader(AGENT_DIR)``,
    run as a user runs it: the folder's agent is listed and answers; the module-file
    agent beside it answers by name (not listed, as google-adk's loader lists it)."""
    from test_fast_api_app import Program

    folder = _loader_folder(tmp_path / "agents")
    (folder / "main.py").write_text(LOADER_MAIN)
    program = Program(folder, "http://127.0.0.1:9")
    try:
        program.start()
        with httpx.Client(base_url=program.url, timeout=60) as http:
            assert http.get("/list-apps").json() == ["memo"]
            texts = {}
            for app in ("memo", "solo"):
                session = http.post(f"/apps/{app}/users/u1/sessions", json={})
                assert session.status_code == 200, session.text
                events = http.post("/run", json={"appName": app, "userId": "u1", "sessionId": session.json()["id"],
                                                 "newMessage": {"role": "user", "parts": [{"text": "hi"}]}})
                assert events.status_code == 200, events.text
                texts[app] = events.json()[-1]["content"]["parts"][0]["text"]
        assert texts == {"memo": "memo heard hi", "solo": "solo heard hi"}
        program.terminate()
        program.assert_none_left()
    finally:
        program.close()
