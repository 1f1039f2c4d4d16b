"""google-adk 2.13's built-in plugins, side by side with google-adk itself (issue 52).

Each case is a small google-adk program that configures one built-in plugin
(``ReflectAndRetryToolPlugin``, ``GlobalInstructionPlugin``,
``SaveFilesAsArtifactsPlugin``, ``ContextFilterPlugin``, ...) as google-adk's docs
do. It runs twice, as tests/test_google_adk_plugins.py runs its programs (the shared
harness, tests/google_adk_harness.py): as written on google-adk 2.13, and with only
its imports rewritten on ours, both in process against one Gemini REST stand-in named
by environment variables only, scripted with the same answers. Compared: what the
program wrote down (``LOG``), the events the runner yielded (through google-adk's
Event readers), the final texts, the session's final state, and every request the
model received (contents, tools, system instruction).

One thing is compared apart: ``ReflectAndRetryToolPlugin``'s ``reflection_guidance``
is a text of this project's own wording (google-adk's text is not copied), so the
compared rows carry a placeholder for it and each side's guidance is checked for what
it must tell the model (the tool, the error, the attempt out of the limit). What the
engines (not the plugins) do differently is left aside where a case meets it, each
named where it is (:func:`_without_escape_events`, :data:`_ENGINE_KEYS`; the list is
in docs/design.md, "google-adk's built-in plugins"). Cases of ours alone: a file over
the size limit, a file the artifact service fails to save, parallel failures on two
event loops, and the plugins in a host's run workers.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, event_rows, request_rows, rewritten, run_program

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

# the stand-in and its environment (fixtures of the shared harness)
stand_in, gemini = harness.stand_in, harness.gemini

# The loop every program ends with: its turns through run_async (an exception that ends
# a turn is written down in LOG and the next turn runs), the final texts, the session's
# state and its stored events (who said what) in LOG.
MAIN = '''
async def main(turns, session_state=None):
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="ann",
                                                          state=session_state)
    seen, finals = [], []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        try:
            async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
                seen.append(event)
                if event.is_final_response() and event.content and event.content.parts:
                    finals.append(event.content.parts[0].text)
        except Exception as exc:
            LOG.append(("raised", isinstance(exc, RuntimeError), str(exc), type(exc.__cause__).__name__))
    stored = await runner.session_service.get_session(app_name=runner.app_name, user_id="ann",
                                                      session_id=session.id)
    LOG.append(("stored", [(e.author, "".join(p.text or "" for p in e.content.parts))
                           for e in stored.events if e.content and e.content.parts]))
    await runner.close()
    return seen, finals, dict(stored.state)
'''

GUIDANCE = "<reflection guidance>"
_INVOCATION_ID = re.compile(r"(?<![0-9A-Za-z])e-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}(?![0-9a-f])")


def _without_guidance(value: Any, found: list[str]) -> Any:
    """``value`` with each ``reflection_guidance`` text replaced by :data:`GUIDANCE`
    (the texts, in order, added to ``found``), and the error a call of a tool that does
    not exist raises cut after the tools it lists (google-adk's goes on with advice to
    the developer, in words of its own)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "reflection_guidance" and isinstance(item, str):
                found.append(item)
                out[key] = GUIDANCE
            elif key == "error_details" and isinstance(item, str) and re.match(r"Tool '.*' not found\.\n", item):
                out[key] = item.split("\n\n")[0]
            else:
                out[key] = _without_guidance(item, found)
        return out
    if isinstance(value, (list, tuple)):
        return type(value)(_without_guidance(item, found) for item in value)
    return value


def run_builtin_case(source: str, entry: str, answers: list[StubResponse], turns: list[str],
                     server: StubServer) -> dict[str, Any]:
    """Run ``source``'s ``entry(turns)``: what is compared of it (see the module), and
    the reflection guidance texts it carried (``guidance``, from its events)."""
    namespace, (events, finals, state) = run_program(source, answers, server, turns, name="<builtin plugin case>",
                                                     entry=entry)
    rows = [{**row, "error": event.error_code} for row, event in zip(event_rows(events), events, strict=True)]
    result = {"log": harness._plain(namespace["LOG"]), "events": rows,
              "finals": harness._plain(finals), "state": harness._plain(state), "requests": request_rows(server),
              "unused_answers": len(server.responses)}
    # invocation ids (random on both sides, google-adk's shape ``e-<uuid>`` here too) in
    # what was compared, as in the names the plugins make of them
    result = json.loads(_INVOCATION_ID.sub("e-<id>", json.dumps(result)))
    guidance: list[str] = []
    _without_guidance(result["events"], guidance)  # the texts the events carried, in order
    return {**_without_guidance(copy.deepcopy(result), []), "guidance": guidance}


