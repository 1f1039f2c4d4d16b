"""An agent's planner in a live run, and a planner with a code executor, side by side
with google-adk 2.13 (issue 52).

google-adk's live flow runs the same request processors as a turn (its NL-planning one
among them: the planner's ``build_planning_instruction`` appended to the system
instruction, every thought mark of the history cleared) before it opens the
conversation, and runs its response processors (the NL-planning one among them: the
planner's ``process_planning_response``) on every response the live connection gives:
each streamed text piece and, at the end of the turn, the whole text answer; what the
planner writes to state is an event of its own, before the answer's.

Live: each side talks to its own Live API stand-in (``live_stub``; google-genai reaches
google-adk's only over TLS, so that one has a ``trustme`` certificate); compared are
the setup message's system instruction, the history sent, and the events (their
parts' text and thought marks, partial or not, state deltas) and the final state.

Code execution: google-adk's code-execution step, under a planner that rewrites
answers, counts as thoughts only the parts the model signed (``thought_signature``):
a ``PlanReActPlanner`` marks its ``/*ACTION*/`` text as thought, and the code in it
still runs. One turn on both sides on one Gemini REST stand-in.
"""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from typing import Any

import pytest
import trustme
from google_adk_harness import gemini, rewritten, run_program, stand_in  # noqa: F401
from live_stub import LiveServer, live_server, snake

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"), pytest.mark.timeout(120)]

PLANNING = "Plan before you answer, {name}, in a {mood} mood; {count} messages so far."

#: the model's text answer, in two streamed pieces, then the end of its turn
ANSWER: list[dict[str, Any]] = [{"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": "PLAN: look outside. "}]}}},
          {"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": "ANSWER: sunny in Oslo."}]}}},
          {"serverContent": {"turnComplete": True}}]


def script(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The stand-in's answer to a user's complete turn (the history, sent incomplete, gets none)."""
    complete = snake(message).get("client_content", {}).get("turn_complete")
    return list(ANSWER) if complete else []


def split_plan(parts: list[Any], make: Any) -> list[Any]:
    """Both sides' planner's rewriting: text before ``ANSWER:`` (or a whole ``PLAN:``
    text) becomes a thought, the answer after it is upper-cased."""
    kept = []
    for part in parts:
        text = part.text or ""
        if "ANSWER:" in text:
            plan, answer = text.split("ANSWER:", 1)
            if plan:
                kept.append(make(text=plan, thought=True))
            kept.append(make(text=answer.upper()))
        elif text.startswith("PLAN:"):
            kept.append(make(text=text, thought=True))
        else:
            kept.append(part)
    return kept


def planner_class(base: type, make: Any) -> type:
    """A user's planner on ``base`` (google-adk's BasePlanner or ours): its instruction
    is made of what it is given; its rewriting is :func:`split_plan`, each call counted
    in state."""

    class Splitter(base):  # type: ignore[misc]
        def build_planning_instruction(self, readonly_context: Any, llm_request: Any) -> str:
            return PLANNING.format(name=readonly_context.agent_name, mood=readonly_context.state.get("mood"),
                                   count=len(llm_request.contents))

        def process_planning_response(self, callback_context: Any, response_parts: list[Any]) -> list[Any]:
            callback_context.state["planned"] = callback_context.state.get("planned", 0) + 1
            return split_plan(response_parts, make)

    return Splitter


def rows(events: list[Any]) -> list[dict[str, Any]]:
    """What a user reads of the events with content or state: their parts' text and
    thought marks, partial or not, and the state delta."""
    out = []
    for event in events:
        parts = [(p.text, bool(p.thought)) for p in (event.content.parts or [])] if event.content else []
        delta = dict(event.actions.state_delta or {}) if event.actions else {}
        if parts or delta:
            out.append({"author": event.author, "partial": bool(event.partial), "parts": parts, "state": delta})
    return out


async def theirs_live(url: str) -> dict[str, Any]:
    """google-adk's live run (InMemoryRunner.run_live) on the stand-in at ``url``."""
    from google.adk.agents import Agent, LiveRequestQueue
    from google.adk.agents.run_config import RunConfig
    from google.adk.events import Event
    from google.adk.models import Gemini
    from google.adk.planners import BasePlanner
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    agent = Agent(name="root", model=Gemini(model="gemini-live-2.5-flash", base_url=url),
                  instruction="Tell the weather.", planner=planner_class(BasePlanner, types.Part)())
    runner = InMemoryRunner(agent=agent, app_name="p")
    session = await runner.session_service.create_session(app_name="p", user_id="ann", state={"mood": "calm"})
    for author, content in (("user", types.Content(role="user", parts=[types.Part(text="Hi")])),
                            ("root", types.Content(role="model", parts=[
                                types.Part(text="I planned a greeting.", thought=True), types.Part(text="Hello.")]))):
        await runner.session_service.append_event(session, Event(author=author, content=content, invocation_id="e-0"))
    queue = LiveRequestQueue()
    queue.send_content(types.Content(role="user", parts=[types.Part(text="Weather in Oslo?")]))
    streamed = []
    async for event in runner.run_live(user_id="ann", session_id=session.id, live_request_queue=queue,
                                       run_config=RunConfig(response_modalities=[types.Modality.TEXT])):
        streamed.append(event)
        if event.turn_complete:
            queue.close()
            break
    stored = await runner.session_service.get_session(app_name="p", user_id="ann", session_id=session.id)
    await runner.close()
    assert stored is not None
    return {"streamed": rows(streamed), "stored": rows(stored.events[2:]), "state": dict(stored.state)}


