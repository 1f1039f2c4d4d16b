"""google-adk's tool confirmation flow over the google-adk HTTP API (issue 52), on a real
host (``adk-actors serve``) and side by side with google-adk 2.13's own app
(``get_fast_api_app``, what ``adk api_server`` serves) on uvicorn, both on 127.0.0.1
ports, both against one Gemini REST stand-in named by environment variables only.

A tool that calls ``tool_context.request_confirmation(hint=, payload=)``: ``/run_sse``
(and ``/run``) shows its ``adk_request_confirmation`` long-running call; the client
answers as adk-web does, with a new message whose part is a function response named
``adk_request_confirmation`` (``{"response": "<json>"}``, adk-web's form, or the plain
``confirmed`` / ``payload`` fields); the original call runs again with
``tool_context.tool_confirmation`` set. Compared on both servers: every event of both
turns (authors, contents, actions, long-running ids; call ids and invocation ids by
order of appearance; event ids, timestamps, usage and ``nodeInfo`` left out, see
``_VOLATILE``), the session's final state, and the model requests. The answering turn
goes on in the invocation of the call it answers, as google-adk's does: every event
of it (the user's answer too) carries the asking event's ``invocationId``. The answer also
works after a kill -9 of every process of the host (a new host on the same data); an
answering turn whose run worker is killed mid-way is resumed by the host from its own
user event of the shared invocation; and an answer to no request is google-adk's
``ValueError`` as the stream's error line, word for word.

A tool made with ``FunctionTool(require_confirmation=True)`` on a host keeps the seeds'
blocking approval (every host has an approval service): the stream shows the call, the
run waits, and the client decides through ``GET /apps/{app}/users/{user}/approvals``
and ``POST .../approvals/{id}`` (``{"approve": bool, "reason"?}``); the stream then goes
on with the tool's result. google-adk asks through ``adk_request_confirmation`` instead
(docs/design.md says why ours differs).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import serving
from google_adk_harness import (
    calls,
    gemini_by_environment,
    google_adk_api_server,
    request_rows,
    rewritten,
)

from adk_actors.testing import StubResponse, StubServer, gemini_response
from supervision.testing import wait_until

pytest.importorskip("google.adk")
# a module's first test starts both servers, the kill test two hosts: minutes on a loaded machine
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"), pytest.mark.timeout(300)]

TESTS = Path(__file__).parent
CONFIRM = "adk_request_confirmation"

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.tools import FunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types


async def transfer(amount: int, tool_context: ToolContext) -> dict:
    """Moves money."""
    confirmation = tool_context.tool_confirmation
    if confirmation is None:
        tool_context.request_confirmation(hint="Approve the transfer?", payload={"limit": 0})
        return {"status": "waiting"}
    if not confirmation.confirmed:
        return {"status": "rejected"}
    tool_context.state["moved"] = amount
    await tool_context.save_artifact("receipt.txt", types.Part(text=f"moved {amount}"))
    return {"status": "done", "limit": (confirmation.payload or {}).get("limit")}


def pay(amount: int, tool_context: ToolContext) -> dict:
    """Pays a bill."""
    tool_context.state["paid"] = amount
    return {"status": "paid"}


root_agent = Agent(name="bank", model="gemini-2.5-flash", instruction="Move money when asked.", tools=[transfer])
gated_agent = Agent(name="bank", model="gemini-2.5-flash", instruction="Pay bills when asked.",
                    tools=[FunctionTool(pay, require_confirmation=True)])
'''


@pytest.fixture(scope="module")
def stand_in() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


@pytest.fixture(scope="module")
def environment(stand_in: StubServer) -> Iterator[dict[str, str]]:
    """google-genai's own variables naming the stand-in, for both servers (google-adk's
    runs in this process, ours is given them in its environment)."""
    with gemini_by_environment(stand_in.url) as names:
        yield names


@pytest.fixture(scope="module")
def theirs(tmp_path_factory: pytest.TempPathFactory, environment: dict[str, str]) -> Iterator[httpx.Client]:
    """google-adk's FastAPI app (``adk api_server``'s routes) on uvicorn, on a free
    loopback port, serving the program as apps ``bank`` and ``gated``."""
    with google_adk_api_server(tmp_path_factory.mktemp("agents"), PROGRAM,
                               {"bank": "root_agent", "gated": "gated_agent"}) as http:
        yield http


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory, environment: dict[str, str]) -> Iterator[httpx.Client]:
    """A real host (``adk-actors serve``) serving the program with its imports rewritten."""
    base = tmp_path_factory.mktemp("ours")
    (base / "adk52_confirm_http.py").write_text(rewritten(PROGRAM))
    apps = 'bank = "adk52_confirm_http:root_agent"\ngated = "adk52_confirm_http:gated_agent"\n'
    with serving(base, apps=apps, env={**environment, "PYTHONPATH": os.pathsep.join([str(TESTS), str(base)])}) \
            as served, httpx.Client(base_url=served["url"], timeout=60) as http:
        yield http


# -- one conversation over HTTP -----------------------------------------------------------


def _stream(http: httpx.Client, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of one ``/run_sse`` (each ``data:`` line) or ``/run`` (the list)."""
    answer = http.post(path, json=body)
    assert answer.status_code == 200, answer.text
    if path == "/run":
        events: list[dict[str, Any]] = answer.json()
        return events
    assert answer.headers["content-type"].startswith("text/event-stream")
    found = [json.loads(line[len("data: "):]) for line in answer.text.split("\n\n") if line.startswith("data: ")]
    assert all("error" not in event for event in found), found
    return found


