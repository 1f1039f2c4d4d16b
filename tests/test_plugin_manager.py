"""google-adk's ``PluginManager`` here (issue 52, plugins): programs written for
google-adk 2.13 that reach the plugin manager run with only their imports rewritten.

Each program runs twice in this process, as tests/test_google_adk_plugins.py runs its
programs (the shared harness, tests/google_adk_harness.py): as written on google-adk,
then rewritten on ours, both against one Gemini REST stand-in named by environment
variables only. Compared: what the program's plugins wrote down (``LOG``), what it
returned, and for a run the events, final texts and model requests.

The cases: a plugin that looks another up through ``plugin_manager.get_plugin`` (from
an invocation context, a callback context and a tool context) while the runner runs,
with a plugin registered late on ``Runner.plugin_manager``; ``Runner.plugin_manager``
and its ``plugins``; the hook order and first-answer rule of the ``run_*_callback``
methods, seen through a pair of plugins, and the notifications that reach every
plugin; a duplicate name and a raising hook (google-adk's exception types); and
``close`` (a failing, a slow and a skipped close). Ours only: a plugin of this
project's own kind registered on ``Runner.plugin_manager`` keeps one state per
invocation.
"""

from __future__ import annotations

import asyncio
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, event_rows, request_rows, rewritten, run_program

from adk_actors import Content, LlmAgent
from adk_actors.engine import Plugin
from adk_actors.models import ScriptedModel
from adk_actors.runners import InMemoryRunner
from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

# the stand-in and its environment (fixtures of the shared harness)
stand_in, gemini = harness.stand_in, harness.gemini


def both(source: str, server: StubServer, answers: list[StubResponse] | None = None,
         *args: Any) -> tuple[tuple[dict[str, Any], Any], tuple[dict[str, Any], Any]]:
    """``source``'s ``main(*args)`` run on google-adk as written, then here rewritten,
    each on the stand-in scripted with ``answers``: (namespace, result) of each."""
    theirs = run_program(source, list(answers or ()), server, *args)
    ours = run_program(rewritten(source), list(answers or ()), server, *args)
    assert "google" not in rewritten(source)
    return theirs, ours


LOOKUP = '''
from google.adk.agents import Agent
from google.adk.plugins import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def get_weather(city: str) -> dict:
    """Tells the current weather in a city."""
    return {"city": city, "report": "Sunny, 21 degrees."}

class Budget(BasePlugin):
    """Counts model requests; the auditor reads the count."""

    def __init__(self) -> None:
        super().__init__(name="budget")
        self.calls = 0

    async def before_model_callback(self, *, callback_context, llm_request):
        self.calls += 1

class Auditor(BasePlugin):
    """Finds the budget plugin through the plugin manager of each context it is given."""

    def __init__(self) -> None:
        super().__init__(name="auditor")

    async def before_run_callback(self, *, invocation_context):
        manager = invocation_context.plugin_manager
        LOG.append(("before_run", [p.name for p in manager.plugins], manager.get_plugin("nobody")))

    async def after_model_callback(self, *, callback_context, llm_response):
        budget = callback_context._invocation_context.plugin_manager.get_plugin("budget")
        LOG.append(("after_model", type(budget).__name__, budget.calls))

    async def before_tool_callback(self, *, tool, tool_args, tool_context):
        budget = tool_context._invocation_context.plugin_manager.get_plugin("budget")
        LOG.append(("before_tool", tool.name, budget is BUDGET, budget.calls))

    async def after_run_callback(self, *, invocation_context):
        LOG.append(("after_run", invocation_context.plugin_manager.get_plugin("budget").calls))

    async def close(self):
        LOG.append(("closed", self.name))

class Latecomer(BasePlugin):
    async def before_agent_callback(self, *, agent, callback_context):
        LOG.append(("latecomer", agent.name))

BUDGET = Budget()
agent = Agent(name="weather", model="gemini-2.5-flash", instruction="Answer with get_weather.",
              tools=[get_weather])
runner = InMemoryRunner(agent=agent, app_name="weather_app", plugins=[BUDGET, Auditor()])
runner.plugin_manager.register_plugin(Latecomer(name="latecomer"))

async def main(turns):
    manager = runner.plugin_manager
    LOG.append(("runner", [p.name for p in manager.plugins], manager.get_plugin("budget") is BUDGET,
                manager.get_plugin("missing")))
    session = await runner.session_service.create_session(app_name="weather_app", user_id="ann")
    seen, finals = [], []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
    await runner.close()
    return seen, finals
'''


