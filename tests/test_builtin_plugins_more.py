"""More of google-adk 2.13's built-in plugins, and artifact references, side by side
with google-adk itself (issue 52).

As in tests/test_builtin_plugins.py (whose runner of a case this file uses): each
case is a small google-adk program, run as written on google-adk 2.13 and with only
its imports rewritten on ours, both in process against one Gemini REST stand-in
named by environment variables only, scripted with the same answers. Compared: what
the program wrote down (``LOG``), the events the runner yielded (through google-adk's
Event readers), the final texts, the session's final state, and every request the
model received.

Here: ``ToolCallIntegrityPlugin`` (stamps, a call changed in the store refused, an
unstamped call), ``ReflectAndRetryModelPlugin`` (a malformed function call answered
with a reflection call, the retry limit), and google-adk's ``artifact_util``
(``artifact://`` references: built, parsed, checked and followed by
``InMemoryArtifactService`` as google-adk's are).
"""

from __future__ import annotations

import asyncio
from typing import Any

import google_adk_harness as harness
import pytest
import test_builtin_plugins
from google_adk_harness import rewritten
from test_builtin_plugins import MAIN, assert_same_on_both, run_builtin_case

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

# the stand-in and its environment (fixtures of the shared harness)
stand_in, gemini = harness.stand_in, harness.gemini
calls = harness.calls


