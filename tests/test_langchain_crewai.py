"""Issue 56: google-adk's LangChain and CrewAI adapters (``LangchainTool``,
``CrewaiTool``, their configs, their deprecated ``tools.*_tool`` paths) and
``LangGraphAgent``, side by side with google-adk 2.13.

The programs run as in tests/test_google_adk_parity.py (the shared harness,
tests/google_adk_harness.py): as written on google-adk, then with their imports
rewritten on ours, against one Gemini REST stand-in named by environment variables
only. Compared: the events (through google-adk's Event readers), the final texts, the
state and the model requests, with two allowances: google-adk sends a schema's type
names as google.genai's ``Type`` (``"INTEGER"``) where we send JSON schema's
(``"integer"``, which Gemini reads alike), so the requests are compared with type
names in one case; and an error result's words are our own.

LangChain's ``@tool``, ``StructuredTool`` and ``BaseTool`` are the real langchain-core;
the graph is a real compiled LangGraph ``StateGraph``. CrewAI is not installed (it
pins pydantic, mcp and openai below this project's versions and pulls in chromadb,
onnxruntime and lancedb), so its tools are a stand-in of ``crewai.tools.BaseTool``'s
interface (``name``, ``description``, ``args_schema``, ``run`` validating its keyword
arguments against ``args_schema`` and calling ``_run``), put in ``sys.modules`` as
``crewai.tools`` for both sides.

Then ours only: the error that says which extra to install when the library is
missing (its import made to fail through ``sys.modules``), the deprecated paths'
warnings, and the agent-file configs.
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, rewritten, run_case

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")
pytest.importorskip("langchain_core")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

RUN = '''
async def main(turns):
    runner = InMemoryRunner(agent=ROOT, app_name="adapters")
    session = await runner.session_service.create_session(app_name="adapters", user_id="ann")
    seen, finals = [], []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append((event.author, "".join(p.text or "" for p in event.content.parts)))
    stored = await runner.session_service.get_session(app_name="adapters", user_id="ann", session_id=session.id)
    await runner.close()
    return seen, finals, dict(stored.state)
'''

LANGCHAIN_TOOLS = '''
from typing import Optional

from langchain_core.tools import BaseTool, StructuredTool, tool
from pydantic import BaseModel, Field

from google.adk.agents import Agent
from google.adk.integrations.langchain import LangchainTool
from google.adk.runners import InMemoryRunner
from google.genai import types


@tool
def multiply(a: int, b: int, note: Optional[str] = None, tags: list[str] = []) -> int:
    """Multiply two numbers."""
    return a * b


@tool
async def shout(word: str) -> str:
    """Shout a word."""
    return word.upper() + "!"


class Trip(BaseModel):
    city: str = Field(description="The city.")
    days: int = 2
    budget: Optional[float] = None


def weather(city: str, days: int = 2, budget: Optional[float] = None) -> dict:
    return {"city": city, "days": days, "sky": "clear"}


forecast = StructuredTool.from_function(func=weather, name="forecast", description="The weather of a city.",
                                        args_schema=Trip, return_direct=True)


class Lookup(BaseTool):
    name: str = "lookup"
    description: str = "Look a city up."
    args_schema: type[BaseModel] = Trip

    def _run(self, city: str, days: int = 2, budget: Optional[float] = None, run_manager=None) -> str:
        return f"{city} for {days} days"


class Plain:
    name = "plain runner"
    description = "Runs a query."

    def run(self, query: str) -> str:
        return query.upper()


ROOT = Agent(name="helper", model="gemini-2.5-flash", instruction="Use the tools.",
             tools=[LangchainTool(multiply), LangchainTool(shout), LangchainTool(Lookup()),
                    LangchainTool(Plain(), name="plain", description="Shouts a query back."),
                    LangchainTool(forecast, name="forecast")])
''' + RUN


def _one_case(value: Any, names: bool = False) -> Any:
    """The requests' schemas with type names in lower case (``names``: ``value`` maps
    property names, which are kept as they are)."""
    if isinstance(value, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) and not names
                    else _one_case(v, k == "properties" and not names)) for k, v in value.items()}
    if isinstance(value, list):
        return [_one_case(item) for item in value]
    return value


def _side_by_side(source: str, answers: list[StubResponse], turns: list[str], server: StubServer
                  ) -> tuple[dict[str, Any], dict[str, Any]]:
    theirs = run_case(source, answers, turns, server)
    ours = run_case(rewritten(source), answers, turns, server)
    assert "google" not in rewritten(source)
    for case in (theirs, ours):
        case["requests"] = _one_case(case["requests"])
    return theirs, ours


def _declarations(server: StubServer, source: str) -> dict[str, dict[str, Any]]:
    """The function declarations of the one request ``source`` makes, by name."""
    harness.run_program(source, [gemini_response(text="done")], server, ["go"])
    body = server.requests[0].body
    return {d["name"]: _one_case(d) for tool in body["tools"] for d in tool.get("functionDeclarations", [])}


def test_langchain_tools_are_declared_and_answered_as_google_adk_does(gemini: StubServer) -> None:
    answers = [calls(("multiply", {"a": 3, "b": 4}), ("shout", {"word": "hey"}), ("lookup", {"city": "Rome"}),
                     ("plain", {"query": "hi"})),
               gemini_response(text="12, HEY!, Rome, HI."),
               calls(("forecast", {"city": "Paris", "days": 3}))]
    theirs, ours = _side_by_side(LANGCHAIN_TOOLS, answers, ["compute", "weather?"], gemini)
    assert theirs["unused_answers"] == 0 and theirs["finals"]
    assert ours == theirs
    declared = {tool["name"]: tool for tool in theirs["requests"][0]["tools"]}
    assert declared["multiply"] == {"name": "multiply", "description": "Multiply two numbers.", "parameters": {
        "type": "object", "required": ["a", "b"], "properties": {
            "a": {"type": "integer"}, "b": {"type": "integer"}, "note": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}}}}}
    assert declared["lookup"]["parameters"]["properties"]["city"] == {"type": "string", "description": "The city."}
    assert declared["plain"]["description"] == "Shouts a query back."
    responses = [r for event in theirs["events"] for r in event["responses"]]
    assert [r[1:] for r in responses] == [
        ("multiply", {"result": 12}), ("shout", {"result": "HEY!"}), ("lookup", {"result": "Rome for 2 days"}),
        ("plain", {"result": "HI"}), ("forecast", {"city": "Paris", "days": 3, "sky": "clear"})]
    # return_direct: the tool's answer ends the turn, unsummarized
    assert theirs["events"][-1]["skip_summarization"] and theirs["events"][-1]["final"]


def test_the_declarations_sent_are_google_adks_key_for_key(gemini: StubServer) -> None:
    theirs = _declarations(gemini, LANGCHAIN_TOOLS)
    ours = _declarations(gemini, rewritten(LANGCHAIN_TOOLS))
    assert sorted(ours) == sorted(theirs) == ["forecast", "lookup", "multiply", "plain", "shout"]
    for name, declaration in theirs.items():
        assert ours[name] == declaration, name
    # a tool without an args_schema is declared as its function is (a FunctionTool's schema)
    assert "parameters_json_schema" in theirs["plain"]


def test_a_return_direct_tool_called_wrongly_leaves_the_turn_to_the_model(gemini: StubServer) -> None:
    """A call the tool cannot take is an error result on both (in our words), which
    does not end the turn: the model reads it and answers."""
    answers = [calls(("forecast", {"days": 3})), gemini_response(text="Which city?")]
    theirs, ours = _side_by_side(LANGCHAIN_TOOLS, answers, ["weather?"], gemini)
    for case in (theirs, ours):
        (response,) = case["events"][1]["responses"]
        assert response[1] == "forecast" and "city" in response[2]["error"]
        assert not case["events"][1]["skip_summarization"]
        response[2].clear()
        case["requests"][1]["contents"][-1]["parts"][0]["functionResponse"]["response"].clear()
    assert ours == theirs
    assert theirs["finals"] == [["helper", "Which city?"]]


NESTED = '''
from langchain_core.tools import StructuredTool
from pydantic import BaseModel


class Stop(BaseModel):
    city: str


class Route(BaseModel):
    stops: list[Stop]


def plan(stops):
    return len(stops)


route = StructuredTool.from_function(func=plan, name="plan", description="Plan a route.", args_schema=Route)
'''


def test_a_schema_the_model_cannot_be_told_is_a_value_error_on_both() -> None:
    """A nested model's ``$ref`` (google-adk reads only the schema's properties) cannot
    be declared: a ValueError naming the tool on both, when the declaration is made."""
    from google.adk.integrations.langchain import LangchainTool as TheirLangchainTool

    from adk_actors.integrations.langchain import LangchainTool

    namespace: dict[str, Any] = {}
    exec(compile(NESTED, "<nested>", "exec"), namespace)
    with pytest.raises(ValueError, match="Langchain tool"):
        TheirLangchainTool(namespace["route"])._get_declaration()
    ours = LangchainTool(namespace["route"])
    with pytest.raises(ValueError, match="LangchainTool 'plan': cannot declare it"):
        ours.declaration()


SIMPLE_TOOL = '''
from langchain_core.tools import Tool

from google.adk.agents import Agent
from google.adk.integrations.langchain import LangchainTool
from google.adk.runners import InMemoryRunner
from google.genai import types

ROOT = Agent(name="helper", model="gemini-2.5-flash", instruction="Use the tools.",
             tools=[LangchainTool(Tool(name="reverse", func=lambda text: text[::-1], description="Reverse text."))])
''' + RUN


def test_a_plain_langchain_tool_without_a_schema_is_declared_by_its_run_function(gemini: StubServer) -> None:
    """google-adk declares a ``Tool`` with no ``args_schema`` by LangChain's ``_run``,
    whose one required keyword is ``config``: the model is told so, and a call without
    it is an error result, on both (the error's words are our own)."""
    answers = [calls(("reverse", {"text": "abc"})), gemini_response(text="no luck")]
    theirs, ours = _side_by_side(SIMPLE_TOOL, answers, ["reverse abc"], gemini)
    assert theirs["requests"][0]["tools"][0]["parameters"]["required"] == ["config"]
    for case in (theirs, ours):
        (response,) = case["events"][1]["responses"]
        assert response[1] == "reverse" and "config" in response[2]["error"]
        response[2].clear()
        case["requests"][1]["contents"][-1]["parts"][0]["functionResponse"]["response"].clear()
    assert ours == theirs


RAISING = '''
from langchain_core.tools import tool

from google.adk.agents import Agent
from google.adk.integrations.langchain import LangchainTool
from google.adk.runners import InMemoryRunner
from google.genai import types


@tool
def explode(fuse: str) -> str:
    """Light a fuse."""
    raise RuntimeError(f"the {fuse} fuse blew")


def report(tool, args, tool_context, error):
    return {"error": f"{type(error).__name__}: {error}", "tool": tool.name, "args": args}


ROOT = Agent(name="helper", model="gemini-2.5-flash", instruction="Use the tools.",
             tools=[LangchainTool(explode)], on_tool_error_callback=HOOK)
''' + RUN


def test_a_langchain_tool_that_raises(gemini: StubServer) -> None:
    """The exception reaches the tool-error hooks as it is, on both; with no hook,
    google-adk's run raises it and ours answers the model with it (the engine's rule
    for any tool, see docs/design.md)."""
    answers = [calls(("explode", {"fuse": "short"})), gemini_response(text="It blew.")]
    theirs, ours = _side_by_side(RAISING.replace("HOOK", "report"), answers, ["light it"], gemini)
    assert ours == theirs
    assert theirs["events"][1]["responses"][0][2] == {"error": "RuntimeError: the short fuse blew", "tool": "explode",
                                                      "args": {"fuse": "short"}}
    with pytest.raises(RuntimeError, match="the short fuse blew"):
        run_case(RAISING.replace("HOOK", "None"), answers, ["light it"], gemini)
    ours = run_case(rewritten(RAISING.replace("HOOK", "None")), answers, ["light it"], gemini)
    assert ours["events"][1]["responses"][0][1:] == ("explode", {"error": "RuntimeError: the short fuse blew"})
    assert ours["finals"] == [["helper", "It blew."]]


# -- CrewAI: a stand-in of crewai.tools.BaseTool for both sides ---------------------------

CREWAI_STAND_IN = '''
from typing import Any

from pydantic import BaseModel, ConfigDict


class BaseTool(BaseModel):
    """crewai.tools.BaseTool as the adapters use it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    description: str
    args_schema: type[BaseModel]

    def run(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(**self.args_schema.model_validate(kwargs).model_dump())

    def _run(self, **kwargs: Any) -> Any:
        raise NotImplementedError
'''


@pytest.fixture
def crewai_stand_in(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    package, tools = types.ModuleType("crewai"), types.ModuleType("crewai.tools")
    exec(compile(CREWAI_STAND_IN, "crewai/tools.py", "exec"), tools.__dict__)
    package.tools = tools  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "crewai", package)
    monkeypatch.setitem(sys.modules, "crewai.tools", tools)
    for name in ("google.adk.integrations.crewai", "google.adk.integrations.crewai.crewai_tool"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return tools


CREWAI_TOOLS = '''
from typing import Optional

from crewai.tools import BaseTool
from pydantic import BaseModel, Field

from google.adk.agents import Agent
from google.adk.integrations.crewai import CrewaiTool
from google.adk.runners import InMemoryRunner
from google.genai import types


class Query(BaseModel):
    query: str = Field(description="What to look for.")
    limit: Optional[int] = None
    sites: list[str] = []


class WebSearch(BaseTool):
    name: str = "Web Search"
    description: str = "Search the web."
    args_schema: type[BaseModel] = Query

    def _run(self, query: str, limit: Optional[int] = None, sites: list[str] = []) -> dict:
        return {"hits": [f"{query} #{i}" for i in range(limit or 1)], "sites": sites}


ROOT = Agent(name="researcher", model="gemini-2.5-flash", instruction="Research.",
             tools=[CrewaiTool(WebSearch(), name=""),
                    CrewaiTool(WebSearch(), name="news", description="Search the news.")])
''' + RUN


def test_crewai_tools_are_declared_and_answered_as_google_adk_does(gemini: StubServer,
                                                                  crewai_stand_in: types.ModuleType) -> None:
    answers = [calls(("web_search", {"query": "otters", "limit": 2}), ("news", {"query": "rivers", "sites": ["a"]})),
               gemini_response(text="Found them.")]
    theirs, ours = _side_by_side(CREWAI_TOOLS, answers, ["find otters"], gemini)
    assert theirs["unused_answers"] == 0 and theirs["finals"]
    assert ours == theirs
    declared = {tool["name"]: tool for tool in theirs["requests"][0]["tools"]}
    assert declared["web_search"] == {"name": "web_search", "description": "Search the web.", "parameters": {
        "type": "object", "required": ["query"], "properties": {
            "query": {"type": "string", "description": "What to look for."}, "limit": {"type": "integer"},
            "sites": {"type": "array", "items": {"type": "string"}}}}}
    assert declared["news"]["description"] == "Search the news."
    assert [r[1:] for r in theirs["events"][1]["responses"]] == [
        ("web_search", {"hits": ["otters #0", "otters #1"], "sites": []}),
        ("news", {"hits": ["rivers #0"], "sites": ["a"]})]


# -- LangGraphAgent ------------------------------------------------------------------------

LANGGRAPH = '''
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from google.adk.agents.langgraph_agent import LangGraphAgent
from google.adk.runners import InMemoryRunner
from google.genai import types


def echo(state):
    seen = " | ".join(f"{type(m).__name__}:{m.content}" for m in state["messages"])
    return {"messages": [AIMessage(content=f"{len(state['messages'])} messages: {seen}")]}


graph = StateGraph(MessagesState)
graph.add_node("echo", echo)
graph.add_edge(START, "echo")
graph.add_edge("echo", END)
ROOT = LangGraphAgent(name="graph_agent", graph=graph.compile(checkpointer=CHECKPOINTER),
                      instruction="Be brief.")
''' + RUN


@pytest.mark.parametrize("checkpointer", ["None", "InMemorySaver()"])
def test_langgraph_agent_runs_a_graph_as_google_adk_does(gemini: StubServer, checkpointer: str) -> None:
    """Without a checkpointer the graph is given the whole conversation each turn (the
    instruction first every time); with one, only the new user message (the
    instruction in the thread's first turn only), the rest from its own memory: the
    graph sees the same messages either way."""
    pytest.importorskip("langgraph")
    source = LANGGRAPH.replace("CHECKPOINTER", checkpointer)
    theirs, ours = _side_by_side(source, [], ["hello", "again"], gemini)
    assert ours == theirs
    assert theirs["requests"] == [] and len(theirs["finals"]) == 2
    first = "2 messages: SystemMessage:Be brief. | HumanMessage:hello"
    assert theirs["finals"] == [["graph_agent", first], ["graph_agent", (
        f"4 messages: SystemMessage:Be brief. | HumanMessage:hello | AIMessage:{first} | HumanMessage:again")]]


def test_langgraph_thread_ids_are_google_adks() -> None:
    pytest.importorskip("langgraph")
    from google.adk.agents.langgraph_agent import _get_thread_id

    from adk_actors.agents.langgraph_agent import thread_id

    for names in (("app", "ann", "s1"), ("a|b", "c", ""), ("", "", ""), ("ä", "1:2", "s|3")):
        assert thread_id(*names) == _get_thread_id(*names)


# -- ours only: the agent-file configs, the old paths, the missing extra -------------------

TOOL_MODULE = '''
from crewai.tools import BaseTool
from langchain_core.tools import tool
from pydantic import BaseModel


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


class Query(BaseModel):
    query: str


class WebSearch(BaseTool):
    name: str = "Web Search"
    description: str = "Search the web."
    args_schema: type[BaseModel] = Query

    def _run(self, query: str) -> str:
        return query


search = WebSearch()
'''


def test_the_configs_make_the_tools_google_adks_make(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     crewai_stand_in: types.ModuleType) -> None:
    from google.adk.integrations.crewai import CrewaiTool as TheirCrewaiTool
    from google.adk.integrations.langchain import LangchainTool as TheirLangchainTool
    from google.adk.tools.tool_configs import ToolArgsConfig as TheirArgs

    from adk_actors.integrations.crewai import CrewaiTool, CrewaiToolConfig
    from adk_actors.integrations.langchain import LangchainTool, LangchainToolConfig
    from adk_actors.tools.tool_configs import BaseToolConfig, ToolArgsConfig

    (tmp_path / "lc_config_tools.py").write_text(TOOL_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    agent_file = str(tmp_path / "root_agent.yaml")
    given = {"tool": "lc_config_tools.multiply", "name": "times", "description": "Times."}
    ours = LangchainTool.from_config(ToolArgsConfig(**given), agent_file)
    theirs = TheirLangchainTool.from_config(TheirArgs(**given), agent_file)
    assert (ours.name, ours.description) == (theirs.name, theirs.description) == ("times", "Times.")
    assert _one_case(ours.declaration().model_dump(exclude_none=True)) == _one_case(
        theirs._get_declaration().model_dump(mode="json", exclude_none=True)) | {"description": "Times."}
    # no name given: the LangChain tool's own (google-adk 2.13 names it "" then)
    assert LangchainTool.from_config(ToolArgsConfig(tool="lc_config_tools.multiply"), agent_file).name == "multiply"
    given = {"tool": "lc_config_tools.search"}
    crew, their_crew = CrewaiTool.from_config(ToolArgsConfig(**given), agent_file), \
        TheirCrewaiTool.from_config(TheirArgs(**given), agent_file)
    assert (crew.name, crew.description) == (their_crew.name, their_crew.description) == ("web_search",
                                                                                         "Search the web.")
    for config in (LangchainToolConfig, CrewaiToolConfig):
        assert issubclass(config, BaseToolConfig)
        assert config(tool="x.y").model_dump() == {"tool": "x.y", "name": "", "description": ""}
        with pytest.raises(ValueError, match="unknown"):
            config(tool="x.y", unknown=1)
    with pytest.raises(ValueError, match="no_such_module"):
        LangchainTool.from_config(ToolArgsConfig(tool="no_such_module.tool"), agent_file)


def test_google_adks_module_paths_name_the_same_classes_here() -> None:
    paths = {"integrations.langchain": ("LangchainTool", "LangchainToolConfig"),
             "integrations.langchain.langchain_tool": ("LangchainTool", "LangchainToolConfig"),
             "integrations.crewai": ("CrewaiTool", "CrewaiToolConfig"),
             "integrations.crewai.crewai_tool": ("CrewaiTool", "CrewaiToolConfig"),
             "agents.langgraph_agent": ("LangGraphAgent",)}
    for path, names in paths.items():
        module = importlib.import_module(f"adk_actors.{path}")
        assert all(isinstance(getattr(module, name), type) for name in names), path


@pytest.mark.parametrize(("old", "new", "names"), [
    ("adk_actors.tools.langchain_tool", "adk_actors.integrations.langchain", ("LangchainTool", "LangchainToolConfig")),
    ("adk_actors.tools.crewai_tool", "adk_actors.integrations.crewai", ("CrewaiTool", "CrewaiToolConfig"))])
def test_the_old_paths_warn_and_give_the_same_classes(old: str, new: str, names: tuple[str, ...],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        module = importlib.import_module(old)
    current = importlib.import_module(new)
    assert module.__all__ == list(names) == current.__all__
    for name in names:
        assert getattr(module, name) is getattr(current, name)


def test_without_the_library_making_an_adapter_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from adk_actors.agents.langgraph_agent import LangGraphAgent
    from adk_actors.integrations.crewai import CrewaiTool
    from adk_actors.integrations.langchain import LangchainTool

    class Runner:
        name = "runner"
        description = "Runs."

        def run(self, query: str) -> str:
            return query

    for module in ("langchain_core", "langchain_core.tools", "langchain_core.messages", "crewai", "crewai.tools",
                   "langgraph", "langgraph.graph"):
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'adk-actors\[langchain\]'") as raised:
        LangchainTool(Runner())
    assert raised.value.name == "langchain_core" and isinstance(raised.value, ImportError)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'adk-actors\[crewai\]'") as raised:
        CrewaiTool(Runner(), name="runner")
    assert raised.value.name == "crewai"
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'adk-actors\[langgraph\]'") as raised:
        LangGraphAgent(name="graph_agent", graph=object())
    assert raised.value.name == "langgraph"


def test_what_is_not_a_langchain_tool_is_refused() -> None:
    from adk_actors.integrations.langchain import LangchainTool

    with pytest.raises(ValueError, match="'run' or '_run'"):
        LangchainTool(object())


AGENT_FILE = '''
agent_class: LlmAgent
name: helper
model: gemini-2.5-flash
instruction: Use the tools.
tools:
  - name: {root}.integrations.langchain.LangchainTool
    args:
      tool: lc_config_tools.multiply
      name: times
      description: Times two numbers.
  - name: {root}.integrations.crewai.CrewaiTool
    args:
      tool: lc_config_tools.search
      name: search
'''


def test_an_agent_file_makes_the_tools_with_their_configs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         crewai_stand_in: types.ModuleType) -> None:
    """An agent file names the adapter classes with their ``args`` (the configs), as a
    google-adk agent file does; the tools are google-adk's, but for their paths."""
    from google.adk.agents import config_agent_utils as their_configs

    from adk_actors import AgentDefinitionError
    from adk_actors.agents import config_agent_utils

    (tmp_path / "lc_config_tools.py").write_text(TOOL_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    trees = []
    for root, load in (("google.adk", their_configs.from_config), ("adk_actors", config_agent_utils.from_config)):
        (tmp_path / "root_agent.yaml").write_text(AGENT_FILE.format(root=root))
        agent = load(str(tmp_path / "root_agent.yaml"))
        trees.append([(type(t).__name__, t.name, t.description) for t in agent.tools])
    assert trees[0] == trees[1] == [("LangchainTool", "times", "Times two numbers."),
                                    ("CrewaiTool", "search", "Search the web.")]
    (tmp_path / "root_agent.yaml").write_text(AGENT_FILE.format(root="adk_actors").replace("name: search",
                                                                                        "nickname: search"))
    with pytest.raises(AgentDefinitionError, match=r"(?s)CrewaiTool.*nickname"):
        config_agent_utils.from_config(str(tmp_path / "root_agent.yaml"))
