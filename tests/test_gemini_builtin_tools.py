"""Gemini's own tools and code execution, side by side with google-adk 2.13 (issue 56).

Each case is a small google-adk program, run twice against ONE Gemini REST stand-in on
127.0.0.1 (``adk_actors.testing.StubServer``, reached through google-genai's
environment variables, see tests/google_adk_harness.py): as written, on google-adk;
with its imports rewritten (``google.adk`` -> ``adk_actors``), on ours.

Compared, per case: every request the stand-in received (its model path, its
contents, Gemini's own tool entries such as ``{"googleSearch": {}}`` in the order
sent, and the names of the functions it declares), and every event, by google-adk's
Event readers (the shared harness's rows) plus what Gemini's tools give back, in the
camelCase JSON both send over HTTP: the event's ``groundingMetadata`` and its
``executableCode`` / ``codeExecutionResult`` parts, and the artifacts each event
saved. Left out: the system instruction and the descriptions of declared functions
(their words differ by rule, see test_google_adk_parity), ids and timestamps (an image
artifact named by the local time is compared as ``<time>.png``), and the words of the
user turn each side adds after contents that end with the model's (compared as
``go_on``).

Code execution by the model (``BuiltInCodeExecutor``): only Gemini's tool is added;
the code parts come back on the answer and go back to the model; google-adk's empty
step event comes before each answer; an answer ending in a code result is not final
and the model is asked again; an image the code drew is saved as an artifact and
named in the answer; a streamed answer keeps its parts in order and its grounding.

Then google-adk's mixing rules, with the same outcome on both sides: a search tool
next to sub-agents on Gemini before 3 is a ValueError; on Gemini 3 both go in one
request; an agent whose only transfer targets are its parent and peers keeps its
search and loses ``transfer_to_agent``; ``bypass_multi_tools_limit`` puts the search
in an agent called as a function, whose grounding comes back on the caller's answer;
a model that is not Gemini's is refused; ``enterprise_web_search`` is refused on the
Gemini API (Vertex AI only). And a YAML agent with ``google_search``, loaded by each
side from the same file; the same agent served by a real ``adk-actors api_server``
process, whose ``/run`` events and stored session carry the grounding.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import google_adk_harness as harness
import httpx
import pytest
from google_adk_harness import _contents, _plain, calls, event_rows, rewritten, run_program
from live_stub import LiveServer, live_server

from adk_actors import AgentDefinitionError, Content, LlmAgent
from adk_actors._model_names import is_gemini_model, takes_builtin_tools_with_functions
from adk_actors._types import Event, LiveRequest, LlmRequest
from adk_actors.code_executors import BuiltInCodeExecutor
from adk_actors.engine import SessionView, load_agent_config, run_live_invocation
from adk_actors.models import GeminiModel
from adk_actors.models._gemini import GO_ON
from adk_actors.testing import StubResponse, StubServer, gemini_response
from adk_actors.tools import google_search
from supervision.lowlevel import free_port
from supervision.testing import kill_marked_processes, process_marker, wait_until

pytest.importorskip("google.adk")

from google.adk.agents import config_agent_utils  # google-adk: a dev dependency, skipped above
from google.adk.utils import model_name_utils

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

THEIR_GO_ON = ("Continue processing previous requests as instructed. Exit or provide a summary if no more "
               "outputs are needed.")  # google-adk's words for the turn after the model's, matched, not sent

# -- what is compared -----------------------------------------------------------------------


def _wire(value: Any) -> Any:
    """A pydantic value (google-genai's or ours) as the camelCase JSON sent over HTTP."""
    return None if value is None else _plain(value.model_dump(mode="json", by_alias=True, exclude_none=True))


_TIME = re.compile(r"\d{8}_\d{6}")  # an image artifact named by the local time, to the second


def rows(events: list[Any]) -> list[dict[str, Any]]:
    """The harness's rows, with each event's grounding and code-execution parts."""
    out = event_rows(events)
    for row, event in zip(out, events, strict=True):
        parts = (event.content.parts or []) if event.content is not None else []
        row["grounding"] = _wire(event.grounding_metadata)
        row["code"] = [_wire(p.executable_code) or {"result": _wire(p.code_execution_result)} for p in parts
                       if p.executable_code is not None or p.code_execution_result is not None]
        row["has_content"] = event.content is not None
        row["artifacts"] = sorted(event.actions.artifact_delta or {})
    return json.loads(_TIME.sub("<time>", json.dumps(out)))


def _go_on(contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The contents, the user turn each side adds after contents ending with the
    model's (in its own words: google-adk's, or GO_ON) marked as such."""
    if len(contents) > 1 and contents[-2].get("role") == "model" and contents[-1].get("role") == "user":
        text = "".join(p.get("text", "") for p in contents[-1].get("parts", []))
        if text in (GO_ON, THEIR_GO_ON):
            return [*contents[:-1], {"role": "user", "go_on": True}]
    return contents


def requests(server: StubServer) -> list[dict[str, Any]]:
    """Each request as the model reads it: model path, contents, Gemini's own tool
    entries in the order sent, and the names of the declared functions."""
    out = []
    for request in server.requests:
        tools = request.body.get("tools", [])
        out.append({"path": request.path.split("?")[0], "contents": _go_on(_contents(request.body["contents"])),
                    "builtin": [t for t in tools if "functionDeclarations" not in t],
                    "functions": sorted(d["name"] for t in tools for d in t.get("functionDeclarations", []))})
    return json.loads(_TIME.sub("<time>", json.dumps(out)))


def both(source: str, answers: list[StubResponse], turns: list[str], server: StubServer) -> dict[str, Any]:
    """Run ``source``'s ``main(turns)`` on google-adk, then on ours; assert the same
    requests and events, and that each used the whole script. google-adk's result."""
    results = []
    for program in (source, rewritten(source)):
        _, events = run_program(program, answers, server, turns)
        results.append({"events": rows(events), "requests": requests(server), "unused": len(server.responses)})
    theirs, ours = results
    assert theirs["unused"] == 0, "the case must use its script on google-adk"
    assert ours["requests"] == theirs["requests"]
    assert ours["events"] == theirs["events"]
    assert ours["unused"] == 0
    return theirs


def raised(source: str, server: StubServer) -> tuple[BaseException, BaseException]:
    """The exception ``main(["hi"])`` raises on google-adk, and on ours."""
    found = []
    for program in (source, rewritten(source)):
        with pytest.raises(Exception) as info:  # which one: compared below
            run_program(program, [gemini_response("unused")], server, ["hi"])
        found.append(info.value)
    return found[0], found[1]


def answer(parts: list[dict[str, Any]], grounding: dict[str, Any] | None = None) -> StubResponse:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
    if grounding is not None:
        candidate["groundingMetadata"] = grounding
    return StubResponse(json={"candidates": [candidate], "modelVersion": "gemini-test",
                              "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                                                "totalTokenCount": 15}})


SEARCH_GROUNDING = {
    "webSearchQueries": ["weather in Paris today"],
    "searchEntryPoint": {"renderedContent": "<div class=\"chips\">weather in Paris today</div>"},
    "groundingChunks": [{"web": {"uri": "https://example.org/paris", "title": "example.org"}},
                        {"web": {"uri": "https://example.net/meteo", "title": "example.net"}}],
    "groundingSupports": [{"segment": {"startIndex": 0, "endIndex": 24, "text": "Paris is sunny, 21 degrees"},
                           "groundingChunkIndices": [0, 1], "confidenceScores": [0.9, 0.7]}],
}

# -- the programs ---------------------------------------------------------------------------

RUN = '''
async def main(turns):
    runner = InMemoryRunner(agent=root_agent, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="ann")
    seen = []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
    await runner.close()
    return seen
'''

HEAD = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types
'''

SEARCH = HEAD + '''
from google.adk.tools import google_search

root_agent = Agent(name="searcher", model="gemini-2.5-flash", instruction="Answer with Google Search.",
                   tools=[google_search])
''' + RUN


def test_google_search_is_sent_as_geminis_tool_and_its_grounding_comes_back_on_the_event(gemini: StubServer) -> None:
    theirs = both(SEARCH, [answer([{"text": "Paris is sunny, 21 degrees."}], SEARCH_GROUNDING),
                           gemini_response("Still sunny.")], ["Weather in Paris?", "And now?"], gemini)
    assert theirs["requests"][0]["builtin"] == [{"googleSearch": {}}]
    assert theirs["requests"][0]["functions"] == []
    assert theirs["events"][0]["grounding"]["webSearchQueries"] == ["weather in Paris today"]
    assert theirs["events"][0]["final"] and theirs["events"][1]["grounding"] is None


ONE_TOOL = HEAD + '''
from google.adk.tools import {name}

root_agent = Agent(name="grounded", model="gemini-2.5-flash", instruction="Answer.", tools=[{name}])
''' + RUN


@pytest.mark.parametrize(("name", "entry", "grounding"), [
    ("url_context", {"urlContext": {}},
     {"groundingChunks": [{"web": {"uri": "https://example.org/a", "title": "A page"}}]}),
    ("google_maps_grounding", {"googleMaps": {}},
     {"groundingChunks": [{"maps": {"uri": "https://maps.example/p/1", "title": "Cafe", "placeId": "p1"}}],
      "googleMapsWidgetContextToken": "widget-token"}),
])
def test_each_of_geminis_tools_is_its_own_entry(gemini: StubServer, name: str, entry: dict[str, Any],
                                                grounding: dict[str, Any]) -> None:
    theirs = both(ONE_TOOL.format(name=name), [answer([{"text": "Found it."}], grounding)], ["Look it up"], gemini)
    assert theirs["requests"][0]["builtin"] == [entry]
    assert theirs["events"][0]["grounding"] == grounding


def test_enterprise_web_search_is_refused_on_the_gemini_api_by_both(gemini: StubServer) -> None:
    """google-genai refuses it in the Gemini API's mode (Vertex AI only); ours refuses it
    in the same place, the model call, whose error ends the run (``ModelRaised`` naming
    the InvalidRequestError, as any model error does here)."""
    theirs, ours = raised(ONE_TOOL.format(name="enterprise_web_search"), gemini)
    assert isinstance(theirs, ValueError)
    assert type(ours).__name__ == "ModelRaised" and ours.error_type == "InvalidRequestError"  # type: ignore[attr-defined]
    for error in (theirs, ours):
        assert "enterprise_web_search" in str(error)
    assert not gemini.requests


CODE = HEAD + '''
from google.adk.code_executors import BuiltInCodeExecutor

root_agent = Agent(name="calculator", model="gemini-2.5-flash", instruction="Compute with code.",
                   code_executor=BuiltInCodeExecutor())
''' + RUN

CODE_PARTS = [{"text": "Let me compute it."},
              {"executableCode": {"language": "PYTHON", "code": "print(sum(range(10)))"}},
              {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "45\n"}},
              {"text": "The sum is 45."}]


def test_built_in_code_execution_adds_only_geminis_tool_and_its_parts_come_back(gemini: StubServer) -> None:
    theirs = both(CODE, [answer(CODE_PARTS), answer([{"text": "Yes, 45."}])], ["Sum 0..9?", "Sure?"], gemini)
    first, second = theirs["requests"]
    assert first["builtin"] == [{"codeExecution": {}}] and first["functions"] == []
    assert second["contents"][1]["parts"] == CODE_PARTS  # the run goes back to the model as it came
    answer_event = theirs["events"][1]
    assert answer_event["code"] == [CODE_PARTS[1]["executableCode"],
                                    {"result": CODE_PARTS[2]["codeExecutionResult"]}]
    assert answer_event["final"] and not answer_event["trailing_code_result"]
    assert not theirs["events"][0]["has_content"]  # google-adk's step event before the answer's


CODE_AND_SEARCH = HEAD + '''
from google.adk.code_executors import BuiltInCodeExecutor
from google.adk.tools import google_search, url_context

root_agent = Agent(name="analyst", model="gemini-2.5-flash", instruction="Search and compute.",
                   tools=[google_search, url_context], code_executor=BuiltInCodeExecutor())
''' + RUN


def test_code_execution_and_two_search_tools_go_in_one_request_in_google_adks_order(gemini: StubServer) -> None:
    theirs = both(CODE_AND_SEARCH, [answer(CODE_PARTS, SEARCH_GROUNDING)], ["Compute"], gemini)
    assert theirs["requests"][0]["builtin"] == [{"codeExecution": {}}, {"googleSearch": {}}, {"urlContext": {}}]


# -- mixing with function calling -------------------------------------------------------------

WITH_SUB_AGENT = HEAD + '''
from google.adk.tools import google_search

helper = Agent(name="helper", model="{model}", instruction="Help.", description="Helps.")
root_agent = Agent(name="searcher", model="{model}", instruction="Search.", tools=[google_search],
                   sub_agents=[helper])
''' + RUN


def test_search_with_sub_agents_on_gemini_2_is_refused_on_both_sides(gemini: StubServer) -> None:
    theirs, ours = raised(WITH_SUB_AGENT.format(model="gemini-2.5-flash"), gemini)
    assert isinstance(theirs, ValueError) and isinstance(ours, ValueError)
    for error in (theirs, ours):
        assert "bypass_multi_tools_limit" in str(error) and "searcher" in str(error)
    assert not gemini.requests  # refused before any model call


def test_search_with_sub_agents_on_gemini_3_goes_in_one_request(gemini: StubServer) -> None:
    theirs = both(WITH_SUB_AGENT.format(model="gemini-3-pro-preview"),
                  [answer([{"text": "Found."}], SEARCH_GROUNDING)], ["Find"], gemini)
    assert theirs["requests"][0]["builtin"] == [{"googleSearch": {}}]
    assert theirs["requests"][0]["functions"] == ["transfer_to_agent"]


SEARCHING_CHILD = HEAD + '''
from google.adk.tools import google_search

searcher = Agent(name="searcher", model="gemini-2.5-flash", instruction="Search.", description="Searches.",
                 tools=[google_search])
root_agent = Agent(name="front", model="gemini-2.5-flash", instruction="Route.", sub_agents=[searcher])
''' + RUN


def test_a_searching_sub_agent_keeps_its_search_and_has_no_transfer_back(gemini: StubServer) -> None:
    theirs = both(SEARCHING_CHILD, [calls(("transfer_to_agent", {"agent_name": "searcher"})),
                                    answer([{"text": "Sunny."}], SEARCH_GROUNDING)], ["Weather?"], gemini)
    front, searcher = theirs["requests"]
    assert front["functions"] == ["transfer_to_agent"] and front["builtin"] == []
    assert searcher["functions"] == [] and searcher["builtin"] == [{"googleSearch": {}}]


BYPASS = HEAD + '''
from google.adk.tools.google_search_tool import GoogleSearchTool

def get_time(city: str) -> dict:
    """The local time in a city."""
    return {"city": city, "time": "10:30"}

root_agent = Agent(name="assistant", model="gemini-2.5-flash", instruction="Help.",
                   tools=[GoogleSearchTool(bypass_multi_tools_limit=True), get_time])
''' + RUN


def test_bypass_multi_tools_limit_searches_in_an_agent_called_as_a_function(gemini: StubServer) -> None:
    theirs = both(BYPASS, [calls(("google_search_agent", {"request": "weather in Paris"})),
                           answer([{"text": "Sunny in Paris."}], SEARCH_GROUNDING),
                           gemini_response("It is sunny in Paris."), gemini_response("You are welcome.")],
                  ["Weather in Paris?", "Thanks"], gemini)
    outer, inner, again, _ = theirs["requests"]
    assert outer["functions"] == ["get_time", "google_search_agent"] and outer["builtin"] == []
    assert inner["builtin"] == [{"googleSearch": {}}] and inner["functions"] == []
    assert inner["contents"] == [{"role": "user", "parts": [{"text": "weather in Paris"}]}]
    assert again["contents"][-1]["parts"][0]["functionResponse"]["response"] == {"result": "Sunny in Paris."}
    final, next_turn = theirs["events"][-2:]
    assert final["final"] and final["text"] == "It is sunny in Paris."
    assert final["grounding"]["webSearchQueries"] == ["weather in Paris today"]  # the search's, propagated
    assert next_turn["text"] == "You are welcome." and next_turn["grounding"] is None  # for that invocation only


NOT_GEMINI = HEAD + '''
from google.adk.tools.google_search_tool import GoogleSearchTool

root_agent = Agent(name="searcher", model="gemini-2.5-flash", instruction="Search.",
                   tools=[GoogleSearchTool(model="gpt-4o")])
''' + RUN


def test_a_model_that_is_not_geminis_is_refused_geminis_tools(gemini: StubServer) -> None:
    theirs, ours = raised(NOT_GEMINI, gemini)
    assert isinstance(theirs, ValueError) and isinstance(ours, ValueError)
    for error in (theirs, ours):
        assert "gpt-4o" in str(error)
    assert not gemini.requests


# -- YAML -----------------------------------------------------------------------------------

YAML_RUN = HEAD + RUN.replace("async def main(turns):", "async def main(turns, root_agent):")


def test_a_yaml_agent_with_google_search_runs_the_same_on_both_sides(gemini: StubServer, tmp_path: Path) -> None:
    path = tmp_path / "app" / "root_agent.yaml"
    path.parent.mkdir()
    path.write_text("agent_class: LlmAgent\nname: yaml_searcher\nmodel: gemini-2.5-flash\n"
                    "instruction: Answer with Google Search.\ntools:\n  - name: google_search\n")
    found = []
    for program, agent in ((YAML_RUN, config_agent_utils.from_config(str(path))),
                           (rewritten(YAML_RUN), load_agent_config(path))):
        _, events = run_program(program, [answer([{"text": "Sunny."}], SEARCH_GROUNDING)], gemini, ["Weather?"], agent)
        found.append({"events": rows(events), "requests": requests(gemini), "unused": len(gemini.responses)})
    theirs, ours = found
    assert theirs["unused"] == ours["unused"] == 0
    assert ours == theirs
    assert theirs["requests"][0]["builtin"] == [{"googleSearch": {}}]
    assert theirs["events"][0]["grounding"] == SEARCH_GROUNDING


def test_a_served_yaml_agent_gives_the_grounding_over_http_and_keeps_it_in_the_session(tmp_path: Path) -> None:
    """A real ``adk-actors api_server`` process (its actors, its store) serving a YAML
    agent with ``google_search``; the stand-in gets Gemini's tool entry, and the answer's
    grounding comes back in ``/run``'s events and in the stored session, camelCase."""
    agents = tmp_path / "agents"
    (agents / "finder").mkdir(parents=True)
    (agents / "finder" / "root_agent.yaml").write_text(
        "name: finder\nmodel: gemini-2.5-flash\ninstruction: Search.\ntools:\n  - name: google_search\n")
    port, admin = free_port(), free_port()
    with StubServer() as stub, process_marker(tmp_path) as (marker, fd), \
            open(tmp_path / "out", "w") as out, open(tmp_path / "err", "w") as err:
        stub.add(answer([{"text": "Paris is sunny, 21 degrees."}], SEARCH_GROUNDING))
        env = {k: v for k, v in os.environ.items() if "GEMINI" not in k and "GOOGLE" not in k}
        process = subprocess.Popen(
            [sys.executable, "-m", "adk_actors.cli", "api_server", str(agents), "--port", str(port),
             "--admin_port", str(admin)], cwd=tmp_path, stdout=out, stderr=err, pass_fds=(fd,),
            env={**env, "GEMINI_API_KEY": "test-key-not-a-secret", "GEMINI_BASE_URL": stub.url,
                 "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
        try:
            wait_until(lambda: "watching" in (tmp_path / "out").read_text() or process.poll() is not None, timeout=90)
            assert process.poll() is None, (tmp_path / "err").read_text()
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
                http.post("/apps/finder/users/ann/sessions/s1", json={}).raise_for_status()
                ran = http.post("/run", json={"appName": "finder", "userId": "ann", "sessionId": "s1",
                                              "newMessage": {"role": "user", "parts": [{"text": "Weather?"}]}})
                ran.raise_for_status()
                stored = http.get("/apps/finder/users/ann/sessions/s1").json()["events"]
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
            kill_marked_processes(marker, grace=15)
        (request,) = stub.requests
    assert request.body["tools"] == [{"googleSearch": {}}]
    assert ran.json()[-1]["groundingMetadata"] == SEARCH_GROUNDING
    assert stored[-1]["groundingMetadata"] == SEARCH_GROUNDING


def test_a_yaml_tool_name_that_is_not_built_in_is_refused_naming_the_built_ins(tmp_path: Path) -> None:
    path = tmp_path / "app" / "root_agent.yaml"
    path.parent.mkdir()
    path.write_text("agent_class: LlmAgent\nname: a\nmodel: gemini-2.5-flash\ntools:\n  - name: google_serch\n")
    with pytest.raises(AgentDefinitionError, match=r"google_serch.*google_search"):
        load_agent_config(path)


def test_an_answer_ending_in_a_code_result_is_not_final_and_the_model_is_asked_again(gemini: StubServer) -> None:
    theirs = both(CODE, [answer(CODE_PARTS[:3]), answer([{"text": "The sum is 45."}])], ["Sum 0..9?"], gemini)
    assert [e["trailing_code_result"] for e in theirs["events"] if e["has_content"]] == [True, False]
    assert len(theirs["requests"]) == 2
    assert theirs["requests"][1]["contents"][-1] == {"role": "user", "go_on": True}
    assert theirs["events"][-1]["final"] and theirs["events"][-1]["text"] == "The sum is 45."


STREAMED = HEAD + '''
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.code_executors import BuiltInCodeExecutor
from google.adk.tools import google_search

root_agent = Agent(name="streamer", model="gemini-2.5-flash", instruction="Search and compute.",
                   tools=[google_search], code_executor=BuiltInCodeExecutor())
''' + RUN.replace("new_message=message)", "new_message=message, run_config=SSE)") + '''
SSE = RunConfig(streaming_mode=StreamingMode.SSE)
'''


def _chunk(parts: list[dict[str, Any]], **candidate: Any) -> str:
    return "data: " + json.dumps({"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0, **candidate}],
                                  "modelVersion": "gemini-test"})


def test_a_streamed_answer_keeps_its_code_parts_in_order_and_its_grounding(gemini: StubServer) -> None:
    stream = StubResponse(sse=[
        _chunk([{"text": "Let me "}]),
        _chunk([{"text": "compute it."}, CODE_PARTS[1]]),
        _chunk([CODE_PARTS[2], {"text": "The sum is 45."}], finishReason="STOP", groundingMetadata=SEARCH_GROUNDING),
    ])
    theirs = both(STREAMED, [stream], ["Sum 0..9?"], gemini)
    assert "streamGenerateContent" in theirs["requests"][0]["path"]
    final = theirs["events"][-1]
    assert not final["partial"] and final["final"] and final["text"] == "Let me compute it.The sum is 45."
    assert final["code"] == [CODE_PARTS[1]["executableCode"], {"result": CODE_PARTS[2]["codeExecutionResult"]}]
    assert final["grounding"] == SEARCH_GROUNDING


IMAGE = base64.b64encode(b"\x89PNG\r\n\x1a\n not really a chart").decode()


DRAWING = HEAD + '''
from google.adk.code_executors import BuiltInCodeExecutor

SAVED = {}

async def keep_artifacts(callback_context):
    for name in await callback_context.list_artifacts():
        SAVED[name] = (await callback_context.load_artifact(name)).inline_data.data

root_agent = Agent(name="calculator", model="gemini-2.5-flash", instruction="Compute with code.",
                   code_executor=BuiltInCodeExecutor(), after_agent_callback=keep_artifacts)
''' + RUN


def test_an_image_the_models_code_drew_is_saved_as_an_artifact_and_named_in_the_answer(gemini: StubServer) -> None:
    drawn = answer([CODE_PARTS[1], CODE_PARTS[2], {"inlineData": {"mimeType": "image/png", "data": IMAGE}},
                    {"text": "Here is the chart."}])
    theirs = both(DRAWING, [drawn, gemini_response("It shows 45.")], ["Chart it", "What does it show?"], gemini)
    for program in (DRAWING, rewritten(DRAWING)):
        namespace, _ = run_program(program, [drawn], gemini, ["Chart it"])
        assert list(namespace["SAVED"].values()) == [base64.b64decode(IMAGE)]  # the bytes, as the model sent them
    step, shown = theirs["events"][0], theirs["events"][1]
    assert step["artifacts"] == ["<time>.png"] and not step["has_content"]
    assert shown["text"] == "Saved as artifact: <time>.png. Here is the chart."
    told = theirs["requests"][1]["contents"][1]["parts"]
    assert {"text": "Saved as artifact: <time>.png. "} in told  # the model reads the name, not the bytes
    assert "inlineData" not in json.dumps(told)


@pytest.mark.parametrize("model", [
    "gemini-2.5-flash", "models/gemini-2.0-flash", "gemini-3-pro-preview", "gemini-3.1-flash", "gemini-10-ultra",
    "projects/p/locations/us-central1/publishers/google/models/gemini-3-pro", "gemini/gemini-2.5-pro",
    "apigee/gemini-3-flash", "gemini-exp-1206", "gpt-4o", "claude-sonnet-4", "", "projects/bad/gemini-3",
])
def test_model_names_are_read_by_google_adks_rules(model: str) -> None:
    assert is_gemini_model(model) == model_name_utils.is_gemini_model(model)
    assert takes_builtin_tools_with_functions(model) == model_name_utils._supports_builtin_tools_with_function_calling(model)


def test_the_model_check_can_be_switched_off_as_in_google_adk(monkeypatch: pytest.MonkeyPatch) -> None:
    request = LlmRequest(model="my-tuned-model")
    with pytest.raises(ValueError, match="my-tuned-model"):
        BuiltInCodeExecutor().process_llm_request(request)
    monkeypatch.setenv("ADK_DISABLE_GEMINI_MODEL_ID_CHECK", "true")
    BuiltInCodeExecutor().process_llm_request(request)
    assert request.builtin_tools == [{"codeExecution": {}}]


def test_a_live_conversation_sets_up_geminis_tools() -> None:
    """Ours only (google-adk's live side-by-side is test_live_google_adk): the Live API
    setup carries ``googleSearch`` and the conversation goes on. (The grounding a live
    model sends is not read yet.)"""

    def reply(message: dict[str, Any]) -> list[dict[str, Any]]:
        if "clientContent" in message and message["clientContent"].get("turnComplete"):
            return [{"serverContent": {"modelTurn": {"parts": [{"text": "Sunny in Paris."}]}}},
                    {"serverContent": {"turnComplete": True}}]
        return []

    server = LiveServer(reply)

    async def scenario() -> list[Event]:
        async with live_server(server) as base_url:
            model = GeminiModel("gemini-live-2.5-flash", base_url=base_url, api_key="live-key-0123456789abcdef")
            agent = LlmAgent(name="voice", model=model, instruction="Search.", tools=[google_search])
            inputs: asyncio.Queue[LiveRequest] = asyncio.Queue()
            inputs.put_nowait(LiveRequest(content=Content.user("Weather in Paris?")))
            events: list[Event] = []
            async for event in run_live_invocation(agent, SessionView(), inputs):
                events.append(event)
                if event.turn_complete:
                    inputs.put_nowait(LiveRequest(close=True))
            return events

    events = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert server.received[0]["setup"]["tools"] == [{"googleSearch": {}}]
    assert any(e.content and e.content.text == "Sunny in Paris." for e in events)