def assert_same_before_any_agent(source: str, answers: list[StubResponse], turns: list[str],
                                 server: StubServer) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`assert_same_on_both` for a case whose exceptions are raised before any
    agent runs (a ``before_run_callback``): google-adk yields no error event for those
    (it does for an exception that escapes an agent), so the events are compared whole."""
    theirs = run_builtin_case(source, "main", answers, turns, server)
    assert theirs["unused_answers"] == 0, "the case must use its script on google-adk"
    ours = run_builtin_case(rewritten(source), "main", answers, turns, server)
    for key in ("log", "events", "finals", "state", "requests"):
        assert ours[key] == theirs[key], key
    assert ours["unused_answers"] == 0
    return theirs, ours


# -- ToolCallIntegrityPlugin -----------------------------------------------------------------

BANK = '''
import re
from google.adk.agents import Agent
from google.adk.apps import App
from google.adk.events import Event
from google.adk.plugins import ToolCallIntegrityPlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def transfer(to: str, amount: int) -> dict:
    """Sends money to someone."""
    LOG.append(("transfer ran", to, amount))
    return {"sent": amount, "to": to}

agent = Agent(name="bank", model="gemini-2.5-flash", instruction="Do what the user asks.", tools=[transfer])
runner = InMemoryRunner(app=App(name="bank_app", root_agent=agent, plugins=[PLUGIN]))

def stamps_of(events):
    """Each stored event with calls: its call names and what its stamps look like."""
    out = []
    for e in events:
        names = [c.name for c in e.get_function_calls()]
        if names:
            stamps = (e.custom_metadata or {}).get("__adk_internal_fc_hmac") or {}
            ids = [c.id for c in e.get_function_calls()]
            out.append((e.author, names, sorted(s[:3] + str(len(s)) for s in stamps.values()),
                        sorted(stamps) == sorted(ids)))
    return out
''' + MAIN.replace("async def main(", "async def turns_of(")


def _bank(plugin: str, between: str) -> str:
    """A program: its first turn, then ``between`` (code run on the stored session
    ``stored``), then its other turns, in the same session."""
    return BANK.replace("PLUGIN", plugin) + '''
async def main(turns):
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="ann")
    seen, finals = [], []
    for index, text in enumerate(turns):
        if index == 1:
            stored = runner.session_service.sessions["bank_app"]["ann"][session.id]
            LOG.append(("stamps", stamps_of(stored.events)))
''' + "\n".join("            " + line for line in between.strip().splitlines()) + '''
        message = types.Content(role="user", parts=[types.Part(text=text)])
        try:
            async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
                seen.append(event)
                if event.is_final_response() and event.content and event.content.parts:
                    finals.append(event.content.parts[0].text)
        except Exception as exc:
            LOG.append(("raised", isinstance(exc, RuntimeError), re.sub(r"'adk-[0-9a-f-]+'", "<id>", str(exc)),
                        type(exc.__cause__).__name__))
    stored = await runner.session_service.get_session(app_name="bank_app", user_id="ann", session_id=session.id)
    LOG.append(("stored", [(e.author, "".join(p.text or "" for p in e.content.parts))
                           for e in stored.events if e.content and e.content.parts]))
    await runner.close()
    return seen, finals, dict(stored.state)
'''


TRANSFER = [calls(("transfer", {"to": "bob", "amount": 10})), gemini_response("Sent 10 to bob.")]

INTEGRITY_CASES: dict[str, tuple[str, list[StubResponse], list[str]]] = {
    "calls are stamped, and an untouched session runs its next turn": (
        _bank('ToolCallIntegrityPlugin(secret_key=b"k" * 32)', "pass"),
        [*TRANSFER, gemini_response("You sent 10 to bob.")], ["Send 10 to bob", "What did I do?"]),
    "a stored call whose arguments were changed stops the next run before any agent": (
        _bank('ToolCallIntegrityPlugin(secret_key=b"k" * 32)', '''
for e in stored.events:
    for c in e.get_function_calls():
        c.args["amount"] = 10000
'''), TRANSFER, ["Send 10 to bob", "Hello again"]),
    "a stamp made with a rotated-out key verifies while that key is listed": (
        _bank('ToolCallIntegrityPlugin(secret_key=[b"new" * 8, b"old" * 8])', '''
for e in stored.events:
    for c in e.get_function_calls():
        pass
'''), [*TRANSFER, gemini_response("Done before.")], ["Send 10 to bob", "Again?"]),
    "a stored call without a stamp is refused": (
        _bank('ToolCallIntegrityPlugin(secret_key=b"k" * 32)', '''
for e in stored.events:
    if e.get_function_calls():
        e.custom_metadata = {}
'''), TRANSFER, ["Send 10 to bob", "Hello again"]),
    "allow_unstamped_calls: an unstamped call is logged and the run goes on": (
        _bank('ToolCallIntegrityPlugin(secret_key=b"k" * 32, allow_unstamped_calls=True)', '''
for e in stored.events:
    if e.get_function_calls():
        e.custom_metadata = {}
'''), [*TRANSFER, gemini_response("Hello.")], ["Send 10 to bob", "Hello again"]),
    "a stamp renamed to another call id is refused": (
        _bank('ToolCallIntegrityPlugin(secret_key=b"k" * 32)', '''
for e in stored.events:
    stamps = (e.custom_metadata or {}).get("__adk_internal_fc_hmac")
    if stamps:
        e.custom_metadata = {"__adk_internal_fc_hmac": {"other-id": s for s in stamps.values()}}
'''), TRANSFER, ["Send 10 to bob", "Hello again"]),
}


@pytest.mark.parametrize("name", list(INTEGRITY_CASES))
def test_tool_call_integrity_plugin_as_on_google_adk(name: str, gemini: StubServer) -> None:
    source, answers, turns = INTEGRITY_CASES[name]
    theirs, ours = assert_same_before_any_agent(source, answers, turns, gemini)
    stamps = next(item for item in theirs["log"] if item[0] == "stamps")[1]
    assert stamps == [["bank", ["transfer"], ["v1:67"], True]]  # one stamp, "v1:" + 64 hex digits, per call
    raised = [item for item in ours["log"] if item[0] == "raised"]
    if "refused" in name or "stops" in name:
        assert raised and raised[0][1] and raised[0][3] == "ToolCallIntegrityError"
    else:
        assert not raised


def test_tool_call_integrity_plugin_refuses_bad_keys_as_google_adk() -> None:
    from google.adk.plugins import ToolCallIntegrityPlugin as Theirs

    from adk_actors.plugins import ToolCallIntegrityPlugin

    for cls in (Theirs, ToolCallIntegrityPlugin):
        for bad in (b"", [], [b"ok", b""], "text", [b"ok", "text"]):
            with pytest.raises(ValueError, match="secret_key must be non-empty bytes"):
                cls(secret_key=bad)  # type: ignore[arg-type]
        assert cls(secret_key=b"k").name == "tool_call_integrity"


def test_tool_call_integrity_plugin_stamps_what_google_adk_stamps() -> None:
    """The same key, session and event: the same stamp (the payload is google-adk's),
    and a restored copy is marked so on both."""
    from google.adk.events import Event as TheirEvent
    from google.adk.plugins import ToolCallIntegrityPlugin as Theirs
    from google.adk.sessions import Session as TheirSession
    from google.genai import types as genai

    from adk_actors import types
    from adk_actors.events import Event
    from adk_actors.plugins import ToolCallIntegrityPlugin
    from adk_actors.sessions import Session

    args = {"to": "bob", "amount": 10.0, "memo": "rent", "tags": [1, 2.5], "nested": {"b": None}}

    def stamp(plugin: Any, event: Any, session: Any) -> Any:
        context = type("Ctx", (), {"session": session})()
        asyncio.run(plugin.on_event_callback(invocation_context=context, event=event))
        return event.custom_metadata

    theirs = stamp(Theirs(secret_key=b"k" * 32), TheirEvent(
        invocation_id="e-1", author="bank", branch="root.bank",
        content=genai.Content(role="model", parts=[genai.Part(function_call=genai.FunctionCall(
            id="call-1", name="transfer", args=args))])),
        TheirSession(id="s-1", app_name="bank_app", user_id="ann"))
    ours = stamp(ToolCallIntegrityPlugin(secret_key=b"k" * 32), Event(
        invocation_id="e-1", author="bank", branch="root.bank",
        content=types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(
            id="call-1", name="transfer", args=args))])),
        Session(id="s-1", app_name="bank_app", user_id="ann"))
    assert ours == theirs and list(theirs["__adk_internal_fc_hmac"]) == ["call-1"]

    event = Event(author="bank", custom_metadata={"mine": 1, "__adk_internal_fc_hmac": {"x": "v1:0"}})
    copy = ToolCallIntegrityPlugin.prepare_restored_event(event)
    assert copy.custom_metadata == {"mine": 1, "__adk_internal_restored_event": True}
    assert event.custom_metadata == {"mine": 1, "__adk_internal_fc_hmac": {"x": "v1:0"}}


# -- ReflectAndRetryModelPlugin --------------------------------------------------------------

SHOP = '''
from google.adk.agents import Agent
from google.adk.apps import App
from google.adk.plugins import ReflectAndRetryModelPlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def add_to_cart(item: str, quantity: int) -> dict:
    """Adds an item to the cart."""
    LOG.append(("add_to_cart ran", item, quantity))
    return {"added": item, "quantity": quantity}

agent = Agent(name="shop", model="gemini-2.5-flash", instruction="Fill the cart.", tools=[add_to_cart])
runner = InMemoryRunner(app=App(name="shop_app", root_agent=agent, plugins=[PLUGIN]))
''' + MAIN


def _finished(reason: str) -> StubResponse:
    """Gemini's answer with no content that finished for ``reason``."""
    return StubResponse(json={"candidates": [{"finishReason": reason, "index": 0}], "modelVersion": "gemini-test",
                              "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 0,
                                                "totalTokenCount": 10}})