def test_a_plugin_finds_another_through_the_plugin_manager_of_its_context(gemini: StubServer) -> None:
    answers = [calls(("get_weather", {"city": "Paris"})), gemini_response(text="Sunny in Paris.")]
    sides = []
    for source in (LOOKUP, rewritten(LOOKUP)):
        namespace, (events, finals) = run_program(source, answers, gemini, ["Weather in Paris?"])
        sides.append({"log": namespace["LOG"], "events": event_rows(events), "finals": finals,
                      "requests": request_rows(gemini), "unused": len(gemini.responses)})
    theirs, ours = sides
    assert theirs["log"] == [
        ("runner", ["budget", "auditor", "latecomer"], True, None),
        ("before_run", ["budget", "auditor", "latecomer"], None),
        ("latecomer", "weather"),
        ("after_model", "Budget", 1),
        ("before_tool", "get_weather", True, 1),
        ("after_model", "Budget", 2),
        ("after_run", 2),
        ("closed", "auditor"),
    ]
    assert theirs["finals"] == ["Sunny in Paris."] and theirs["unused"] == 0
    assert ours == theirs


REGISTRY = '''
from google.adk.agents import Agent
from google.adk.apps import App
from google.adk.plugins import BasePlugin
from google.adk.plugins.plugin_manager import PluginManager
from google.adk.runners import InMemoryRunner, Runner
from google.adk.sessions import InMemorySessionService

class Named(BasePlugin):
    pass

def outcome(make):
    try:
        made = make()
    except Exception as error:
        return ("raised", isinstance(error, ValueError), "twin" in str(error))
    return ("made", [p.name for p in made.plugin_manager.plugins])

async def main():
    agent = Agent(name="bot", model="gemini-2.5-flash")
    one, two = Named(name="one"), Named(name="two")
    runner = Runner(app=App(name="app", root_agent=agent, plugins=[one, two]),
                    session_service=InMemorySessionService())
    manager = runner.plugin_manager
    rows = [isinstance(manager, PluginManager), manager.plugins == [one, two], manager.plugins[0] is one,
            manager.get_plugin("two") is two, manager.get_plugin("three")]
    rows.append(outcome(lambda: InMemoryRunner(agent=agent, app_name="app", plugins=[Named(name="solo")])))
    rows.append(outcome(lambda: InMemoryRunner(agent=agent, app_name="app")))
    rows.append(outcome(lambda: InMemoryRunner(agent=agent, app_name="app",
                                               plugins=[Named(name="twin"), Named(name="twin")])))
    rows.append(outcome(lambda: PluginManager(plugins=[Named(name="twin"), Named(name="twin")])))
    standalone = PluginManager()
    standalone.register_plugin(Named(name="twin"))
    try:
        standalone.register_plugin(Named(name="twin"))
    except ValueError as error:
        rows.append(("register", isinstance(error, ValueError), "twin" in str(error)))
    rows.append([p.name for p in standalone.plugins])
    return rows
'''


def test_runner_plugin_manager_and_duplicate_names(gemini: StubServer) -> None:
    (_, theirs), (_, ours) = both(REGISTRY, gemini)
    assert theirs == [True, True, True, True, None, ("made", ["solo"]), ("made", []), ("raised", True, True),
                      ("raised", True, True), ("register", True, True), ["twin"]]
    assert ours == theirs


