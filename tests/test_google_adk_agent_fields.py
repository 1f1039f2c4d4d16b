"""google-adk 2.x's LlmAgent fields and Runner helpers, side by side (issue 52).

Each case is a small google-adk program run twice, as in tests/test_google_adk_parity.py:
as written on google-adk 2.13, then with its imports rewritten on ours, both against
one Gemini REST stand-in on 127.0.0.1 named by environment variables only. Compared
here, beyond the parity cases' events, finals and state: each model request's whole
``generationConfig`` and ``safetySettings``, its system instruction up to the identity
sentence, and its contents, in order. Left out or normalised, by rule:

* the keys of ``generationConfig`` as camelCase (google-genai sends the keys inside
  ``thinkingConfig`` in snake case; Gemini reads both);
* the identity sentence and what follows it in the system instruction (the seeds'
  compile rules word it, see test_google_adk_parity);
* with a ``static_instruction``, the user message that carries the agent's
  instruction is compared as its role and the instruction's text between the
  markers (google-adk's on both sides): the sentence before them is each side's own
  words (adk_actors.compiler's ``labelled_instruction``); so are the words that name a
  static instruction's inline data, compared as the reference and what it names;
* function-call ids in the contents, and another agent's turn quoted as context
  (compared as who did what), as in the parity cases.

Then what google-adk refuses when an agent is built, refused here with the same
exception type (``ValueError``; ours is :class:`AgentDefinitionError`, also a
``ValueError``) naming the same field; ``Runner.run_debug``'s printed lines and
returned events; and ``Runner.rewind_async``'s resulting session.
"""

from __future__ import annotations

import re
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import _contents, _plain, calls, event_rows, rewritten, run_program

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

_MARKERS = (("<<<BEGIN_SYSTEM_INSTRUCTION>>>", "<<<END_SYSTEM_INSTRUCTION>>>"),)  # google-adk's, and ours


def _camel(value: Any) -> Any:
    if isinstance(value, dict):
        return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def _instruction_message(content: dict[str, Any]) -> dict[str, Any] | None:
    """A user message carrying the agent's instruction, as its role and inner text."""
    parts = content.get("parts", [])
    text = parts[0].get("text", "") if len(parts) == 1 else ""
    for begin, end in _MARKERS:
        if f"\n{begin}\n" in text and text.endswith(f"\n{end}"):
            return {"role": content.get("role"), "instruction": text.split(f"\n{begin}\n", 1)[1][:-len(end) - 1]}
    return None


_REFERENCE = re.compile(r"\[(?:Reference to inline binary data:|Attached data) (inline_data_\d+)")
_CARRIER = re.compile(r"^(?:Referenced inline data: |Attached data )(inline_data_\d+):?$")


def _data_parts(content: dict[str, Any]) -> dict[str, Any]:
    """A message's inline data with camelCase keys (google-genai sends ``mime_type``),
    and the text that introduces a static instruction's data as its reference."""
    for part in content.get("parts", []):
        if "inlineData" in part:
            part["inlineData"] = _camel(part["inlineData"])
        if _CARRIER.match(part.get("text", "")):
            part["text"] = _CARRIER.sub(r"data \1", part["text"])
    return content