MALFORMED = _finished("MALFORMED_FUNCTION_CALL")

MODEL_RETRY_CASES: dict[str, tuple[str, list[StubResponse], list[str]]] = {
    "a malformed function call is answered with a reflection call, and the next try works": (
        SHOP.replace("PLUGIN", "ReflectAndRetryModelPlugin()"), [
            MALFORMED, calls(("add_to_cart", {"item": "tea", "quantity": 2})), gemini_response("Added tea."),
        ], ["Two teas please"]),
    "beyond max_retries the turn ends with google-adk's RuntimeError": (
        SHOP.replace("PLUGIN", "ReflectAndRetryModelPlugin(max_retries=1)"), [MALFORMED, MALFORMED],
        ["Two teas please"]),
    "throw_exception_if_retry_exceeded=False: the error answer stands and ends the turn": (
        SHOP.replace("PLUGIN", "ReflectAndRetryModelPlugin(max_retries=1, throw_exception_if_retry_exceeded=False)"),
        [MALFORMED, MALFORMED], ["Two teas please"]),
    "a good answer resets the count; the next turn counts from 0 again": (
        SHOP.replace("PLUGIN", "ReflectAndRetryModelPlugin(max_retries=1)"), [
            MALFORMED, calls(("add_to_cart", {"item": "tea", "quantity": 2})), MALFORMED,
            gemini_response("Added tea."), MALFORMED, gemini_response("Nothing more."),
        ], ["Two teas please", "Anything else?"]),
    "the model calling the reserved tool itself is a failure too": (
        SHOP.replace("PLUGIN", 'ReflectAndRetryModelPlugin(name="retry_model")'), [
            calls(("adk_handle_model_error", {"retry_count": 9})), gemini_response("Sorry, cart is empty."),
        ], ["Two teas please"]),
    "on_model_errors: other finish reasons are failures": (
        SHOP.replace("PLUGIN", "ReflectAndRetryModelPlugin(on_model_errors=[types.FinishReason.MAX_TOKENS])"), [
            _finished("MAX_TOKENS"), gemini_response("Short answer."),
        ], ["Two teas please"]),
}