async def ours_live(url: str, with_planner: bool = True) -> dict[str, Any]:
    """Our live run (run_live_invocation) on the stand-in at ``url``."""
    from adk_actors import Content, LlmAgent, RunConfig
    from adk_actors._types import Event, LiveRequest, Part
    from adk_actors.engine import SessionView, run_live_invocation
    from adk_actors.models import GeminiModel
    from adk_actors.planners import BasePlanner

    planner = planner_class(BasePlanner, Part)() if with_planner else None
    agent = LlmAgent(name="root", model=GeminiModel("gemini-live-2.5-flash", base_url=url, api_key="test-key"),
                     instruction="Tell the weather.", planner=planner)
    session = SessionView(state={"mood": "calm"}, events=[
        Event(author="user", content=Content.user("Hi")),
        Event(author="root", content=Content(role="model", parts=(Part(text="I planned a greeting.", thought=True),
                                                                  Part(text="Hello."))))])
    inputs: asyncio.Queue[LiveRequest] = asyncio.Queue()
    inputs.put_nowait(LiveRequest(content=Content.user("Weather in Oslo?")))
    streamed = []
    async for event in run_live_invocation(agent, session, inputs, run_config=RunConfig(response_modalities=("TEXT",))):
        streamed.append(event)
        if event.turn_complete:
            inputs.put_nowait(LiveRequest(close=True))
    return {"streamed": rows(streamed), "stored": rows(session.events[2:]), "state": dict(session.state)}


def setup_and_history(server: LiveServer) -> tuple[str, list[dict[str, Any]]]:
    """The system instruction of the stand-in's setup message, and the history turns sent."""
    setup = snake(server.received[0])["setup"]
    instruction = "".join(p.get("text", "") for p in setup["system_instruction"]["parts"])
    history = snake(server.received[1])["client_content"]
    assert history.get("turn_complete") in (False, None)
    return instruction, history["turns"]


@pytest.fixture
def tls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ssl.SSLContext:
    """The server side of TLS for google-adk's stand-in, its authority trusted by
    google-genai (``SSL_CERT_FILE``); google-genai's key and no other Gemini setting."""
    authority = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    authority.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
    for name in ("GEMINI_API_KEY", "GEMINI_BASE_URL", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI",
                 "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key-not-a-secret")
    monkeypatch.setenv("ADK_DISABLE_TELEMETRY", "1")
    return context


def both_live(tls: ssl.SSLContext) -> dict[str, Any]:
    servers = {"theirs": LiveServer(script), "ours": LiveServer(script)}

    async def scenario() -> dict[str, Any]:
        async with live_server(servers["theirs"], tls) as theirs_url, live_server(servers["ours"]) as ours_url:
            theirs = await asyncio.wait_for(theirs_live(theirs_url), 60)
            ours = await asyncio.wait_for(ours_live(ours_url), 60)
        return {"theirs": theirs, "ours": ours}

    seen = asyncio.run(scenario())
    for side, server in servers.items():
        seen[side]["instruction"], seen[side]["history"] = setup_and_history(server)
    return seen


def test_a_live_setup_carries_the_planning_instruction_and_a_history_without_thought_marks(
        tls: ssl.SSLContext) -> None:
    seen = both_live(tls)
    planning = PLANNING.format(name="root", mood="calm", count=2)
    for side in ("theirs", "ours"):
        instruction = seen[side]["instruction"]
        # the agent's instruction first, the planner's last (after the identity)
        assert instruction.startswith("Tell the weather.\n\nYou are "), side
        assert instruction.endswith("\n\n" + planning), side
    # the earlier plan is sent back as plain text: no thought mark
    assert seen["ours"]["history"] == seen["theirs"]["history"]
    assert seen["theirs"]["history"][1] == {"role": "model", "parts": [{"text": "I planned a greeting."},
                                                                       {"text": "Hello."}]}