ORDER = '''
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.plugins.plugin_manager import PluginManager
from google.genai import types

LOG = []

class Pair(BasePlugin):
    """Writes down each hook it is given; answers those named in ``answers``."""

    def __init__(self, name, answers=(), raises=()):
        super().__init__(name=name)
        self.answers, self.raises = set(answers), set(raises)

    def _seen(self, hook, *what):
        LOG.append((self.name, hook, *what))
        if hook in self.raises:
            raise KeyError(f"{self.name} refuses {hook}")
        return hook in self.answers

    async def on_user_message_callback(self, *, invocation_context, user_message):
        if self._seen("on_user_message", user_message.parts[0].text):
            return types.Content(role="user", parts=[types.Part(text=f"rewritten by {self.name}")])

    async def before_run_callback(self, *, invocation_context):
        if self._seen("before_run"):
            return types.Content(role="model", parts=[types.Part(text=f"stopped by {self.name}")])

    async def before_model_callback(self, *, callback_context, llm_request):
        if self._seen("before_model", llm_request.model):
            return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=f"from {self.name}")]))

    async def after_model_callback(self, *, callback_context, llm_response):
        if self._seen("after_model", llm_response.content.parts[0].text):
            return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=f"by {self.name}")]))

    async def before_tool_callback(self, *, tool, tool_args, tool_context):
        if self._seen("before_tool", dict(tool_args)):
            return {"answered_by": self.name}

    async def after_tool_callback(self, *, tool, tool_args, tool_context, result):
        if self._seen("after_tool", dict(result)):
            return {"replaced_by": self.name}

    async def on_tool_error_callback(self, *, tool, tool_args, tool_context, error):
        if self._seen("on_tool_error", str(error)):
            return {"recovered_by": self.name}

    async def on_model_error_callback(self, *, callback_context, llm_request, error):
        self._seen("on_model_error", str(error))

    async def on_agent_error_callback(self, *, agent, callback_context, error):
        self._seen("on_agent_error", str(error))

    async def on_run_error_callback(self, *, invocation_context, error):
        self._seen("on_run_error", str(error))

    async def after_run_callback(self, *, invocation_context):
        self._seen("after_run")

def text(response):
    return None if response is None else response.content.parts[0].text

async def main():
    manager = PluginManager(plugins=[
        Pair("first", answers={"after_tool"}, raises={"on_agent_error", "on_run_error"}),
        Pair("second", answers={"before_tool", "before_model", "on_user_message", "before_run", "on_tool_error"}),
        Pair("third", answers={"before_tool", "after_model", "after_tool", "on_tool_error"}),
    ])
    out = []
    message = types.Content(role="user", parts=[types.Part(text="hello")])
    answer = await manager.run_on_user_message_callback(user_message=message, invocation_context=None)
    out.append(answer.parts[0].text)
    out.append((await manager.run_before_run_callback(invocation_context=None)).parts[0].text)
    out.append(text(await manager.run_before_model_callback(callback_context=None,
                                                            llm_request=LlmRequest(model="gemini-2.5-flash"))))
    reply = LlmResponse(content=types.Content(role="model", parts=[types.Part(text="the model")]))
    out.append(text(await manager.run_after_model_callback(callback_context=None, llm_response=reply)))
    out.append(await manager.run_before_tool_callback(tool=None, tool_args={"city": "Paris"}, tool_context=None))
    out.append(await manager.run_after_tool_callback(tool=None, tool_args={}, tool_context=None, result={"ok": 1}))
    out.append(await manager.run_on_tool_error_callback(tool=None, tool_args={}, tool_context=None,
                                                        error=ValueError("no city")))
    out.append(await manager.run_on_model_error_callback(callback_context=None, llm_request=LlmRequest(),
                                                         error=ValueError("model down")))
    await manager.run_on_agent_error_callback(agent=None, callback_context=None, error=ValueError("agent broke"))
    await manager.run_on_run_error_callback(invocation_context=None, error=ValueError("run broke"))
    await manager.run_after_run_callback(invocation_context=None)
    return out
'''


def test_run_callbacks_go_in_registration_order_and_the_first_answer_ends_the_chain(gemini: StubServer) -> None:
    (theirs_ns, theirs), (ours_ns, ours) = both(ORDER, gemini)
    assert theirs == ["rewritten by second", "stopped by second", "from second", "by third", {"answered_by": "second"},
                      {"replaced_by": "first"}, {"recovered_by": "second"}, None]
    assert ours == theirs
    assert theirs_ns["LOG"][:3] == [("first", "on_user_message", "hello"), ("second", "on_user_message", "hello"),
                                    ("first", "before_run")]
    # the notifications reach every plugin, also past one that raises
    assert [row for row in theirs_ns["LOG"] if row[1] in ("on_agent_error", "on_run_error", "after_run")] == [
        (name, hook, *what) for hook, what in (("on_agent_error", ("agent broke",)), ("on_run_error", ("run broke",)),
                                               ("after_run", ()))
        for name in ("first", "second", "third")]
    assert ours_ns["LOG"] == theirs_ns["LOG"]