@pytest.mark.parametrize("name", list(MODEL_RETRY_CASES))
def test_reflect_and_retry_model_plugin_as_on_google_adk(name: str, gemini: StubServer) -> None:
    source, answers, turns = MODEL_RETRY_CASES[name]
    theirs, ours = assert_same_on_both(source, "main", answers, turns, gemini)
    # the reflection call goes back to Gemini with the thought signature that skips its check
    assert any("thoughtSignature" in part for row in theirs["requests"] for content in row["contents"]
               for part in content.get("parts", []))
    reflections = [row for row in ours["events"] if any(c[1] == "adk_handle_model_error" for c in row["calls"])]
    assert reflections, "the case must answer a failure with a reflection call"
    assert len(ours["guidance"]) == len(theirs["guidance"]) >= 1
    for text, row in zip(ours["guidance"], reflections, strict=False):
        count = row["calls"][0][2]["retry_count"]
        assert f"retry {count} of at most" in text


def test_reflect_and_retry_model_plugin_refuses_what_google_adk_refuses() -> None:
    from google.adk.plugins import ReflectAndRetryModelPlugin as Theirs
    from google.genai import types as genai

    from adk_actors import types
    from adk_actors.plugins import ReflectAndRetryModelPlugin

    for cls, reasons in ((Theirs, genai), (ReflectAndRetryModelPlugin, types)):
        with pytest.raises(ValueError, match="max_retries must be a non-negative integer"):
            cls(max_retries=-1)
        with pytest.raises(ValueError, match="model_error must be a FinishReason"):
            cls(on_model_errors=["MALFORMED_FUNCTION_CALL"])
        plugin = cls()
        assert (plugin.name, plugin.max_retries, plugin.throw_exception_if_retry_exceeded) == (
            "reflect_retry_model_plugin", 3, True)
        assert plugin.on_model_errors == [reasons.FinishReason.MALFORMED_FUNCTION_CALL]


# -- artifact references (artifact_util) -----------------------------------------------------

LINKS = '''
from google.adk.agents import Agent
from google.adk.artifacts import artifact_util
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

async def publish(filename: str, text: str, tool_context) -> dict:
    """Saves a text as a new version of a file."""
    version = await tool_context.save_artifact(filename, types.Part(text=text))
    return {"saved": filename, "version": version}

async def link(alias: str, filename: str, version: int, tool_context) -> dict:
    """Makes `alias` point at one version of a file of this session (or the user's)."""
    uri = artifact_util.get_artifact_uri(
        app_name="docs_app", user_id=tool_context.user_id, filename=filename, version=version,
        session_id=None if filename.startswith("user:") else tool_context.session.id)
    try:
        saved = await tool_context.save_artifact(alias, types.Part(file_data=types.FileData(
            file_uri=uri, mime_type="text/plain")))
    except Exception as exc:
        return {"error": type(exc).__name__, "message": str(exc).replace(tool_context.session.id, "<session>")}
    return {"alias": alias, "version": saved, "target": artifact_util.parse_artifact_uri(uri).filename}

async def read(filename: str, tool_context) -> dict:
    """Reads the latest version of a file, following links."""
    try:
        part = await tool_context.load_artifact(filename)
    except Exception as exc:
        return {"error": type(exc).__name__, "message": str(exc).replace(tool_context.session.id, "<session>")}
    return {"text": part.text if part else None}

agent = Agent(name="docs", model="gemini-2.5-flash", instruction="Manage documents.", tools=[publish, link, read])
runner = InMemoryRunner(agent=agent, app_name="docs_app")
''' + MAIN

ARTIFACT_REF_CASES: dict[str, tuple[str, list[StubResponse], list[str]]] = {
    "a reference saved by a tool loads as the version it names, the user's too": (LINKS, [
        calls(("publish", {"filename": "notes.txt", "text": "first"}),
              ("publish", {"filename": "user:profile.txt", "text": "Ann, admin"})),
        calls(("publish", {"filename": "notes.txt", "text": "second"})),
        calls(("link", {"alias": "pinned.txt", "filename": "notes.txt", "version": 0}),
              ("link", {"alias": "me.txt", "filename": "user:profile.txt", "version": 0})),
        calls(("read", {"filename": "pinned.txt"}), ("read", {"filename": "notes.txt"}),
              ("read", {"filename": "me.txt"})),
        gemini_response("Pinned is the first version."),
    ], ["Publish, pin and read"]),
    "a reference to a version that is not there loads as nothing; one to a reference is followed": (LINKS, [
        calls(("publish", {"filename": "a.txt", "text": "A"})),
        calls(("link", {"alias": "b.txt", "filename": "a.txt", "version": 0})),
        calls(("link", {"alias": "c.txt", "filename": "b.txt", "version": 0}),
              ("link", {"alias": "ghost.txt", "filename": "a.txt", "version": 7})),
        calls(("read", {"filename": "c.txt"}), ("read", {"filename": "ghost.txt"})),
        gemini_response("c is A; ghost is empty."),
    ], ["Chain them"]),
    "a reference that loops is refused when loaded (InputValidationError)": (LINKS, [
        calls(("link", {"alias": "x.txt", "filename": "y.txt", "version": 0})),
        calls(("link", {"alias": "y.txt", "filename": "x.txt", "version": 0})),
        calls(("read", {"filename": "x.txt"})),
        gemini_response("They loop."),
    ], ["Loop them"]),
}


