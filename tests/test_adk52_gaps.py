"""Three gaps of issue 52, each side by side with google-adk 2.13 against one Gemini REST
stand-in named by environment variables only.

* ``/run_sse`` when the agent's run fails (a tool raising, the model refusing the
  request with an HTTP error): a real host (``adk-actors serve``) and google-adk's own
  app (``get_fast_api_app`` on uvicorn) stream the same events, then the same error
  line: ``data: {"error": "<type>: <message>", "error_details": {"error_type",
  "error_message", "timestamp"}}``, with the same type and message.
* ``FunctionDeclaration.parameters_json_schema`` (google-genai's field): a tool that
  declares its parameters so reaches Gemini exactly as google-adk sends it (the
  declaration as the stand-in received it, key by key: google-genai's
  ``parameters_json_schema`` key, the schema untouched); the same declaration becomes the same tool schema for Anthropic
  and for LiteLLM's OpenAI form as google-adk's converters make; and
  ``adk_actors.types.FunctionDeclaration`` keeps the field as google-genai's does.
* In process (``InMemoryRunner``): the turn that answers a call (a tool confirmation,
  a credential request, a long-running tool's result) goes on in the invocation of the
  call it answers, as google-adk's Runner does (the host's side:
  tests/test_adk52_confirmation_http.py).
"""

from __future__ import annotations

import copy
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from conftest import serving
from google_adk_harness import (  # noqa: F401
    calls,
    gemini,
    gemini_by_environment,
    google_adk_api_server,
    request_rows,
    rewritten,
    run_program,
    stand_in,
)
from test_adk56_credential_request import PROGRAM as AUTH_PROGRAM
from test_adk56_credential_request import _answer_with as answer_with
from test_adk56_credential_request import _reset as reset_provider
from test_adk56_credential_request import provider  # noqa: F401

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"), pytest.mark.timeout(300)]

TESTS = Path(__file__).parent

#: a full JSON schema, with what Gemini's OpenAPI subset lacks ($ref, $defs,
#: additionalProperties, format, minLength, title): sent as given, or it is not the same
SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "LookupArgs",
    "properties": {
        "key": {"type": "string", "minLength": 1, "description": "The record's key."},
        "filters": {"$ref": "#/$defs/Filters"},
    },
    "required": ["key"],
    "additionalProperties": False,
    "$defs": {"Filters": {"type": "object", "title": "Filters",
                          "properties": {"since": {"type": "string", "format": "date"}}}},
}

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.tools.base_tool import BaseTool
from google.genai import types

SCHEMA = SCHEMA_TEXT


def explode(reason: str) -> dict:
    """Fails on purpose."""
    raise ValueError(f"the tool broke: {reason}")


class Lookup(BaseTool):
    """A tool of one's own, its parameters declared as a full JSON schema."""

    def __init__(self):
        super().__init__(name="lookup", description="Looks a record up.")

    def _get_declaration(self):
        return types.FunctionDeclaration(name=self.name, description=self.description,
                                         parameters_json_schema=SCHEMA)

    async def run_async(self, *, args, tool_context):
        return {"found": args["key"]}


def refuse(callback_context, llm_request):
    raise RuntimeError("the callback refused the request")


failing_agent = Agent(name="failing", model="gemini-2.5-flash", instruction="Use explode when asked.",
                      tools=[explode])