FAILING = '''
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.plugins.plugin_manager import PluginManager

class Broken(BasePlugin):
    async def before_tool_callback(self, *, tool, tool_args, tool_context):
        raise KeyError("no such account")

class Never(BasePlugin):
    async def before_tool_callback(self, *, tool, tool_args, tool_context):
        raise AssertionError("runs after a hook that raised")

async def main():
    manager = PluginManager(plugins=[Broken(name="broken"), Never(name="never")])
    try:
        await manager.run_before_tool_callback(tool=None, tool_args={}, tool_context=None)
    except Exception as error:
        return (isinstance(error, RuntimeError), type(error.__cause__).__name__, "broken" in str(error),
                "before_tool_callback" in str(error), "no such account" in str(error))
'''


def test_a_raising_hook_is_a_runtime_error_caused_by_its_exception(gemini: StubServer) -> None:
    (_, theirs), (_, ours) = both(FAILING, gemini)
    assert theirs == (True, "KeyError", True, True, True)
    assert ours == theirs


CLOSING = '''
import asyncio

from google.adk.plugins.base_plugin import BasePlugin
from google.adk.plugins.plugin_manager import PluginManager

LOG = []

class Closing(BasePlugin):
    def __init__(self, name, how="ok"):
        super().__init__(name=name)
        self.how = how

    async def close(self):
        LOG.append(("close", self.name))
        if self.how == "fails":
            raise OSError("disk gone")
        if self.how == "hangs":
            await asyncio.Event().wait()

async def outcome(manager):
    try:
        await manager.close()
    except Exception as error:
        return (isinstance(error, RuntimeError), str(error).count("'"), "fails" in str(error),
                "OSError" in str(error), "hangs" in str(error), "TimeoutError" in str(error))
    return "closed"

async def main():
    rows = [await outcome(PluginManager(plugins=[Closing("fine")]))]
    rows.append(await outcome(PluginManager(plugins=[Closing("fails", "fails"), Closing("hangs", "hangs"),
                                                     Closing("after")], close_timeout=0.05)))
    skipped = PluginManager(plugins=[Closing("owned_elsewhere", "fails")])
    skipped.set_skip_closing_plugins(True)
    rows.append(await outcome(skipped))
    return rows
'''


def test_close_closes_each_plugin_and_names_those_that_failed(gemini: StubServer) -> None:
    (theirs_ns, theirs), (ours_ns, ours) = both(CLOSING, gemini)
    assert theirs == ["closed", (True, 4, True, True, True, True), "closed"]
    assert theirs_ns["LOG"] == [("close", "fine"), ("close", "fails"), ("close", "hangs"), ("close", "after")]
    assert ours == theirs
    assert ours_ns["LOG"] == theirs_ns["LOG"]


def test_ours_a_plugin_of_our_kind_registered_on_the_runner_keeps_a_state_per_invocation() -> None:
    """Ours only: ``Runner.plugin_manager`` holds this project's plugins too; each run
    gets a copy of the manager, so a plugin's state starts fresh in every invocation."""
    ends: list[int] = []

    class Counting(Plugin):
        name = "counting"

        def initial_state(self) -> int:
            return 0

        def on_event(self, state: int, ctx: Any, event: Any) -> tuple[Any, Any]:
            return state + 1, None

        def after_run(self, state: int, ctx: Any, error: BaseException | None) -> Any:
            ends.append(state)
            return state

    async def main() -> None:
        runner = InMemoryRunner(LlmAgent(name="bot", model=ScriptedModel(fallback=lambda r: "hi")), app_name="app")
        counting = Counting()
        runner.plugin_manager.register_plugin(counting)
        assert runner.plugin_manager.get_plugin("counting") is counting
        await runner.session_service.create_session(app_name="app", user_id="ann", session_id="s1")
        for _ in range(2):
            async for _event in runner.run_async(user_id="ann", session_id="s1", new_message=Content.user("hey")):
                pass
        await runner.close()

    asyncio.run(main())
    assert ends == [1, 1]  # the reply of its own run only (one state shared by both: [1, 2])