@pytest.mark.parametrize("name", list(ARTIFACT_REF_CASES))
def test_artifact_references_as_on_google_adk(name: str, gemini: StubServer) -> None:
    source, answers, turns = ARTIFACT_REF_CASES[name]
    theirs, _ = assert_same_on_both(source, "main", answers, turns, gemini)
    responses = [r for row in theirs["events"] for (_, tool, r) in row["responses"] if tool == "read"]
    assert responses, "the case must read through a reference"


def test_artifact_uris_as_google_adk_builds_and_parses_them() -> None:
    from google.adk.artifacts import artifact_util as theirs
    from google.adk.errors.input_validation_error import InputValidationError as TheirError

    from adk_actors.artifacts import artifact_util as ours
    from adk_actors.errors.input_validation_error import InputValidationError

    built = [("app", "ann", "notes.txt", 3, "s-1"), ("app", "ann", "user:cv.pdf", 0, None),
             ("my app", "ann", "dir/report.md", 12, ""), ("a", "u", "f", 0, "s/1")]
    for args in built:
        assert ours.get_artifact_uri(*args) == theirs.get_artifact_uri(*args)
        assert ours.parse_artifact_uri(ours.get_artifact_uri(*args)) == theirs.parse_artifact_uri(
            theirs.get_artifact_uri(*args))
    for uri in ["", "gs://b/o", "artifact://apps/a/users/u/artifacts/f/versions/x",
                "artifact://apps/a/users/u/sessions/s/artifacts/f/versions/2",
                "artifact://apps/a/b/users/u/artifacts/f/versions/1", "artifact://apps/a/users/u/artifacts/f",
                "artifact://apps/a/users/u/sessions/users/x/artifacts/f/versions/1",
                "artifact://apps//users/u/artifacts/f/versions/1"]:
        assert ours.parse_artifact_uri(uri) == theirs.parse_artifact_uri(uri), uri
    assert tuple(ours.ParsedArtifactUri._fields) == theirs.ParsedArtifactUri._fields

    from google.genai import types as genai

    from adk_actors import types
    for uri in ["artifact://apps/a/users/u/artifacts/f/versions/1", "gs://b/o", None]:
        assert ours.is_artifact_ref(types.Part(file_data=types.FileData(file_uri=uri))) == theirs.is_artifact_ref(
            genai.Part(file_data=genai.FileData(file_uri=uri)))
    assert not ours.is_artifact_ref(types.Part(text="artifact://apps/a")) and not theirs.is_artifact_ref(
        genai.Part(text="artifact://apps/a"))

    scopes = [("a", "u", "s"), ("a", "u", None), ("a", "v", "s"), ("b", "u", "s"), ("a", "u", "t")]
    targets = ["artifact://apps/a/users/u/sessions/s/artifacts/f/versions/1",
               "artifact://apps/a/users/u/artifacts/f/versions/1", "not a uri"]
    for app, user, session in scopes:
        for uri in targets:
            for depth in (0, 1, 5):
                outcome = []
                for module, error in ((theirs, TheirError), (ours, InputValidationError)):
                    try:
                        outcome.append(tuple(module.resolve_artifact_reference(
                            file_uri=uri, app_name=app, user_id=user, session_id=session, remaining_depth=depth)))
                    except error as exc:
                        outcome.append(str(exc))
                assert outcome[0] == outcome[1], (app, user, session, uri, depth)


