"""google-adk code runs here with only its imports rewritten (issue 52, first slice).

Each case is the source of a small google-adk program in the shape of google-adk's
quickstart: agents with function tools, a runner, and the loop ``async for event in
runner.run_async(...)`` that keeps the final responses by ``event.is_final_response()``.
It is executed twice: once as written, on google-adk 2.13; once with its imports
rewritten by search-and-replace (``google.adk`` -> ``adk_actors``, ``google.genai``'s
``types`` -> ``adk_actors.types``), on ours. Both reach ONE Gemini REST stand-in on
127.0.0.1 (adk_actors.testing.StubServer) through environment variables only, the
same for both: google-genai's ``GOOGLE_GEMINI_BASE_URL`` and ``GOOGLE_API_KEY``, which
our model registry (``adk_actors.models.resolve_model``) reads too when its own
``GEMINI_BASE_URL`` / ``GEMINI_API_KEY`` are unset. The stand-in gives both the same
scripted answers.

Compared, per case: each event's author, ``is_final_response()`` verdict, function
calls and responses (``get_function_calls`` / ``get_function_responses``, their ids
mapped to their order of appearance), text and ``long_running_tool_ids``; the final
response texts; the session's state after the turns; and every request the stand-in
received: the model in its path, the contents, the tools (names, descriptions,
parameter schemas), and the agent's own instruction. Left out, by nature or by rule:

* ids and timestamps (random on both sides);
* the identity sentence each side appends to the system instruction (the seeds'
  compile rules word it "You are <name>."; google-adk's words differ), so the
  instruction is compared up to it;
* JSON-schema ``title`` keys google-adk's tool schemas carry and ours do not, and the
  name of the schema's key (google-adk sends ``parameters_json_schema``, we send
  ``parameters``, both Gemini's);
* function-call ids in the request contents (google-adk strips the ids it made up
  before sending; we send them);
* the words of two texts of our request compiler (docs/design.md, "The request
  compiler's rules"): another agent's turn quoted to the next agent as context
  ("For context:"; google-adk 2.13 adds quoting markers), compared as who said,
  called or returned what; and the description of ``transfer_to_agent``, compared as
  the agents it offers;
* ``generationConfig: {}``, which google-adk sends empty;
* the parameters of a tool that takes none: google-adk sends no schema, we send an
  object schema without properties.

Then google-adk's Event readers rule by rule on events a program builds (the same
source on both sides), and, ours only (google-adk reaches them through Vertex AI and
LiteLLM), ``claude-*`` and ``openai/...`` model names resolved in process from the
environment, as a host resolves them.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import _plain, assert_alike, calls, rewritten

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

# the stand-in and its environment (fixtures of the shared harness)
stand_in, gemini = harness.stand_in, harness.gemini


# -- the cases: each a google-adk program, its answers from the model, and its turns --

QUICKSTART = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types

def get_weather(city: str) -> dict:
    """Tells the current weather in a city."""
    if city.lower() == "paris":
        return {"status": "success", "report": "Sunny, 21 degrees."}
    return {"status": "error", "error_message": f"No weather for {city}."}

weather_agent = Agent(
    name="weather_agent",
    model="gemini-2.5-flash",
    description="Answers questions about the weather.",
    instruction="Use get_weather to answer questions about the weather.",
    tools=[get_weather],
)

async def main(turns):
    runner = InMemoryRunner(agent=weather_agent, app_name="weather_app")
    session = await runner.session_service.create_session(app_name="weather_app", user_id="ann")
    seen, finals = [], []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name="weather_app", user_id="ann",
                                                      session_id=session.id)
    await runner.close()
    return seen, finals, dict(stored.state)
'''

TWO_TOOLS = '''
from google.adk.agents import LlmAgent
from google.adk.runners import InMemoryRunner
from google.genai import types

def get_time(city: str) -> dict:
    """The local time in a city."""
    return {"city": city, "time": "10:30"}

def get_population(city: str, year: int) -> dict:
    """How many people lived in a city in a given year."""
    return {"city": city, "year": year, "population": 2100000}

facts = LlmAgent(name="city_facts", model="gemini-2.5-flash",
                 instruction="Answer with facts about cities.", tools=[get_time, get_population])

async def main(turns):
    runner = InMemoryRunner(agent=facts, app_name="facts")
    session = await runner.session_service.create_session(app_name="facts", user_id="bob")
    seen, finals = [], []
    for text in turns:
        async for event in runner.run_async(user_id="bob", session_id=session.id,
                                            new_message=types.UserContent(parts=[types.Part(text=text)])):
            seen.append(event)
            calls = event.get_function_calls()
            if event.is_final_response() and not calls:
                finals.append("".join(p.text or "" for p in event.content.parts))
    stored = await runner.session_service.get_session(app_name="facts", user_id="bob", session_id=session.id)
    await runner.close()
    return seen, finals, dict(stored.state)
'''

STATE = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools import ToolContext
from google.genai import types

def remember_city(city: str, tool_context: ToolContext) -> dict:
    """Remembers the user's home city."""
    before = tool_context.state.get("user:home", "unknown")
    tool_context.state["user:home"] = city
    tool_context.state["visits"] = tool_context.state.get("visits", 0) + 1
    return {"previous": before, "now": city}