def assert_same_on_both(source: str, entry: str, answers: list[StubResponse], turns: list[str],
                        server: StubServer) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the case on google-adk, then here with its imports rewritten: the same log,
    events (an exception that ended a turn included: one error event of the root
    agent), final texts, state and model requests. Both runs, for more checks."""
    theirs = run_builtin_case(source, entry, answers, turns, server)
    assert theirs["unused_answers"] == 0, "the case must use its script on google-adk"
    ours = run_builtin_case(rewritten(source), entry, answers, turns, server)
    assert not re.search(r"\bgoogle\b", rewritten(source))
    assert ours["log"] == theirs["log"]
    assert ours["events"] == theirs["events"]
    assert ours["finals"] == theirs["finals"]
    assert ours["state"] == theirs["state"]
    assert ours["requests"] == theirs["requests"]
    assert ours["unused_answers"] == 0
    assert len(ours["guidance"]) == len(theirs["guidance"])
    return theirs, ours


# -- ReflectAndRetryToolPlugin ---------------------------------------------------------------

STOCKS = '''
from google.adk.agents import Agent
from google.adk.apps import App
from google.adk.plugins import ReflectAndRetryToolPlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def get_price(symbol: str) -> dict:
    """The last price of a stock, by its ticker symbol in capitals."""
    LOG.append(("get_price ran", symbol))
    if symbol != symbol.upper():
        raise ValueError(f"unknown symbol {symbol!r}: symbols are in capitals")
    return {"symbol": symbol, "price": 187.5}

def get_news(symbol: str) -> dict:
    """The latest headline about a company."""
    LOG.append(("get_news ran", symbol))
    raise ConnectionError("the news service is down")

agent = Agent(name="trader", model="gemini-2.5-flash", instruction="Answer with the tools.",
              tools=[get_price, get_news])
'''


def _retry_case(plugin: str) -> str:
    return STOCKS + f'''
plugin = {plugin}
app = App(name="stocks_app", root_agent=agent, plugins=[plugin])
runner = InMemoryRunner(app=app)
''' + MAIN


REFLECT_CASES: dict[str, tuple[str, list[StubResponse], list[str]]] = {
    "a failed call is answered with guidance and the corrected call succeeds": (
        _retry_case("ReflectAndRetryToolPlugin()"), [
            calls(("get_price", {"symbol": "goog"})), calls(("get_price", {"symbol": "GOOG"})),
            gemini_response("GOOG is at 187.5."),
        ], ["Price of goog?"]),
    "beyond max_retries the tool's error ends the turn as google-adk's RuntimeError": (
        _retry_case("ReflectAndRetryToolPlugin(max_retries=1)"), [
            calls(("get_news", {"symbol": "GOOG"})), calls(("get_news", {"symbol": "GOOG"})),
        ], ["News on GOOG?"]),
    "counted per invocation: the next turn counts from 0 again": (
        _retry_case("ReflectAndRetryToolPlugin(max_retries=1, throw_exception_if_retry_exceeded=False)"), [
            calls(("get_news", {"symbol": "GOOG"})), calls(("get_news", {"symbol": "GOOG"})),
            gemini_response("The news service is down."),
            calls(("get_news", {"symbol": "GOOG"})), gemini_response("Still down."),
        ], ["News on GOOG?", "Try the news again"]),
    "throw_exception_if_retry_exceeded=False: the limit's result tells the model to stop": (
        _retry_case("ReflectAndRetryToolPlugin(max_retries=2, throw_exception_if_retry_exceeded=False)"), [
            calls(("get_news", {"symbol": "GOOG"})), calls(("get_news", {"symbol": "GOOG"})),
            calls(("get_news", {"symbol": "GOOG"})), gemini_response("I cannot get the news."),
        ], ["News on GOOG?"]),
    "counted per tool: one tool's success resets its own count only": (
        _retry_case("ReflectAndRetryToolPlugin(max_retries=3)"), [
            calls(("get_price", {"symbol": "goog"}), ("get_news", {"symbol": "GOOG"})),
            calls(("get_price", {"symbol": "GOOG"}), ("get_news", {"symbol": "GOOG"})),
            calls(("get_price", {"symbol": "msft"}), ("get_news", {"symbol": "GOOG"})),
            gemini_response("GOOG is at 187.5; no news."),
        ], ["Price and news of GOOG?"]),
    "max_retries=0, not thrown: the first failure gets the limit's result": (
        _retry_case("ReflectAndRetryToolPlugin(max_retries=0, throw_exception_if_retry_exceeded=False)"), [
            calls(("get_price", {"symbol": "goog"})), gemini_response("Symbols are in capitals."),
        ], ["Price of goog?"]),
    "max_retries=0: the first failure ends the turn": (
        _retry_case("ReflectAndRetryToolPlugin(max_retries=0)"), [
            calls(("get_price", {"symbol": "goog"})),
        ], ["Price of goog?"]),
    "TrackingScope.GLOBAL: failures count across turns": (
        STOCKS.replace("import ReflectAndRetryToolPlugin",
                       "import ReflectAndRetryToolPlugin\n"
                       "from google.adk.plugins.reflect_retry_tool_plugin import TrackingScope") + '''
plugin = ReflectAndRetryToolPlugin(name="retry_everywhere", max_retries=2, tracking_scope=TrackingScope.GLOBAL,
                                   throw_exception_if_retry_exceeded=False)
runner = InMemoryRunner(agent=agent, app_name="stocks_app", plugins=[plugin])
''' + MAIN, [
            calls(("get_news", {"symbol": "GOOG"})), gemini_response("No news yet."),
            calls(("get_news", {"symbol": "GOOG"})), gemini_response("Still no news."),
            calls(("get_news", {"symbol": "GOOG"})), gemini_response("I give up on news."),
        ], ["News on GOOG?", "And now?", "Once more?"]),
    "a call of a tool that does not exist is answered with guidance too": (
        _retry_case("ReflectAndRetryToolPlugin()"), [
            calls(("get_quote", {"symbol": "GOOG"})), calls(("get_price", {"symbol": "GOOG"})),
            gemini_response("GOOG is at 187.5."),
        ], ["Quote for GOOG?"]),
    "a subclass finds errors in results that did not raise (extract_error_from_result)": (
        STOCKS + '''
from google.adk.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin as Base

def lookup(symbol: str) -> dict:
    """Looks a company up."""
    LOG.append(("lookup ran", symbol))
    if symbol == "XXXX":
        return {"status": "error", "message": "no such company"}
    return {"status": "ok", "name": "Alphabet"}

class StatusRetryPlugin(Base):
    async def extract_error_from_result(self, *, tool, tool_args, tool_context, result):
        LOG.append(("extract", tool.name, result.get("status")))
        if result.get("status") == "error":
            return result
        return None

agent.tools.append(lookup)
runner = InMemoryRunner(agent=agent, app_name="stocks_app", plugins=[StatusRetryPlugin(max_retries=1)])
''' + MAIN, [
            calls(("lookup", {"symbol": "XXXX"})), calls(("lookup", {"symbol": "XXXX"})),
        ], ["Who is XXXX?"]),
}


@pytest.mark.parametrize("name", list(REFLECT_CASES))
def test_reflect_and_retry_tool_plugin_as_on_google_adk(name: str, gemini: StubServer) -> None:
    source, answers, turns = REFLECT_CASES[name]
    theirs, ours = assert_same_on_both(source, "main", answers, turns, gemini)
    assert theirs["guidance"] or "max_retries=0)" in source, "the case must give the model guidance"
    answered = [(tool, response) for row in ours["events"] for (_, tool, response) in row["responses"]
                if response.get("response_type") == "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"]
    assert len(answered) == len(ours["guidance"])
    for (tool, response), text in zip(answered, ours["guidance"], strict=True):
        assert f"`{tool}`" in text and response["error_details"] in text and str(response["retry_count"]) in text


def test_reflect_and_retry_rejects_a_negative_max_retries() -> None:
    from google.adk.plugins import ReflectAndRetryToolPlugin as Theirs

    from adk_actors.plugins import ReflectAndRetryToolPlugin

    for cls in (Theirs, ReflectAndRetryToolPlugin):
        with pytest.raises(ValueError, match="max_retries must be a non-negative integer"):
            cls(max_retries=-1)


# -- GlobalInstructionPlugin -----------------------------------------------------------------

GLOBAL_INSTRUCTION_CASES: dict[str, tuple[str, list[StubResponse], list[str]]] = {
    "a string, its state placeholders filled, before each agent's own instruction": ('''
from google.adk.agents import Agent
from google.adk.apps import App
from google.adk.plugins.global_instruction_plugin import GlobalInstructionPlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def set_tier(tier: str, tool_context) -> dict:
    """Records the customer's tier."""
    tool_context.state["tier"] = tier
    return {"tier": tier}