def test_in_memory_artifact_service_refuses_references_as_google_adk() -> None:
    """Saved references are checked as google-adk checks them: out of the app, user or
    session, or not a URI, an InputValidationError (google-adk's type, each side's own)."""
    from google.adk.artifacts import InMemoryArtifactService as Theirs
    from google.adk.errors.input_validation_error import InputValidationError as TheirError
    from google.genai import types as genai

    from adk_actors import types
    from adk_actors.artifacts import InMemoryArtifactService
    from adk_actors.errors.input_validation_error import InputValidationError

    uris = ["artifact://apps/other/users/ann/artifacts/f/versions/0",
            "artifact://apps/app/users/bob/artifacts/f/versions/0",
            "artifact://apps/app/users/ann/sessions/s2/artifacts/f/versions/0",
            "artifact://apps/app/users/ann/artifacts/f/versions/x",
            "artifact://apps/app/users/ann/artifacts/f/versions/0"]

    async def attempts(service: Any, module: Any, error: type[Exception]) -> list[Any]:
        out: list[Any] = []
        for uri in uris:
            try:
                version = await service.save_artifact(
                    app_name="app", user_id="ann", session_id="s1", filename="link",
                    artifact=module.Part(file_data=module.FileData(file_uri=uri, mime_type="text/plain")))
                info = await service.get_artifact_version(app_name="app", user_id="ann", session_id="s1",
                                                          filename="link", version=version)
                out.append(("saved", version, info.mime_type))
            except error as exc:
                out.append(str(exc))
        return out

    assert asyncio.run(attempts(InMemoryArtifactService(), types, InputValidationError)) == asyncio.run(
        attempts(Theirs(), genai, TheirError))


# -- MultimodalToolResultsPlugin -------------------------------------------------------------

CHARTS = '''
from google.adk.agents import Agent
from google.adk.plugins.multimodal_tool_results_plugin import MultimodalToolResultsPlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def describe_sales(region: str) -> list:
    """Describes a region's sales, as parts."""
    return [types.Part(text=f"Sales in {region} grew 12%."), types.Part(text="Best month: March.")]

def headline(region: str):
    """One headline about a region, as a part."""
    return types.Part(text=f"{region} leads the year.")

def totals(region: str) -> dict:
    """A region's totals."""
    return {"region": region, "total": 1200}

agent = Agent(name="analyst", model="gemini-2.5-flash", instruction="Report on sales.",
              tools=[describe_sales, headline, totals])
runner = InMemoryRunner(agent=agent, app_name="sales_app", plugins=[PLUGIN])
''' + MAIN

MULTIMODAL_CASES: dict[str, tuple[str, list[StubResponse], list[str]]] = {
    # one tool step: google-adk 2.13 itself fails a later model call after parts were
    # attached in this retention (its state gives the emptied list back with the parts
    # as dicts, which its telemetry then reads as parts)
    "parts a tool returns reach the next request once; other results are left alone": (
        CHARTS.replace("PLUGIN", "MultimodalToolResultsPlugin()"), [
            calls(("describe_sales", {"region": "north"}), ("totals", {"region": "north"}),
                  ("headline", {"region": "north"})),
            gemini_response("North grew 12% and leads."),
        ], ["How is the north doing?"]),
    "retention='session': the parts are sent again on every later turn": (
        CHARTS.replace("PLUGIN", 'MultimodalToolResultsPlugin(name="keep", retention="session")'), [
            calls(("describe_sales", {"region": "south"})), gemini_response("South grew 12%."),
            calls(("headline", {"region": "south"})), gemini_response("South leads."),
            gemini_response("As said: March."),
        ], ["South?", "Headline?", "Best month?"]),
}


def _parts_as_json(value: Any) -> Any:
    """``value`` with each Part in it (google.genai's) as its JSON."""
    if hasattr(value, "model_dump") and type(value).__name__ == "Part":
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, dict):
        return {key: _parts_as_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_parts_as_json(item) for item in value]
    return value


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_none(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_none(item) for item in value]
    return value


def _event_rows_parts_as_json(events: list[Any]) -> list[dict[str, Any]]:
    """The harness's event rows, a function response holding Parts read as their JSON:
    google-adk's event keeps the tool's Part objects in the response
    (``{"result": [Part, ...]}``); ours holds their JSON, as events here cross process
    boundaries (the model is sent the same JSON on both sides: the requests are
    compared apart, unchanged)."""
    for event in events:
        for response in event.get_function_responses():
            response.response = _parts_as_json(response.response)
    return harness.event_rows(events)


