"""google-adk 2.13's tool simulators (issue 52): ``google.adk.tools.environment_simulation``
and its deprecated earlier name ``google.adk.tools.agent_simulator``, at
``adk_actors.tools.environment_simulation`` / ``adk_actors.tools.agent_simulator``.

One program runs in process on google-adk and on ours (imports rewritten) against one
Gemini stand-in: the simulator as a plugin over an agent with three tools, two of
them answered by the simulator's model from their declarations (the first call also
makes the model analyze how the tools share ids), one by canned answers (an error
for matching arguments, a response at a seeded probability, else the real tool).
Compared: the events, the session state, which real functions ran (a simulated
tool's never does), and every request the model received: the agent's as
google_adk_harness compares them, the simulator's own as the same model name,
generation settings and single user message, whose prompt (worded in our own words)
holds the same data laid out the same way: the tool declarations, the connection
map, the state store, the call's arguments and the environment data.
Then the callback form, the model's unreadable answers, the tracing strategy, config
validation (the same exception types), the deprecated package, and every public name.
"""

from __future__ import annotations

import importlib
import json
import re
import warnings
from typing import Any

import pytest
from google_adk_harness import (  # noqa: F401
    calls,
    event_rows,
    gemini,
    request_rows,
    rewritten,
    run_program,
    stand_in,
)

from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.apps import App
from google.adk.runners import InMemoryRunner
from google.adk.tools.environment_simulation import EnvironmentSimulationFactory
from google.adk.tools.environment_simulation.environment_simulation_config import (
    EnvironmentSimulationConfig, InjectedError, InjectionConfig, MockStrategy, ToolSimulationConfig)
from google.genai import types

ran = []


def create_ticket(title: str, priority: int = 2) -> dict:
    """Open a support ticket."""
    ran.append(["create_ticket", title])
    return {"real": True}


def get_ticket(ticket_id: str) -> dict:
    """Read a support ticket."""
    ran.append(["get_ticket", ticket_id])
    return {"real": True}


def weather(city: str) -> dict:
    """The weather in a city."""
    ran.append(["weather", city])
    return {"city": city, "forecast": "sun"}


config = EnvironmentSimulationConfig(
    tool_simulation_configs=[
        ToolSimulationConfig(tool_name="create_ticket", mock_strategy_type=MockStrategy.MOCK_STRATEGY_TOOL_SPEC),
        ToolSimulationConfig(tool_name="get_ticket", mock_strategy_type=MockStrategy.MOCK_STRATEGY_TOOL_SPEC),
        ToolSimulationConfig(tool_name="weather", injection_configs=[
            InjectionConfig(match_args={"city": "Oslo"},
                            injected_error=InjectedError(injected_http_error_code=503, error_message="down")),
            InjectionConfig(injection_probability=0.3, random_seed=7, injected_response={"forecast": "rain"}),
        ]),
    ],
    environment_data='{"users": ["ann"], "queue": "printers"}')
plugin = EnvironmentSimulationFactory.create_plugin(config)
root_agent = Agent(name="helper", model="gemini-2.5-flash", instruction="Help with tickets.",
                   tools=[create_ticket, get_ticket, weather])