agent = Agent(name="concierge", model="gemini-2.5-flash", instruction="Help with bookings.", tools=[set_tier])
plugin = GlobalInstructionPlugin("You work for Acme Hotels. The customer is {customer}, tier {tier?}.")
app = App(name="hotel_app", root_agent=agent, plugins=[plugin])
runner = InMemoryRunner(app=app)
''' + MAIN.replace("async def main(", "async def one_session(") + '''
async def main(turns):
    return await one_session(turns, {"customer": "Ann"})
''', [
        calls(("set_tier", {"tier": "gold"})), gemini_response("Noted, gold."), gemini_response("Booked."),
    ], ["I am a gold member", "Book a room"]),
    "an async InstructionProvider, for the root and its sub-agent alike": ('''
from google.adk.agents import Agent
from google.adk.plugins.global_instruction_plugin import GlobalInstructionPlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

async def house_rules(ctx):
    LOG.append(("provider", ctx.agent_name, ctx.state.get("language")))
    return f"Always answer in {ctx.state.get('language', 'English')}. Never share {{secrets}}."

billing = Agent(name="billing", model="gemini-2.5-flash", description="Answers billing questions.",
                instruction="Answer billing questions.")
root = Agent(name="front_desk", model="gemini-2.5-flash", instruction="Route questions.",
             sub_agents=[billing])
runner = InMemoryRunner(agent=root, app_name="desk_app",
                        plugins=[GlobalInstructionPlugin(global_instruction=house_rules, name="rules")])
''' + MAIN.replace("async def main(", "async def one_session(") + '''
async def main(turns):
    return await one_session(turns, {"language": "French"})
''', [
        calls(("transfer_to_agent", {"agent_name": "billing"})), gemini_response("Votre facture est payee."),
    ], ["Is my bill paid?"]),
    "an agent without an instruction gets the global one alone; an empty one changes nothing": ('''
from google.adk.agents import Agent
from google.adk.plugins.global_instruction_plugin import GlobalInstructionPlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

agent = Agent(name="plain", model="gemini-2.5-flash")
runner = InMemoryRunner(agent=agent, app_name="plain_app",
                        plugins=[GlobalInstructionPlugin(), GlobalInstructionPlugin("Be brief.", name="brief")])
