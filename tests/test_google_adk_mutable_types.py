"""google-adk code that changes google.genai objects in place runs here (issue 52: "the
types are mutable as google-genai's").

google.genai's ``Content``, ``Part``, ``FunctionResponse``... and google-adk's
``LlmRequest``, ``LlmResponse`` and ``Event`` are plain mutable pydantic models: the
callbacks of google-adk's docs assign ``part.text``, ``function_response.response``,
``llm_request.config.temperature`` and edit a tool's result dict. Each case below is a
small google-adk program doing one of these, run on google-adk 2.13 as written and on
ours with only its imports rewritten (tests/google_adk_harness.py), against one Gemini
REST stand-in. Compared: what the model received in each request (contents, tools,
instruction, temperature), the events the runner yielded, the final texts, the state
and the session's stored events afterwards (author, role, texts, function responses).

Where google-adk's flows copy, and so where a change must not reach the session:
the request's contents are copies of the session's contents and parts (what a
before_model callback, a plugin's or a tool's ``process_llm_request`` assigns, such as
``part.text = ...``, changes the request only). Where they do
not: the model's answer handed to after_model callbacks, the tool's result dict handed
to after_tool callbacks and the event handed to on_event callbacks become what is
stored; an event ``run_async`` yielded is the one an in-memory session keeps.

Ours only: the types accept assignment as google.genai's do (no validation on
assignment, unknown fields refused), ``Content.parts`` is a list; a callback's edits of
a request's tool declaration and config lists stay in that request.
"""

from __future__ import annotations

import asyncio
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, event_rows, request_rows, rewritten, run_program

from adk_actors import LlmAgent
from adk_actors import types as our_types
from adk_actors.models import ScriptedModel
from adk_actors.runners import InMemoryRunner
from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

MAIN = '''
def _stored_row(e):
    parts = e.content.parts if e.content and e.content.parts else []
    return (e.author, e.content.role if e.content else None,
            "".join(p.text or "" for p in parts),
            [(p.function_response.name, p.function_response.response) for p in parts if p.function_response])

async def main(turns):
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="ann")
    seen, finals = [], []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
            after_yield(event)
    stored = await runner.session_service.get_session(app_name=runner.app_name, user_id="ann",
                                                      session_id=session.id)
    LOG.append(("stored", [_stored_row(e) for e in stored.events]))
    await runner.close()
    return seen, finals, dict(stored.state)

def after_yield(event):
    return None
'''

BEFORE_MODEL = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def tag_the_question(callback_context, llm_request):
    """Edits the request in place: the last message's text and the temperature."""
    last = llm_request.contents[-1]
    LOG.append(("before_model", last.role, last.parts[0].text, len(llm_request.contents)))
    last.parts[0].text = last.parts[0].text + " [answer briefly]"
    llm_request.config.temperature = 0.25
    return None

agent = Agent(name="geo", model="gemini-2.5-flash", instruction="Answer geography questions.",
              before_model_callback=tag_the_question)
runner = InMemoryRunner(agent=agent, app_name="geo_app")
''' + MAIN

PLUGIN_BEFORE_MODEL = '''
from google.adk.agents import Agent
from google.adk.plugins import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

class PolitePlugin(BasePlugin):
    """Edits every request's last text in place."""

    def __init__(self) -> None:
        super().__init__(name="polite")

    async def before_model_callback(self, *, callback_context, llm_request):
        part = llm_request.contents[-1].parts[0]
        LOG.append(("before_model", part.text))
        part.text = "Please: " + part.text
        return None

    async def on_event_callback(self, *, invocation_context, event):
        LOG.append(("on_event", event.author))

agent = Agent(name="desk", model="gemini-2.5-flash", instruction="Help.")
runner = InMemoryRunner(agent=agent, app_name="desk_app", plugins=[PolitePlugin()])
''' + MAIN

DOCS_BEFORE_MODEL = '''
from google.adk.agents import LlmAgent
from google.adk.models import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def simple_before_model_modifier(callback_context, llm_request):
    """The docs' shape: the system instruction rebuilt as a Content, edited in place."""
    last_user_message = ""
    if llm_request.contents and llm_request.contents[-1].role == "user" and llm_request.contents[-1].parts:
        last_user_message = llm_request.contents[-1].parts[0].text or ""
    LOG.append(("before_model", callback_context.agent_name, last_user_message))
    original = llm_request.config.system_instruction or types.Content(role="system", parts=[])
    if not isinstance(original, types.Content):
        original = types.Content(role="system", parts=[types.Part(text=str(original))])
    if not original.parts:
        original.parts.append(types.Part(text=""))
    original.parts[0].text = "[Modified by Callback] " + (original.parts[0].text or "")
    llm_request.config.system_instruction = original
    if "BLOCK" in last_user_message.upper():
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="Blocked by the callback.")]))
    return None