@pytest.mark.parametrize("name", list(MULTIMODAL_CASES))
def test_multimodal_tool_results_plugin_as_on_google_adk(name: str, gemini: StubServer,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    source, answers, turns = MULTIMODAL_CASES[name]
    monkeypatch.setattr(test_builtin_plugins, "event_rows", _event_rows_parts_as_json)
    # the parts kept in the session's state, as JSON: google.genai's Part has more fields
    # than ours (each None here), and writes them down; compared without them
    plain = harness._plain
    monkeypatch.setattr(harness, "_plain", lambda value: _without_none(plain(value)))
    theirs, _ = assert_same_on_both(source, "main", answers, turns, gemini)
    texts = [part.get("text", "") for row in theirs["requests"] for content in row["contents"]
             for part in content.get("parts", [])]
    assert texts.count("Best month: March.") >= 1


def test_multimodal_tool_results_plugin_refuses_an_unknown_retention() -> None:
    from google.adk.plugins.multimodal_tool_results_plugin import (
        MultimodalToolResultsPlugin as Theirs,
    )

    from adk_actors.plugins.multimodal_tool_results_plugin import MultimodalToolResultsPlugin

    for cls in (Theirs, MultimodalToolResultsPlugin):
        with pytest.raises(ValueError, match="retention must be 'next_model_call' or 'session', got forever"):
            cls(retention="forever")  # type: ignore[arg-type]
        assert cls().name == "multimodal_tool_results_plugin"


def test_multimodal_tool_results_plugin_shows_the_model_an_image_a_tool_returned(gemini: StubServer) -> None:
    """Ours alone (see the plugin's module): an image a tool returns reaches the model in
    its next request, as a part after the tool's response (google-adk 2.13's flow
    carries it inside the function response instead)."""
    source = rewritten(CHARTS.replace("PLUGIN", "MultimodalToolResultsPlugin()").replace(
        'return types.Part(text=f"{region} leads the year.")',
        'return types.Part(inline_data=types.Blob(mime_type="image/png", data=b"PNG-" + region.encode()))'))
    harness.run_program(source, [calls(("headline", {"region": "west"})), gemini_response("A chart.")],
                        gemini, ["Chart of the west?"])
    second = gemini.requests[1].body["contents"][-1]["parts"]
    assert second[0]["functionResponse"]["response"] == {}
    assert second[1] == {"inlineData": {"mimeType": "image/png", "data": "UE5HLXdlc3Q="}}


# -- ForceEscalationPlugin -------------------------------------------------------------------

OPS = '''
from google.adk.agents import Agent
from google.adk.apps import App
from google.adk.plugins import ForceEscalationPlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

def model_consult(question: str, tool_context) -> dict:
    """Asks a stronger model for advice."""
    LOG.append(("consulted", question))
    key = "model_consult:model_consult:session_uses"
    tool_context.state[key] = tool_context.state.get(key, 0) + 1
    return {"status": "ok", "advice": "Check the logs first."}

def search_logs(query: str) -> dict:
    """Searches the service logs."""
    LOG.append(("searched", query))
    return {"hits": 0}

def deploy(version: str) -> dict:
    """Deploys a version to production."""
    LOG.append(("deployed", version))
    return {"deployed": version}

agent = Agent(name="ops", model="gemini-2.5-flash", instruction="Run operations.",
              tools=[model_consult, search_logs, deploy])
runner = InMemoryRunner(app=App(name="ops_app", root_agent=agent, plugins=[PLUGIN]))
''' + MAIN.replace("async def main(", "async def one_session(") + '''
async def main(turns):
    return await one_session(turns, SEEDED)
'''


def _ops(plugin: str, seeded: str = "None") -> str:
    return OPS.replace("PLUGIN", plugin).replace("SEEDED", seeded)


CONSULT = calls(("model_consult", {"question": "How do I fix the outage?"}))

FORCE_CASES: dict[str, tuple[str, list[StubResponse], list[str]]] = {
    "the first model call of each invocation must consult": (
        _ops("ForceEscalationPlugin()"), [
            CONSULT, gemini_response("Advice: check the logs."),
            CONSULT, gemini_response("Same advice."),
        ], ["The site is down", "Still down"]),
    "a gated tool is refused until a consult, then runs": (
        _ops('ForceEscalationPlugin(force_first_consult=False, require_consult_before=["deploy"])'), [
            calls(("deploy", {"version": "v2"})), CONSULT, calls(("deploy", {"version": "v2"})),
            gemini_response("Deployed v2 after advice."),
        ], ["Deploy v2"]),
    "max_refusals: a gated tool runs once the refusals are spent": (
        _ops('ForceEscalationPlugin(force_first_consult=False, require_consult_before=["deploy"], max_refusals=1)'),
        [calls(("deploy", {"version": "v2"})), calls(("deploy", {"version": "v2"})), gemini_response("Deployed.")],
        ["Deploy v2"]),
    "consults counted in the session's state open the gate": (
        _ops('ForceEscalationPlugin(force_first_consult=False, require_consult_before=["deploy"])',
             '{"model_consult:model_consult:session_uses": 2}'),
        [calls(("deploy", {"version": "v3"})), gemini_response("Deployed v3.")], ["Deploy v3"]),
    "the same call repeated force_on_repeat times forces a consult next": (
        _ops("ForceEscalationPlugin(force_first_consult=False, force_on_repeat=2)"), [
            calls(("search_logs", {"query": "error"})), calls(("search_logs", {"query": "error"})),
            CONSULT, gemini_response("Advice taken."),
        ], ["Why is it down?"]),
    "max_forced=0 forces nothing": (
        _ops("ForceEscalationPlugin(max_forced=0, force_on_repeat=1)"), [
            calls(("search_logs", {"query": "error"})), gemini_response("No hits."),
        ], ["Why is it down?"]),
}


def _request_rows_with_tool_config(server: StubServer) -> list[dict[str, Any]]:
    """The harness's request rows, each with the ``toolConfig`` Gemini was sent."""
    rows = harness.request_rows(server)
    for row, request in zip(rows, server.requests, strict=True):
        row["tool_config"] = request.body.get("toolConfig")
    return rows


@pytest.mark.parametrize("name", list(FORCE_CASES))
def test_force_escalation_plugin_as_on_google_adk(name: str, gemini: StubServer,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    source, answers, turns = FORCE_CASES[name]
    monkeypatch.setattr(test_builtin_plugins, "request_rows", _request_rows_with_tool_config)
    theirs, _ = assert_same_on_both(source, "main", answers, turns, gemini)
    forced = [row["tool_config"] for row in theirs["requests"] if row["tool_config"]]
    assert all(config == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["model_consult"]}}
               for config in forced)
    assert bool(forced) == ("forces a consult" in name or "must consult" in name)


