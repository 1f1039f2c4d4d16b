"""google-adk 2.13's custom agent classes in agent files, side by side with google-adk:
``agent_class: my_pkg.agents.MyAgent`` (a ``BaseAgent`` subclass in the user's own
module) loads into the same agent, its own config keys validated by its
``config_type`` and turned into fields by its ``_parse_config`` hook (which warns, as
google-adk's does), its sub-agents and callbacks resolved as for a built-in kind; a
class that overrides ``from_config`` makes its agent itself; an ``LlmAgent`` subclass
takes an LlmAgent's keys. ``BaseAgent.from_config(config, config_abs_path)`` and
``LlmAgent.from_config`` (deprecated, they warn) make the same agents. A custom agent
loaded from its file runs, in process, to the same events. A dotted ``agent_class``
that names no agent class, or a module google-adk's denylist refuses, is an
``AgentDefinitionError`` (a ValueError, as google-adk's) naming the file."""

from __future__ import annotations

import importlib
import textwrap
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from google.adk.agents import config_agent_utils as adk_utils
from google_adk_harness import event_rows, gemini, rewritten, run_program, stand_in  # noqa: F401

from adk_actors import AgentDefinitionError
from adk_actors.agents import config_agent_utils
from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"), pytest.mark.timeout(120)]

#: the user's module of agent classes and callbacks, written for google-adk (ours is
#: this text with its imports rewritten)
AGENTS = '''\
from typing import Any, AsyncGenerator, ClassVar

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.base_agent_config import BaseAgentConfig
from google.adk.events import Event
from google.genai import types


class GreeterConfig(BaseAgentConfig):
    greeting: str = "hello"
    times: int = 1


class Greeter(BaseAgent):
    """Says its greeting ``repeat`` times, then runs its sub-agents."""

    config_type: ClassVar[type[BaseAgentConfig]] = GreeterConfig
    greeting: str = "hello"
    repeat: int = 1
    seen_config: str = ""
    formatter: Any = None

    @classmethod
    def _parse_config(cls, config, config_abs_path, kwargs):
        kwargs["repeat"] = config.times
        kwargs["seen_config"] = type(config).__name__
        return kwargs

    async def _run_async_impl(self, ctx) -> AsyncGenerator[Event, None]:
        text = " ".join([self.greeting] * self.repeat)
        if self.formatter is not None:
            text = self.formatter(text)
        yield Event(author=self.name, invocation_id=ctx.invocation_id, branch=ctx.branch,
                    content=types.Content(role="model", parts=[types.Part(text=text)]))
        for sub in self.sub_agents:
            async for event in sub.run_async(ctx):
                yield event


class LabelConfig(BaseAgentConfig):
    label: str = ""


class Labelled(BaseAgent):
    """Makes its agent itself from its config."""

    config_type: ClassVar[type[BaseAgentConfig]] = LabelConfig
    label: str = ""

    @classmethod
    def from_config(cls, config, config_abs_path):
        return cls(name=config.name, label=type(config).__name__ + ":" + config.label.upper())

    async def _run_async_impl(self, ctx) -> AsyncGenerator[Event, None]:
        yield Event(author=self.name, invocation_id=ctx.invocation_id, branch=ctx.branch,
                    content=types.Content(role="model", parts=[types.Part(text=self.label)]))


class Plain(BaseAgent):
    """No config of its own: a file gives it only BaseAgent's keys and its fields."""

    mood: str = "calm"


class Chatty(LlmAgent):
    pass


class NotAnAgent:
    pass


def make_agent():
    return None


def shout(text):
    return text.upper() + "!"


def check_in(callback_context):
    return None


def lookup(city: str) -> str:
    """The weather in a city."""
    return "sunny in " + city
'''


def user_module(folder: Path, monkeypatch: pytest.MonkeyPatch, source: str, side: str) -> str:
    """``source`` as an importable module of a fresh name (on sys.path for the test)."""
    name = f"adk52_custom_{side}_{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()
    return name


@pytest.fixture
def modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, ModuleType]]:
    """The user's module for each side: google-adk's as written, ours rewritten."""
    names = {"theirs": user_module(tmp_path / "code", monkeypatch, AGENTS, "theirs"),
             "ours": user_module(tmp_path / "code", monkeypatch, rewritten(AGENTS), "ours")}
    assert "google" not in rewritten(AGENTS)
    yield {side: importlib.import_module(name) for side, name in names.items()}


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text))
    return folder / "root_agent.yaml"


def greeter_app(folder: Path, module: str) -> Path:
    """A Greeter root (its own keys, a code reference, a callback) whose sub-agents are
    an LlmAgent file and a Labelled one."""
    return write(folder, {
        "root_agent.yaml": f"""\
            agent_class: {module}.Greeter
            name: greeter
            description: Greets, then hands over.
            greeting: good day
            times: 2
            formatter_code: {module}.shout
            before_agent_callbacks:
              - name: {module}.check_in
            sub_agents:
              - config_path: ./helper.yaml
              - config_path: ./tag.yaml
            """,
        "helper.yaml": f"""\
            name: helper
            model: gemini-2.5-flash
            instruction: You help briefly.
            tools:
              - name: {module}.lookup
            """,
        "tag.yaml": f"""\
            agent_class: {module}.Labelled
            name: tag
            label: urgent
            """,
    })


