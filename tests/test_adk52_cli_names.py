"""google-adk's CLI modules that a user's own code imports (a custom server, a service
plug-in), at google-adk's paths under ``adk_actors.cli`` (issue 52):
``service_registry``, ``utils.service_factory``, ``utils.agent_loader``,
``utils.base_agent_loader`` and ``utils.envs``. Each is driven side by side with
google-adk's own (installed in .venv) on the same folders and registrations; then our
CLI paths that take a service URI: ``adk-actors run AGENT_DIR`` (a real process) uses a
scheme its folder's ``services.py`` registers, and ``get_fast_api_app`` (a host) refuses
one by name."""

from __future__ import annotations

import importlib
import inspect
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.apps import App as GoogleApp
from google.adk.cli import service_registry as g_registry
from google.adk.cli.utils import agent_loader as g_loader
from google.adk.cli.utils import envs as g_envs
from google.adk.cli.utils import service_factory as g_factory

from adk_actors import AgentDefinitionError
from adk_actors.apps import App
from adk_actors.cli import service_registry as o_registry
from adk_actors.cli.fast_api import UnsupportedParameterError, get_fast_api_app
from adk_actors.cli.utils import agent_loader as o_loader
from adk_actors.cli.utils import envs as o_envs
from adk_actors.cli.utils import service_factory as o_factory

ROOT = Path(__file__).resolve().parents[1]
MODULES = ("cli.service_registry", "cli.utils.service_factory", "cli.utils.agent_loader",
           "cli.utils.base_agent_loader", "cli.utils.envs")
SIDES = (("google", "google.adk", g_registry, g_factory), ("ours", "adk_actors", o_registry, o_factory))
SCHEMES = ("svc52", "svc52y", "svc52art", "svc52mem")


def _public(module_name: str) -> list[str]:
    """The name table's rule: ``__all__``, else the classes and functions the module defines."""
    module = importlib.import_module(module_name)
    declared = getattr(module, "__all__", None)
    if declared is not None:
        return sorted(declared)
    return sorted(name for name, value in vars(module).items()
                  if not name.startswith("_") and (inspect.isclass(value) or inspect.isfunction(value))
                  and getattr(value, "__module__", None) == module_name)


@pytest.mark.parametrize("path", MODULES)
def test_every_public_name_of_these_modules_resolves_at_our_path(path: str) -> None:
    names = _public(f"google.adk.{path}")
    assert names
    ours = importlib.import_module(f"adk_actors.{path}")
    assert [name for name in names if not hasattr(ours, name)] == []


@pytest.fixture
def clean() -> Iterator[None]:
    """Leave no registration, ``services`` module or sys.path entry of a test behind."""
    path, modules = list(sys.path), set(sys.modules)
    yield
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        if name == "services" or name.startswith(("svc52", "pyagent", "initonly", "appagent", "yamlagent", "noroot",
                                                  "broken", "strroot")):
            del sys.modules[name]
    sys.modules.pop("services", None)
    for registry in (g_registry.get_service_registry(),):
        for table in (registry._session_factories, registry._artifact_factories, registry._memory_factories):
            for scheme in SCHEMES:
                table.pop(scheme, None)
    for kind in ("session", "artifact", "memory", "task_store"):
        for scheme in SCHEMES:
            o_registry.get_service_registry()._factories[kind].pop(scheme, None)


class _Recorder:
    """A factory recording each call, returning the service of its side it was given."""

    def __init__(self, made: Any) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.made = made

    def __call__(self, uri: str, **kwargs: Any) -> Any:
        self.calls.append((uri, kwargs))
        return self.made


def test_a_registered_factory_is_called_with_the_same_uri_and_kwargs() -> None:
    for kind in ("session", "artifact", "memory"):
        calls = []
        for _side, _package, registry_module, _factory in SIDES:
            registry = registry_module.ServiceRegistry()
            made = object()
            recorder = _Recorder(made)
            getattr(registry, f"register_{kind}_service")("svc52", recorder)
            create = getattr(registry, f"create_{kind}_service")
            assert create("svc52://box/a?x=1", agents_dir="/agents", extra=2) is made
            assert create("other52://box") is None and create("no scheme") is None
            calls.append(recorder.calls)
        assert calls[0] == calls[1] == [("svc52://box/a?x=1", {"agents_dir": "/agents", "extra": 2})]