guarded_agent = Agent(name="guarded", model="gemini-2.5-flash", instruction="Answer.", before_model_callback=refuse)
lookup_agent = Agent(name="finder", model="gemini-2.5-flash", instruction="Look records up.", tools=[Lookup()])
'''.replace("SCHEMA_TEXT", repr(SCHEMA))

APPS = {"failing": "failing_agent", "guarded": "guarded_agent", "finder": "lookup_agent"}


@pytest.fixture(scope="module")
def model() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


@pytest.fixture(scope="module")
def environment(model: StubServer) -> Iterator[dict[str, str]]:
    """google-genai's own variables naming the stand-in, for both servers."""
    with gemini_by_environment(model.url) as names:
        yield names


@pytest.fixture(scope="module")
def theirs(tmp_path_factory: pytest.TempPathFactory, environment: dict[str, str]) -> Iterator[httpx.Client]:
    """google-adk's FastAPI app (``adk api_server``'s routes) on uvicorn, 127.0.0.1."""
    with google_adk_api_server(tmp_path_factory.mktemp("agents"), PROGRAM, APPS) as http:
        yield http


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory, environment: dict[str, str]) -> Iterator[httpx.Client]:
    """A real host (``adk-actors serve``) serving the program with its imports rewritten."""
    base = tmp_path_factory.mktemp("ours")
    (base / "adk52_gaps_app.py").write_text(rewritten(PROGRAM))
    apps = "".join(f'{app} = "adk52_gaps_app:{name}"\n' for app, name in APPS.items())
    with serving(base, apps=apps, env={**environment, "PYTHONPATH": os.pathsep.join([str(TESTS), str(base)])}) \
            as served, httpx.Client(base_url=served["url"], timeout=60) as http:
        yield http


def _scripted(model: StubServer, script: list[StubResponse]) -> None:
    with model._lock:
        model.requests.clear()
        model.responses.clear()
    model.add(*script)


def sse_turn(http: httpx.Client, model: StubServer, app: str, session: str, script: list[StubResponse],
             text: str) -> dict[str, Any]:
    """One ``/run_sse`` turn on a new session: the stream's ``data:`` payloads (each as
    JSON), the raw stream, the model requests, the answers left unused."""
    _scripted(model, script)
    made = http.post(f"/apps/{app}/users/ann/sessions", json={"sessionId": session})
    assert made.status_code == 200, made.text
    answer = http.post("/run_sse", json={"appName": app, "userId": "ann", "sessionId": session, "streaming": False,
                                         "newMessage": {"role": "user", "parts": [{"text": text}]}})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/event-stream")
    frames = [frame for frame in answer.text.split("\n\n") if frame]
    assert all(frame.startswith("data: ") for frame in frames), frames
    return {"payloads": [json.loads(frame[len("data: "):]) for frame in frames], "raw": answer.text,
            "requests": list(model.requests), "unused": len(model.responses)}


_VOLATILE = {"id", "timestamp", "usageMetadata", "modelVersion", "invocationId", "nodeInfo"}


def _event_rows(payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events of a stream, as compared: no error line nor error event; ids, times and
    usage left out, function-call ids by order of appearance."""
    seen: dict[str, str] = {}

    def named(value: Any) -> Any:
        if isinstance(value, str) and value.startswith("adk-"):
            return seen.setdefault(value, f"call-{len(seen)}")
        if isinstance(value, dict):
            return {k: named(v) for k, v in value.items()}
        if isinstance(value, list):
            return [named(v) for v in value]
        return value

    return [named({k: v for k, v in p.items() if k not in _VOLATILE}) for p in payloads
            if "error" not in p and "errorCode" not in p]


# -- 1. the error line of a failed run ----------------------------------------------------

MODEL_REFUSES = StubResponse(status=400, json={"error": {"code": 400, "message": "Request contains an invalid argument.",
                                                         "status": "INVALID_ARGUMENT"}})

#: (app, the model's answers): the run fails in each, on google-adk and on ours (a tool
#: that raises does not end our run: the model gets the error as the tool's result,
#: docs/design.md)
FAILURES = {
    "the model refuses the request": ("failing", [MODEL_REFUSES]),
    "a model callback raises": ("guarded", []),
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_a_failed_run_ends_its_stream_with_google_adks_error_line(theirs: httpx.Client, ours: httpx.Client,
                                                                  model: StubServer, case: str) -> None:
    """The last line of the stream: one error line, google-adk's shape, written as
    google-adk writes it (``data: `` then ``json.dumps`` spacing); for an exception of
    the agent's own code, word for word. Left (docs/design.md): a model's HTTP error is
    named by our model errors (``bad_request: HTTP 400: <the API's message>``; google-adk
    gives google-genai's ``ClientError: 400 INVALID_ARGUMENT. {<the API's JSON>}``), and
    google-adk 2.13 streams an error event before the line when its root LlmAgent's run
    raises (its node runner's; none for a custom agent or a SequentialAgent at the
    root), and so does ours (the next test; a model's error event is named by our model
    errors too): the events are compared without error events."""
    app, script = FAILURES[case]
    their_turn = sse_turn(theirs, model, app, f"f-{len(case)}", script, "break it")
    assert their_turn["unused"] == 0, "the case must use its script on google-adk"
    our_turn = sse_turn(ours, model, app, f"f-{len(case)}", script, "break it")
    assert our_turn["unused"] == 0
    their_line, our_line = their_turn["payloads"][-1], our_turn["payloads"][-1]
    # one error line, the last, of google-adk's shape
    assert [p for p in their_turn["payloads"] if "error" in p] == [their_line]
    assert [p for p in our_turn["payloads"] if "error" in p] == [our_line], our_turn["payloads"]
    assert set(our_line) == set(their_line) == {"error", "error_details"}
    assert set(our_line["error_details"]) == set(their_line["error_details"]) == {
        "error_type", "error_message", "timestamp"}
    for line in (their_line, our_line):
        details = line["error_details"]
        assert line["error"] == f"{details['error_type']}: {details['error_message']}"
        assert isinstance(details["timestamp"], float)
    # the line as written: ``data: {"error": "`` then json.dumps' spacing, then a blank line
    their_raw, our_raw = (turn["raw"].split("\n\n")[-2] for turn in (their_turn, our_turn))
    assert our_raw.startswith('data: {"error": "') and their_raw.startswith('data: {"error": "')
    assert our_raw.endswith("}") and '", "error_details": {"error_type": "' in our_raw
    if case == "a model callback raises":  # the agent's own exception: word for word
        assert their_line["error"] == "RuntimeError: the callback refused the request"
        assert our_line["error"] == their_line["error"]
        assert our_line["error_details"]["error_type"] == their_line["error_details"]["error_type"]
        assert our_line["error_details"]["error_message"] == their_line["error_details"]["error_message"]
        assert our_raw.split('"timestamp": ')[0] == their_raw.split('"timestamp": ')[0]
    else:
        assert "Request contains an invalid argument." in their_line["error"]
        assert "Request contains an invalid argument." in our_line["error"]
    # what was streamed before it: the same events (error events aside, see above)
    assert _event_rows(our_turn["payloads"]) == _event_rows(their_turn["payloads"])


def _error_events(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k not in _VOLATILE} for row in rows if row.get("errorCode")]


def test_an_exception_of_the_agents_code_is_streamed_and_stored_as_google_adks_error_event(
        theirs: httpx.Client, ours: httpx.Client, model: StubServer) -> None:
    """google-adk 2.13 (its node runner): when the root LlmAgent's run raises (here its
    before-model callback), an error event of that agent (``errorCode`` the exception's
    class name, ``errorMessage`` its text, no content) is streamed before the error line
    and kept in the session. Ours must stream and keep the same event."""
    turns = {}
    for side, http in (("theirs", theirs), ("ours", ours)):
        turn = sse_turn(http, model, "guarded", "e-1", [], "break it")
        stored = http.get("/apps/guarded/users/ann/sessions/e-1")
        assert stored.status_code == 200, stored.text
        turns[side] = (turn["payloads"], stored.json()["events"])
    their_stream, their_stored = turns["theirs"]
    our_stream, our_stored = turns["ours"]
    expected = [{"author": "guarded", "errorCode": "RuntimeError", "errorMessage": "the callback refused the request",
                 "actions": their_stream[0]["actions"]}]
    assert _error_events(their_stream) == expected and "error" in their_stream[-1]  # as observed
    assert _error_events(our_stream) == _error_events(their_stream)
    assert _error_events(our_stored) == _error_events(their_stored) == expected


# -- 2. parameters_json_schema, as sent ---------------------------------------------------


def _declarations(requests: list[Any]) -> list[list[dict[str, Any]]]:
    return [[d for tool in r.body.get("tools", []) for d in tool.get("functionDeclarations", [])] for r in requests]


def test_a_json_schema_declaration_reaches_gemini_as_google_adk_sends_it(theirs: httpx.Client, ours: httpx.Client,
                                                                         model: StubServer) -> None:
    script = [calls(("lookup", {"key": "k1"})), gemini_response("Found k1.")]
    their_turn = sse_turn(theirs, model, "finder", "j-1", script, "find k1")
    our_turn = sse_turn(ours, model, "finder", "j-1", script, "find k1")
    assert their_turn["unused"] == our_turn["unused"] == 0
    theirs_sent, ours_sent = _declarations(their_turn["requests"]), _declarations(our_turn["requests"])
    assert theirs_sent[0] == [{"name": "lookup", "description": "Looks a record up.", "parameters_json_schema": SCHEMA}]
    assert ours_sent == theirs_sent  # key by key, every request
    assert request_rows_of(our_turn) == request_rows_of(their_turn)
    assert _event_rows(our_turn["payloads"]) == _event_rows(their_turn["payloads"])


def request_rows_of(turn: dict[str, Any]) -> list[dict[str, Any]]:
    """The turn's model requests as the harness compares them (contents, tools, instruction)."""
    return request_rows(SimpleNamespace(requests=turn["requests"]))  # type: ignore[arg-type]


def test_our_function_declaration_keeps_parameters_json_schema_as_google_genais() -> None:
    from google.genai import types as gt

    from adk_actors import types as ot

    for kind in (gt, ot):
        declared = kind.FunctionDeclaration(name="lookup", description="Looks.", parameters_json_schema=SCHEMA)
        assert declared.parameters_json_schema == SCHEMA and declared.parameters is None
        assert declared.model_dump(mode="json", by_alias=True, exclude_none=True) == {
            "name": "lookup", "description": "Looks.", "parametersJsonSchema": SCHEMA}
        again = kind.FunctionDeclaration.model_validate({"name": "lookup", "parametersJsonSchema": SCHEMA})
        assert again.parameters_json_schema == SCHEMA
        declared.parameters_json_schema = {"type": "object"}  # mutable, as google-genai's
        assert declared.parameters_json_schema == {"type": "object"}
        both = kind.FunctionDeclaration(name="x", parameters={"type": "OBJECT"}, parameters_json_schema=SCHEMA)
        assert both.parameters_json_schema == SCHEMA and both.parameters is not None  # neither side refuses both
    # google-genai's own object given where ours is taken: the field comes across
    from adk_actors.types import ours as to_ours
    converted = to_ours(gt.FunctionDeclaration(name="lookup", parameters_json_schema=SCHEMA), ot.FunctionDeclaration)
    assert converted.parameters_json_schema == SCHEMA and converted.parameters is None


def test_other_providers_get_the_schema_as_google_adks_converters_make_it() -> None:
    """Anthropic's ``input_schema`` and LiteLLM's OpenAI ``parameters`` from a
    declaration with ``parameters_json_schema``: google-adk's converters' output."""
    from google.adk.models.anthropic_llm import function_declaration_to_tool_param
    from google.genai import types as gt

    from adk_actors._types import Content, FunctionDeclaration, LlmRequest
    from adk_actors.models._anthropic import AnthropicModel

    theirs = gt.FunctionDeclaration(name="lookup", description="Looks a record up.",
                                    parameters_json_schema=copy.deepcopy(SCHEMA))
    ours = FunctionDeclaration(name="lookup", description="Looks a record up.",
                               parameters_json_schema=copy.deepcopy(SCHEMA))
    request = LlmRequest(model="claude-x", contents=[Content.user("hi")], tools=[ours])
    [anthropic_tool] = AnthropicModel(name="claude-x", base_url="http://127.0.0.1:9", api_key=None).payload(request, False)["tools"]
    assert anthropic_tool == dict(function_declaration_to_tool_param(theirs))

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    pytest.importorskip("litellm")
    from google.adk.models.lite_llm import _function_declaration_to_tool_param

    from adk_actors.models._lite_llm import _tool
    assert _tool(ours) == _function_declaration_to_tool_param(theirs)


# -- 3. in process: the answering turn's invocation --------------------------------------

IN_PROCESS = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools import LongRunningFunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types


def transfer(amount: int, tool_context: ToolContext) -> dict:
    """Moves money."""
    if tool_context.tool_confirmation is None:
        tool_context.request_confirmation(hint="Approve?", payload={"limit": 0})
        return {"status": "waiting"}
    return {"status": "done" if tool_context.tool_confirmation.confirmed else "rejected"}


def ask_manager(purpose: str) -> dict:
    """Files a request a manager answers later."""
    return {"status": "pending"}


root_agent = Agent(name="bank", model="gemini-2.5-flash", instruction="Move money, ask the manager.",
                   tools=[transfer, LongRunningFunctionTool(ask_manager)])


async def main(answer_name):
    runner = InMemoryRunner(agent=root_agent, app_name="bank")
    session = await runner.session_service.create_session(app_name="bank", user_id="ann")
    turns = []
    events = [e async for e in runner.run_async(user_id="ann", session_id=session.id,
                                                new_message=types.Content(role="user", parts=[types.Part(text="go")]))]
    turns.append(events)
    asked = next(c for e in events for c in e.get_function_calls() if c.name == answer_name)
    answer = {"confirmed": True} if answer_name == "adk_request_confirmation" else {"status": "approved"}
    reply = types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
        id=asked.id, name=answer_name, response=answer))])
    turns.append([e async for e in runner.run_async(user_id="ann", session_id=session.id, new_message=reply)])
    turns.append([e async for e in runner.run_async(user_id="ann", session_id=session.id,
                                                    new_message=types.Content(role="user",
                                                                              parts=[types.Part(text="thanks")]))])
    stored = await runner.session_service.get_session(app_name="bank", user_id="ann", session_id=session.id)
    return turns, stored.events
'''