def bodies(server: StubServer) -> list[dict[str, Any]]:
    """Each request the stand-in received, as compared (see the module)."""
    rows = []
    for request in server.requests:
        body = request.body
        instruction = "".join(p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts", []))
        instruction = _REFERENCE.sub(r"[data \1", instruction)
        contents = [_instruction_message(c) or _data_parts(c) for c in _contents(body["contents"])]
        tools = sorted(d["name"] for tool in body.get("tools", []) for d in tool.get("functionDeclarations", []))
        rows.append({"contents": contents, "instruction": instruction.split("\n\nYou are ")[0],
                     "generationConfig": _camel(body.get("generationConfig") or {}),
                     "safetySettings": body.get("safetySettings") or [], "tools": tools})
    return rows


def side_by_side(source: str, answers: list[StubResponse], turns: list[str], server: StubServer,
                 compare_events: bool = True) -> dict[str, Any]:
    """Run ``source``'s ``main(turns)`` on google-adk, then on ours: both must use the
    whole script, and give the same request bodies, finals, state and (unless not
    ``compare_events``) events. Returns what google-adk's run gave (for a case's own checks)."""
    runs = []
    for text in (source, rewritten(source)):
        _, (events, finals, state) = run_program(text, answers, server, turns)
        runs.append({"events": event_rows(events), "finals": _plain(finals), "state": _plain(state),
                     "bodies": bodies(server), "unused": len(server.responses)})
    theirs, ours = runs
    assert theirs["unused"] == 0 and theirs["finals"], "the case must use its script on google-adk"
    assert ours["bodies"] == theirs["bodies"]
    if compare_events:
        assert ours["events"] == theirs["events"]
    assert ours["finals"] == theirs["finals"]
    assert ours["state"] == theirs["state"]
    assert ours["unused"] == 0
    return theirs


MAIN = '''
async def main(turns):
    runner = InMemoryRunner(agent=root_agent, app_name="fields")
    session = await runner.session_service.create_session(app_name="fields", user_id="ann",
                                                          state={"topic": "cats", "tone": "dry"})
    seen, finals = [], []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name="fields", user_id="ann", session_id=session.id)
    await runner.close()
    return seen, finals, dict(stored.state)
'''

HEAD = '''
from google.adk.agents import Agent, LlmAgent
from google.adk.runners import InMemoryRunner
from google.adk.tools.agent_tool import AgentTool
from google.genai import types
from pydantic import BaseModel
'''

CASES: dict[str, tuple[str, list[StubResponse], list[str]]] = {
    # every sampling setting google-adk's docs show, the safety settings and a thinking config
    "generate_content_config": ('''
root_agent = Agent(
    name="tuned", model="gemini-2.5-flash", instruction="Answer about {topic} in a {tone} tone.",
    generate_content_config=types.GenerateContentConfig(
        temperature=0.2, top_p=0.9, top_k=4, max_output_tokens=256, candidate_count=1, seed=7,
        stop_sequences=["STOP HERE"], presence_penalty=0.1, frequency_penalty=0.3, response_mime_type="text/plain",
        thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_budget=128),
        safety_settings=[
            types.SafetySetting(category=types.HarmCategory.HARM_CATEGORY_HARASSMENT,
                                threshold=types.HarmBlockThreshold.BLOCK_ONLY_HIGH),
            types.SafetySetting(category=types.HarmCategory.HARM_CATEGORY_DANGEROUS_CONTENT,
                                threshold=types.HarmBlockThreshold.BLOCK_LOW_AND_ABOVE)]))
''', [gemini_response("Cats sleep.")], ["Tell me a fact."]),
    # JSON out without a schema: response_mime_type alone
    "json_mime_type": ('''
root_agent = Agent(name="jsonish", model="gemini-2.5-flash", instruction="Reply in JSON.",
                   generate_content_config=types.GenerateContentConfig(response_mime_type="application/json",
                                                                       max_output_tokens=64))
''', [gemini_response('{"a": 1}')], ["Give me a."]),
    # static text in the system instruction (no placeholder filled), the instruction as
    # the turn's user message, before the turn's user message, over two turns
    "static_instruction_text": ('''
root_agent = Agent(name="cached", model="gemini-2.5-flash",
                   static_instruction="You help with {topic} questions. Keep {braces} as written.",
                   instruction="Today the user likes {topic}; be {tone}.",
                   generate_content_config=types.GenerateContentConfig(temperature=0.0))
''', [gemini_response("One."), gemini_response("Two.")], ["First question.", "Second question."]),
    # a Content of several text parts, and a tool call: the instruction's place in the
    # request that follows the tool's result
    "static_instruction_content_and_a_tool": ('''
def lookup(word: str) -> dict:
    """Looks a word up."""
    return {"word": word, "meaning": "a small animal"}

root_agent = Agent(name="lexicon", model="gemini-2.5-flash", tools=[lookup],
                   static_instruction=types.Content(role="user", parts=[types.Part(text="You are a dictionary."),
                                                                        types.Part(text="Be exact.")]),
                   instruction="Words about {topic} matter most.")
''', [harness.calls(("lookup", {"word": "kitten"})), gemini_response("A young cat.")], ["What is a kitten?"]),
    # a list of strings and Parts, after the global instruction
    "static_instruction_list": ('''
root_agent = Agent(name="listed", model="gemini-2.5-flash", global_instruction="Speak plainly about {topic}.",
                   static_instruction=["Rule one: be kind.", types.Part(text="Rule two: be short.")],
                   instruction="The topic is {topic}.")
''', [gemini_response("Kind and short.")], ["Hello."]),
    # inline data in a static instruction: named in the system instruction, its data
    # first in the contents (a prefix that stays), the instruction's message after it
    "static_instruction_inline_data": ('''
root_agent = Agent(name="pictures", model="gemini-2.5-flash",
                   static_instruction=types.Content(role="user", parts=[
                       types.Part(text="Describe pictures."),
                       types.Part(inline_data=types.Blob(mime_type="image/png", data=b"PNG1", display_name="logo")),
                       types.Part(text="Be short."),
                       types.Part.from_bytes(data=b"%PDF", mime_type="application/pdf")]),
                   instruction="The topic is {topic}.")
''', [gemini_response("A logo."), gemini_response("A document.")], ["One.", "Two."]),
    # a static instruction without an instruction: no instruction message at all
    "static_instruction_alone": ('''
root_agent = Agent(name="plain", model="gemini-2.5-flash", static_instruction="Only static words.")
''', [gemini_response("Sure."), gemini_response("Again.")], ["Hi.", "Hi again."]),
    # include_contents="none": the second turn's request holds that turn only
    "include_contents_none": ('''
root_agent = Agent(name="forgetful", model="gemini-2.5-flash", include_contents="none",
                   instruction="Answer only the last message.")
''', [gemini_response("First."), gemini_response("Second.")], ["Remember 42.", "What number?"]),
    "include_contents_none_with_static_instruction": ('''
root_agent = Agent(name="forgetful", model="gemini-2.5-flash", include_contents="none",
                   static_instruction="You never remember.", instruction="Topic: {topic}.")
''', [gemini_response("First."), gemini_response("Second.")], ["Remember 42.", "What number?"]),
    # input_schema: an AgentTool declares it, and the agent gets the arguments as JSON
    "input_schema": ('''
class Order(BaseModel):
    dish: str
    count: int

kitchen = LlmAgent(name="kitchen", model="gemini-2.5-flash", description="Cooks an order.",
                   instruction="Cook what is ordered.", input_schema=Order)
root_agent = LlmAgent(name="waiter", model="gemini-2.5-flash", instruction="Take orders.",
                      tools=[AgentTool(agent=kitchen)])
''', [calls(("kitchen", {"dish": "soup", "count": 2})), gemini_response("Two soups, cooked."),
      gemini_response("Your soups are coming.")], ["Two soups please."]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_agent_field_reaches_the_model_request_as_on_google_adk(name: str, gemini: StubServer) -> None:
    body, answers, turns = CASES[name]
    theirs = side_by_side(HEAD + body + MAIN, answers, turns, gemini)
    assert theirs["bodies"], "google-adk asked its model"


# -- what google-adk refuses when an agent is built ------------------------------------

REFUSED = {
    "tools in the config": ('generate_content_config=types.GenerateContentConfig('
                            'tools=[{"function_declarations": [{"name": "f"}]}])', "tools"),
    "a system instruction in the config": (
        'generate_content_config=types.GenerateContentConfig(system_instruction="Be nice.")', "instruction"),
    "a response schema in the config": (
        'generate_content_config=types.GenerateContentConfig(response_schema={"type": "OBJECT"})', "output_schema"),
    "a base URL in the config": (
        'generate_content_config=types.GenerateContentConfig(http_options={"base_url": "http://127.0.0.1:9"})',
        "base url"),
    "a sampling setting on the agent": ("temperature=0.3", "generate_content_config"),
    "a camel-case setting on the agent": ("maxOutputTokens=3", "max_output_tokens"),
    "a system instruction on the agent": ('system_instruction="x"', "instruction"),
    "a response schema on the agent": ('response_schema={"type": "OBJECT"}', "output_schema"),
    "a base URL on the agent": ('http_options={"base_url": "http://127.0.0.1:9"}', "base url"),
    "an input schema that is no model": ("input_schema=dict", "input_schema"),
    "a static instruction that is no content": ("static_instruction=42", "static_instruction"),
    "a misspelt field": ("temprature=0.3", "temprature"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_google_adk_refuses_in_an_agent_is_refused_here_with_its_exception_type(name: str) -> None:
    arguments, named = REFUSED[name]
    source = ("from google.adk.agents import Agent\nfrom google.genai import types\n"
              f'Agent(name="refused", model="gemini-2.5-flash", {arguments})\n')
    for text in (source, rewritten(source)):
        with pytest.raises(ValueError) as raised:
            exec(compile(text, "<refused>", "exec"), {})
        assert named in str(raised.value).lower().replace("_", " ") or named in str(raised.value), text


def test_the_config_is_kept_on_the_agent_and_the_planner_s_thinking_wins_as_on_google_adk() -> None:
    source = '''
from google.adk.agents import Agent
from google.adk.planners import BuiltInPlanner
from google.genai import types
agent = Agent(name="kept", model="gemini-2.5-flash", planner=BuiltInPlanner(
                  thinking_config=types.ThinkingConfig(thinking_budget=99)),
              generate_content_config=types.GenerateContentConfig(
                  temperature=0.4, thinking_config=types.ThinkingConfig(thinking_budget=5)))
plain = Agent(name="plain", model="gemini-2.5-flash", generate_content_config=None)
'''
    seen = []
    for text in (source, rewritten(source)):
        namespace: dict[str, Any] = {}
        with pytest.warns(UserWarning, match="thinking_config"):
            exec(compile(text, "<kept>", "exec"), namespace)
        agent, plain = namespace["agent"], namespace["plain"]
        seen.append((agent.generate_content_config.temperature, agent.generate_content_config.thinking_config.thinking_budget,
                     plain.generate_content_config is not None, plain.generate_content_config.temperature))
    assert seen[0] == seen[1] == (0.4, 5, True, None)


# -- Runner.run_debug ---------------------------------------------------------------------

DEBUG = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types

def add(a: int, b: int) -> dict:
    """Adds two numbers."""
    return {"sum": a + b, "note": "a long note " * 12}

root_agent = Agent(name="calculator", model="gemini-2.5-flash", instruction="Add numbers.", tools=[add])

async def main(turns):
    runner = InMemoryRunner(agent=root_agent, app_name="debug")
    print("-- verbose")
    first = await runner.run_debug(turns[0], verbose=True)
    print("-- plain, two messages, the same session")
    rest = await runner.run_debug(turns[1:])
    print("-- quiet, another session")
    quiet = await runner.run_debug("Once more.", user_id="bob", session_id="s2", quiet=True)
    session = await runner.session_service.get_session(app_name="debug", user_id="debug_user_id",
                                                       session_id="debug_session_id")
    await runner.close()
    finals = [e.content.parts[0].text for e in first + rest + quiet if e.is_final_response()]
    return (first + rest + quiet, finals, {"events": len(session.events), "counts": [len(first), len(rest), len(quiet)]})
'''


def test_run_debug_prints_logs_and_returns_as_google_adk_does(gemini: StubServer, capsys: pytest.CaptureFixture[str],
                                                               caplog: pytest.LogCaptureFixture) -> None:
    answers = [calls(("add", {"a": 2, "b": 3})), gemini_response("2 + 3 = 5."), gemini_response("Hello!"),
               gemini_response("Bye."), gemini_response("Again.")]
    runs = []
    caplog.set_level("INFO")
    for text in (DEBUG, rewritten(DEBUG)):
        caplog.clear()
        _, (events, finals, counts) = run_program(text, answers, gemini, ["What is 2 + 3?", "Hi.", "Bye."])
        logged = [r.getMessage() for r in caplog.records if "session:" in r.getMessage() or "User >" in r.getMessage()]
        runs.append({"printed": capsys.readouterr().out, "logged": logged, "events": event_rows(events),
                     "finals": finals, "counts": counts, "unused": len(gemini.responses)})
    theirs, ours = runs
    assert theirs["unused"] == 0
    assert "calculator > [Calling tool: add({'a': 2, 'b': 3})]" in theirs["printed"]  # the case shows verbose lines
    assert theirs["logged"] == ["Created new session: debug_session_id", "User > What is 2 + 3?",
                                "Continue session: debug_session_id", "User > Hi.", "User > Bye."]
    assert ours == theirs


# -- Runner.rewind_async ------------------------------------------------------------------

REWIND = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools.tool_context import ToolContext
from google.genai import types

async def note(text: str, tool_context: ToolContext) -> dict:
    """Keeps a note."""
    tool_context.state["last_note"] = text
    tool_context.state["notes"] = (tool_context.state.get("notes") or 0) + 1
    tool_context.state["user:notes_ever"] = (tool_context.state.get("user:notes_ever") or 0) + 1
    if text == "plums":
        tool_context.state["plum_seen"] = True
        await tool_context.save_artifact("extra.txt", types.Part(text="only after pears"))
    await tool_context.save_artifact("note.txt", types.Part(text=text))
    await tool_context.save_artifact("user:log.txt", types.Part(text=text))
    return {"kept": text}

async def read(tool_context: ToolContext) -> dict:
    """Reads the notes back."""
    found = {}
    for name in ("note.txt", "extra.txt", "user:log.txt"):
        part = await tool_context.load_artifact(name)
        found[name] = part.text if part else None
    return {"artifacts": found, "last_note": tool_context.state.get("last_note")}

root_agent = Agent(name="notes", model="gemini-2.5-flash", instruction="Keep notes.", tools=[note, read])

async def main(turns):
    runner = InMemoryRunner(agent=root_agent, app_name="rewind")
    session = await runner.session_service.create_session(app_name="rewind", user_id="ann", state={"kept": "yes"})
    seen, finals, invocations = [], [], []
    async def turn(text):
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
            if event.invocation_id not in invocations:
                invocations.append(event.invocation_id)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
    for text in turns[:3]:
        await turn(text)
    try:
        await runner.rewind_async(user_id="ann", session_id=session.id, rewind_before_invocation_id="e-no-such")
    except ValueError as exc:
        finals.append(type(exc).__name__)
    await runner.rewind_async(user_id="ann", session_id=session.id, rewind_before_invocation_id=invocations[1])
    stored = await runner.session_service.get_session(app_name="rewind", user_id="ann", session_id=session.id)
    rewind = stored.events[-1]
    after_rewind = {"author": rewind.author, "rewound": rewind.actions.rewind_before_invocation_id == invocations[1],
                    "new_invocation": rewind.invocation_id not in invocations,
                    "state_delta": dict(rewind.actions.state_delta),
                    "artifact_delta": dict(rewind.actions.artifact_delta),
                    "state": {k: v for k, v in stored.state.items() if v is not None}}
    await turn(turns[3])
    stored = await runner.session_service.get_session(app_name="rewind", user_id="ann", session_id=session.id)
    await runner.close()
    return seen, finals, {"after_rewind": after_rewind, "events": len(stored.events),
                          "state": {k: v for k, v in stored.state.items() if v is not None}}
'''


def test_a_rewound_session_is_the_one_google_adk_leaves(gemini: StubServer) -> None:
    answers = [calls(("note", {"text": "apples"})), gemini_response("Noted apples."),
               calls(("note", {"text": "pears"})), gemini_response("Noted pears."),
               calls(("note", {"text": "plums"})), gemini_response("Noted plums."),
               calls(("read", {})), gemini_response("Your note says apples.")]
    theirs = side_by_side(REWIND, answers, ["Note apples.", "Note pears.", "Note plums.", "What is my note?"], gemini)
    after = theirs["state"]["after_rewind"]
    # what google-adk leaves, so that the comparison means something
    assert theirs["finals"][3] == "InvocationNotFoundError"
    assert after["rewound"] and after["new_invocation"] and after["author"] == "user"
    # google-adk rebuilds the state from the events' deltas alone: the state the session
    # was created with is in none, so it is removed too (here as there)
    assert after["state_delta"] == {"last_note": "apples", "notes": 1, "plum_seen": None, "kept": None}
    assert set(after["artifact_delta"]) == {"note.txt", "extra.txt"}
    read = [r for row in theirs["events"] for r in row["responses"] if r[1] == "read"]
    assert read[0][2] == {"artifacts": {"note.txt": "apples", "extra.txt": None, "user:log.txt": "plums"},
                          "last_note": "apples"}
    last_request = theirs["bodies"][-2]["contents"]  # the turn after the rewind: pears and plums are gone
    assert "pears" not in str(last_request) and "plums" not in str(last_request) and "apples" in str(last_request)


# -- output_schema with tools ---------------------------------------------------------------

SCHEMA_AND_TOOLS = '''
class Weather(BaseModel):
    city: str
    degrees: int

def temperature(city: str) -> dict:
    """The temperature in a city."""
    return {"city": city, "degrees": 21}

root_agent = LlmAgent(name="reporter", model="gemini-2.5-flash", instruction="Report the weather.",
                      tools=[temperature], output_schema=Weather, output_key="report")
'''
SCHEMA_AND_TOOLS_ANSWERS = [calls(("temperature", {"city": "Paris"})),
                            calls(("set_model_response", {"city": "Paris", "degrees": 21}))]


def test_output_schema_with_tools_asks_the_model_as_google_adk_does(gemini: StubServer) -> None:
    """On the Gemini API google-adk 2.13 sends no response schema next to tools: the
    answer comes through ``set_model_response``, whose arguments are the final answer
    (no further model call), kept under ``output_key``."""
    theirs = side_by_side(HEAD + SCHEMA_AND_TOOLS + MAIN, SCHEMA_AND_TOOLS_ANSWERS, ["Weather in Paris?"], gemini,
                          compare_events=False)
    assert [b["tools"] for b in theirs["bodies"]] == [["set_model_response", "temperature"]] * 2
    assert theirs["bodies"][0]["generationConfig"] == {}
    assert theirs["state"]["report"] == {"city": "Paris", "degrees": 21}


def test_output_schema_with_tools_yields_google_adks_events(gemini: StubServer) -> None:
    """The set_model_response call and its function response are events, as any
    tool's, then the answer's own event (final, the arguments as JSON text, kept
    under output_key): google-adk 2.13's sequence, authors and texts."""
    theirs = side_by_side(HEAD + SCHEMA_AND_TOOLS + MAIN, SCHEMA_AND_TOOLS_ANSWERS, ["Weather in Paris?"], gemini)
    assert [(e["author"], e["final"], [c[1] for c in e["calls"]], [r[1] for r in e["responses"]])
            for e in theirs["events"]] == [
        ("reporter", False, ["temperature"], []), ("reporter", False, [], ["temperature"]),
        ("reporter", False, ["set_model_response"], []), ("reporter", False, [], ["set_model_response"]),
        ("reporter", True, [], [])]
    assert theirs["finals"] == ['{"city": "Paris", "degrees": 21}']


def test_set_model_response_with_arguments_the_schema_refuses_asks_the_model_again(gemini: StubServer) -> None:
    """Arguments the output schema refuses are no answer: the call's response is an
    error (its words are each side's own: compared as its key), the model is asked
    again, and its second call gives the answer, as on google-adk 2.13."""
    answers = [calls(("set_model_response", {"city": "Paris"})),
               calls(("set_model_response", {"city": "Paris", "degrees": 21}))]
    runs = []
    for text in (HEAD + SCHEMA_AND_TOOLS + MAIN, rewritten(HEAD + SCHEMA_AND_TOOLS + MAIN)):
        _, (events, finals, state) = run_program(text, answers, gemini, ["Weather in Paris?"])
        rows = event_rows(events)
        for row in rows:
            row["responses"] = [(i, name, sorted(response)) for i, name, response in row["responses"]]
        runs.append((rows, _plain(finals), _plain(state), len(gemini.requests), len(gemini.responses)))
    theirs, ours = runs
    assert [(r["calls"], r["responses"], r["final"]) for r in theirs[0]] == [
        ([("call-0", "set_model_response", {"city": "Paris"})], [], False),
        ([], [("call-0", "set_model_response", ["error"])], False),
        ([("call-1", "set_model_response", {"city": "Paris", "degrees": 21})], [], False),
        ([], [("call-1", "set_model_response", ["city", "degrees"])], False),
        ([], [], True)]
    assert ours == theirs
    assert ours[2]["report"] == {"city": "Paris", "degrees": 21} and ours[3:] == (2, 0)


def test_the_history_leaves_out_what_a_rewind_took_back_and_a_rewound_rewind_brings_it_back() -> None:
    from adk_actors import Content, Event, EventActions
    from adk_actors.compiler import build_contents

    def said(invocation: str, text: str) -> Event:
        return Event(invocation_id=invocation, author="user", content=Content.user(text))

    def rewind(invocation: str, target: str) -> Event:
        return Event(invocation_id=invocation, author="user", actions=EventActions(rewind_before_invocation_id=target))

    events = [said("a", "one"), said("b", "two"), said("b", "two more"), rewind("r1", "b"), said("c", "three")]
    assert [c.text for c in build_contents("agent", events)] == ["one", "three"]
    events += [rewind("r2", "r1")]  # rewinding the rewind: "two" is back, "three" (after it) is gone
    assert [c.text for c in build_contents("agent", events)] == ["one", "two", "two more"]
    assert [c.text for c in build_contents("agent", [*events, rewind("r3", "no-such")])] == ["one", "two", "two more"]


def test_run_debug_on_a_host_is_the_in_process_runners(host: Any, capsys: pytest.CaptureFixture[str],
                                                         caplog: pytest.LogCaptureFixture) -> None:
    """The host's Runner (``adk_actors.runtime.Runner``) has the same run_debug: the
    same lines printed and logged, the same events, for the same agent (a tool, then
    an answer, twice; the second turn continues the session)."""
    import asyncio

    import runtime_agents

    from adk_actors import InMemoryRunner

    caplog.set_level("INFO")
    runs = []
    for runner in (InMemoryRunner(agent=runtime_agents.counter_agent, app_name="counter"), host.runner("counter")):
        caplog.clear()
        events = asyncio.run(runner.run_debug(["one", "two"], verbose=True))
        events += asyncio.run(runner.run_debug("three", quiet=True))
        logged = [r.getMessage() for r in caplog.records if "session:" in r.getMessage() or "User >" in r.getMessage()]
        runs.append((capsys.readouterr().out, logged, event_rows(events)))
    in_process, on_host = runs
    assert in_process[0].splitlines() == ["counter > [Calling tool: bump({})]", "counter > [Tool result: {'count': 1}]",
                                          "counter > count is 1", "counter > [Calling tool: bump({})]",
                                          "counter > [Tool result: {'count': 2}]", "counter > count is 2"]
    assert in_process[1] == ["Created new session: debug_session_id", "User > one", "User > two"]
    assert [row["text"] for row in in_process[2] if row["final"]] == ["count is 1", "count is 2", "count is 3"]
    assert on_host == in_process
