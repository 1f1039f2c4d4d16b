"""google-adk's plugins run here with only their imports rewritten (issue 52, plugins).

Each case is a small google-adk program with plugins in the shapes of google-adk's
plugin docs (a ``BasePlugin`` subclass given to ``App(plugins=[...])``,
``InMemoryRunner(..., plugins=[...])`` or ``Runner(..., plugins=[...])``). It runs
twice, as tests/test_google_adk_parity.py runs its programs (its harness,
tests/google_adk_harness.py): as written on google-adk 2.13, and with its imports
rewritten on ours, both against one Gemini REST stand-in named by environment
variables only. Compared: the hooks each plugin saw, in order, with what they saw
(the program's ``LOG``), the events the runner yielded, the final texts, the
session's final state and every request the model received.

What differs by the seeds' rules is kept out of these programs: an agent's own
callbacks run before the plugins' here (seed 001), after them in google-adk, so no
program mixes both on one hook. Two cases differ by engine rules outside the plugins'
adapter: they are strict xfails (``DIFFERENT`` says why). Ours only: a raising plugin
inside a host (the run fails with a typed error, the run worker lives on), a plugin
answering what its hook cannot take (a typed error), and google-adk's plugins and ours
in one pipeline, in registration order.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, event_rows, request_rows, rewritten, run_program

from adk_actors import AdkError, Content, LlmAgent
from adk_actors._exceptions import RunFailedError
from adk_actors.engine import Plugin
from adk_actors.models import LlmResponse, ScriptedModel
from adk_actors.plugins import BasePlugin, PluginError
from adk_actors.runners import InMemoryRunner
from adk_actors.runtime import Host, HostConfig
from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

# the stand-in and its environment (fixtures of the shared harness)
stand_in, gemini = harness.stand_in, harness.gemini

# The loop every program ends with: its turns through run_async, the final texts, the
# session's state and its stored events (who said what) in LOG.
MAIN = '''
async def main(turns, session_state=None):
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="ann",
                                                          state=session_state)
    seen, finals = [], []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name=runner.app_name, user_id="ann",
                                                      session_id=session.id)
    LOG.append(("stored", [(e.author, "".join(p.text or "" for p in e.content.parts))
                           for e in stored.events if e.content and e.content.parts]))
    await runner.close()
    return seen, finals, dict(stored.state)
'''

COUNTING = '''
from google.adk.agents import Agent
from google.adk.apps import App
from google.adk.plugins import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def get_weather(city: str) -> dict:
    """Tells the current weather in a city."""
    return {"city": city, "report": "Sunny, 21 degrees."}

class CountInvocationPlugin(BasePlugin):
    """Counts agent runs, model requests and tool calls."""

    def __init__(self) -> None:
        super().__init__(name="count_invocation")
        self.agent_count = 0
        self.llm_request_count = 0
        self.tool_count = 0

    async def before_agent_callback(self, *, agent, callback_context):
        self.agent_count += 1
        LOG.append(("count", "before_agent", agent.name, self.agent_count))

    async def before_model_callback(self, *, callback_context, llm_request):
        self.llm_request_count += 1
        LOG.append(("count", "before_model", callback_context.agent_name, self.llm_request_count))

    async def before_tool_callback(self, *, tool, tool_args, tool_context):
        self.tool_count += 1
        LOG.append(("count", "before_tool", tool.name, self.tool_count))

class TracePlugin(BasePlugin):
    """Writes down every hook it is given, with what it was given."""

    def __init__(self) -> None:
        super().__init__(name="trace")

    async def on_user_message_callback(self, *, invocation_context, user_message):
        LOG.append(("trace", "on_user_message", user_message.role, user_message.parts[0].text))

    async def before_run_callback(self, *, invocation_context):
        LOG.append(("trace", "before_run", invocation_context.agent.name))

    async def on_event_callback(self, *, invocation_context, event):
        LOG.append(("trace", "on_event", event.author, [c.name for c in event.get_function_calls()],
                    [r.name for r in event.get_function_responses()],
                    "".join(p.text or "" for p in event.content.parts) if event.content else ""))

    async def after_run_callback(self, *, invocation_context):
        LOG.append(("trace", "after_run", invocation_context.agent.name))

    async def before_agent_callback(self, *, agent, callback_context):
        LOG.append(("trace", "before_agent", agent.name, callback_context.agent_name))

    async def after_agent_callback(self, *, agent, callback_context):
        LOG.append(("trace", "after_agent", agent.name))

    async def before_model_callback(self, *, callback_context, llm_request):
        LOG.append(("trace", "before_model", llm_request.model, len(llm_request.contents),
                    llm_request.contents[-1].role))

    async def after_model_callback(self, *, callback_context, llm_response):
        part = llm_response.content.parts[0]
        LOG.append(("trace", "after_model", part.text or part.function_call.name))

    async def before_tool_callback(self, *, tool, tool_args, tool_context):
        LOG.append(("trace", "before_tool", tool.name, dict(tool_args), tool_context.agent_name))

    async def after_tool_callback(self, *, tool, tool_args, tool_context, result):
        LOG.append(("trace", "after_tool", tool.name, dict(result)))

counter = CountInvocationPlugin()
agent = Agent(name="weather", model="gemini-2.5-flash", instruction="Answer with get_weather.",
              tools=[get_weather])
app = App(name="weather_app", root_agent=agent, plugins=[counter, TracePlugin()])
runner = InMemoryRunner(app=app)
''' + MAIN + '''
async def main_and_counts(turns):
    result = await main(turns)
    LOG.append(("counts", counter.agent_count, counter.llm_request_count, counter.tool_count))
    return result
'''

REWRITE_MESSAGE = '''
import re
from google.adk.agents import Agent
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

class RedactCardsPlugin(BasePlugin):
    """Card numbers never reach the model nor the session."""

    def __init__(self) -> None:
        super().__init__(name="redact_cards")

    async def on_user_message_callback(self, *, invocation_context, user_message):
        text = user_message.parts[0].text or ""
        redacted = re.sub(r"\\d{4}(-\\d{4}){3}", "[card]", text)
        LOG.append(("on_user_message", text, redacted))
        if redacted == text:
            return None
        return types.Content(role="user", parts=[types.Part(text=redacted)])

class SeesPlugin(BasePlugin):
    def __init__(self) -> None:
        super().__init__(name="sees")

    async def on_user_message_callback(self, *, invocation_context, user_message):
        LOG.append(("never asked once the first one answered", user_message.parts[0].text))

agent = Agent(name="shop", model="gemini-2.5-flash", instruction="Help with orders.")
runner = InMemoryRunner(agent=agent, app_name="shop_app", plugins=[RedactCardsPlugin(), SeesPlugin()])
''' + MAIN

CACHE = '''
from google.adk.agents import Agent
from google.adk.models import LlmResponse
from google.adk.plugins import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

LOG = []

class CachePlugin(BasePlugin):
    """Answers a question it has seen from its cache: the model is not called."""

    def __init__(self) -> None:
        super().__init__(name="cache")
        self.answers = {}

    async def before_model_callback(self, *, callback_context, llm_request):
        question = llm_request.contents[-1].parts[0].text
        if question in self.answers:
            callback_context.state["cache_hits"] = callback_context.state.get("cache_hits", 0) + 1
            LOG.append(("hit", question))
            return LlmResponse(content=types.Content(role="model",
                                                     parts=[types.Part(text=self.answers[question])]))
        LOG.append(("miss", question))
        self.key = question
        return None

    async def after_model_callback(self, *, callback_context, llm_response):
        self.answers[self.key] = llm_response.content.parts[0].text
        return None

agent = Agent(name="geo", model="gemini-2.5-flash", instruction="Answer geography questions.")
runner = Runner(agent=agent, app_name="geo_app", session_service=InMemorySessionService(),
                plugins=[CachePlugin()])
''' + MAIN

BLOCK_TOOL = '''
from google.adk.agents import Agent
from google.adk.plugins import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def list_files(folder: str) -> dict:
    """Lists the files of a folder."""
    LOG.append(("list_files ran", folder))
    return {"folder": folder, "files": ["a.txt", "b.txt"]}

def delete_file(path: str) -> dict:
    """Deletes a file."""
    LOG.append(("delete_file ran", path))
    return {"deleted": path}

class SandboxPlugin(BasePlugin):
    """Keeps tools in the sandbox folder and blocks deleting."""

    def __init__(self) -> None:
        super().__init__(name="sandbox")

    async def before_tool_callback(self, *, tool, tool_args, tool_context):
        LOG.append(("before_tool", tool.name, dict(tool_args)))
        if tool.name == "delete_file":
            return {"error": f"{tool.name} is blocked by the administrator"}
        tool_args["folder"] = "/sandbox"
        return None

    async def after_tool_callback(self, *, tool, tool_args, tool_context, result):
        LOG.append(("after_tool", tool.name, dict(tool_args), dict(result)))

agent = Agent(name="files", model="gemini-2.5-flash", instruction="Manage files.",
              tools=[list_files, delete_file])
runner = InMemoryRunner(agent=agent, app_name="files_app", plugins=[SandboxPlugin()])
''' + MAIN

TOOL_ERROR = '''
from google.adk.agents import Agent
from google.adk.plugins import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def divide(a: int, b: int) -> dict:
    """Divides a by b."""
    return {"result": a / b}

class ToolErrorPlugin(BasePlugin):
    """Turns a tool's exception into a result the model can read."""

    def __init__(self) -> None:
        super().__init__(name="tool_errors")

    async def on_tool_error_callback(self, *, tool, tool_args, tool_context, error):
        LOG.append(("on_tool_error", tool.name, dict(tool_args), type(error).__name__))
        return {"error": f"{type(error).__name__}: {error}", "hint": "check the arguments"}