agent = LlmAgent(name="ModelCallbackAgent", model="gemini-2.5-flash", instruction="You are a helpful assistant.",
                 description="An LLM agent demonstrating before_model_callback",
                 before_model_callback=simple_before_model_modifier)
runner = InMemoryRunner(agent=agent, app_name="callbacks_app")
''' + MAIN

TOOL_HOOK = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools import BaseTool
from google.genai import types

LOG = []

class StampTool(BaseTool):
    """Declares nothing; stamps the last message of each request in place."""

    def __init__(self) -> None:
        super().__init__(name="stamp", description="Stamps requests.")

    async def process_llm_request(self, *, tool_context, llm_request):
        await super().process_llm_request(tool_context=tool_context, llm_request=llm_request)
        part = llm_request.contents[-1].parts[0]
        LOG.append(("process_llm_request", part.text))
        part.text = "[stamped] " + part.text

agent = Agent(name="desk", model="gemini-2.5-flash", instruction="Help.", tools=[StampTool()])
runner = InMemoryRunner(agent=agent, app_name="desk_app")
''' + MAIN

BEFORE_MODEL_ADDS_A_PART = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def add_a_reminder(callback_context, llm_request):
    """Appends a part to the last message and a message to the request."""
    llm_request.contents[-1].parts.append(types.Part(text="(be polite)"))
    note = types.Content(role="user", parts=[])
    note.parts.append(types.Part(text="Reply in one line."))
    llm_request.contents.append(note)
    return None

agent = Agent(name="desk", model="gemini-2.5-flash", instruction="Help.",
              before_model_callback=add_a_reminder)
runner = InMemoryRunner(agent=agent, app_name="desk_app")
''' + MAIN

AFTER_MODEL = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def shout(callback_context, llm_response):
    """Assigns the answer's text in place and returns nothing."""
    if llm_response.content and llm_response.content.parts and llm_response.content.parts[0].text:
        LOG.append(("after_model", llm_response.content.parts[0].text))
        llm_response.content.parts[0].text = llm_response.content.parts[0].text.upper()
    return None

agent = Agent(name="echo", model="gemini-2.5-flash", instruction="Reply briefly.", after_model_callback=shout)
runner = InMemoryRunner(agent=agent, app_name="echo_app")
''' + MAIN

AFTER_TOOL = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def get_account(user: str) -> dict:
    """The account of a user."""
    return {"user": user, "balance": 1200, "card": "4111-1111-1111-1111"}

def hide_the_card(tool, args, tool_context, tool_response):
    """Edits the tool's result dict in place and returns nothing."""
    LOG.append(("after_tool", tool.name, dict(args), sorted(tool_response)))
    tool_response["card"] = "****"
    tool_response["checked"] = True
    return None

agent = Agent(name="bank", model="gemini-2.5-flash", instruction="Answer with get_account.",
              tools=[get_account], after_tool_callback=hide_the_card)
runner = InMemoryRunner(agent=agent, app_name="bank_app")
''' + MAIN

ON_EVENT = '''
from google.adk.agents import Agent
from google.adk.plugins import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def get_weather(city: str) -> dict:
    """Tells the weather in a city."""
    return {"city": city, "report": "Sunny, 21 degrees."}

class StampPlugin(BasePlugin):
    """Edits each event in place: a tool's response gets a new dict, a text a suffix."""

    def __init__(self) -> None:
        super().__init__(name="stamp")

    async def on_event_callback(self, *, invocation_context, event):
        for part in event.content.parts if event.content and event.content.parts else []:
            if part.function_response is not None:
                part.function_response.response = {**part.function_response.response, "source": "stamped"}
            elif part.text:
                part.text = part.text + " (checked)"
        LOG.append(("on_event", event.author))
        return None