async def main(turns):
    runner = InMemoryRunner(app=App(name="desk", root_agent=root_agent, plugins=[plugin]))
    session = await runner.session_service.create_session(app_name="desk", user_id="u", state={"team": "it"})
    events = []
    for text in turns:
        async for event in runner.run_async(user_id="u", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            events.append(event)
    stored = await runner.session_service.get_session(app_name="desk", user_id="u", session_id=session.id)
    await runner.close()
    return events, dict(stored.state), ran
'''

ANALYSIS = {"stateful_parameters": [{"parameter_name": "ticket_id", "creating_tools": ["create_ticket"],
                                     "consuming_tools": ["get_ticket"]}]}
TICKET = {"ticket": {"ticket_id": "T-1", "status": "open"}, "queue": "printers"}
FOUND = {"ticket_id": "T-1", "status": "open", "title": "printer"}
MISSING = {"error": {"code": 404, "message": "ticket T-9 not found"}}

SCRIPT = [
    # turn 1: a ticket made (the analysis first), read back with Oslo's weather (an
    # injected error), then three cities one by one (seeded draws 0.32, 0.15, 0.65
    # against 0.3: the real tool, the injected response, the real tool)
    calls(("create_ticket", {"title": "printer"})),
    gemini_response(json.dumps(ANALYSIS)),
    gemini_response("```json\n" + json.dumps(TICKET) + "\n```"),
    calls(("get_ticket", {"ticket_id": "T-1"}), ("weather", {"city": "Oslo"})),
    gemini_response(json.dumps(FOUND)),
    calls(("weather", {"city": "Rome"})),
    calls(("weather", {"city": "Paris"})),
    calls(("weather", {"city": "Lima"})),
    gemini_response("Ticket T-1 is open."),
    # turn 2: a ticket that was never made
    calls(("get_ticket", {"ticket_id": "T-9"})),
    gemini_response(json.dumps(MISSING)),
    gemini_response("There is no ticket T-9."),
]
TURNS = ["Open a ticket for the printer.", "And ticket T-9?"]
SIMULATOR_AT = [1, 2, 4, 10]


def _run(server: StubServer, source: str) -> dict[str, Any]:
    namespace, (events, state, ran) = run_program(source, SCRIPT, server, TURNS)
    assert not server.responses, "the script is used"
    return {"events": event_rows(events), "state": state, "ran": ran, "rows": request_rows(server),
            "bodies": [(r.path.split("?")[0], r.body) for r in server.requests], "namespace": namespace}


@pytest.fixture(scope="module")
def runs(stand_in: StubServer) -> tuple[dict[str, Any], dict[str, Any]]:  # noqa: F811
    monkeypatch = pytest.MonkeyPatch()
    try:
        from google_adk_harness import on_stand_in

        on_stand_in(stand_in.url, monkeypatch)
        return _run(stand_in, PROGRAM), _run(stand_in, rewritten(PROGRAM))
    finally:
        monkeypatch.undo()


def test_the_events_state_and_real_calls_are_google_adks(runs: tuple[dict[str, Any], dict[str, Any]]) -> None:
    theirs, ours = runs
    assert ours["events"] == theirs["events"]
    assert ours["state"] == theirs["state"] == {"team": "it"}
    answers = [response for row in theirs["events"] for response in row["responses"]]
    assert [(name, body) for _, name, body in answers] == [
        ("create_ticket", TICKET), ("get_ticket", FOUND),
        ("weather", {"error_code": 503, "error_message": "down"}),
        ("weather", {"city": "Rome", "forecast": "sun"}), ("weather", {"forecast": "rain"}),
        ("weather", {"city": "Lima", "forecast": "sun"}), ("get_ticket", MISSING)]
    # the simulated tools never ran; weather ran where no injection answered
    assert ours["ran"] == theirs["ran"] == [["weather", "Rome"], ["weather", "Lima"]]


def _camel(value: Any) -> Any:
    """Keys in camelCase (google.genai sends a thinking config's keys in snake_case to
    the Gemini API, which reads either spelling)."""
    if isinstance(value, dict):
        return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): _camel(v) for k, v in value.items()}
    return value


def _prompt(body: dict[str, Any]) -> str:
    (content,) = body["contents"]
    assert content["role"] == "user" and len(content["parts"]) == 1
    text: str = content["parts"][0]["text"]
    return text


def test_the_model_receives_what_google_adk_sends(runs: tuple[dict[str, Any], dict[str, Any]]) -> None:
    theirs, ours = runs
    assert [p for p, _ in ours["bodies"]] == [p for p, _ in theirs["bodies"]]
    assert {p for p, _ in theirs["bodies"]} == {"/v1beta/models/gemini-2.5-flash:generateContent"}
    at = [i for i, (_, body) in enumerate(theirs["bodies"]) if "systemInstruction" not in body]
    assert at == [i for i, (_, body) in enumerate(ours["bodies"]) if "systemInstruction" not in body] == SIMULATOR_AT
    for index, (their_row, our_row) in enumerate(zip(theirs["rows"], ours["rows"], strict=True)):
        if index not in SIMULATOR_AT:
            assert our_row == their_row, index  # the agent's own requests
    # the simulator's: no tools, google-adk's generation settings, one user message
    for index in SIMULATOR_AT:
        their_body, our_body = theirs["bodies"][index][1], ours["bodies"][index][1]
        assert "tools" not in their_body and "tools" not in our_body
        assert _camel(our_body["generationConfig"]) == _camel(their_body["generationConfig"]) == {
            "thinkingConfig": {"includeThoughts": False, "thinkingBudget": 10240}}
    prompts = [(_prompt(theirs["bodies"][i][1]), _prompt(ours["bodies"][i][1])) for i in SIMULATOR_AT]
    # the data each prompt holds, laid out as google-adk lays it out (json.dumps, indent 2)
    from google.adk.tools import FunctionTool as TheirFunctionTool

    functions = [theirs["namespace"][name] for name in ("create_ticket", "get_ticket", "weather")]
    declarations = [TheirFunctionTool(f)._get_declaration().model_dump(exclude_none=True) for f in functions]
    environment = '{"users": ["ann"], "queue": "printers"}'
    connections = json.dumps(ANALYSIS, indent=2)
    expected = [
        [json.dumps(declarations, indent=2)],
        [environment, connections, json.dumps({}, indent=2), json.dumps(declarations[0], indent=2),
         json.dumps({"title": "printer"}, indent=2), "create_ticket", "Open a support ticket."],
        [environment, connections, json.dumps({"ticket_id": {"T-1": TICKET}}, indent=2),
         json.dumps(declarations[1], indent=2), json.dumps({"ticket_id": "T-1"}, indent=2), "Read a support ticket."],
        [environment, connections, json.dumps({"ticket_id": {"T-1": TICKET}}, indent=2),
         json.dumps({"ticket_id": "T-9"}, indent=2)],
    ]
    for (their_prompt, our_prompt), blocks in zip(prompts, expected, strict=True):
        for block in blocks:
            assert block in their_prompt and block in our_prompt, block
        assert our_prompt != their_prompt  # in our own words


CALLBACK_PROGRAM = '''
import json
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools import FunctionTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.environment_simulation import EnvironmentSimulationFactory
from google.adk.tools.environment_simulation.environment_simulation_config import (
    EnvironmentSimulationConfig, InjectionConfig, MockStrategy, ToolSimulationConfig)
from google.genai import types

ran = []


def lookup(sku: str) -> dict:
    """Look up a product."""
    ran.append(sku)
    return {"real": True}


def note(text: str) -> dict:
    """Keep a note."""
    ran.append(text)
    return {"kept": text}


def ping() -> dict:
    """Check the shop is up."""
    ran.append("ping")
    return {"up": True}


def restock(sku: str, count: int) -> dict:
    """Order more of a product."""
    ran.append(["restock", sku])
    return {"ordered": count}


class Shelf(BaseToolset):
    async def get_tools(self, readonly_context=None):
        return [FunctionTool(restock)]


config = EnvironmentSimulationConfig(
    tool_simulation_configs=[
        ToolSimulationConfig(tool_name="lookup", mock_strategy_type=MockStrategy.MOCK_STRATEGY_TOOL_SPEC,
                             injection_configs=[InjectionConfig(match_args={"sku": "A1"},
                                                                injected_response={"sku": "A1", "stock": 4})]),
        ToolSimulationConfig(tool_name="note", mock_strategy_type=MockStrategy.MOCK_STRATEGY_TRACING),
    ],
    simulation_model="gemini-2.0-flash",
    simulation_model_configuration=types.GenerateContentConfig(temperature=0.0),
    tracing="lookup(sku=B2) -> out of stock")
root_agent = Agent(name="shop", model="gemini-2.5-flash", instruction="Keep the shop stocked.",
                   tools=[lookup, note, ping, Shelf(tool_name_prefix="shelf")],
                   before_tool_callback=EnvironmentSimulationFactory.create_callback(config))


async def main(turns):
    runner = InMemoryRunner(agent=root_agent, app_name="shop")
    session = await runner.session_service.create_session(app_name="shop", user_id="u")
    events = []
    for text in turns:
        async for event in runner.run_async(user_id="u", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            events.append(event)
    await runner.close()
    return events, {}, ran
'''

CALLBACK_SCRIPT = [
    calls(("lookup", {"sku": "A1"})),
    gemini_response("no JSON here"),  # the analysis: unreadable, so an empty map
    calls(("lookup", {"sku": "B2"})),
    gemini_response("[1, 2]"),  # a mock that is JSON but not an object
    calls(("lookup", {"sku": "C3"})),
    gemini_response("not json at all"),  # a mock that is not JSON
    calls(("note", {"text": "hello"})),
    calls(("ping", {})),  # not simulated: it runs
    gemini_response("Done."),
]


def _run_callback(server: StubServer, source: str) -> dict[str, Any]:
    _, (events, _, ran) = run_program(source, CALLBACK_SCRIPT, server, ["Check stock."])
    assert not server.responses, "the script is used"
    rows = event_rows(events)
    for row in rows:  # the error results' wording is our own
        row["responses"] = [(i, n, {**b, "error_message": "..."} if "error_message" in b else b)
                            for i, n, b in row["responses"]]
    requests = request_rows(server)
    for request in requests:
        for content in request["contents"]:
            for part in content.get("parts", []):
                answer = part.get("functionResponse", {}).get("response", {})
                if "error_message" in answer:
                    answer["error_message"] = "..."
    return {"events": rows, "ran": ran, "bodies": [(r.path.split("?")[0], r.body) for r in server.requests],
            "rows": requests}


def test_the_callback_form_and_unreadable_answers_are_google_adks(gemini: StubServer) -> None:  # noqa: F811
    theirs = _run_callback(gemini, CALLBACK_PROGRAM)
    ours = _run_callback(gemini, rewritten(CALLBACK_PROGRAM))
    assert ours["events"] == theirs["events"]
    answers = [(name, body) for row in theirs["events"] for _, name, body in row["responses"]]
    assert answers == [
        ("lookup", {"sku": "A1", "stock": 4}),
        ("lookup", {"status": "error", "error_message": "...", "llm_output": "[1, 2]"}),
        ("lookup", {"status": "error", "error_message": "...", "llm_output": "not json at all"}),
        ("note", {"status": "error", "error_message": "..."}), ("ping", {"up": True})]
    assert ours["ran"] == theirs["ran"] == ["ping"]
    assert [p for p, _ in ours["bodies"]] == [p for p, _ in theirs["bodies"]]
    simulator = [i for i, (p, _) in enumerate(theirs["bodies"]) if "gemini-2.0-flash" in p]
    assert simulator == [1, 3, 5]
    for index, (their_row, our_row) in enumerate(zip(theirs["rows"], ours["rows"], strict=True)):
        if index not in simulator:
            assert our_row == their_row, index
    # the analysis is shown every tool the agent's step has, a toolset's with its prefix
    their_schemas = re.search(r"schemas:\*\*\n  (\[.*\])\n\n  \*\*Output", _prompt(theirs["bodies"][1][1]), re.S)
    assert their_schemas is not None
    names = [d["name"] for d in json.loads(their_schemas.group(1))]
    assert names == ["lookup", "note", "ping", "shelf_restock"]
    assert their_schemas.group(1) in _prompt(ours["bodies"][1][1])
    for index in simulator:
        their_body, our_body = theirs["bodies"][index][1], ours["bodies"][index][1]
        assert our_body["generationConfig"] == their_body["generationConfig"] == {"temperature": 0.0}
    # the analysis failed: the mocks are told of an empty map, and of the tracing text
    for index in (3, 5):
        for side in (theirs, ours):
            prompt = _prompt(side["bodies"][index][1])
            assert json.dumps({"stateful_parameters": []}, indent=2) in prompt
            assert "lookup(sku=B2) -> out of stock" in prompt


def test_a_tool_that_declares_nothing_gets_an_error_result_and_no_model_call(gemini: StubServer) -> None:  # noqa: F811
    import asyncio

    from google.adk.tools import BaseTool as TheirTool
    from google.adk.tools.environment_simulation.strategies import tool_spec_mock_strategy as theirs
    from google.genai import types as their_types

    from adk_actors import types as our_types
    from adk_actors.tools import BaseTool as OurTool
    from adk_actors.tools.environment_simulation.strategies import tool_spec_mock_strategy as ours

    with gemini._lock:
        gemini.requests.clear()
    results = []
    for base, module, types in ((TheirTool, theirs, their_types), (OurTool, ours, our_types)):
        tool = base(name="silent", description="Declares nothing.")
        strategy = module.ToolSpecMockStrategy("gemini-2.5-flash", types.GenerateContentConfig())
        results.append(asyncio.run(strategy.mock(tool, {"a": 1}, None, None, {})))
    assert [sorted(r) for r in results] == [["error_message", "status"]] * 2
    assert results[0]["status"] == results[1]["status"] == "error"
    assert gemini.requests == []


def _outcome(make: Any) -> Any:
    try:
        made = make()
    except Exception as exc:
        return type(exc).__name__
    return made.model_dump(mode="json", exclude_none=True) if hasattr(made, "model_dump") else made


def _configs(module: Any, types: Any) -> list[Any]:
    """The same configs, made with one side's classes (each made when called)."""
    m = module
    tool, inject, error, strategy = m.ToolSimulationConfig, m.InjectionConfig, m.InjectedError, m.MockStrategy
    ok = [tool(tool_name="t", mock_strategy_type=strategy.MOCK_STRATEGY_TOOL_SPEC)]
    return [
        lambda: m.EnvironmentSimulationConfig(),  # the list's check is not run on its default
        lambda: m.EnvironmentSimulationConfig(tool_simulation_configs=[]),
        lambda: m.EnvironmentSimulationConfig(tool_simulation_configs=ok * 2),
        lambda: m.EnvironmentSimulationConfig(tool_simulation_configs=ok, simulation_model="gemini-2.0-flash",
                                              environment_data="{}", tracing="[]"),
        lambda: m.EnvironmentSimulationConfig(
            tool_simulation_configs=ok,
            simulation_model_configuration=types.GenerateContentConfig(temperature=0.5, max_output_tokens=64)),
        lambda: m.EnvironmentSimulationConfig(tool_simulation_configs=[{"tool_name": "t", "mock_strategy_type": 1}]),
        lambda: m.EnvironmentSimulationConfig(tool_simulation_configs=ok, simulation_model=3),
        lambda: tool(tool_name="t"),
        lambda: tool(tool_name="t", mock_strategy_type=strategy.MOCK_STRATEGY_UNSPECIFIED),
        lambda: tool(tool_name="t", injection_configs=[inject(injected_response={"a": 1})]),
        lambda: tool(tool_name="t", mock_strategy_type=7),
        lambda: inject(),
        lambda: inject(injected_response={}),
        lambda: inject(injected_response={"a": 1}, injected_error=error(injected_http_error_code=500,
                                                                        error_message="x")),
        lambda: inject(injected_response={"a": 1}, injected_latency_seconds=120.5),
        lambda: inject(injected_response={"a": 1}, injected_latency_seconds=120.0, injection_probability=2.0,
                       match_args={"x": [1]}, random_seed=3),
        lambda: error(injected_http_error_code="oops", error_message="x"),
        lambda: [e.value for e in strategy],
    ]


def test_configs_are_checked_as_google_adk_checks_them() -> None:
    from google.adk.tools.environment_simulation import (
        environment_simulation_config as their_config,
    )
    from google.genai import types as their_types

    from adk_actors import types as our_types
    from adk_actors.tools.environment_simulation import environment_simulation_config as our_config

    theirs = [_outcome(make) for make in _configs(their_config, their_types)]
    ours = [_outcome(make) for make in _configs(our_config, our_types)]
    assert ours == theirs
    assert [o for o in theirs if isinstance(o, str)] == ["ValidationError"] * 11
    assert theirs[0]["simulation_model_configuration"] == {
        "thinking_config": {"include_thoughts": False, "thinking_budget": 10240}}


def test_an_unknown_simulation_model_is_refused_when_the_simulator_is_made() -> None:
    from google.adk.tools.environment_simulation import EnvironmentSimulationFactory as Theirs
    from google.adk.tools.environment_simulation import (
        environment_simulation_config as their_config,
    )

    from adk_actors.tools.environment_simulation import EnvironmentSimulationFactory as Ours
    from adk_actors.tools.environment_simulation import environment_simulation_config as our_config

    for factory, module in ((Theirs, their_config), (Ours, our_config)):
        config = module.EnvironmentSimulationConfig(simulation_model="no-such-model-anywhere", tool_simulation_configs=[
            module.ToolSimulationConfig(tool_name="t", mock_strategy_type=module.MockStrategy.MOCK_STRATEGY_TOOL_SPEC)])
        for make in (factory.create_plugin, factory.create_callback):
            with pytest.raises(ValueError):
                make(config)
    plugin = Ours.create_plugin(our_config.EnvironmentSimulationConfig(tool_simulation_configs=[
        our_config.ToolSimulationConfig(tool_name="t", mock_strategy_type=our_config.MockStrategy.MOCK_STRATEGY_TRACING)]))
    from adk_actors.plugins import BasePlugin

    assert isinstance(plugin, BasePlugin) and plugin.name == "EnvironmentSimulation"


DEPRECATED = ["", ".agent_simulator_config", ".agent_simulator_engine", ".agent_simulator_factory",
              ".agent_simulator_plugin", ".strategies", ".strategies.base", ".strategies.tool_spec_mock_strategy",
              ".tool_connection_analyzer", ".tool_connection_map"]


def _fresh(name: str) -> list[type[Warning]]:
    """The warning categories importing ``name`` afresh raises."""
    import sys

    for loaded in [n for n in sys.modules if n == name or n.startswith(name + ".")]:
        del sys.modules[loaded]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        importlib.import_module(name)
    return [w.category for w in caught if "agent_simulator" in str(w.message)]


@pytest.mark.parametrize("suffix", DEPRECATED)
def test_the_old_package_warns_and_gives_the_new_classes(suffix: str) -> None:
    assert DeprecationWarning in _fresh("google.adk.tools.agent_simulator" + suffix)
    assert DeprecationWarning in _fresh("adk_actors.tools.agent_simulator" + suffix)


def test_the_old_config_takes_tracing_path() -> None:
    from google.adk.tools.agent_simulator import agent_simulator_config as theirs

    from adk_actors.tools.agent_simulator import agent_simulator_config as ours
    from adk_actors.tools.agent_simulator.agent_simulator_factory import AgentSimulatorFactory
    from adk_actors.tools.environment_simulation import (
        EnvironmentSimulationFactory,
        environment_simulation_config,
    )

    assert AgentSimulatorFactory is EnvironmentSimulationFactory
    assert ours.InjectionConfig is environment_simulation_config.InjectionConfig
    for module in (theirs, ours):
        tools = [module.ToolSimulationConfig(tool_name="t", mock_strategy_type=module.MockStrategy(1))]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            moved = module.AgentSimulatorConfig(tool_simulation_configs=tools, tracing_path="run.json")
        assert moved.tracing == "run.json" and DeprecationWarning in [w.category for w in caught]
        kept = module.AgentSimulatorConfig(tool_simulation_configs=tools, tracing_path="old", tracing="new")
        assert kept.tracing == "new" and not hasattr(kept, "tracing_path")


MODULES = ["environment_simulation", "environment_simulation.environment_simulation_config",
           "environment_simulation.environment_simulation_plugin",
           "environment_simulation.environment_simulation_factory",
           "environment_simulation.environment_simulation_engine", "environment_simulation.tool_connection_map",
           "environment_simulation.tool_connection_analyzer", "environment_simulation.strategies",
           "environment_simulation.strategies.base", "environment_simulation.strategies.tool_spec_mock_strategy",
           *("agent_simulator" + suffix for suffix in DEPRECATED)]


@pytest.mark.parametrize("module", MODULES)
def test_the_packages_have_google_adks_public_names(module: str) -> None:
    their = importlib.import_module(f"google.adk.tools.{module}")
    our = importlib.import_module(f"adk_actors.tools.{module}")
    public = getattr(their, "__all__", None) or [n for n in vars(their) if not n.startswith("_")
                                                  and getattr(vars(their)[n], "__module__", "") == their.__name__]
    missing = [name for name in public if not hasattr(our, name)]
    assert missing == []