agent = Agent(name="calc", model="gemini-2.5-flash", instruction="Divide numbers.", tools=[divide])
runner = InMemoryRunner(agent=agent, app_name="calc_app", plugins=[ToolErrorPlugin()])
''' + MAIN

REPLACE_EVENTS = '''
from google.adk.agents import Agent
from google.adk.events import Event
from google.adk.plugins import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

class ShoutPlugin(BasePlugin):
    """The agent's texts are stored and shown in capitals."""

    def __init__(self) -> None:
        super().__init__(name="shout")

    async def on_event_callback(self, *, invocation_context, event):
        text = "".join(p.text or "" for p in event.content.parts) if event.content else ""
        LOG.append(("on_event", event.author, text, bool(event.invocation_id)))
        if not text:
            return None
        return Event(author=event.author,
                     content=types.Content(role="model", parts=[types.Part(text=text.upper())]))

agent = Agent(name="echo", model="gemini-2.5-flash", instruction="Reply briefly.")
runner = InMemoryRunner(agent=agent, app_name="echo_app", plugins=[ShoutPlugin()])
''' + MAIN + '''
async def main_and_ids(turns):
    seen, finals, state = await main(turns)
    LOG.append(("same invocation as the turn", [bool(e.invocation_id) and e.invocation_id != "" for e in seen]))
    return seen, finals, state