agent = Agent(name="weather", model="gemini-2.5-flash", instruction="Answer with get_weather.",
              tools=[get_weather])
runner = InMemoryRunner(agent=agent, app_name="weather_app", plugins=[StampPlugin()])
''' + MAIN

USER_EDITS = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

agent = Agent(name="echo", model="gemini-2.5-flash", instruction="Reply briefly.")
runner = InMemoryRunner(agent=agent, app_name="echo_app")
''' + MAIN + '''
def after_yield(event):
    """The caller edits an event it got from run_async."""
    if event.content and event.content.parts and event.content.parts[0].text:
        event.content.parts[0].text = "edited by the caller: " + event.content.parts[0].text
'''

GET_SESSION_EDITS = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

agent = Agent(name="echo", model="gemini-2.5-flash", instruction="Reply briefly.")
runner = InMemoryRunner(agent=agent, app_name="echo_app")
''' + MAIN.replace("async def main(", "async def one_turn(") + '''
async def main(turns):
    """A turn; the caller edits the events of the session it read; another turn."""
    first = await one_turn(turns[:1])
    sessions = await runner.session_service.list_sessions(app_name=runner.app_name, user_id="ann")
    got = await runner.session_service.get_session(app_name=runner.app_name, user_id="ann",
                                                   session_id=sessions.sessions[0].id)
    for event in got.events:
        if event.content and event.content.parts:
            event.content.parts[0].text = "edited copy"
    again = await runner.session_service.get_session(app_name=runner.app_name, user_id="ann",
                                                     session_id=got.id)
    LOG.append(("read again", [_stored_row(e) for e in again.events]))
    return first