def test_live_answers_go_through_the_planner_piece_by_piece_and_as_a_whole(tls: ssl.SSLContext) -> None:
    seen = both_live(tls)
    theirs, ours = seen["theirs"], seen["ours"]
    # the agent's events (google-adk's run_live stores the typed message without streaming it)
    assert [r for r in ours["streamed"] if r["author"] == "root"] == theirs["streamed"]
    assert ours["stored"] == theirs["stored"]
    assert ours["state"] == theirs["state"]
    # each piece, then the whole answer: a plan as thought, the answer rewritten
    assert theirs["state"]["planned"] == 3
    answers = [r["parts"] for r in theirs["streamed"] if r["parts"] and r["author"] == "root"]
    assert answers == [[("PLAN: look outside. ", True)], [(" SUNNY IN OSLO.", False)],
                       [("PLAN: look outside. ", True), (" SUNNY IN OSLO.", False)]]
    assert [r["partial"] for r in theirs["streamed"] if r["parts"] and r["author"] == "root"] == [True, True, False]


def test_without_a_planner_the_live_setup_and_answer_are_as_the_model_gave_them(tls: ssl.SSLContext) -> None:
    server = LiveServer(script)

    async def scenario() -> dict[str, Any]:
        async with live_server(server) as url:
            return await asyncio.wait_for(ours_live(url, with_planner=False), 60)

    ours = asyncio.run(scenario())
    instruction, history = setup_and_history(server)
    assert "Plan before you answer" not in instruction
    assert history[1]["parts"][0] == {"text": "I planned a greeting.", "thought": True}
    committed = [r["parts"] for r in ours["stored"] if r["parts"] and r["author"] == "root"]
    assert committed == [[("PLAN: look outside. ANSWER: sunny in Oslo.", False)]]
    assert "planned" not in ours["state"]


# -- a planner and a code executor, in a turn -------------------------------------------------

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.code_executors import UnsafeLocalCodeExecutor
from google.adk.planners import PlanReActPlanner
from google.adk.runners import InMemoryRunner
from google.genai import types


async def main(turn):
    agent = Agent(name="root", model="gemini-2.5-flash", instruction="Compute with code.",
                  planner=PlanReActPlanner(), code_executor=UnsafeLocalCodeExecutor())
    runner = InMemoryRunner(agent=agent, app_name="p")
    session = await runner.session_service.create_session(app_name="p", user_id="ann")
    streamed = []
    async for event in runner.run_async(user_id="ann", session_id=session.id,
                                        new_message=types.Content(role="user", parts=[types.Part(text=turn)])):
        streamed.append(event)
    await runner.close()
    return streamed
'''

#: the model's plan: a signed thought of its own, then its action (code) under the planner's tags
CODE = StubResponse(json={
    "candidates": [{"content": {"role": "model", "parts": [
        {"text": "The user wants a product.", "thought": True, "thoughtSignature": "c2lnbmVk"},
        {"text": "/*PLANNING*/ Multiply.\n/*ACTION*/\n```python\nprint(6 * 7)\n```\nThen report."}]},
        "finishReason": "STOP", "index": 0}],
    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
    "modelVersion": "gemini-test"})
FINAL = gemini_response("/*REASONING*/ The code printed 42. /*FINAL_ANSWER*/ It is 42.")


def code_rows(events: list[Any]) -> list[list[Any]]:
    """Each event's parts as a user reads them: text with its thought mark, code, result."""
    out = []
    for event in events:
        parts: list[Any] = []
        for part in (event.content.parts or []) if event.content else []:
            if part.executable_code is not None:
                parts.append(("code", part.executable_code.code.strip()))
            elif part.code_execution_result is not None:
                parts.append(("result", (part.code_execution_result.output or "").strip()))
            elif part.text is not None:
                parts.append((part.text, bool(part.thought)))
        out.append(parts)
    return out


def test_code_under_a_planners_thought_runs_and_the_models_signed_thought_stays_in_front(
        gemini: StubServer) -> None:  # noqa: F811
    seen = {}
    for side, source in (("theirs", PROGRAM), ("ours", rewritten(PROGRAM))):
        _, streamed = run_program(source, [CODE, FINAL], gemini, "What is 6 times 7?")
        assert len(gemini.responses) == 0, f"{side}: the turn must ask the model again after running the code"
        seen[side] = code_rows(streamed)
    assert seen["ours"] == seen["theirs"]
    assert seen["theirs"][0] == [("The user wants a product.", True), (" Multiply.\n\n", True),
                                 ("code", "print(6 * 7)")]
    assert seen["theirs"][1] == [("result", "Code execution result:\n42")]
    assert seen["theirs"][-1] == [(" The code printed 42. ", True), (" It is 42.", False)]