'''

MODEL_ERROR = '''
from google.adk.agents import Agent
from google.adk.models import LlmResponse
from google.adk.plugins import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

class FallbackPlugin(BasePlugin):
    """Answers for the model when its call fails."""

    def __init__(self) -> None:
        super().__init__(name="fallback")

    async def on_model_error_callback(self, *, callback_context, llm_request, error):
        LOG.append(("on_model_error", callback_context.agent_name, llm_request.contents[-1].parts[0].text))
        return LlmResponse(content=types.Content(role="model",
                                                 parts=[types.Part(text="The model is unavailable.")]))

agent = Agent(name="helper", model="gemini-2.5-flash", instruction="Help.")
runner = InMemoryRunner(agent=agent, app_name="helper_app", plugins=[FallbackPlugin()])
''' + MAIN

SKIP_AGENT = '''
from google.adk.agents import Agent
from google.adk.plugins import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

class ClosedPlugin(BasePlugin):
    """Outside opening hours the agent does not run; after it, a signature."""

    def __init__(self) -> None:
        super().__init__(name="opening_hours")

    async def before_agent_callback(self, *, agent, callback_context):
        LOG.append(("before_agent", agent.name, callback_context.state.get("open")))
        if not callback_context.state.get("open"):
            callback_context.state["turned_away"] = True
            return types.Content(role="model", parts=[types.Part(text="We are closed.")])
        return None

    async def after_agent_callback(self, *, agent, callback_context):
        LOG.append(("after_agent", agent.name))
        return types.Content(role="model", parts=[types.Part(text="-- the front desk")])