'''

# name: (source, the model's answers in order, the user's turns)
CASES: dict[str, tuple[str, list[StubResponse], list[str]]] = {
    "before_model_callback edits the text of the last part and the config in place (the session keeps the original)": (
        BEFORE_MODEL, [gemini_response("Paris."), gemini_response("Rome.")],
        ["Capital of France?", "Capital of Italy?"]),
    "a plugin edits the text of the last part in its before_model_callback (the session keeps the original)": (
        PLUGIN_BEFORE_MODEL, [gemini_response("Hello!"), gemini_response("Bye!")], ["Hi", "Bye"]),
    "the docs' before_model_callback rebuilds the system instruction as a Content and edits it": (
        DOCS_BEFORE_MODEL, [gemini_response("Hello! How can I help?")], ["Hello", "Please BLOCK this"]),
    "a BaseTool subclass edits the request in its process_llm_request (the session keeps the original)": (
        TOOL_HOOK, [gemini_response("Hello!"), gemini_response("Bye!")], ["Hi", "Bye"]),
    "before_model_callback appends a part and a Content built empty (parts.append)": (
        BEFORE_MODEL_ADDS_A_PART, [gemini_response("Hello!"), gemini_response("Bye!")], ["Hi", "Bye"]),
    "after_model_callback assigns the answer's text in place (stored and yielded so)": (
        AFTER_MODEL, [gemini_response("hello there"), gemini_response("goodbye")], ["Hi", "Bye"]),
    "after_tool_callback edits the result dict of the tool in place (the model and the session see it)": (
        AFTER_TOOL, [calls(("get_account", {"user": "ann"})), gemini_response("Your balance is 1200."),
                     gemini_response("You are welcome.")],
        ["My balance?", "Thanks"]),
    "on_event_callback assigns function_response.response and part.text in place": (
        ON_EVENT, [calls(("get_weather", {"city": "Paris"})), gemini_response("Sunny in Paris."),
                   gemini_response("Yes.")],
        ["Weather in Paris?", "Sure?"]),
    "the caller edits an event run_async yielded (an in-memory session keeps that object)": (
        USER_EDITS, [gemini_response("hello there"), gemini_response("goodbye")], ["Hi", "Bye"]),
    "the caller edits the events of a session it read (get_session hands out copies)": (
        GET_SESSION_EDITS, [gemini_response("hello there")], ["Hi"]),
}


#: cases that fail for a reason outside the types and the engine, kept as strict xfails
#: so that they are noticed when it is fixed
DIFFERENT: dict[str, str] = {}


def _temperatures(server: StubServer) -> list[Any]:
    return [(r.body.get("generationConfig") or {}).get("temperature") for r in server.requests]


def run_mutating_case(source: str, answers: list[StubResponse], turns: list[str],
                      server: StubServer) -> dict[str, Any]:
    namespace, (events, finals, state) = run_program(source, answers, server, turns, name="<mutable case>")
    return {"log": harness._plain(namespace["LOG"]), "events": event_rows(events), "finals": harness._plain(finals),
            "state": harness._plain(state), "requests": request_rows(server), "temperatures": _temperatures(server),
            "unused_answers": len(server.responses)}


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=DIFFERENT[name])) if name in DIFFERENT else name
    for name in CASES])
def test_google_adk_code_that_mutates_types_in_place_runs_here_alike(name: str, gemini: StubServer) -> None:
    source, answers, turns = CASES[name]
    theirs = run_mutating_case(source, answers, turns, gemini)
    assert theirs["unused_answers"] == 0 and theirs["log"], "the case must use its script on google-adk"
    ours = run_mutating_case(rewritten(source), answers, turns, gemini)
    assert "google" not in rewritten(source)
    assert ours["requests"] == theirs["requests"]
    assert ours["temperatures"] == theirs["temperatures"]
    assert ours["events"] == theirs["events"]
    assert ours["finals"] == theirs["finals"]
    assert ours["log"] == theirs["log"]
    assert ours["state"] == theirs["state"]
    assert ours["unused_answers"] == 0


def test_the_types_take_assignment_as_google_genais_do() -> None:
    google_types = pytest.importorskip("google.genai.types")
    for module in (google_types, our_types):
        content = module.Content(role="system", parts=[])
        content.parts.append(module.Part(text="a"))
        content.parts[0].text = "b"
        content.role = "user"
        response = module.FunctionResponse(name="f", response={"x": 1})
        response.response = {"y": 2}
        response.response["z"] = 3
        assert (content.role, [p.text for p in content.parts], response.response) == (
            "user", ["b"], {"y": 2, "z": 3}), module.__name__
        with pytest.raises(ValueError):
            content.no_such_field = 1  # type: ignore[attr-defined]
    # built from a tuple, ours holds a list too (google.genai's field is a list)
    assert isinstance(our_types.Content(role="user", parts=(our_types.Part(text="a"),)).parts, list)


def test_what_a_before_model_callback_changes_in_place_stays_in_its_request() -> None:
    """Ours only: a callback's in-place edits of a request's tool declaration and of a
    config list reach that request only; the next request is compiled from the agent's
    own definition, unchanged."""
    def get_weather(city: str) -> dict[str, str]:
        """Tells the weather."""
        return {"city": city}

    def edit(callback_context: Any, llm_request: Any) -> None:
        llm_request.tools[0].description += " (edited)"
        llm_request.config["stop"].append("STOP")
        llm_request.contents[0].parts[0].text += " (edited)"

    model = ScriptedModel(fallback="fine")
    agent = LlmAgent(name="bot", model=model, tools=[get_weather], before_model_callback=edit,
                     generate_content_config=our_types.GenerateContentConfig(stop_sequences=["END"]))

    async def main() -> list[str]:
        runner = InMemoryRunner(agent, app_name="edits")
        await runner.session_service.create_session(app_name="edits", user_id="ann", session_id="s1")
        for text in ("one", "two"):
            async for _ in runner.run_async(user_id="ann", session_id="s1", new_message=our_types.Content(
                    role="user", parts=[our_types.Part(text=text)])):
                pass
        stored = await runner.session_service.get_session(app_name="edits", user_id="ann", session_id="s1")
        assert stored is not None
        return [e.content.parts[0].text or "" for e in stored.events if e.content is not None]

    stored = asyncio.run(asyncio.wait_for(main(), timeout=30))
    assert [r.tools[0].description for r in model.requests] == ["Tells the weather. (edited)"] * 2
    assert [r.config["stop"] for r in model.requests] == [["END", "STOP"]] * 2
    assert [r.contents[0].parts[0].text for r in model.requests] == ["one (edited)"] * 2
    assert stored == ["one", "fine", "two", "fine"]