agent = Agent(name="memo", model="gemini-2.5-flash", instruction="Remember where the user lives.",
              tools=[remember_city], output_key="last_answer")

async def main(turns):
    runner = InMemoryRunner(agent=agent, app_name="memo_app")
    session = await runner.session_service.create_session(app_name="memo_app", user_id="cy",
                                                          state={"visits": 1})
    seen, finals = [], []
    for text in turns:
        async for event in runner.run_async(user_id="cy", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=text)]),
                                            state_delta={"temp:mood": "curious", "asked": text}):
            seen.append(event)
            if event.is_final_response():
                finals.append(event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name="memo_app", user_id="cy", session_id=session.id)
    await runner.close()
    return seen, finals, dict(stored.state)
'''

SESSION = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools.tool_context import ToolContext
from google.genai import types

def whoami(tool_context: ToolContext) -> dict:
    """Says which session, app and user this conversation is."""
    session = tool_context.session
    return {"session": session.id, "app": session.app_name, "user": session.user_id,
            "greeted": session.state.get("greeted"), "events_so_far": len(session.events)}

agent = Agent(name="introspect", model="gemini-2.5-flash", instruction="Tell the user who they are.",
              tools=[whoami])

async def main(turns):
    runner = InMemoryRunner(agent=agent, app_name="intro_app")
    await runner.session_service.create_session(app_name="intro_app", user_id="dee", session_id="s-42",
                                                state={"greeted": True})
    seen, finals = [], []
    for text in turns:
        async for event in runner.run_async(user_id="dee", session_id="s-42",
                                            new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            seen.append(event)
            if event.is_final_response():
                finals.append(event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name="intro_app", user_id="dee", session_id="s-42")
    await runner.close()
    return seen, finals, dict(stored.state)
'''

APP = '''
from google.adk.agents import Agent
from google.adk.apps import App
from google.adk.runners import InMemoryRunner
from google.genai import types

def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b

calculator = Agent(name="calculator", model="gemini-2.5-flash", instruction="Add numbers with add.",
                   tools=[add])
app = App(name="calc_app", root_agent=calculator)

async def main(turns):
    runner = InMemoryRunner(app=app)
    assert runner.app_name == "calc_app"
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="eve")
    seen, finals = [], []
    for text in turns:
        async for event in runner.run_async(user_id="eve", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            seen.append(event)
            if event.is_final_response():
                finals.append(event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name="calc_app", user_id="eve", session_id=session.id)
    await runner.close()
    return seen, finals, dict(stored.state)
'''

TRANSFER = '''
from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

def lookup_flight(number: str) -> dict:
    """Finds a flight by its number."""
    return {"number": number, "status": "on time", "gate": "B12"}

flights = LlmAgent(name="flight_desk", model="gemini-2.0-flash", description="Knows about flights.",
                   instruction="Answer questions about flights.", tools=[lookup_flight])
greeter = LlmAgent(name="front_desk", model="gemini-2.5-flash", description="Greets travellers.",
                   instruction="Greet the traveller; hand flight questions to flight_desk.",
                   sub_agents=[flights])

async def main(turns):
    sessions = InMemorySessionService()
    runner = Runner(agent=greeter, app_name="airport", session_service=sessions)
    session = await sessions.create_session(app_name="airport", user_id="fay")
    seen, finals = [], []
    for text in turns:
        async for event in runner.run_async(user_id="fay", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            seen.append(event)
            if event.is_final_response():
                finals.append((event.author, event.content.parts[0].text))
    stored = await sessions.get_session(app_name="airport", user_id="fay", session_id=session.id)
    await runner.close()
    return seen, finals, dict(stored.state)
'''