def test_the_process_registry_is_one_object_with_the_built_in_schemes(tmp_path: Path) -> None:
    registry = o_registry.get_service_registry()
    assert registry is o_registry.get_service_registry()
    for side, _package, module, _ in SIDES:
        reg = module.get_service_registry()
        kinds = {"session": "InMemorySessionService", "artifact": "InMemoryArtifactService",
                 "memory": "InMemoryMemoryService"}
        for kind, name in kinds.items():
            assert type(getattr(reg, f"create_{kind}_service")("memory://")).__name__ == name, side
        assert type(reg.create_artifact_service(f"file://{tmp_path}/art")).__name__ == "FileArtifactService"
        with pytest.raises(ValueError):
            reg.create_artifact_service("file://elsewhere/art")
        with pytest.raises(ValueError):
            reg.create_memory_service("rag://")


def test_bad_registrations_are_type_errors_and_register_nothing() -> None:
    registry = o_registry.ServiceRegistry()
    with pytest.raises(TypeError, match="non-empty string"):
        registry.register_session_service("", _Recorder(None))
    with pytest.raises(TypeError, match="not callable"):
        registry.register_memory_service("svc52", "not a factory")  # type: ignore[arg-type]
    assert registry.create_memory_service("svc52://x") is None


def test_the_options_functions_consult_the_registry_as_google_adks_do(tmp_path: Path, clean: None) -> None:
    calls = []
    for side, _package, registry_module, factory_module in SIDES:
        recorder = _Recorder(object())
        registry = registry_module.get_service_registry()
        for kind in ("session", "artifact", "memory"):
            getattr(registry, f"register_{kind}_service")("svc52", recorder)
        assert factory_module.create_session_service_from_options(
            base_dir=tmp_path, session_service_uri="svc52://s", session_db_kwargs={"pool": 3}) is recorder.made
        factory_module.create_artifact_service_from_options(base_dir=tmp_path, artifact_service_uri="svc52://a",
                                                            strict_uri=True)
        factory_module.create_memory_service_from_options(base_dir=str(tmp_path), memory_service_uri="svc52://m")
        calls.append(recorder.calls)
        # a scheme nobody registered: memory and a strict artifact URI refused, else memory
        with pytest.raises(ValueError):
            factory_module.create_memory_service_from_options(base_dir=tmp_path, memory_service_uri="nope52://m")
        with pytest.raises(ValueError):
            factory_module.create_artifact_service_from_options(base_dir=tmp_path, artifact_service_uri="nope52://a",
                                                                strict_uri=True)
        loose = factory_module.create_artifact_service_from_options(base_dir=tmp_path,
                                                                    artifact_service_uri="nope52://a")
        assert type(loose).__name__ == "InMemoryArtifactService", side
        off = factory_module.create_session_service_from_options(base_dir=tmp_path, use_local_storage=False)
        assert type(off).__name__ == "InMemorySessionService", side
        assert type(factory_module.create_memory_service_from_options(base_dir=tmp_path)).__name__ \
            == "InMemoryMemoryService"
    where = str(tmp_path)
    assert calls[0] == calls[1] == [("svc52://s", {"agents_dir": where, "pool": 3}),
                                    ("svc52://a", {"agents_dir": where}), ("svc52://m", {"agents_dir": where})]


SERVICES_PY = '''from {package}.cli.service_registry import get_service_registry
from {package}.sessions import InMemorySessionService


class Made(InMemorySessionService):
    def __init__(self, uri, kwargs):
        super().__init__()
        self.made_from = (uri, kwargs)


get_service_registry().register_session_service("svc52", lambda uri, **kwargs: Made(uri, kwargs))
get_service_registry().register_session_service("svc52y", lambda uri, **kwargs: Made("py:" + uri, kwargs))
'''

STORE_PY = '''from {package}.memory import InMemoryMemoryService
from {package}.sessions import InMemorySessionService


class Sessions(InMemorySessionService):
    def __init__(self, uri, **kwargs):
        super().__init__()
        self.made_from = ("yaml:" + uri, kwargs)


class Memory(InMemoryMemoryService):
    def __init__(self, uri, **kwargs):
        super().__init__()
        self.made_from = ("yaml:" + uri, kwargs)
'''

SERVICES_YAML = '''services:
  - scheme: svc52y
    type: session
    class: {store}.Sessions
  - scheme: svc52mem
    type: memory
    class: {store}.Memory
  - scheme: svc52art
    type: artifact
  - scheme: svc52art
    type: queue
    class: {store}.Memory
'''