ANSWERED = {
    "adk_request_confirmation": [calls(("transfer", {"amount": 5})), gemini_response("Waiting."),
                                 gemini_response("Sent."), gemini_response("You are welcome.")],
    "ask_manager": [calls(("ask_manager", {"purpose": "a trip"})), gemini_response("Filed."),
                    gemini_response("Approved."), gemini_response("You are welcome.")],
}


def _invocations(turns: list[list[Any]], stored: list[Any]) -> dict[str, Any]:
    """Each turn's events' invocation ids and the stored events', as ``inv-N`` by order of
    appearance (random on both sides), with each stored event's author."""
    seen: dict[str, str] = {}

    def named(value: str) -> str:
        return seen.setdefault(value, f"inv-{len(seen)}")

    return {"turns": [[named(e.invocation_id) for e in turn] for turn in turns],
            "stored": [(e.author, named(e.invocation_id)) for e in stored]}


@pytest.mark.parametrize("answered", list(ANSWERED))
def test_in_process_the_answering_turn_goes_on_in_the_answered_invocation(gemini: StubServer,  # noqa: F811
                                                                          answered: str) -> None:
    _, (their_turns, their_stored) = run_program(IN_PROCESS, ANSWERED[answered], gemini, answered)
    assert len(gemini.responses) == 0
    _, (our_turns, our_stored) = run_program(rewritten(IN_PROCESS), ANSWERED[answered], gemini, answered)
    assert len(gemini.responses) == 0
    theirs_seen, ours_seen = _invocations(their_turns, their_stored), _invocations(our_turns, our_stored)
    # google-adk: the answer (and every event of its turn, its user event too) in the
    # asking turn's invocation; the next text turn a new one
    first, second, third = theirs_seen["turns"]
    assert set(first) == set(second) == {"inv-0"} and set(third) == {"inv-1"}
    assert ours_seen == theirs_seen