def _value(value: Any) -> Any:
    if isinstance(value, list):
        return [_value(v) for v in value]
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return value


def tree(agent: Any) -> dict[str, Any]:
    """What a user reads of a loaded agent and the agents below it."""
    fields = ("name", "description", "greeting", "repeat", "seen_config", "formatter", "label", "mood",
              "model", "instruction", "before_agent_callback", "after_agent_callback")
    return {"class": type(agent).__name__,
            **{field: _value(getattr(agent, field)) for field in fields if hasattr(agent, field)},
            "tools": sorted(getattr(t, "name", getattr(t, "__name__", "?")) for t in getattr(agent, "tools", [])),
            **({"max_iterations": agent.max_iterations} if type(agent).__name__ == "LoopAgent" else {}),
            "sub_agents": [tree(sub) for sub in agent.sub_agents]}


def recorded(load: Callable[[], Any]) -> tuple[Any, list[str]]:
    """What ``load()`` returns and the DeprecationWarnings it issued."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = load()
    return result, [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]


def test_a_custom_agent_class_loads_as_google_adk_loads_it(tmp_path: Path, modules: dict[str, ModuleType]) -> None:
    theirs, their_warnings = recorded(
        lambda: adk_utils.from_config(str(greeter_app(tmp_path / "theirs", modules["theirs"].__name__))))
    ours, our_warnings = recorded(
        lambda: config_agent_utils.from_config(str(greeter_app(tmp_path / "ours", modules["ours"].__name__))))
    assert tree(ours) == tree(theirs)
    assert tree(ours)["repeat"] == 2 and tree(ours)["seen_config"] == "GreeterConfig"  # the hook ran on its config
    assert tree(ours)["formatter"] == "shout" and tree(ours)["before_agent_callback"] == ["check_in"]
    assert tree(ours)["sub_agents"][1]["label"] == "LabelConfig:URGENT"  # its own from_config made it
    assert isinstance(ours, modules["ours"].Greeter)
    assert [ours.sub_agents[0].parent_agent, ours.sub_agents[1].parent_agent] == [ours, ours]
    # the hook is deprecated on both sides, and says so when it runs
    assert any("Greeter._parse_config is deprecated" in w for w in their_warnings)
    assert any("Greeter._parse_config is deprecated" in w for w in our_warnings)


def test_a_custom_class_without_its_own_config_and_an_llm_agent_subclass_load_alike(
        tmp_path: Path, modules: dict[str, ModuleType]) -> None:
    def files(side: str) -> Path:
        module = modules[side].__name__
        return write(tmp_path / side, {
            "root_agent.yaml": f"""\
                agent_class: {module}.Plain
                name: plain
                mood: cheerful
                after_agent_callbacks:
                  - name: {module}.check_in
                sub_agents:
                  - config_path: ./chatty.yaml
                """,
            "chatty.yaml": f"""\
                agent_class: {module}.Chatty
                name: chatty
                model: gemini-2.5-flash
                instruction: Talk a lot.
                tools:
                  - name: {module}.lookup
                """,
        })

    theirs, _ = recorded(lambda: adk_utils.from_config(str(files("theirs"))))
    ours, _ = recorded(lambda: config_agent_utils.from_config(str(files("ours"))))
    assert tree(ours) == tree(theirs)
    assert tree(ours)["mood"] == "cheerful" and tree(ours)["sub_agents"][0]["tools"] == ["lookup"]
    assert isinstance(ours.sub_agents[0], modules["ours"].Chatty)


def test_from_config_class_methods_make_the_same_agents_and_warn(tmp_path: Path,
                                                                  modules: dict[str, ModuleType]) -> None:
    import google.adk.agents as adk_agents

    import adk_actors.agents as our_agents

    made = {}
    for side, agents in (("theirs", adk_agents), ("ours", our_agents)):
        folder = tmp_path / side
        write(folder, {"helper.yaml": "name: helper\nmodel: gemini-2.5-flash\ninstruction: Help.\n"})
        path = str(folder / "root_agent.yaml")
        module = modules[side]
        greeter, greeter_warnings = recorded(lambda: module.Greeter.from_config(
            module.GreeterConfig(name="greeter", greeting="hey", times=3), path))
        plain, _ = recorded(lambda: module.Plain.from_config({"name": "plain", "mood": "odd"}, path))
        llm, llm_warnings = recorded(lambda: agents.LlmAgent.from_config(
            {"name": "root", "model": "gemini-2.5-flash", "instruction": "Route.",
             "sub_agents": [{"config_path": "helper.yaml"}]}, path))
        config = importlib.import_module(f"{agents.__name__}.loop_agent_config")
        loop, _ = recorded(lambda: agents.LoopAgent.from_config(config.LoopAgentConfig(
            name="again", max_iterations=3, sub_agents=[{"config_path": "helper.yaml"}]), path))
        made[side] = ([tree(greeter), tree(plain), tree(llm), tree(loop)], greeter_warnings, llm_warnings)
    assert made["ours"][0] == made["theirs"][0]
    assert made["ours"][0][3]["max_iterations"] == 3 and made["ours"][0][3]["sub_agents"][0]["name"] == "helper"
    assert made["ours"][0][0]["repeat"] == 3 and made["ours"][0][0]["seen_config"] == "GreeterConfig"
    assert made["ours"][0][2]["sub_agents"][0]["instruction"] == "Help."
    for side in ("theirs", "ours"):
        _, greeter_warnings, llm_warnings = made[side]
        assert any("BaseAgent.from_config is deprecated" in w for w in greeter_warnings), side
        assert any("BaseAgent.from_config is deprecated" in w for w in llm_warnings), side


PROGRAM = """\
from google.adk.agents import config_agent_utils
from google.adk.runners import InMemoryRunner
from google.genai import types