def test_a_services_folder_is_picked_up_the_same_way(tmp_path: Path, clean: None,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    """services.yaml then services.py: the YAML's classes made with ``uri=`` and the
    kwargs, services.py's factories registered after (its scheme wins over the YAML's);
    a YAML entry lacking its class or of an unknown type skipped."""
    made = []
    for side, package, registry_module, _ in SIDES:
        folder = tmp_path / side
        folder.mkdir()
        store = f"svc52_store_{side}"
        (folder / f"{store}.py").write_text(STORE_PY.format(package=package))
        (folder / "services.yaml").write_text(SERVICES_YAML.format(store=store))
        (folder / "services.py").write_text(SERVICES_PY.format(package=package))
        sys.modules.pop("services", None)
        with caplog.at_level(logging.WARNING):
            registry_module.load_services_module(str(folder))
        assert str(folder) in sys.path
        registry = registry_module.get_service_registry()
        made.append([registry.create_session_service("svc52://a", agents_dir="d").made_from,
                     registry.create_session_service("svc52y://b").made_from,
                     registry.create_memory_service("svc52mem://c", agents_dir="d").made_from,
                     registry.create_artifact_service("svc52art://x")])
        registry_module.load_services_module(str(tmp_path / "no-such-folder"))  # nothing, no error
    assert made[0] == made[1] == [("svc52://a", {"agents_dir": "d"}), ("py:svc52y://b", {}),
                                  ("yaml:svc52mem://c", {"agents_dir": "d"}), None]


def test_a_services_file_that_fails_registers_nothing_more(tmp_path: Path, clean: None) -> None:
    """A YAML class that does not import stops the loading (services.py not run); a
    services.py that raises is told, not raised: both as google-adk."""
    for side, package, registry_module, _ in SIDES:
        folder = tmp_path / side
        folder.mkdir()
        (folder / "services.yaml").write_text("services:\n  - {scheme: svc52mem, type: memory, "
                                              "class: svc52_nowhere.Memory}\n")
        (folder / "services.py").write_text(SERVICES_PY.format(package=package))
        sys.modules.pop("services", None)
        registry_module.load_services_module(str(folder))
        registry = registry_module.get_service_registry()
        assert registry.create_memory_service("svc52mem://c") is None, side
        assert registry.create_session_service("svc52://a") is None, side
        (folder / "services.yaml").unlink()
        (folder / "services.py").write_text(SERVICES_PY.format(package=package) + "raise RuntimeError('late')\n")
        sys.modules.pop("services", None)
        registry_module.load_services_module(str(folder))  # told in the log, not raised


AGENT_PY = '''from {package}.agents import LlmAgent

root_agent = LlmAgent(name="{name}", model="gemini-2.5-flash", description="the {name} agent")
'''
APP_PY = '''from {package}.agents import LlmAgent
from {package}.apps import App

app = App(name="appagent", root_agent=LlmAgent(name="inner", model="gemini-2.5-flash"))
'''
YAML_AGENT = "name: yamlagent\nmodel: gemini-2.5-flash\ninstruction: Answer.\ndescription: from yaml\n"


def _agents(folder: Path, package: str) -> Path:
    """google-adk's folder shapes, and folders that are no agent or do not load."""
    for name, files in {
        "pyagent": {"__init__.py": "from . import agent\n", "agent.py": AGENT_PY},
        "initonly": {"__init__.py": AGENT_PY},
        "appagent": {"__init__.py": "from . import agent\n", "agent.py": APP_PY},
        "yamlagent": {"root_agent.yaml": YAML_AGENT},
        "noroot": {"__init__.py": ""},
        "broken": {"__init__.py": "from . import agent\n", "agent.py": "raise ValueError('bad config')\n"},
        "strroot": {"agent.py": "root_agent = 'not an agent'\n"},
        ".hidden": {"agent.py": AGENT_PY},
        "notes": {"readme.txt": "no agent"},
    }.items():
        (folder / name).mkdir(parents=True)
        for file, text in files.items():
            (folder / name / file).write_text(text.format(package=package, name=name))
    return folder


def _forget(agents_dir: Path) -> None:
    """Between the two sides: the agents' modules and the folder leave this process."""
    for name in [m for m in sys.modules
                 if m.split(".")[0] in ("pyagent", "initonly", "appagent", "noroot", "broken", "strroot")]:
        del sys.modules[name]
    while str(agents_dir) in sys.path:
        sys.path.remove(str(agents_dir))


def _shape(loaded: Any, app_class: type) -> tuple[str, str]:
    if isinstance(loaded, app_class):
        return "App", loaded.root_agent.name
    return "agent", loaded.name


def test_the_agent_loader_loads_google_adks_folder_shapes(tmp_path: Path, clean: None) -> None:
    seen = []
    for side, package, loader_module, app_class in (("google", "google.adk", g_loader, GoogleApp),
                                                     ("ours", "adk_actors", o_loader, App)):
        folder = _agents(tmp_path / side, package)
        loader = loader_module.AgentLoader(str(folder))
        assert not loader.is_single_agent and loader.single_agent_name is None
        found: dict[str, Any] = {"list": loader.list_agents()}
        for name in ("pyagent", "initonly", "appagent", "yamlagent"):
            loaded = loader.load_agent(name)
            assert loader.load_agent(name) is loaded  # kept by the loader
            found[name] = _shape(loaded, app_class)
        errors = {}
        for name in ("noroot", "broken", "strroot", "missing", "notes", "bad-name", "../pyagent", "__x"):
            with pytest.raises(Exception) as caught:
                loader.load_agent(name)
            errors[name] = ("RuntimeError" if isinstance(caught.value, RuntimeError)
                            else "PermissionError" if isinstance(caught.value, PermissionError)
                            else "ValueError" if isinstance(caught.value, ValueError) else type(caught.value).__name__)
        found["errors"] = errors
        found["detailed"] = [{k: v for k, v in entry.items()} for entry in loader.list_agents_detailed()]
        single = loader_module.AgentLoader(str(folder / "pyagent"))
        assert single.is_single_agent and single.single_agent_name == "pyagent"
        found["single"] = single.list_agents()
        with pytest.raises(ValueError):
            single.load_agent("initonly")
        found["is_single"] = [loader_module.is_single_agent_directory(folder / name)
                              for name in ("pyagent", "yamlagent", "initonly", "notes", "nowhere")]
        seen.append(found)
        _forget(folder)
    google, ours = seen
    assert ours == google
    assert google["list"] == ["appagent", "broken", "initonly", "noroot", "pyagent", "strroot", "yamlagent"]
    assert google["appagent"] == ("App", "inner") and google["pyagent"] == ("agent", "pyagent")
    assert google["errors"] == {"noroot": "ValueError", "broken": "RuntimeError", "strroot": "ValueError",
                                "missing": "ValueError",
                                "notes": "ValueError", "bad-name": "ValueError", "../pyagent": "ValueError",
                                "__x": "PermissionError"}


def test_a_broken_agent_is_a_load_error_whose_cause_is_the_loaders(tmp_path: Path, clean: None) -> None:
    folder = _agents(tmp_path / "ours", "adk_actors")
    loader = o_loader.AgentLoader(str(folder))
    with pytest.raises(o_loader.AgentLoadError, match="bad config") as caught:
        loader.load_agent("broken")
    assert isinstance(caught.value, RuntimeError) and not isinstance(caught.value, ValueError)
    assert isinstance(caught.value.__cause__, AgentDefinitionError)
    loaded = loader.load_agent("pyagent")
    loader.remove_agent_from_cache("pyagent")
    assert "pyagent" not in sys.modules
    assert loader.load_agent("pyagent").name == loaded.name
    with pytest.raises(FileNotFoundError):
        o_loader.AgentLoader(str(tmp_path / "nowhere")).list_agents()
    _forget(folder)


def test_load_dotenv_for_agent_is_google_adks_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The nearest ``.env`` from the agent's folder up, over nothing set before the
    first ``.env`` was read (PATH stays), any file name; ADK_DISABLE_LOAD_DOTENV: none."""
    monkeypatch.setenv("PATH", os.environ["PATH"])  # put back whatever happens
    (tmp_path / "agent52" / "deeper").mkdir(parents=True)
    (tmp_path / ".env").write_text("ADK52_DOTENV=from-file\nPATH=/nowhere\n")
    (tmp_path / "agent52" / ".env.other").write_text("ADK52_DOTENV=from-other\n")
    results = []
    for load in (g_envs.load_dotenv_for_agent, o_envs.load_dotenv_for_agent):
        monkeypatch.delenv("ADK52_DOTENV", raising=False)
        load("deeper", str(tmp_path / "agent52"))
        first = os.environ.get("ADK52_DOTENV")
        load("agent52", str(tmp_path), filename=".env.other")
        second = os.environ.get("ADK52_DOTENV")
        monkeypatch.delenv("ADK52_DOTENV")
        monkeypatch.setenv("ADK_DISABLE_LOAD_DOTENV", "1")
        load("agent52", str(tmp_path))
        disabled = os.environ.get("ADK52_DOTENV")
        monkeypatch.delenv("ADK_DISABLE_LOAD_DOTENV")
        results.append((first, second, disabled, os.environ["PATH"] != "/nowhere"))
    assert results[0] == results[1] == ("from-file", "from-other", None, True)


MEMO = '''from adk_actors.agents import LlmAgent
from adk_actors.models import ScriptedModel


def _model(request):
    said = [p.text for c in request.contents if c.role == "user" for p in c.parts if p.text]
    return "heard so far: " + " | ".join(said)


root_agent = LlmAgent(name="memo", model=ScriptedModel(fallback=_model))
'''

RUN_SERVICES_PY = '''import json
import os
from pathlib import Path

from adk_actors.cli.service_registry import get_service_registry
from adk_actors.sessions import InMemorySessionService


def factory(uri, **kwargs):
    if "fail" in uri:
        raise RuntimeError("no such box")
    Path(os.environ["SVC52_MARK"]).write_text(json.dumps([uri, kwargs]))
    return InMemorySessionService()


get_service_registry().register_session_service("svc52", factory)
'''


def _cli(*args: str, cwd: Path, stdin: str, mark: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env.update(PYTHONPATH=str(ROOT), ADK_DISABLE_TELEMETRY="1", SVC52_MARK=str(mark))
    return subprocess.run([sys.executable, "-m", "adk_actors.cli", *args], cwd=cwd, input=stdin, capture_output=True,
                          text=True, env=env, timeout=120)


def test_run_agent_dir_keeps_its_sessions_in_a_service_its_services_py_registers(tmp_path: Path) -> None:
    """``adk-actors run AGENT_DIR --session_service_uri svc52://...``: the folder's
    services.py is loaded first (as google-adk's ``adk run``), its factory called with the
    URI and the agents folder, and the REPL's turns kept in the service it made (the
    second turn hears the first; the saved session holds both)."""
    agents = tmp_path / "agents"
    (agents / "memo").mkdir(parents=True)
    (agents / "memo" / "agent.py").write_text(MEMO)
    (agents / "memo" / "services.py").write_text(RUN_SERVICES_PY)
    mark = tmp_path / "made.json"
    done = _cli("run", "memo", "--session_service_uri", "svc52://box", "--save_session", "--session_id", "s52",
                cwd=agents, stdin="one\ntwo\n", mark=mark)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:3] == ["[user]: [memo]: heard so far: one",
                                             "[user]: [memo]: heard so far: one | two"]
    assert json.loads(mark.read_text()) == ["svc52://box", {"agents_dir": str(agents.resolve())}]
    saved = json.loads((agents / "memo" / "s52.session.json").read_text())
    assert len(saved["events"]) == 4
    assert not (agents / ".adk-actors" / "run-sessions.db").exists()  # nothing went to the default store
    failed = _cli("run", "memo", "x", "--session_service_uri", "svc52://fail", cwd=agents, stdin="", mark=mark)
    assert failed.returncode == 2 and "svc52" in failed.stderr and "no such box" in failed.stderr


def test_a_host_refuses_a_registered_scheme_by_name_and_why(tmp_path: Path, clean: None) -> None:
    """``get_fast_api_app`` loads the folder's services.py (as google-adk's does) and
    refuses a session URI of the scheme it registers: a host's store actors cannot use a
    service made in this process; nothing is started."""
    agents = _agents(tmp_path / "agents", "adk_actors")
    (agents / "services.py").write_text(SERVICES_PY.format(package="adk_actors"))
    sys.modules.pop("services", None)
    with pytest.raises(UnsupportedParameterError) as caught:
        get_fast_api_app(agents_dir=str(agents), web=False, session_service_uri="svc52://box")
    assert caught.value.parameters == ("session_service_uri",)
    assert "'svc52' is a session scheme registered in the service registry" in str(caught.value)
    assert "store actors" in str(caught.value)
    assert o_registry.custom_scheme("session", "svc52://box") == "svc52"
    assert o_registry.custom_scheme("session", "memory://") is None
    # the built-in schemes are served as before
    assert get_fast_api_app(agents_dir=str(agents), web=False, session_service_uri="memory://") is not None