def _asked(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The ``adk_request_confirmation`` call of a turn's events (None: none)."""
    for event in events:
        for part in (event.get("content") or {}).get("parts", []):
            call = part.get("functionCall")
            if call and call["name"] == CONFIRM:
                assert call["id"] in event["longRunningToolIds"], "the request is long-running"
                return dict(call)
    return None


def converse(http: httpx.Client, server: StubServer, script: list[StubResponse], app: str, session: str,
             answer: dict[str, Any] | None, path: str = "/run_sse", *, as_adk_web: bool = False) -> dict[str, Any]:
    """A session made over HTTP, the user's message, and (when ``answer``) the answer to
    the confirmation asked (``as_adk_web``: with the asking event's id as
    ``functionCallEventId``, as adk-web sends it): both turns' events, the request, the
    session as stored, the model requests."""
    with server._lock:
        server.requests.clear()
        server.responses.clear()
    server.add(*script)
    made = http.post(f"/apps/{app}/users/ann/sessions", json={"sessionId": session})
    assert made.status_code == 200, made.text
    body = {"appName": app, "userId": "ann", "sessionId": session, "streaming": False, "stateDelta": None}
    first = _stream(http, path, {**body, "newMessage": {"role": "user", "parts": [{"text": "send money"}]}})
    asked, second = _asked(first), []
    if asked is not None and answer is not None:
        reply = {"role": "user", "parts": [{"functionResponse": {"id": asked["id"], "name": CONFIRM,
                                                                 "response": answer}}]}
        asking = next(e["id"] for e in first if _asked([e]) is not None)
        second = _stream(http, path, {**body, "newMessage": reply,
                                      **({"functionCallEventId": asking} if as_adk_web else {})})
    stored = http.get(f"/apps/{app}/users/ann/sessions/{session}").json()
    return {"first": first, "second": second, "asked": asked, "stored": stored, "requests": request_rows(server),
            "unused": len(server.responses)}


#: what differs by nature between two runs (ids, times, usage), and a known
#: difference (docs/design.md): google-adk's ``nodeInfo`` (none on an LlmAgent's
#: events here)
_VOLATILE = {"id", "timestamp", "usageMetadata", "modelVersion", "nodeInfo"}


def rows(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events as compared: volatile fields out, function-call ids (random on both sides)
    as ``call-N`` by order of appearance, wherever they are named, and invocation ids
    (random too) as ``inv-N`` by order of appearance."""
    seen: dict[str, str] = {}
    invocations: dict[str, str] = {}

    def numbered(event: dict[str, Any]) -> dict[str, Any]:
        if "invocationId" not in event:
            return event
        return {**event, "invocationId": invocations.setdefault(event["invocationId"], f"inv-{len(invocations)}")}

    def named(value: Any) -> Any:
        if isinstance(value, str) and value.startswith("adk-"):
            return seen.setdefault(value, f"call-{len(seen)}")
        if isinstance(value, dict):
            return {named(k) if isinstance(k, str) else k: named(v) for k, v in value.items()}
        if isinstance(value, list):
            return [named(v) for v in value]
        return value

    return [named(numbered({k: v for k, v in event.items() if k not in _VOLATILE})) for event in events]


def both(theirs: httpx.Client, ours: httpx.Client, server: StubServer, script: list[StubResponse],
         answer: dict[str, Any] | None, session: str, path: str = "/run_sse",
         as_adk_web: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    their_run = converse(theirs, server, script, "bank", session, answer, path, as_adk_web=as_adk_web)
    assert their_run["unused"] == 0, "the case must use its script on google-adk"
    our_run = converse(ours, server, script, "bank", session, answer, path, as_adk_web=as_adk_web)
    return their_run, our_run


def assert_same(their_run: dict[str, Any], our_run: dict[str, Any]) -> None:
    assert rows(our_run["first"]) == rows(their_run["first"])
    assert rows(our_run["second"]) == rows(their_run["second"])
    assert rows(our_run["stored"]["events"]) == rows(their_run["stored"]["events"])
    assert our_run["stored"]["state"] == their_run["stored"]["state"]
    assert our_run["requests"] == their_run["requests"]
    assert our_run["unused"] == their_run["unused"] == 0


SCRIPT = [calls(("transfer", {"amount": 5})), gemini_response("Waiting for approval."), gemini_response("Sent.")]


@pytest.mark.parametrize(("answer", "as_adk_web"), [
    pytest.param({"response": json.dumps({"confirmed": True, "payload": {"limit": 9}})}, True, id="adk-web's answer"),
    pytest.param({"confirmed": True, "payload": {"limit": 9}}, False, id="plain fields"),
])
def test_a_tool_that_asks_is_answered_as_adk_web_answers(theirs: httpx.Client, ours: httpx.Client,
                                                         stand_in: StubServer, answer: dict[str, Any],
                                                         as_adk_web: bool) -> None:
    """adk-web's answer names the asking event (``functionCallEventId``): google-adk then
    streams an event with content and ``artifactDelta`` once, not split in two; without
    it, split (the receipt the confirmed call saves shows which)."""
    session = f"s-{as_adk_web}"
    their_run, our_run = both(theirs, ours, stand_in, SCRIPT, answer, session, as_adk_web=as_adk_web)
    asked = their_run["asked"]
    assert asked is not None and asked["args"]["originalFunctionCall"]["name"] == "transfer"
    assert asked["args"]["toolConfirmation"] == {"hint": "Approve the transfer?", "confirmed": False,
                                                 "payload": {"limit": 0}}
    # the original call ran again with the confirmation: its result and state in the second turn
    assert _responses(their_run["second"])[0] == {"name": "transfer", "response": {"status": "done", "limit": 9}}
    assert their_run["stored"]["state"] == {"moved": 5}
    deltas = [e["actions"]["artifactDelta"] for e in their_run["second"] if e["actions"]["artifactDelta"]]
    assert deltas == [{"receipt.txt": 0}]
    assert sum(1 for e in their_run["second"] if "content" not in e) == (0 if as_adk_web else 1)
    assert_same(their_run, our_run)
    # the answer goes on in the asking invocation: every event of the second turn, and
    # the stored answer, carry the asking event's invocation id, on both
    for run in (their_run, our_run):
        assert_answered_in_the_asking_invocation(run)


def assert_answered_in_the_asking_invocation(run: dict[str, Any]) -> None:
    asking = next(e["invocationId"] for e in run["first"] if _asked([e]) is not None)
    assert {e["invocationId"] for e in run["first"]} == {asking}
    assert run["second"] and {e["invocationId"] for e in run["second"]} == {asking}, run["second"]
    answers = [e for e in run["stored"]["events"] if e["author"] == "user"
               and any("functionResponse" in p for p in (e.get("content") or {}).get("parts", []))]
    assert [e["invocationId"] for e in answers] == [asking]


def test_a_rejection_over_run(theirs: httpx.Client, ours: httpx.Client, stand_in: StubServer) -> None:
    their_run, our_run = both(theirs, ours, stand_in, SCRIPT, {"confirmed": False}, "s-rejected", path="/run")
    assert their_run["stored"]["state"] == {}
    assert {"name": "transfer", "response": {"status": "rejected"}} in _responses(their_run["second"])
    assert_same(their_run, our_run)
    for run in (their_run, our_run):
        assert_answered_in_the_asking_invocation(run)


def test_an_unanswered_request_leaves_the_session_as_google_adks(theirs: httpx.Client, ours: httpx.Client,
                                                                stand_in: StubServer) -> None:
    their_run, our_run = both(theirs, ours, stand_in, SCRIPT[:2], None, "s-unanswered")
    assert their_run["asked"] is not None and their_run["second"] == []
    assert_same(their_run, our_run)


# -- require_confirmation on a host: the seeds' blocking approval, decided over HTTP ------

GATED = [calls(("pay", {"amount": 5})), gemini_response("Paid.")]


def _pending(http: httpx.Client, session: str) -> list[dict[str, Any]]:
    answer = http.get("/apps/gated/users/ann/approvals")
    assert answer.status_code == 200, answer.text
    return [a for a in answer.json() if a["sessionId"] == session and a["status"] == "pending"]


def _calls(events: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [(p["functionCall"]["name"], p["functionCall"]["args"]) for e in list(events)
            for p in (e.get("content") or {}).get("parts", []) if "functionCall" in p]


def _held_run(http: httpx.Client, server: StubServer, session: str, decision: dict[str, Any]) -> dict[str, Any]:
    """``/run_sse`` of the gated app on a thread of its own (the run waits for the
    approval); the pending approval found and decided over HTTP; the stream's events."""
    with server._lock:
        server.requests.clear()
        server.responses.clear()
    server.add(*GATED)
    assert http.post("/apps/gated/users/ann/sessions", json={"sessionId": session}).status_code == 200
    body = {"appName": "gated", "userId": "ann", "sessionId": session, "streaming": False,
            "newMessage": {"role": "user", "parts": [{"text": "pay the bill"}]}}
    streamed: list[dict[str, Any]] = []

    def run() -> None:
        with httpx.Client(base_url=str(http.base_url), timeout=90) as own, \
                own.stream("POST", "/run_sse", json=body) as answer:
            assert answer.status_code == 200
            streamed.extend(json.loads(line[len("data: "):]) for line in answer.iter_lines()
                            if line.startswith("data: "))

    runner = threading.Thread(target=run, name="held-run", daemon=True)
    runner.start()
    wait_until(lambda: bool(_pending(http, session)) and bool(_calls(streamed)), timeout=60)
    [approval] = _pending(http, session)
    # while the run waits: the stream has shown the held call, whose name and arguments
    # are the approval's (how a client knows which approval to decide)
    assert runner.is_alive(), "the run waits for the decision"
    assert _calls(streamed) == [(approval["tool"], approval["args"])]
    decided = http.post(f"/apps/gated/users/ann/approvals/{approval['id']}", json=decision)
    assert decided.status_code == 200, decided.text
    runner.join(60)
    assert not runner.is_alive() and all("error" not in event for event in streamed), streamed
    stored = http.get(f"/apps/gated/users/ann/sessions/{session}").json()
    return {"approval": approval, "events": streamed, "state": stored["state"],
            "requests": request_rows(server)}


def _responses(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The function responses of ``events``, without their (random) ids."""
    return [{k: v for k, v in p["functionResponse"].items() if k != "id"}
            for e in events for p in (e.get("content") or {}).get("parts", []) if "functionResponse" in p]


def test_require_confirmation_on_a_host_is_approved_over_http(theirs: httpx.Client, ours: httpx.Client,
                                                               stand_in: StubServer) -> None:
    """google-adk holds the call and asks with ``adk_request_confirmation``; a host asks
    its approval service: the HTTP client finds the approval (the app, session, tool,
    arguments) and approves it, and the run goes on to the same result and state."""
    their_run = converse(theirs, stand_in, GATED, "gated", "s-gated", {"confirmed": True})
    assert their_run["asked"]["args"]["originalFunctionCall"]["name"] == "pay"
    held = _held_run(ours, stand_in, "s-gated", {"approve": True})
    assert (held["approval"]["tool"], held["approval"]["args"]) == ("pay", {"amount": 5})
    assert held["approval"]["hint"]
    assert _asked(held["events"]) is None  # the host's path: no adk_request_confirmation call
    assert _responses(held["events"]) == [r for r in _responses(their_run["second"]) if r["name"] == "pay"]
    assert held["state"] == their_run["stored"]["state"] == {"paid": 5}
    assert held["events"][-1]["content"]["parts"] == [{"text": "Paid."}]


def test_require_confirmation_on_a_host_denied_over_http(ours: httpx.Client, stand_in: StubServer) -> None:
    held = _held_run(ours, stand_in, "s-denied", {"approve": False, "reason": "not this month"})
    [response] = _responses(held["events"])
    assert response["name"] == "pay" and "not this month" in response["response"]["error"]
    assert held["state"] == {}



def _error_line(http: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    answer = http.post("/run_sse", json=body)
    assert answer.status_code == 200
    [line] = [json.loads(line[len("data: "):]) for line in answer.text.split("\n\n") if line.startswith("data: ")]
    return dict(line)


def test_an_answer_to_no_request_is_an_error_line_and_the_right_one_still_works(
        theirs: httpx.Client, ours: httpx.Client, stand_in: StubServer) -> None:
    """An answer whose id no call has: google-adk's ``ValueError`` as the stream's error
    line on both, word for word (ours stores the message first, see tests/test_adk52_confirmation.py);
    then the answer to the real request runs the call again, on both."""
    lines, states = [], []
    for http in (theirs, ours):
        with stand_in._lock:
            stand_in.responses.clear()
        stand_in.add(*SCRIPT)
        assert http.post("/apps/bank/users/ann/sessions", json={"sessionId": "s-bogus"}).status_code == 200
        body = {"appName": "bank", "userId": "ann", "sessionId": "s-bogus"}
        asked = _asked(_stream(http, "/run_sse", {**body, "newMessage": {"role": "user",
                                                                        "parts": [{"text": "send money"}]}}))
        assert asked is not None
        def reply(call_id: str) -> dict[str, Any]:
            return {"role": "user", "parts": [{"functionResponse": {"id": call_id, "name": CONFIRM,
                                                                    "response": {"confirmed": True}}}]}
        lines.append(_error_line(http, {**body, "newMessage": reply("adk-no-such-request")}))
        second = _stream(http, "/run_sse", {**body, "newMessage": reply(asked["id"])})
        assert {"name": "transfer", "response": {"status": "done", "limit": None}} in _responses(second)
        states.append(http.get("/apps/bank/users/ann/sessions/s-bogus").json()["state"])
    their_line, our_line = lines
    assert their_line["error_details"]["error_type"] == our_line["error_details"]["error_type"] == "ValueError"
    assert "Function call not found for function response ids: {'adk-no-such-request'}" in \
        their_line["error_details"]["error_message"]
    assert our_line["error_details"]["error_message"] == their_line["error_details"]["error_message"]
    assert our_line["error"] == their_line["error"]
    assert states[0] == states[1] == {"moved": 5}


def test_the_answer_after_a_kill_9_of_the_whole_host(tmp_path: Path, environment: dict[str, str],
                                                    stand_in: StubServer) -> None:
    """The request asked, every process of the host killed with SIGKILL, a new host on
    the same data: adk-web's answer runs the original call again with the confirmation
    (what was asked is read back from the stored session, nothing from memory)."""
    import signal

    from supervision.testing import find_marked_processes

    (tmp_path / "adk52_confirm_http.py").write_text(rewritten(PROGRAM))
    settings = {"apps": 'bank = "adk52_confirm_http:root_agent"\n',
                "env": {**environment, "PYTHONPATH": os.pathsep.join([str(TESTS), str(tmp_path)])}}
    with stand_in._lock:
        stand_in.requests.clear()
        stand_in.responses.clear()
    stand_in.add(*SCRIPT)
    body = {"appName": "bank", "userId": "ann", "sessionId": "s-killed"}
    with serving(tmp_path, **settings) as served, httpx.Client(base_url=served["url"], timeout=60) as http:
        assert http.post("/apps/bank/users/ann/sessions", json={"sessionId": "s-killed"}).status_code == 200
        first = _stream(http, "/run_sse", {**body, "newMessage": {"role": "user", "parts": [{"text": "send money"}]}})
        asked = _asked(first)
        assert asked is not None
        asking = next(e["id"] for e in first if _asked([e]) is not None)
        killed = find_marked_processes(served["marker"])
        assert len(killed) > 1
        for pid in killed:
            os.kill(pid, signal.SIGKILL)
        wait_until(lambda: not find_marked_processes(served["marker"]), timeout=30)
    with serving(tmp_path, **settings) as served, httpx.Client(base_url=served["url"], timeout=60) as http:
        reply = {"role": "user", "parts": [{"functionResponse": {"id": asked["id"], "name": CONFIRM, "response": {
            "response": json.dumps({"confirmed": True, "payload": {"limit": 2}})}}}]}
        answering = {**body, "newMessage": reply, "functionCallEventId": asking}
        # until the dead host's lease on the session runs out: 503, nothing stored (asked again)
        answers: list[httpx.Response] = []
        wait_until(lambda: answers.append(http.post("/run_sse", json=answering)) or answers[-1].status_code != 503,
                   timeout=60, interval=0.5)
        assert answers[-1].status_code == 200, answers[-1].text
        second = [json.loads(line[len("data: "):]) for line in answers[-1].text.split("\n\n")
                  if line.startswith("data: ")]
        assert _responses(second)[0] == {"name": "transfer", "response": {"status": "done", "limit": 2}}
        assert second[-1]["content"]["parts"] == [{"text": "Sent."}]
        # read back from the stored session: the answer goes on in the asking invocation
        asking_invocation = next(e["invocationId"] for e in first if _asked([e]) is not None)
        assert {e["invocationId"] for e in second} == {asking_invocation}
        stored = http.get("/apps/bank/users/ann/sessions/s-killed").json()
        assert stored["state"] == {"moved": 5}
        assert http.get("/apps/bank/users/ann/sessions/s-killed/artifacts").json() == ["receipt.txt"]
    assert len(stand_in.responses) == 0


# -- the answering turn killed mid-way, resumed by the host --------------------------------

RESUMING = '''
import os

from adk_actors.agents import Agent
from adk_actors.engine import App
from adk_actors.tools.tool_context import ToolContext


def transfer(amount: int, tool_context: ToolContext) -> dict:
    """Moves money."""
    if tool_context.tool_confirmation is None:
        tool_context.request_confirmation(hint="Approve the transfer?", payload={"limit": 0})
        return {"status": "waiting"}
    with open(os.environ["ADK52_WORKER_PID"], "a") as out:  # the run worker it runs on
        out.write(f"{os.getpid()}\\n")
    tool_context.state["moved"] = amount
    return {"status": "done"}


bank_app = App(root_agent=Agent(name="bank", model="gemini-2.5-flash", instruction="Move money when asked.",
                                tools=[transfer]), resume_interrupted=2)
'''


def test_an_answering_turn_killed_mid_way_is_resumed_in_its_own_turn(tmp_path: Path, environment: dict[str, str],
                                                                     stand_in: StubServer) -> None:
    """The answering turn (in the asking turn's invocation) ran the confirmed call, and
    its run worker is killed with SIGKILL while the model is asked next: the host
    resumes it (``App(resume_interrupted=2)``) from the answer's own user event, not
    from the invocation's first one: the call is not run again, the model is asked the
    same again, and the client's stream goes on to the answer, as one run."""
    import dataclasses
    import signal

    pids = tmp_path / "worker.pids"
    (tmp_path / "adk52_resume_app.py").write_text(RESUMING)
    with stand_in._lock:
        stand_in.requests.clear()
        stand_in.responses.clear()
    stand_in.add(calls(("transfer", {"amount": 5})), gemini_response("Waiting for approval."),
                 dataclasses.replace(gemini_response("Too late."), delay=20), gemini_response("Sent."))
    env = {**environment, "PYTHONPATH": os.pathsep.join([str(TESTS), str(tmp_path)]), "ADK52_WORKER_PID": str(pids)}
    body = {"appName": "bank", "userId": "ann", "sessionId": "s-resumed"}
    with serving(tmp_path, apps='bank = "adk52_resume_app:bank_app"\n', env=env) as served, \
            httpx.Client(base_url=served["url"], timeout=90) as http:
        assert http.post("/apps/bank/users/ann/sessions", json={"sessionId": "s-resumed"}).status_code == 200
        first = _stream(http, "/run_sse", {**body, "newMessage": {"role": "user", "parts": [{"text": "send money"}]}})
        asked = _asked(first)
        assert asked is not None
        asking_invocation = next(e["invocationId"] for e in first if _asked([e]) is not None)
        reply = {"role": "user", "parts": [{"functionResponse": {"id": asked["id"], "name": CONFIRM,
                                                                 "response": {"confirmed": True}}}]}
        streamed: list[dict[str, Any]] = []

        def answer() -> None:
            with httpx.Client(base_url=served["url"], timeout=90) as own, \
                    own.stream("POST", "/run_sse", json={**body, "newMessage": reply}) as answered:
                assert answered.status_code == 200
                streamed.extend(json.loads(line[len("data: "):]) for line in answered.iter_lines()
                                if line.startswith("data: "))

        runner = threading.Thread(target=answer, name="answering-run", daemon=True)
        runner.start()
        # the confirmed call ran, and the model is being asked (held by the stand-in): kill -9
        wait_until(lambda: len(stand_in.requests) == 3 and pids.exists(), timeout=60)
        [pid] = pids.read_text().split()
        os.kill(int(pid), signal.SIGKILL)
        runner.join(90)
        assert not runner.is_alive()
        stored = http.get("/apps/bank/users/ann/sessions/s-resumed").json()
    assert all("error" not in event for event in streamed), streamed
    assert streamed[-1]["content"]["parts"] == [{"text": "Sent."}]
    assert len(pids.read_text().split()) == 1, "the confirmed call ran once"
    assert stored["state"] == {"moved": 5}
    events = stored["events"]
    answers = [e for e in events if e["author"] == "user" and _responses([e])]
    assert len(answers) == 1 and answers[0]["invocationId"] == asking_invocation
    after = events[events.index(answers[0]):]
    assert {e["invocationId"] for e in after} == {asking_invocation}
    assert _responses([e for e in after if e["author"] != "user"]) == [{"name": "transfer",
                                                                        "response": {"status": "done"}}]
    # the client saw this turn's events once each, in order, and none of the asking turn's
    assert [e["id"] for e in streamed] == [e["id"] for e in after if e["author"] != "user"]
    assert [e["content"]["parts"] for e in after if e["author"] == "bank" and "content" in e][-1] == [{"text": "Sent."}]
    # the resumed run asked the model what the killed one had asked
    requests = request_rows(stand_in)
    assert len(requests) == 4 and requests[3] == requests[2]
    assert len(stand_in.responses) == 0