BEFORE_MODEL = '''
from typing import Optional
from google.adk.agents import Agent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models import LlmRequest, LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

def guard(callback_context: CallbackContext, llm_request: LlmRequest) -> Optional[LlmResponse]:
    last = llm_request.contents[-1].parts[0].text or ""
    if "password" in last.lower():
        callback_context.state["blocked"] = callback_context.state.get("blocked", 0) + 1
        return LlmResponse(content=types.Content(role="model",
                                                 parts=[types.Part(text="I cannot help with passwords.")]))
    return None

agent = Agent(name="guarded", model="gemini-2.5-flash", instruction="Be helpful.",
              before_model_callback=guard)

async def main(turns):
    runner = InMemoryRunner(agent=agent, app_name="guarded_app")
    session = await runner.session_service.create_session(app_name="guarded_app", user_id="gil")
    seen, finals = [], []
    for text in turns:
        async for event in runner.run_async(user_id="gil", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            seen.append(event)
            if event.is_final_response():
                finals.append(event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name="guarded_app", user_id="gil",
                                                      session_id=session.id)
    await runner.close()
    return seen, finals, dict(stored.state)
'''

SKIP_SUMMARY = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools import ToolContext
from google.genai import types

def export_report(title: str, tool_context: ToolContext) -> dict:
    """Exports a report; its result goes to the user as it is."""
    tool_context.actions.skip_summarization = True
    return {"exported": title, "pages": 3}

agent = Agent(name="exporter", model="gemini-2.5-flash", instruction="Export what is asked.",
              tools=[export_report])