agent = Agent(name="desk", model="gemini-2.5-flash", instruction="Greet visitors.")
runner = InMemoryRunner(agent=agent, app_name="desk_app", plugins=[ClosedPlugin()])
''' + MAIN + '''
async def open_then_closed(turns):
    await main(turns, {"open": True})
    return await main(turns, {"open": False})
'''

BEFORE_RUN = '''
from google.adk.agents import Agent
from google.adk.plugins import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

class MaintenancePlugin(BasePlugin):
    """While the app is in maintenance, every run ends before any agent runs."""

    def __init__(self) -> None:
        super().__init__(name="maintenance")

    async def before_run_callback(self, *, invocation_context):
        closed = invocation_context.session.state.get("maintenance", False)
        LOG.append(("before_run", closed))
        if closed:
            return types.Content(role="model", parts=[types.Part(text="Back in five minutes.")])
        return None

    async def on_event_callback(self, *, invocation_context, event):
        LOG.append(("on_event", event.author))

    async def before_agent_callback(self, *, agent, callback_context):
        LOG.append(("before_agent", agent.name))

    async def after_run_callback(self, *, invocation_context):
        LOG.append(("after_run",))

agent = Agent(name="assistant", model="gemini-2.5-flash", instruction="Help.")
runner = InMemoryRunner(agent=agent, app_name="maintained_app", plugins=[MaintenancePlugin()])
''' + MAIN + '''
async def closed_then_open(turns):
    await main(turns, {"maintenance": True})
    return await main(turns, {"maintenance": False})
'''

# google-adk skips the after-model hooks when a before-model hook answered; ours runs
# them on that answer too (engine/_flow.py, for an agent's own callbacks as well)
AFTER_A_CACHED_ANSWER = CACHE.replace('''    async def after_model_callback(self, *, callback_context, llm_response):
''', '''    async def after_model_callback(self, *, callback_context, llm_response):
        LOG.append(("after_model", llm_response.content.parts[0].text))
''')

RAISES = '''
from google.adk.agents import Agent
from google.adk.plugins import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

class FlakyPlugin(BasePlugin):
    """Its first before_model_callback raises."""

    def __init__(self) -> None:
        super().__init__(name="flaky")
        self.calls = 0

    async def before_model_callback(self, *, callback_context, llm_request):
        self.calls += 1
        if self.calls == 1:
            raise KeyError("no such key")

    async def on_run_error_callback(self, *, invocation_context, error):
        LOG.append(("on_run_error", isinstance(error, RuntimeError), str(error)))

    async def after_run_callback(self, *, invocation_context):
        LOG.append(("after_run",))

agent = Agent(name="steady", model="gemini-2.5-flash", instruction="Help.")
runner = InMemoryRunner(agent=agent, app_name="steady_app", plugins=[FlakyPlugin()])
''' + MAIN.replace("async def main(", "async def one_turn(") + '''
async def main(turns):
    try:
        await one_turn(turns)
    except Exception as exc:
        LOG.append(("raised", isinstance(exc, RuntimeError), str(exc), type(exc.__cause__).__name__))
    return await one_turn(turns)
'''

LOGGING = '''
import contextlib
import io
from google.adk.agents import Agent
from google.adk.plugins import LoggingPlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def get_time(city: str) -> dict:
    """The local time in a city."""
    return {"city": city, "time": "10:30"}

agent = Agent(name="clock", model="gemini-2.5-flash", instruction="Tell the time.", tools=[get_time])
runner = InMemoryRunner(agent=agent, app_name="clock_app", plugins=[LoggingPlugin()])
''' + MAIN.replace("async def main(", "async def quiet_main(") + '''
async def main(turns):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = await quiet_main(turns)
    for line in out.getvalue().splitlines():
        line = line.replace("\\033[90m", "").replace("\\033[0m", "")
        if line.startswith("[logging_plugin] ") and not line.startswith("[logging_plugin]  "):
            LOG.append(line)
    return result