''' + MAIN, [
        gemini_response("Hi."),
    ], ["Hello"]),
}


@pytest.mark.parametrize("name", list(GLOBAL_INSTRUCTION_CASES))
def test_global_instruction_plugin_as_on_google_adk(name: str, gemini: StubServer) -> None:
    source, answers, turns = GLOBAL_INSTRUCTION_CASES[name]
    theirs, _ = assert_same_on_both(source, "main", answers, turns, gemini)
    assert all(row["instruction"] for row in theirs["requests"])


# -- SaveFilesAsArtifactsPlugin --------------------------------------------------------------

FILES = '''
from google.adk.agents import Agent
from google.adk.plugins.save_files_as_artifacts_plugin import SaveFilesAsArtifactsPlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

async def describe_file(filename: str, tool_context) -> dict:
    """Describes an uploaded file, by its artifact name."""
    part = await tool_context.load_artifact(filename)
    if part is None:
        return {"error": f"no file {filename}"}
    return {"mime_type": part.inline_data.mime_type, "size": len(part.inline_data.data)}

agent = Agent(name="clerk", model="gemini-2.5-flash", instruction="Describe the user's files.",
              tools=[describe_file])
runner = InMemoryRunner(agent=agent, app_name="files_app", plugins=[PLUGIN])

def png(size):
    return b"\\x89PNG" + bytes(size)

async def main(turns):
    session = await runner.session_service.create_session(app_name="files_app", user_id="ann")
    messages = [
        types.Content(role="user", parts=[
            types.Part(text="Here are my receipt and a photo."),
            types.Part(inline_data=types.Blob(mime_type="image/png", data=png(60), display_name="receipt.png")),
            types.Part(inline_data=types.Blob(mime_type="image/jpeg", data=b"jpeg bytes")),
        ]),
        types.Content(role="user", parts=[types.Part(text="And a new receipt"),
                                          types.Part(inline_data=types.Blob(mime_type="image/png", data=png(9),
                                                                            display_name="receipt.png"))]),
        types.Content(role="user", parts=[types.Part(text="Thanks, no file this time.")]),
    ]
    seen, finals = [], []
    for message in messages[:len(turns)]:
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
            LOG.append(("event", event.author, dict(event.actions.artifact_delta)))
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name="files_app", user_id="ann", session_id=session.id)
    LOG.append(("stored", [(e.author, [p.text if p.text is not None else (p.inline_data.mime_type if p.inline_data
                                                                           else "other") for p in e.content.parts])
                           for e in stored.events if e.content and e.content.parts]))
    keys = await runner.artifact_service.list_artifact_keys(app_name="files_app", user_id="ann",
                                                            session_id=session.id)
    LOG.append(("artifacts", sorted(k for k in keys if not k.startswith("artifact_e-"))))
    for key in sorted(keys):
        versions = await runner.artifact_service.list_versions(app_name="files_app", user_id="ann",
                                                               session_id=session.id, filename=key)
        LOG.append(("versions", key, sorted(versions)))
    await runner.close()
    return seen, finals, dict(stored.state)
'''

SAVE_FILES_CASES: dict[str, tuple[str, list[StubResponse], list[str]]] = {
    "inline files saved as artifacts, placeholders in their place, versions by name": (
        FILES.replace("PLUGIN", "SaveFilesAsArtifactsPlugin()"), [
            calls(("describe_file", {"filename": "receipt.png"})), gemini_response("A 64-byte PNG receipt."),
            calls(("describe_file", {"filename": "receipt.png"})), gemini_response("Now a 13-byte PNG."),
            gemini_response("You are welcome."),
        ], ["first", "second", "third"]),
    "its name and attach_file_reference=False, as google-adk's (in-memory artifacts: no file reference)": (
        FILES.replace("PLUGIN", 'SaveFilesAsArtifactsPlugin(name="uploads", attach_file_reference=False)'), [
            gemini_response("Got them."),
        ], ["first"]),
}


@pytest.mark.parametrize("name", list(SAVE_FILES_CASES))
def test_save_files_as_artifacts_plugin_as_on_google_adk(name: str, gemini: StubServer) -> None:
    source, answers, turns = SAVE_FILES_CASES[name]
    theirs, _ = assert_same_on_both(source, "main", answers, turns, gemini)
    assert ["artifacts", ["receipt.png"]] in theirs["log"]


# -- ContextFilterPlugin ---------------------------------------------------------------------

CHAT = '''
from google.adk.agents import Agent
from google.adk.plugins.context_filter_plugin import ContextFilterPlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def add_note(text: str) -> dict:
    """Adds a note to the user's notebook."""
    return {"saved": text}