def test_force_escalation_plugin_refuses_what_google_adk_refuses() -> None:
    from google.adk.tools.model_consult import ForceEscalationPlugin as Theirs

    from adk_actors.tools.model_consult import ForceEscalationPlugin

    bad: list[dict[str, Any]] = [{"name": " "}, {"tool_name": ""}, {"force_on_repeat": 0}, {"force_on_repeat": True},
                                 {"max_forced": -1}, {"max_refusals": -2}, {"require_consult_before": "deploy"},
                                 {"require_consult_before": ["deploy", ""]},
                                 {"require_consult_before": ["model_consult"]}, {"require_consult_before": 3}]
    for kwargs in bad:
        messages = []
        for cls in (Theirs, ForceEscalationPlugin):
            with pytest.raises(ValueError) as caught:
                cls(**kwargs)
            messages.append(str(caught.value))
        assert messages[0] == messages[1], kwargs
    assert (ForceEscalationPlugin().name, ForceEscalationPlugin().tool_name) == (Theirs().name, Theirs().tool_name)


def test_a_thought_signature_goes_back_with_its_part_as_on_google_adk(gemini: StubServer) -> None:
    """Gemini's ``thoughtSignature`` on a function call comes back, with that call, in
    the next request (Gemini 3 refuses a function call sent back without it)."""
    signed = StubResponse(json={"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "add_to_cart", "args": {"item": "tea", "quantity": 1}},
         "thoughtSignature": "c2lnbmVkIHJlYXNvbmluZw=="}]}, "finishReason": "STOP", "index": 0}],
        "modelVersion": "gemini-test"})
    source = SHOP.replace("PLUGIN", "ReflectAndRetryModelPlugin()")
    theirs, _ = assert_same_on_both(source, "main", [signed, gemini_response("Added.")], ["One tea"], gemini)
    sent = theirs["requests"][1]["contents"][1]["parts"][0]
    assert sent["thoughtSignature"] == "c2lnbmVkIHJlYXNvbmluZw=="


# -- in a host: these plugins in the run workers' processes ----------------------------------


def test_more_builtin_plugins_work_in_a_host(actor_system: Any, tmp_path: Any) -> None:
    """The plugins given to an App that a host serves (tests/builtin_plugin_apps_more.py):
    the run workers (other processes) import and run them. The first model call is
    forced to the advisor, its malformed answer becomes a reflection call, the calls are
    stamped and verified before they run (and again on the next turn), the parts the
    chart tool returned reach the model."""
    from adk_actors.runtime import Host, HostConfig

    with Host(HostConfig(apps={"more": "builtin_plugin_apps_more:app"}, data_dir=str(tmp_path / "data")),
              system=actor_system) as host:
        runner = host.runner("more")
        session = runner.create_session("ann", "s1")
        events = list(runner.run("ann", session.id, "go"))
        called = [c.name for e in events for c in e.get_function_calls()]
        assert called == ["adk_handle_model_error", "model_consult", "chart"]
        stamped = [e for e in events if e.get_function_calls()]
        assert all(sorted((e.custom_metadata or {}).get("__adk_internal_fc_hmac", {}))
                   == sorted(c.id for c in e.get_function_calls()) for e in stamped)
        assert events[-1].content.text == "saw chart of north: up 12%"
        events = list(runner.run("ann", session.id, "again"))  # the stored stamps verify before this run
        assert events[-1].content.text == "saw again"