'''

# name: (source, its entry point, the model's answers in order, the user's turns)
CASES: dict[str, tuple[str, str, list[StubResponse], list[str]]] = {
    "every hook in order, two plugins, counting (App(plugins=...))": (COUNTING, "main_and_counts", [
        calls(("get_weather", {"city": "Paris"})), gemini_response("Sunny in Paris."),
    ], ["Weather in Paris?"]),
    "on_user_message_callback rewrites the message (InMemoryRunner(plugins=...))": (REWRITE_MESSAGE, "main", [
        gemini_response("Order placed."), gemini_response("You are welcome."),
    ], ["Pay with 1234-5678-9012-3456 please", "Thanks"]),
    "before_model_callback answers from a cache (Runner(plugins=...))": (CACHE, "main", [
        gemini_response("Paris."),
    ], ["Capital of France?", "Capital of France?"]),
    "before_tool_callback blocks a tool with a dict and changes arguments in place": (BLOCK_TOOL, "main", [
        calls(("list_files", {"folder": "/etc"})), calls(("delete_file", {"path": "a.txt"})),
        gemini_response("I listed the files; deleting is blocked."),
    ], ["List /etc and delete a.txt"]),
    "on_tool_error_callback answers for a tool that raised": (TOOL_ERROR, "main", [
        calls(("divide", {"a": 1, "b": 0})), gemini_response("Dividing by zero is not possible."),
    ], ["What is 1 / 0?"]),
    "on_event_callback replaces events before they are stored": (REPLACE_EVENTS, "main_and_ids", [
        gemini_response("hello there"), gemini_response("goodbye"),
    ], ["Hi", "Bye"]),
    "on_model_error_callback answers for a failed model call": (MODEL_ERROR, "main", [
        StubResponse(status=400, json={"error": {"code": 400, "message": "bad request",
                                                 "status": "INVALID_ARGUMENT"}}),
    ], ["Help me"]),
    "before_agent_callback skips the agent, after_agent_callback adds a reply": (SKIP_AGENT, "open_then_closed", [
        gemini_response("Welcome!"),
    ], ["Hello"]),
    "a hook that raises ends the turn with google-adk's RuntimeError; the next turn runs": (RAISES, "main", [
        gemini_response("Here to help."),
    ], ["Hello"]),
    "LoggingPlugin prints every step": (LOGGING, "main", [
        calls(("get_time", {"city": "Lima"})), gemini_response("It is 10:30 in Lima."),
    ], ["Time in Lima?"]),
    "after_model_callback is not called on a before_model_callback's answer": (AFTER_A_CACHED_ANSWER, "main", [
        gemini_response("Paris."),
    ], ["Capital of France?", "Capital of France?"]),
    "before_run_callback ends the run with a reply": (BEFORE_RUN, "closed_then_open", [
        gemini_response("How can I help?"),
    ], ["Hello"]),
}

#: the cases that cannot pass for a reason outside the plugins' adapter (engine rules),
#: kept as strict xfails so that they are noticed when the engine changes
DIFFERENT: dict[str, str] = {}


def run_plugins_case(source: str, entry: str, answers: list[StubResponse], turns: list[str],
                     server: StubServer) -> dict[str, Any]:
    """Run ``source``'s ``entry(turns)``: what is compared of it (see the module)."""
    namespace, (events, finals, state) = run_program(source, answers, server, turns, name="<plugins case>",
                                                     entry=entry)
    return {"log": harness._plain(namespace["LOG"]), "events": event_rows(events), "finals": harness._plain(finals),
            "state": harness._plain(state), "requests": request_rows(server), "unused_answers": len(server.responses)}


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=DIFFERENT[name])) if name in DIFFERENT else name
    for name in CASES])
def test_a_google_adk_plugin_runs_here_with_its_imports_rewritten(name: str, gemini: StubServer) -> None:
    source, entry, answers, turns = CASES[name]
    theirs = run_plugins_case(source, entry, answers, turns, gemini)
    assert theirs["unused_answers"] == 0 and theirs["log"], "the case must use its script on google-adk"
    ours = run_plugins_case(rewritten(source), entry, answers, turns, gemini)
    assert not re.search(r"\bgoogle\b", rewritten(source))
    assert ours["log"] == theirs["log"]
    assert ours["events"] == theirs["events"]
    assert ours["finals"] == theirs["finals"]
    assert ours["state"] == theirs["state"]
    assert ours["requests"] == theirs["requests"]
    assert ours["unused_answers"] == 0


# -- ours only: in a host, a raising plugin fails its run, typed; nothing else ----------


def test_a_raising_plugin_fails_its_run_in_a_host_with_a_typed_error_and_the_host_serves_on(
        actor_system: Any, tmp_path: Path) -> None:
    with Host(HostConfig(apps={"guarded": "plugin_apps:app"}, data_dir=str(tmp_path / "data")),
              system=actor_system) as host:
        runner = host.runner("guarded")
        session = runner.create_session("ann", "s1")
        with pytest.raises(RunFailedError) as failed:
            list(runner.run("ann", session.id, "boom"))
        assert failed.value.reason == "error" and failed.value.error_type == "PluginError"
        assert "Error in plugin 'tripwire' during 'before_model_callback' callback" in failed.value.detail
        texts = [e.content.text for e in runner.run("ann", session.id, "hello") if e.content is not None]
        assert texts[-1] == "echo: hello"
        texts = [e.content.text for e in runner.run("ann", session.id, "canned please") if e.content is not None]
        assert texts[-1] == "a canned answer"
        # the plugin's error is kept as the agent's error event, as google-adk keeps it
        assert [e.author for e in runner.get_session("ann", session.id).events] == [
            "user", "guarded", "user", "guarded", "user", "guarded"]


def test_a_plugin_answering_what_its_hook_cannot_take_fails_the_turn_with_a_typed_error(gemini: StubServer) -> None:
    class Confused(BasePlugin):
        def __init__(self) -> None:
            super().__init__(name="confused")

        async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> Any:
            return "not a response" if "confuse" in (llm_request.contents[-1].text or "") else None

    async def turn(runner: InMemoryRunner, text: str) -> list[str]:
        return [e.content.text for e in [event async for event in runner.run_async(
            user_id="ann", session_id="s1", new_message=Content.user(text))] if e.content is not None]

    async def main() -> tuple[BaseException, list[str]]:
        runner = InMemoryRunner(LlmAgent(name="bot", model=ScriptedModel(fallback=lambda r: "fine")),
                                app_name="confused_app", plugins=[Confused()])
        await runner.session_service.create_session(app_name="confused_app", user_id="ann", session_id="s1")
        with pytest.raises(PluginError) as failed:
            await turn(runner, "confuse me")
        return failed.value, await turn(runner, "hello")

    error, after = asyncio.run(asyncio.wait_for(main(), timeout=30))
    assert isinstance(error, RuntimeError) and isinstance(error, AdkError)
    assert "plugin 'confused'" in str(error) and "before_model_callback" in str(error) and "LlmResponse" in str(error)
    assert after == ["fine"]


def test_google_adk_plugins_and_ours_share_one_pipeline_in_registration_order() -> None:
    seen: list[str] = []

    class Ours(Plugin):
        name = "ours"

        def before_model(self, state: Any, cb: Any, request: Any) -> tuple[Any, Any]:
            seen.append("ours")
            return state, None

    class Theirs(BasePlugin):
        async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> Any:
            seen.append(self.name)
            return LlmResponse(content=Content.model("answered by a plugin")) if self.name == "answers" else None

    async def main(plugins: list[Any]) -> list[str]:
        runner = InMemoryRunner(LlmAgent(name="bot", model=ScriptedModel(fallback=lambda r: "the model")),
                                app_name="mixed", plugins=plugins)
        await runner.session_service.create_session(app_name="mixed", user_id="ann", session_id="s1")
        return [e.content.text for e in [event async for event in runner.run_async(
            user_id="ann", session_id="s1", new_message=Content.user("hi"))] if e.content is not None]

    assert asyncio.run(main([Theirs("first"), Ours(), Theirs("answers"), Theirs("never")])) == ["answered by a plugin"]
    assert seen == ["first", "ours", "answers"]
    seen.clear()
    assert asyncio.run(main([Ours(), Theirs("quiet")])) == ["the model"]
    assert seen == ["ours", "quiet"]
    with pytest.raises(ValueError, match="duplicate plugin names"):
        asyncio.run(main([Theirs("twin"), Theirs("twin")]))