async def main(path):
    root = config_agent_utils.from_config(path)
    runner = InMemoryRunner(agent=root, app_name="greetings")
    session = await runner.session_service.create_session(app_name="greetings", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="What is the weather in Oslo?")])
    return [event async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message)]
"""


def test_a_custom_agent_from_its_file_runs_as_in_google_adk(tmp_path: Path, modules: dict[str, ModuleType],
                                                            gemini: StubServer) -> None:  # noqa: F811
    answers = [gemini_response(function_calls=[("lookup", {"city": "Oslo"})]), gemini_response(text="Sunny.")]
    paths = {side: str(greeter_app(tmp_path / side, modules[side].__name__)) for side in ("theirs", "ours")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        _, theirs = run_program(PROGRAM, list(answers), gemini, paths["theirs"])
        assert len(gemini.responses) == 0, "google-adk must use the whole script"
        _, ours = run_program(rewritten(PROGRAM), list(answers), gemini, paths["ours"])
    assert len(gemini.responses) == 0
    assert event_rows(ours) == event_rows(theirs)
    assert [(row["author"], row["text"]) for row in event_rows(ours)][:1] == [("greeter", "GOOD DAY GOOD DAY!")]
    assert [row["text"] for row in event_rows(ours)][-2:] == ["Sunny.", "LabelConfig:URGENT"]


@pytest.mark.parametrize(("reference", "why"), [
    ("{module}.NotAnAgent", "the class NotAnAgent, not an agent class"),
    ("{module}.make_agent", "function, not an agent class"),
    ("{module}.no_such_class", "cannot import"),
    ("{module}_missing.Agent", "cannot import"),
    ("os.path.join", "may not import from 'os'"),
    ("subprocess.Popen", "may not import from 'subprocess'"),
    ("yaml.Loader", "may not import from 'yaml'"),
    ("ruamel.yaml.YAML", "may not import from 'ruamel'"),
])
def test_a_dotted_agent_class_that_names_no_agent_class_is_refused_by_both(
        tmp_path: Path, modules: dict[str, ModuleType], reference: str, why: str) -> None:
    for side, load, error in (("theirs", adk_utils.from_config, ValueError),
                              ("ours", config_agent_utils.from_config, AgentDefinitionError)):
        name = reference.format(module=modules[side].__name__)
        path = write(tmp_path / side, {"root_agent.yaml": f"agent_class: {name}\nname: odd\n"})
        with pytest.raises(error) as refused:
            load(str(path))
        if side == "ours":
            assert isinstance(refused.value, ValueError)
            assert str(refused.value).startswith(f"{path}: agent_class")
            assert why in str(refused.value)


@pytest.mark.parametrize(("text", "why"), [
    ("agent_class: {module}.Greeter\nname: g\ntimes: many\n", "Greeter (GreeterConfig): times: Input should be a valid integer"),
    ("agent_class: {module}.Chatty\nname: c\ninstruction: Hi.\nmodle: gemini-2.5-flash\n", "modle: Chatty has no such field"),
])
def test_a_custom_agents_file_is_refused_where_google_adk_refuses_it(
        tmp_path: Path, modules: dict[str, ModuleType], text: str, why: str) -> None:
    for side, load, error in (("theirs", adk_utils.from_config, ValueError),
                              ("ours", config_agent_utils.from_config, AgentDefinitionError)):
        path = write(tmp_path / side, {"root_agent.yaml": text.format(module=modules[side].__name__)})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with pytest.raises(error) as refused:
                load(str(path))
        if side == "ours":
            assert str(refused.value).startswith(f"{path}: {why}")