def test_in_process_a_credential_answer_goes_on_in_the_asking_invocation(gemini: StubServer,  # noqa: F811
                                                                         provider: Any) -> None:  # noqa: F811
    """google-adk's rule holds for ``adk_request_credential`` too: the user signs in
    (tests/test_adk56_credential_request.py's program and OAuth2 provider), and the turn
    that answers with the ``AuthConfig`` goes on in the asking turn's invocation."""
    source = AUTH_PROGRAM.replace("credential_key=KEY", 'credential_key="who_api"')
    code = f"code-{uuid.uuid4().hex[:12]}"
    seen = []
    for text in (source, rewritten(source)):
        reset_provider(provider)
        _, result = run_program(text, [calls(("who_am_i", {})), gemini_response("You are user 1.")], gemini,
                                answer_with(provider, "config", code))
        assert len(gemini.responses) == 0 and result["seen"] == [None, True]
        seen.append(_invocations([result["first"], result["second"]], result["stored"]))
    theirs_seen, ours_seen = seen
    assert [set(turn) for turn in theirs_seen["turns"]] == [{"inv-0"}, {"inv-0"}]
    assert ours_seen == theirs_seen


def test_on_a_host_a_follower_of_an_answering_run_gets_that_run_only(actor_system: Any, tmp_path: Path) -> None:
    """On a host (a long-running tool's answer, tests/durable_agents.py): the answering
    run is recorded in the asking invocation, and ``Runner.follow`` of either run from
    its start gives that run's events alone, though both share one invocation."""
    from adk_actors._types import Content, FunctionResponse, Part
    from adk_actors.runtime import Host, HostConfig

    config = HostConfig(apps={"asker": "durable_agents:asking_app"}, data_dir=str(tmp_path / "data"))
    with Host(config, system=actor_system) as host:
        runner = host.runner("asker")
        runner.create_session("ann", "s1")
        asking = list(runner.run("ann", "s1", "may I?", run_id="run-asking"))
        [asked] = [c for e in asking if e.content is not None for c in e.content.function_calls]
        answer = Content(role="user", parts=(Part(function_response=FunctionResponse(
            id=asked.id, name=asked.name, response={"answer": "yes"})),))
        answering = list(runner.run("ann", "s1", answer, run_id="run-answering"))
        assert answering[-1].content is not None and answering[-1].content.text == "the manager said yes"
        assert {e.invocation_id for e in answering} == {asking[0].invocation_id}
        followed = list(runner.follow("ann", "s1", "run-answering"))
        assert [e.id for e in followed] == [e.id for e in answering if not e.partial]
        # and the asking run's follower, its own turn alone (the invocation's next turn is not its)
        followed = list(runner.follow("ann", "s1", "run-asking"))
        assert [e.id for e in followed] == [e.id for e in asking if not e.partial]
        last = runner.last_run("ann", "s1")
        assert last is not None and last.run_id == "run-answering"