agent = Agent(name="notes", model="gemini-2.5-flash", instruction="Keep notes.", tools=[add_note])
runner = InMemoryRunner(agent=agent, app_name="notes_app", plugins=[PLUGIN])
''' + MAIN

#: four turns, the second and third with a tool call each
NOTES_ANSWERS = [
    gemini_response("Hello."),
    calls(("add_note", {"text": "milk"})), gemini_response("Noted milk."),
    calls(("add_note", {"text": "eggs"})), gemini_response("Noted eggs."),
    gemini_response("You noted milk and eggs."),
]
NOTES_TURNS = ["Hi", "Note milk", "Note eggs", "What did I note?"]

CONTEXT_FILTER_CASES: dict[str, tuple[str, list[StubResponse], list[str]]] = {
    "num_invocations_to_keep: only the last invocations, tool calls kept with their results": (
        CHAT.replace("PLUGIN", "ContextFilterPlugin(num_invocations_to_keep=2)"), NOTES_ANSWERS, NOTES_TURNS),
    "remove_amount: the history grows back before the next cut": (
        CHAT.replace("PLUGIN", "ContextFilterPlugin(num_invocations_to_keep=1, remove_amount=2)"),
        NOTES_ANSWERS, NOTES_TURNS),
    "custom_filter after the cut": (
        CHAT.replace("PLUGIN", "ContextFilterPlugin(num_invocations_to_keep=3, custom_filter=no_model_text)").replace(
            "agent = Agent(", '''def no_model_text(contents):
    LOG.append(("filter", [c.role for c in contents]))
    return [c for c in contents
            if c.role != "model" or any(p.function_call for p in c.parts)]