async def main(turns):
    runner = InMemoryRunner(agent=agent, app_name="exports")
    session = await runner.session_service.create_session(app_name="exports", user_id="hal")
    seen, finals = [], []
    for text in turns:
        async for event in runner.run_async(user_id="hal", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            seen.append(event)
            if event.is_final_response():
                responses = event.get_function_responses()
                finals.append(responses[0].response if responses else event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name="exports", user_id="hal", session_id=session.id)
    await runner.close()
    return seen, finals, dict(stored.state)
'''

RUNNER_APP = '''
from google.adk.agents import Agent
from google.adk.apps.app import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools import ToolContext
from google.genai import types

def take_note(text: str, tool_context: ToolContext) -> dict:
    """Keeps a note for this user."""
    notes = list(tool_context.state.get("user:notes", []))
    notes.append(text)
    tool_context.state["user:notes"] = notes
    tool_context.state["temp:scratch"] = "not kept"
    tool_context.state["app:total_notes"] = tool_context.state.get("app:total_notes", 0) + 1
    return {"notes": len(notes)}

app = App(name="notes_app", root_agent=Agent(name="notary", model="gemini-2.5-flash",
                                             instruction="Take notes.", tools=[take_note]))

def said(text):
    return types.Content(role="user", parts=[types.Part(text=text)])

async def main(turns):
    sessions = InMemorySessionService()
    strict = Runner(app=app, session_service=sessions)
    try:
        async for _ in strict.run_async(user_id="lee", session_id="nope", new_message=said("hello?")):
            pass
        missing = "no error"
    except ValueError:
        missing = "ValueError"
    runner = Runner(app=app, session_service=sessions, auto_create_session=True)
    seen, finals = [], [missing]
    for text in turns:
        async for event in runner.run_async(user_id="lee", session_id="notes-1", new_message=said(text)):
            seen.append(event)
            if event.is_final_response():
                finals.append(event.content.parts[0].text)
    stored = await sessions.get_session(app_name="notes_app", user_id="lee", session_id="notes-1")
    await runner.close()
    return seen, finals, dict(stored.state)
'''

USER_MESSAGE = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types

agent = Agent(name="echoer", model="gemini-2.5-flash", instruction="Answer briefly.")

async def main(turns):
    runner = InMemoryRunner(agent, app_name="echo_app")
    session = await runner.session_service.create_session(app_name="echo_app", user_id="jo")
    seen, finals = [], []
    for text in turns:
        async for event in runner.run_async(user_id="jo", session_id=session.id, yield_user_message=True,
                                            new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            seen.append(event)
            if event.is_final_response() and event.author != "user":
                finals.append(event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name="echo_app", user_id="jo", session_id=session.id)
    await runner.close()
    return seen, finals, dict(stored.state)
'''


# name: (source, the model's answers in order, the user's turns)
CASES: dict[str, tuple[str, list[StubResponse], list[str]]] = {
    "quickstart with a tool": (QUICKSTART, [
        calls(("get_weather", {"city": "Paris"})), gemini_response("It is sunny and 21 degrees in Paris."),
        calls(("get_weather", {"city": "Atlantis"})), gemini_response("I have no weather for Atlantis."),
    ], ["What is the weather in Paris?", "And in Atlantis?"]),
    "two tools in one turn": (TWO_TOOLS, [
        calls(("get_time", {"city": "Paris"}), ("get_population", {"city": "Paris", "year": 2020})),
        gemini_response("It is 10:30 in Paris, home to 2.1 million people."),
    ], ["Time and population of Paris in 2020?"]),
    "state via tool_context.state, output_key and state_delta": (STATE, [
        calls(("remember_city", {"city": "Lyon"})), gemini_response("Noted: you live in Lyon."),
        calls(("remember_city", {"city": "Nice"})), gemini_response("Moved to Nice, noted."),
    ], ["I live in Lyon.", "Now I live in Nice."]),
    "tool_context.session": (SESSION, [
        calls(("whoami", {})), gemini_response("You are dee in session s-42."),
    ], ["Who am I?"]),
    "InMemoryRunner(app=App(...))": (APP, [
        calls(("add", {"a": 2, "b": 40})), gemini_response("2 + 40 = 42."),
    ], ["What is 2 + 40?"]),
    "transfer to a sub-agent with a model of its own, by name": (TRANSFER, [
        gemini_response("Hello and welcome!"),
        calls(("transfer_to_agent", {"agent_name": "flight_desk"})),
        calls(("lookup_flight", {"number": "AF123"})), gemini_response("AF123 is on time at gate B12."),
    ], ["Hi!", "Is flight AF123 on time?"]),
    "before_model_callback answers instead of the model": (BEFORE_MODEL, [
        gemini_response("Paris is the capital of France."),
    ], ["What is my password?", "What is the capital of France?"]),
    "skip_summarization ends the turn with the tool's result": (SKIP_SUMMARY, [
        calls(("export_report", {"title": "Q3"})),
    ], ["Export the Q3 report."]),
    "Runner(app=App(...)), a missing session, auto_create_session, state scopes": (RUNNER_APP, [
        calls(("take_note", {"text": "buy milk"})), gemini_response("Noted."),
        calls(("take_note", {"text": "call mum"})), gemini_response("Noted too."),
    ], ["Note: buy milk", "Note: call mum"]),
    "yield_user_message": (USER_MESSAGE, [
        gemini_response("Hello."), gemini_response("Goodbye."),
    ], ["Hi", "Bye"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_google_adk_program_runs_here_with_its_imports_rewritten(name: str, gemini: StubServer) -> None:
    source, answers, turns = CASES[name]
    assert_alike(source, answers, turns, gemini)


# -- google-adk's Event readers, rule by rule, on events a program builds ---------------

EVENT_READERS = '''
from google.adk.events import Event, EventActions
from google.genai import types

def said(text, role="model"):
    return types.Content(role=role, parts=[types.Part(text=text)])

call = types.Part(function_call=types.FunctionCall(id="c1", name="refund", args={"amount": 5}))
other_call = types.Part(function_call=types.FunctionCall(id="c2", name="notify", args={}))
result = types.Part(function_response=types.FunctionResponse(id="c1", name="refund", response={"ok": True}))

EVENTS = {
    "a text answer": Event(author="clerk", content=said("Done.")),
    "a piece of a streamed answer": Event(author="clerk", content=said("Do"), partial=True),
    "two function calls": Event(author="clerk", content=types.Content(role="model", parts=[call, other_call])),
    "text, then a call": Event(author="clerk",
                               content=types.Content(role="model", parts=[types.Part(text="One moment."), call])),
    "a function response": Event(author="clerk", content=types.Content(role="user", parts=[result])),
    "a response that skips summarization": Event(author="clerk", content=types.Content(role="user", parts=[result]),
                                                  actions=EventActions(skip_summarization=True)),
    "a long-running call": Event(author="clerk", content=types.Content(role="model", parts=[call]),
                                 long_running_tool_ids={"c1"}),
    "a partial long-running call": Event(author="clerk", content=types.Content(role="model", parts=[call]),
                                         long_running_tool_ids={"c1"}, partial=True),
    "an error": Event(author="clerk", error_code="SAFETY", error_message="blocked"),
    "a partial error": Event(author="clerk", error_code="SAFETY", partial=True),
    "an error beside a call": Event(author="clerk", error_code="MAX_TOKENS",
                                    content=types.Content(role="model", parts=[call])),
    "an error beside a response": Event(author="clerk", error_code="MAX_TOKENS",
                                        content=types.Content(role="user", parts=[result])),
    "no content": Event(author="clerk"),
    "a content without parts": Event(author="clerk", content=types.Content(role="model", parts=[])),
    "the user's message": Event(author="user", content=said("Refund me.", role="user")),
    "a transfer": Event(author="clerk", content=types.Content(role="user", parts=[result]),
                        actions=EventActions(transfer_to_agent="desk")),
}
FRESH_IDS = {Event.new_id() for _ in range(3)}
'''


def reader_rows(events: dict[str, Any]) -> dict[str, Any]:
    rows = {}
    for name, event in events.items():
        message = event.message
        rows[name] = {
            "final": event.is_final_response(),
            "calls": [(c.id, c.name, _plain(c.args)) for c in event.get_function_calls()],
            "responses": [(r.id, r.name, _plain(r.response)) for r in event.get_function_responses()],
            "trailing_code_result": event.has_trailing_code_execution_result(),
            "message": None if message is None else [p.text for p in message.parts or []],
            "has_id": bool(event.id),
        }
    return rows


def test_event_readers_give_google_adks_verdicts_rule_by_rule() -> None:
    theirs: dict[str, Any] = {}
    exec(compile(EVENT_READERS, "<event readers>", "exec"), theirs)
    ours: dict[str, Any] = {}
    exec(compile(rewritten(EVENT_READERS), "<event readers>", "exec"), ours)
    expected = reader_rows(theirs["EVENTS"])
    assert reader_rows(ours["EVENTS"]) == expected
    # the verdicts are not all alike: each rule is met at least once
    assert {row["final"] for row in expected.values()} == {True, False}
    assert len(ours["FRESH_IDS"]) == 3 and all(isinstance(i, str) and i for i in ours["FRESH_IDS"])


# -- model names in process: the host's registry, providers named by the environment ----

BY_NAME = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types

def convert(amount: float, currency: str) -> dict:
    """Converts an amount of euros to another currency."""
    return {"amount": round(amount * 1.1, 2), "currency": currency}

agent = Agent(name="exchange", model=MODEL, instruction="Convert money with convert.", tools=[convert])

async def main():
    runner = InMemoryRunner(agent=agent, app_name="exchange")
    session = await runner.session_service.create_session(app_name="exchange", user_id="kim")
    finals = []
    async for event in runner.run_async(user_id="kim", session_id=session.id,
                                        new_message=types.Content(role="user", parts=[types.Part(text="10 EUR in USD?")])):
        if event.is_final_response():
            finals.append(event.content.parts[0].text)
    await runner.close()
    return finals
'''


@pytest.mark.parametrize("model,provider", [("claude-sonnet-4-5", "anthropic"), ("openai/gpt-4o-mini", "openai")])
def test_a_model_given_by_name_runs_in_process_on_the_provider_the_environment_names(
        model: str, provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """google-adk reaches these through Vertex AI and LiteLLM, which this test cannot
    stand in for; ours resolves them as a host does, from the environment alone."""
    from adk_actors.testing import anthropic_message, openai_chat

    with StubServer() as server:
        if provider == "anthropic":
            monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
            monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-a-secret")
            server.add(anthropic_message(tool_uses=[("tu_1", "convert", {"amount": 10, "currency": "USD"})]),
                       anthropic_message("10 EUR is 11.0 USD."))
        else:
            monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
            monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-a-secret")
            server.add(openai_chat(tool_calls=[("call_1", "convert", {"amount": 10, "currency": "USD"})]),
                       openai_chat("10 EUR is 11.0 USD."))
        namespace: dict[str, Any] = {"MODEL": model}
        exec(compile(rewritten(BY_NAME), "<by name>", "exec"), namespace)
        finals = asyncio.run(asyncio.wait_for(namespace["main"](), timeout=60))
    assert finals == ["10 EUR is 11.0 USD."]
    paths = [r.path for r in server.requests]
    assert paths == (["/v1/messages"] * 2 if provider == "anthropic" else ["/v1/chat/completions"] * 2)
    sent = server.requests[0].body
    assert sent["model"] == model.removeprefix("openai/")
    assert server.requests[0].headers.get("x-api-key" if provider == "anthropic" else "authorization", "").endswith(
        "test-key-not-a-secret")
    answered = json.dumps(server.requests[1].body)
    assert "11.0" in answered and "USD" in answered  # the tool ran, its result was sent


def test_the_registry_prefers_its_own_variables_and_names_a_missing_key() -> None:
    from adk_actors.models import AuthenticationError, resolve_model

    both = {"GEMINI_API_KEY": "k", "GEMINI_BASE_URL": "http://127.0.0.1:1", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:2"}
    assert resolve_model("gemini-2.5-flash", env=both).base_url == "http://127.0.0.1:1"
    google_only = {"GOOGLE_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:2"}
    assert resolve_model("gemini-2.5-flash", env=google_only).base_url == "http://127.0.0.1:2"
    assert resolve_model("gemini-2.5-flash", env={"GOOGLE_API_KEY": "k"}).base_url.startswith("https://")
    with pytest.raises(AuthenticationError, match="GEMINI_API_KEY"):
        resolve_model("gemini-2.5-flash", env={})
    with pytest.raises(AuthenticationError, match="ANTHROPIC_API_KEY"):
        resolve_model("claude-sonnet-4-5", env={})


def test_an_unknown_model_name_in_process_ends_the_turn_with_an_error_naming_it() -> None:
    """google-adk raises a ValueError naming the model; ours commits an error event
    naming it (a final response), then the run raises with the same words."""
    source = rewritten(BY_NAME).replace("finals = []", "finals = SEEN").replace(
        "finals.append(event.content.parts[0].text)", "finals.append((event.error_code, event.error_message))")
    seen: list[tuple[str, str]] = []
    namespace: dict[str, Any] = {"MODEL": "mystery-model-9", "SEEN": seen}
    exec(compile(source, "<by name>", "exec"), namespace)
    with pytest.raises(Exception, match="no provider for model 'mystery-model-9'"):
        asyncio.run(asyncio.wait_for(namespace["main"](), timeout=60))
    [(code, message)] = seen
    assert code == "unknown_model" and "mystery-model-9" in message


RUNNER_ARGUMENTS = '''
from google.adk.agents import Agent
from google.adk.apps import App
from google.adk.runners import InMemoryRunner, Runner
from google.adk.sessions import InMemorySessionService

agent = Agent(name="helper", model="gemini-2.5-flash")
app = App(name="helper_app", root_agent=agent)
ATTEMPTS = {
    "an agent without app_name": lambda: Runner(agent=agent, session_service=InMemorySessionService()),
    "an app and an agent": lambda: Runner(app=app, agent=agent, session_service=InMemorySessionService()),
    "neither": lambda: Runner(session_service=InMemorySessionService()),
    "plugins beside an app": lambda: InMemoryRunner(app=app, plugins=[]),
    "an app name with a space": lambda: App(name="my app", root_agent=agent),
    "an app named user": lambda: App(name="user", root_agent=agent),
    "an agent and its name": lambda: Runner(agent=agent, app_name="named", session_service=InMemorySessionService()),
    "an in-memory runner's default name": lambda: InMemoryRunner(agent),
    "an app's name overridden": lambda: InMemoryRunner(app=app, app_name="other"),
}
'''


def test_runner_arguments_are_taken_and_refused_as_google_adk_does() -> None:
    def outcomes(source: str) -> dict[str, str]:
        namespace: dict[str, Any] = {}
        exec(compile(source, "<runner arguments>", "exec"), namespace)
        found = {}
        for name, attempt in namespace["ATTEMPTS"].items():
            try:
                made = attempt()
            except ValueError:
                found[name] = "ValueError"
            else:
                found[name] = getattr(made, "app_name", type(made).__name__)
        return found

    expected = outcomes(RUNNER_ARGUMENTS)
    assert list(expected.values()).count("ValueError") == 6
    assert outcomes(rewritten(RUNNER_ARGUMENTS)) == expected