TWO_ASKS = IN_PROCESS.replace('''async def main(answer_name):''', '''async def main_two(_):
    runner = InMemoryRunner(agent=root_agent, app_name="bank")
    session = await runner.session_service.create_session(app_name="bank", user_id="ann")
    asked = []
    for text in ("one", "two"):
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=types.Content(
                role="user", parts=[types.Part(text=text)])):
            asked += [c for c in event.get_function_calls() if c.name == "ask_manager"]
    reply = types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
        id=call.id, name=call.name, response={"status": "approved"})) for call in asked])
    try:
        async for _ in runner.run_async(user_id="ann", session_id=session.id, new_message=reply):
            pass
    except ValueError as error:
        stored = await runner.session_service.get_session(app_name="bank", user_id="ann", session_id=session.id)
        return str(error), len(stored.events)
    return None, None


async def main(answer_name):''')


def test_in_process_an_answer_to_calls_of_two_invocations_is_google_adks_value_error(
        gemini: StubServer) -> None:  # noqa: F811
    """Both runners refuse a message answering calls of two invocations with the same
    ``ValueError``, before anything is stored."""
    script = [calls(("ask_manager", {"purpose": "a trip"})), gemini_response("Filed."),
              calls(("ask_manager", {"purpose": "a desk"})), gemini_response("Filed too.")]
    raised = []
    for text in (TWO_ASKS, rewritten(TWO_ASKS)):
        _, (message, stored) = run_program(text, script, gemini, None, entry="main_two")
        assert len(gemini.responses) == 0
        raised.append((message, stored))
    (their_message, their_stored), (our_message, our_stored) = raised
    assert their_message is not None and their_message.startswith("Function responses resolve to multiple "
                                                                  "invocations: {")
    assert our_message is not None and our_message.split("{")[0] == their_message.split("{")[0]
    assert our_message.split("}")[-1] == their_message.split("}")[-1]
    assert our_stored == their_stored == 8  # two turns of four events each, the answer not stored