agent = Agent('''), NOTES_ANSWERS, NOTES_TURNS),
    "a custom_filter that raises leaves the request whole": (
        CHAT.replace("PLUGIN", 'ContextFilterPlugin(custom_filter=broken, name="broken_filter")').replace(
            "agent = Agent(", '''def broken(contents):
    raise KeyError("oops")

agent = Agent('''), NOTES_ANSWERS[:3], NOTES_TURNS[:2]),
}


@pytest.mark.parametrize("name", list(CONTEXT_FILTER_CASES))
def test_context_filter_plugin_as_on_google_adk(name: str, gemini: StubServer) -> None:
    source, answers, turns = CONTEXT_FILTER_CASES[name]
    assert_same_on_both(source, "main", answers, turns, gemini)


def test_context_filter_plugin_cuts_requests_by_invocations(gemini: StubServer) -> None:
    """What the side-by-side case shows, checked on ours alone: from the third turn on,
    each request starts at the last invocation but one."""
    source, answers, turns = CONTEXT_FILTER_CASES[next(iter(CONTEXT_FILTER_CASES))]
    ours = run_builtin_case(rewritten(source), "main", answers, turns, gemini)
    first_texts = [row["contents"][0]["parts"][0].get("text") for row in ours["requests"]]
    assert first_texts == ["Hi", "Hi", "Hi", "Note milk", "Note milk", "Note eggs"]
    assert [len(row["contents"]) for row in ours["requests"]] == [1, 3, 5, 5, 7, 5]


def test_context_filter_plugin_rejects_a_remove_amount_below_one() -> None:
    from google.adk.plugins.context_filter_plugin import ContextFilterPlugin as Theirs

    from adk_actors.plugins.context_filter_plugin import ContextFilterPlugin

    for cls in (Theirs, ContextFilterPlugin):
        with pytest.raises(ValueError, match="remove_amount must be at least 1"):
            cls(num_invocations_to_keep=2, remove_amount=0)


def _contents_table() -> list[tuple[str, str, str | None]]:
    """A history in which a user's message came between a tool call and its result (as
    when a long-running tool answers later): (role, kind, text or call id)."""
    return [("user", "text", "a"), ("model", "call", "c1"), ("user", "text", "b"), ("user", "response", "c1"),
            ("model", "text", "ok"), ("user", "text", "c"), ("user", "text", "c again"), ("model", "call", "c2"),
            ("user", "response", "c2"), ("model", "text", "done")]


def _build(types: Any, table: list[tuple[str, str, str | None]]) -> list[Any]:
    contents = []
    for role, kind, value in table:
        if kind == "text":
            part = types.Part(text=value)
        elif kind == "call":
            part = types.Part(function_call=types.FunctionCall(id=value, name="wait", args={}))
        else:
            part = types.Part(function_response=types.FunctionResponse(id=value, name="wait", response={"ok": 1}))
        contents.append(types.Content(role=role, parts=[part]))
    return contents


@pytest.mark.parametrize("keep,remove", [(1, 1), (2, 1), (3, 1), (1, 2), (2, 2), (1, 3), (0, 1), (None, 1)])
def test_context_filter_plugin_cuts_where_google_adk_does_never_orphaning_a_result(keep: int | None,
                                                                                    remove: int) -> None:
    import asyncio

    from google.adk.models.llm_request import LlmRequest as TheirRequest
    from google.adk.plugins.context_filter_plugin import ContextFilterPlugin as Theirs
    from google.genai import types as genai_types

    from adk_actors import types as our_types
    from adk_actors.models import LlmRequest
    from adk_actors.plugins.context_filter_plugin import ContextFilterPlugin

    table = _contents_table()

    def kept(contents: list[Any]) -> list[tuple[str, str]]:
        return [(c.role, c.parts[0].text or (c.parts[0].function_call or c.parts[0].function_response).id)
                for c in contents]

    theirs = TheirRequest(contents=_build(genai_types, table))
    asyncio.run(Theirs(num_invocations_to_keep=keep, remove_amount=remove).before_model_callback(
        callback_context=None, llm_request=theirs))
    ours = LlmRequest(contents=_build(our_types, table))
    asyncio.run(ContextFilterPlugin(num_invocations_to_keep=keep, remove_amount=remove).before_model_callback(
        callback_context=None, llm_request=ours))
    assert kept(ours.contents) == kept(theirs.contents)
    answered = {c.parts[0].function_response.id for c in ours.contents if c.parts[0].function_response}
    called = {c.parts[0].function_call.id for c in ours.contents if c.parts[0].function_call}
    assert answered <= called


def test_save_files_as_artifacts_plugin_refuses_a_large_file_and_keeps_one_it_cannot_save(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Ours alone (a 20 MB message is not sent through the stand-in): a file over the
    limit is not saved and an ``[Upload Error: ...]`` text that names it takes its place;
    a file the artifact service fails to save stays in the message as it was; the turn
    goes on."""
    import asyncio

    from adk_actors import Content, LlmAgent, types
    from adk_actors.artifacts import InMemoryArtifactService
    from adk_actors.models import ScriptedModel
    from adk_actors.plugins import save_files_as_artifacts_plugin as module
    from adk_actors.runners import Runner
    from adk_actors.sessions import InMemorySessionService

    class Refusing(InMemoryArtifactService):
        async def save_artifact(self, **kwargs: Any) -> int:
            if kwargs["filename"] == "refused.txt":
                raise PermissionError("no room for refused.txt")
            return await super().save_artifact(**kwargs)

    monkeypatch.setattr(module, "_MAX_INLINE_DATA_SIZE_BYTES", 1024 * 1024)
    seen: list[Any] = []

    def answer(request: Any) -> str:
        seen.append(request.contents[-1])
        return "ok"

    async def main() -> tuple[list[str], list[str], dict[str, Any]]:
        runner = Runner(agent=LlmAgent(name="bot", model=ScriptedModel(fallback=answer)), app_name="big",
                        session_service=InMemorySessionService(), artifact_service=Refusing(),
                        plugins=[module.SaveFilesAsArtifactsPlugin()])
        session = await runner.session_service.create_session(app_name="big", user_id="ann")
        message = types.Content(role="user", parts=[
            types.Part(text="files"),
            types.Part(inline_data=types.Blob(mime_type="video/mp4", data=bytes(3 * 1024 * 1024),
                                              display_name="movie.mp4")),
            types.Part(inline_data=types.Blob(mime_type="text/plain", data=b"x", display_name="refused.txt")),
            types.Part(inline_data=types.Blob(mime_type="text/plain", data=b"fine", display_name="fine.txt")),
        ])
        texts = [e.content.text async for e in runner.run_async(user_id="ann", session_id=session.id,
                                                                  new_message=message) if e.content is not None]
        keys = await runner.artifact_service.list_artifact_keys(app_name="big", user_id="ann",
                                                                session_id=session.id)
        stored = await runner.session_service.get_session(app_name="big", user_id="ann", session_id=session.id)
        return texts, keys, dict(stored.state)

    texts, keys, state = asyncio.run(asyncio.wait_for(main(), timeout=30))
    assert texts[-1] == "ok" and keys == ["fine.txt"]
    parts = seen[0].parts
    assert parts[0].text == "files"
    assert parts[1].text.startswith("[Upload Error: ") and "movie.mp4" in parts[1].text and "3.00 MB" in parts[1].text
    assert parts[2].inline_data is not None and parts[2].inline_data.display_name == "refused.txt"
    assert parts[3].text == '[Uploaded Artifact: "fine.txt"]'
    assert state == {"save_files_as_artifacts_plugin:pending_delta": {}}
    assert isinstance(seen[0], Content)


# -- in a host: the built-in plugins in the run workers' processes ---------------------------


def test_builtin_plugins_work_in_a_host(actor_system: Any, tmp_path: Any) -> None:
    """google-adk's built-in plugins given to an App that a host serves: the run workers
    (other processes) import it and run them. A failed tool call is answered with
    reflection guidance and retried, the global instruction leads the model's, a file in
    a message is saved as an artifact of the session (the artifact service is an actor),
    and the context is cut to the last two invocations."""
    from adk_actors import types
    from adk_actors.runtime import Host, HostConfig

    with Host(HostConfig(apps={"builtins": "builtin_plugin_apps:app"}, data_dir=str(tmp_path / "data")),
              system=actor_system) as host:
        runner = host.runner("builtins")
        session = runner.create_session("ann", "s1")
        events = list(runner.run("ann", session.id, "price"))
        responses = [p.function_response.response for e in events if e.content is not None
                     for p in e.content.parts if p.function_response is not None]
        assert [r.get("response_type") for r in responses] == ["ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN", None]
        assert responses[0]["error_type"] == "ValueError" and responses[0]["retry_count"] == 1
        assert events[-1].content.text == "price 187.5"

        message = types.Content(role="user", parts=[
            types.Part(text="my file"),
            types.Part(inline_data=types.Blob(mime_type="text/plain", data=b"hello", display_name="notes.txt"))])
        events = list(runner.run("ann", session.id, message))
        assert events[-1].content.text == (  # no "user" in state: the optional key is left out
            "instruction starts 'House rules for .'; "
            "you said 'my file | [Uploaded Artifact: \"notes.txt\"]'; contents 7")
        assert runner.list_artifacts("ann", session.id) == ["notes.txt"]
        assert runner.load_artifact("ann", session.id, "notes.txt").inline_data.data == b"hello"
        assert any(e.actions.artifact_delta == {"notes.txt": 0} for e in events)

        events = list(runner.run("ann", session.id, "third"))
        assert events[-1].content.text.endswith("you said 'third'; contents 3")  # 2 invocations kept


# -- DebugLoggingPlugin ----------------------------------------------------------------------

DEBUG = '''
from google.adk.agents import Agent
from google.adk.plugins import DebugLoggingPlugin, ReflectAndRetryToolPlugin, ToolResultClassification
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def get_balance(account: str, tool_context) -> dict:
    """The balance of an account."""
    tool_context.state["last_account"] = account
    tool_context.state["user:session_token"] = "tok-123"
    if not account.isdigit():
        raise ValueError(f"bad account {account!r}")
    return {"account": account, "balance": 12.5, "api_key": "sk-not-shown"}

agent = Agent(name="bank", model="gemini-2.5-flash", instruction="Help with accounts.", tools=[get_balance],
              generate_content_config=types.GenerateContentConfig(temperature=0.2, max_output_tokens=200))
def low_balance(*, tool, tool_args, tool_context, result):
    LOG.append(("classify", tool.name, sorted(result)))
    if isinstance(result, dict) and result.get("balance", 100) < 20:
        return ToolResultClassification(status="ERROR", error_message="balance below 20")
    return None

runner = InMemoryRunner(agent=agent, app_name="bank_app",
                        plugins=[DebugLoggingPlugin(output_path=OUTPUT, include_system_instruction=SYSTEM,
                                                    tool_result_classifier=CLASSIFIER),
                                 ReflectAndRetryToolPlugin()])
''' + MAIN


#: What the engines (not the plugin) give it differently, left out on both sides:
#: google-adk 2.x's events of an agent carry its workflow node path (``node_path:
#: bank@1``), ours outside a workflow none; our Gemini client marks each response
#: ``turn_complete``; google-adk has taken the call ids out of the request's contents
#: before the before-model hooks see them, ours are taken out when the request is sent.
_ENGINE_KEYS = {"event": ("node_path",), "llm_response": ("turn_complete",)}


def _debug_documents(path: Any) -> list[Any]:
    """The YAML documents the plugin wrote, with what differs on every run (times, ids)
    replaced, the reflection guidance's wording and :data:`_ENGINE_KEYS` left out, the
    system instruction cut where each project words its own part (its length, which
    counts both, only checked to be longer than the agent's instruction)."""
    import yaml

    text = path.read_text()
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?", "<time>", text)
    documents = list(yaml.safe_load_all(text))
    ids: dict[str, str] = {}

    def clean(value: Any, key: str = "", in_request: bool = False) -> Any:
        if isinstance(value, dict):
            return {k: clean(v, k, in_request) for k, v in value.items()
                    if not (in_request and k == "id")}
        if isinstance(value, list):
            return [clean(v, "", in_request) for v in value]
        if key in ("event_id", "invocation_id", "session_id", "function_call_id", "id") and isinstance(value, str):
            return ids.setdefault(value, f"<{key} {len(ids)}>")
        if key == "system_instruction" and isinstance(value, str):
            return value.split("\n\nYou are ")[0]
        if key == "system_instruction_length" and isinstance(value, int):  # the whole, each project's words
            return "<length>" if value > len("Help with accounts.") else value
        if key == "reflection_guidance":
            return GUIDANCE
        return value

    for document in documents:
        for entry in document["entries"]:
            for name in _ENGINE_KEYS.get(entry["entry_type"], ()):
                entry["data"].pop(name, None)
            if entry["entry_type"] == "llm_request":
                entry["data"]["contents"] = clean(entry["data"]["contents"], in_request=True)
    return [clean(document) for document in documents]


@pytest.mark.parametrize("system,classifier", [(True, "None"), (False, "None"), (True, "low_balance")])
def test_debug_logging_plugin_writes_what_google_adk_writes(system: bool, classifier: str, gemini: StubServer,
                                                            tmp_path: Any) -> None:
    answers = [calls(("get_balance", {"account": "abc"})), calls(("get_balance", {"account": "42"})),
               gemini_response("Account 42 holds 12.5."), gemini_response("Goodbye.")]
    source = DEBUG.replace("SYSTEM", str(system)).replace("CLASSIFIER", classifier)
    written = {}
    for side, program in (("theirs", source), ("ours", rewritten(source))):
        path = tmp_path / f"{side}.yaml"
        run_builtin_case(program.replace("OUTPUT", repr(str(path))), "main", answers, ["Balance of 42?", "Bye"],
                         gemini)
        assert path.stat().st_mode & 0o777 == 0o600
        written[side] = _debug_documents(path)
    theirs, ours = written["theirs"], written["ours"]
    assert len(theirs) == 2  # one document per invocation
    assert ours == theirs
    text = (tmp_path / "ours.yaml").read_text()
    assert "tok-123" not in text and "sk-not-shown" not in text and "[REDACTED]" in text
    errors = [entry["data"].get("error_message") for entry in ours[0]["entries"] if entry["entry_type"] == "tool_error"]
    # the raise, once (the retry plugin's answer to it is not recorded again); the
    # classifier's verdict on the low balance
    assert errors == ["bad account 'abc'"] + (["balance below 20"] if classifier != "None" else [])


def test_debug_logging_plugin_refuses_what_google_adk_refuses() -> None:
    import google.adk.plugins as theirs

    import adk_actors.plugins as ours

    async def asynchronous(*, tool: Any, tool_args: Any, tool_context: Any, result: Any) -> None:
        return None

    def positional(tool: Any, result: Any) -> None:
        return None

    def fine(*, tool: Any, tool_args: Any, tool_context: Any, result: Any) -> None:
        return None

    for module in (theirs, ours):
        for bad in (asynchronous, positional, "not callable"):
            with pytest.raises(ValueError, match="tool_result_classifier must"):
                module.DebugLoggingPlugin(tool_result_classifier=bad)
        module.DebugLoggingPlugin(tool_result_classifier=fine)
        with pytest.raises(ValueError, match="status must be 'OK' or 'ERROR'"):
            module.ToolResultClassification(status="MAYBE")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="error_message must be a str or None"):
            module.ToolResultClassification(status="ERROR", error_message=3)  # type: ignore[arg-type]


# -- LoggingPlugin's tool errors (tool_result_classifier) ------------------------------------

LOGGING_ERRORS = '''
import contextlib
import io
from google.adk.agents import Agent
from google.adk.plugins import LoggingPlugin, ReflectAndRetryToolPlugin, ToolResultClassification
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def get_stock(item: str) -> dict:
    """How many of an item are in stock."""
    if item == "ghost":
        raise LookupError("no such item: ghost")
    return {"item": item, "count": 0 if item == "tea" else 7}

def empty_is_error(*, tool, tool_args, tool_context, result):
    if isinstance(result, dict) and result.get("count") == 0:
        return ToolResultClassification(status="ERROR", error_message="out of stock")
    return None

agent = Agent(name="shop", model="gemini-2.5-flash", instruction="Check the stock.", tools=[get_stock])
runner = InMemoryRunner(agent=agent, app_name="shop_app",
                        plugins=[LoggingPlugin(tool_result_classifier=empty_is_error), ReflectAndRetryToolPlugin()])
''' + MAIN.replace("async def main(", "async def quiet_main(") + '''
async def main(turns):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = await quiet_main(turns)
    for line in out.getvalue().splitlines():
        line = line.replace("\\033[90m", "").replace("\\033[0m", "")
        line = " ".join(line.split())
        if "TOOL" in line or line.startswith("[logging_plugin] Error: "):
            LOG.append(line)
    return result
'''


def test_logging_plugin_logs_tool_errors_as_google_adk_does(gemini: StubServer) -> None:
    """A raised error is logged once (the retry plugin's answer to it is not logged
    again), a result the classifier calls an error is a TOOL ERROR with its message,
    any other result is TOOL COMPLETED."""
    _, ours = assert_same_on_both(LOGGING_ERRORS, "main", [
        calls(("get_stock", {"item": "ghost"})), calls(("get_stock", {"item": "tea"})),
        calls(("get_stock", {"item": "coffee"})), gemini_response("Coffee: 7; tea: none."),
    ], ["Stock?"], gemini)
    headlines = [line for line in ours["log"] if isinstance(line, str) and "TOOL" in line]
    assert [line.split("] ")[1] for line in headlines] == [
        "🔧 TOOL STARTING", "🔧 TOOL ERROR", "🔧 TOOL STARTING", "🔧 TOOL ERROR", "🔧 TOOL STARTING",
        "🔧 TOOL COMPLETED"]
    assert [line.split("Error: ")[1] for line in ours["log"] if isinstance(line, str) and "] Error: " in line] == [
        "no such item: ghost", "out of stock"]


def test_reflect_and_retry_counts_parallel_failures_and_forgets_an_ended_invocation() -> None:
    """Ours alone: one plugin serving runs on two event loops, each turn two failing
    calls of one tool in parallel: each turn counts 1 and 2 (its own invocation), and
    nothing is left counted once the turn has ended."""
    import asyncio

    from adk_actors import Content, LlmAgent
    from adk_actors.models import ScriptedModel, call
    from adk_actors.plugins import ReflectAndRetryToolPlugin
    from adk_actors.runners import InMemoryRunner

    async def broken(n: int) -> dict[str, Any]:
        await asyncio.sleep(0.01)
        raise RuntimeError(f"broken {n}")

    def answer(request: Any) -> Any:
        if request.contents[-1].parts[0].function_response is None:
            return [call("broken", n=1), call("broken", n=2)]
        return "gave up"

    plugin = ReflectAndRetryToolPlugin(max_retries=5)
    runner = InMemoryRunner(LlmAgent(name="bot", model=ScriptedModel(fallback=answer), tools=[broken]),
                            app_name="parallel", plugins=[plugin])

    async def turn() -> list[int]:
        session = await runner.session_service.create_session(app_name="parallel", user_id="ann")
        counts = []
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=Content.user("go")):
            counts += [r.response["retry_count"] for r in event.get_function_responses()]
        return counts

    for _ in range(2):
        assert sorted(asyncio.run(asyncio.wait_for(turn(), timeout=30))) == [1, 2]
        assert plugin._scoped_failure_counters == {}
