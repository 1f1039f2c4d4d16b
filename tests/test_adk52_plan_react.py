"""An agent's planner, in process (``InMemoryRunner``), side by side with google-adk 2.13
on one Gemini stand-in (issue 52).

google-adk's rule (its NL-planning processors, ``flows/llm_flows/extensions/_planning``):
for an agent whose planner is no ``BuiltInPlanner``, every request gets the planner's
``build_planning_instruction`` appended to its system instruction (after the agent's
instruction and identity) and every thought mark of its contents cleared; every answer
of the model, after the after-model callbacks, goes through the planner's
``process_planning_response`` (a ``PlanReActPlanner`` turns its plan and reasoning
into thoughts, keeps the final answer as text); state the planner writes comes in an
event of its own, before the answer's. A ``BasePlanner`` subclass of the user's is
applied the same way.

Compared: the requests the stand-in received (the instruction before the identity,
the contents with their thought marks, the tools; the planning text after the
identity, each side's own planner's: ours is in our words, with google-adk's tags),
and the events streamed and stored (each part's text and thought mark, calls,
results, state deltas).
"""

from __future__ import annotations

from typing import Any

import pytest
from google_adk_harness import calls, gemini, request_rows, rewritten, run_program, stand_in  # noqa: F401

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"), pytest.mark.timeout(300)]

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.planners import BasePlanner, BuiltInPlanner, PlanReActPlanner
from google.adk.runners import InMemoryRunner
from google.genai import types


def lookup(key: str) -> dict:
    """Looks a record up."""
    return {"found": key}


class Loud(BasePlanner):
    """A user's planner: an instruction made of what it is given (not a template), and
    answers upper-cased, each counted in state."""

    def build_planning_instruction(self, readonly_context, llm_request):
        return (f"Plan for {readonly_context.agent_name} in a {readonly_context.state.get('mood')} mood "
                f"after {len(llm_request.contents)} messages; keep {{braces}} as written.")

    def process_planning_response(self, callback_context, response_parts):
        callback_context.state["planned"] = callback_context.state.get("planned", 0) + 1
        return [types.Part(text=p.text.upper()) if p.text else p for p in response_parts]


def after_model(callback_context, llm_response):
    """Records what the after-model callback saw: the answer before the planner's rewriting."""
    texts = [p.text for p in llm_response.content.parts if p.text] if llm_response.content else []
    callback_context.state.setdefault("seen", [])
    callback_context.state["seen"] = [*callback_context.state["seen"], texts]


PLANNERS = {"plan-re-act": PlanReActPlanner, "loud": Loud,
            "built-in": lambda: BuiltInPlanner(thinking_config=types.ThinkingConfig(include_thoughts=True))}


async def main(planner, turns, streaming=False, with_callback=False):
    agent = Agent(name="root", model="gemini-2.5-flash", instruction="Answer about records.", tools=[lookup],
                  planner=PLANNERS[planner](),
                  **({"after_model_callback": after_model} if with_callback else {}))
    runner = InMemoryRunner(agent=agent, app_name="p")
    session = await runner.session_service.create_session(app_name="p", user_id="ann", state={"mood": "calm"})
    config = RunConfig(streaming_mode=StreamingMode.SSE) if streaming else RunConfig()
    streamed = []
    for turn in turns:
        async for event in runner.run_async(user_id="ann", session_id=session.id, run_config=config,
                                            new_message=types.Content(role="user", parts=[types.Part(text=turn)])):
            streamed.append(event)
    stored = await runner.session_service.get_session(app_name="p", user_id="ann", session_id=session.id)
    await runner.close()
    return streamed, stored.events, dict(stored.state)
'''

PLANS = calls(("lookup", {"key": "k1"}))
PLANS.json["candidates"][0]["content"]["parts"].insert(
    0, {"text": "/*PLANNING*/\n1. Look k1 up with lookup.\n/*ACTION*/\n"})
ANSWERS = gemini_response("/*REASONING*/\nThe record k1 was found.\n/*FINAL_ANSWER*/\nRecord k1 exists.")
#: a second turn's answer in three parts: reasoning alone, an untagged text, the final answer
THREE_PARTS = StubResponse(json={
    "candidates": [{"content": {"role": "model", "parts": [
        {"text": "/*REASONING*/ Nothing new to look up."},
        {"text": "An aside without a tag."},
        {"text": "/*PLANNING*/ a stray plan /*FINAL_ANSWER*/ Still k1."}]},
        "finishReason": "STOP", "index": 0}],
    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
    "modelVersion": "gemini-test"})


def _stream(*pieces: str) -> StubResponse:
    """Gemini's SSE answer in text pieces (the last with finishReason STOP)."""
    events = []
    for index, piece in enumerate(pieces):
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}
        if index == len(pieces) - 1:
            candidate["finishReason"] = "STOP"
        body = {"candidates": [candidate], "modelVersion": "gemini-test",
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": index + 1}}
        events.append("data: " + __import__("json").dumps(body))
    return StubResponse(sse=events)


def _parts(event: Any) -> list[Any]:
    """An event's parts as a user reads them: (text, thought mark) or the call / result."""
    rows: list[Any] = []
    for part in (event.content.parts or []) if event.content else []:
        if part.function_call is not None:
            rows.append(("call", part.function_call.name, dict(part.function_call.args or {})))
        elif part.function_response is not None:
            rows.append(("result", part.function_response.name, dict(part.function_response.response or {})))
        else:
            rows.append((part.text, bool(part.thought)))
    return rows


def _events(events: list[Any]) -> list[dict[str, Any]]:
    return [{"author": e.author, "partial": bool(e.partial), "parts": _parts(e),
             "final": e.is_final_response(), "state": dict(e.actions.state_delta or {})} for e in events]


def _run(planner: str, answers: list[StubResponse], server: StubServer, turns: list[str],
         **options: Any) -> dict[str, dict[str, Any]]:
    """Both sides' events (streamed, stored), final state and requests."""
    seen = {}
    for side, source in (("theirs", PROGRAM), ("ours", rewritten(PROGRAM))):
        _, (streamed, stored, state) = run_program(source, answers, server, planner, turns, *options.values())
        assert len(server.responses) == 0, f"{side}: the case must use its script"
        bodies = [request.body for request in server.requests]
        seen[side] = {"streamed": _events(streamed), "stored": _events(stored), "state": state,
                      "requests": request_rows(server),
                      "instructions": ["".join(p.get("text", "") for p in b["systemInstruction"]["parts"])
                                       for b in bodies]}
    return seen


def _planning_texts() -> dict[str, str]:
    from google.adk.models.llm_request import LlmRequest as TheirRequest
    from google.adk.planners import PlanReActPlanner as TheirPlanner

    from adk_actors._types import LlmRequest
    from adk_actors.planners import PlanReActPlanner
    return {"theirs": TheirPlanner().build_planning_instruction(None, TheirRequest()),  # type: ignore[arg-type]
            "ours": PlanReActPlanner().build_planning_instruction(None, LlmRequest())}


def test_plan_re_act_agent_sends_the_planning_instruction_and_keeps_plans_as_thoughts(
        gemini: StubServer) -> None:  # noqa: F811
    seen = _run("plan-re-act", [PLANS, ANSWERS, THREE_PARTS], gemini, ["Is k1 there?", "And now?"])
    theirs, ours = seen["theirs"], seen["ours"]
    # the model's requests: the same instruction before the identity, the same
    # contents (earlier plans and reasoning sent back as plain text: no thought mark),
    # the same tools
    assert ours["requests"] == theirs["requests"]
    assert len(theirs["requests"]) == 3
    second_turn = theirs["requests"][2]["contents"]
    assert {"text": "\n1. Look k1 up with lookup.\n\n"} in second_turn[1]["parts"]
    assert not any("thought" in part for content in second_turn for part in content["parts"])
    # each side's planning instruction closes its system instruction, after the identity
    planning = _planning_texts()
    for side in ("theirs", "ours"):
        for instruction in seen[side]["instructions"]:
            assert instruction.startswith("Answer about records.\n\nYou are ")
            assert instruction.endswith("\n\n" + planning[side]), side
    # the events, streamed and stored: plans and reasoning are thoughts, the final
    # answer the text the user reads
    assert ours["streamed"] == theirs["streamed"]
    assert ours["stored"] == theirs["stored"]
    assert theirs["streamed"][0]["parts"] == [("\n1. Look k1 up with lookup.\n\n", True),
                                              ("call", "lookup", {"key": "k1"})]
    assert theirs["streamed"][2]["parts"] == [("\nThe record k1 was found.\n", True), ("\nRecord k1 exists.", False)]
    assert theirs["streamed"][-1]["parts"] == [(" Nothing new to look up.", True), ("An aside without a tag.", False),
                                               (" a stray plan ", True), (" Still k1.", False)]


def test_plan_re_act_rewrites_the_answer_after_the_after_model_callback(gemini: StubServer) -> None:  # noqa: F811
    seen = _run("plan-re-act", [PLANS, ANSWERS], gemini, ["Is k1 there?"], streaming=False, with_callback=True)
    theirs, ours = seen["theirs"], seen["ours"]
    # the callback saw the tagged text as the model wrote it
    assert theirs["state"]["seen"] == [["/*PLANNING*/\n1. Look k1 up with lookup.\n/*ACTION*/\n"],
                                       ["/*REASONING*/\nThe record k1 was found.\n/*FINAL_ANSWER*/\nRecord k1 exists."]]
    assert ours["state"] == theirs["state"]
    assert ours["stored"] == theirs["stored"]
    assert ours["requests"] == theirs["requests"]


def test_plan_re_act_streamed_pieces_are_rewritten_too(gemini: StubServer) -> None:  # noqa: F811
    answer = _stream("/*REASONING*/ Looking", " further./*FINAL_ANSWER*/ Done.")
    seen = _run("plan-re-act", [answer], gemini, ["Is k1 there?"], streaming=True)
    theirs, ours = seen["theirs"], seen["ours"]
    assert [e["parts"] for e in theirs["streamed"] if e["partial"]] == [[(" Looking", True)],
                                                                        [(" further.", True), (" Done.", False)]]
    assert ours["streamed"] == theirs["streamed"]
    assert ours["stored"] == theirs["stored"]


def test_a_users_base_planner_is_applied_as_google_adk_applies_it(gemini: StubServer) -> None:  # noqa: F811
    seen = _run("loud", [PLANS, gemini_response("all done")], gemini, ["Is k1 there?"])
    theirs, ours = seen["theirs"], seen["ours"]
    # its instruction, made of the context and the request it was given, not templated
    for side in ("theirs", "ours"):
        assert [i.rsplit("\n\n", 1)[1] for i in seen[side]["instructions"]] == [
            "Plan for root in a calm mood after 1 messages; keep {braces} as written.",
            "Plan for root in a calm mood after 3 messages; keep {braces} as written."], side
    assert ours["requests"] == theirs["requests"]
    # its rewriting (the plan upper-cased, no thought), and the state it wrote in an
    # event of its own, before the answer's
    assert theirs["stored"][1] == {"author": "root", "partial": False, "parts": [], "final": True,
                                   "state": {"planned": 1}}
    assert theirs["stored"][-1]["parts"] == [("ALL DONE", False)]
    assert ours["streamed"] == theirs["streamed"]
    assert ours["stored"] == theirs["stored"]
    assert ours["state"] == theirs["state"]


THINKS = StubResponse(json={
    "candidates": [{"content": {"role": "model", "parts": [
        {"text": "/*PLANNING*/ Think first.", "thought": True}, {"text": "/*FINAL_ANSWER*/ k1."}]},
        "finishReason": "STOP", "index": 0}],
    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
    "modelVersion": "gemini-test"})


def test_a_built_in_planner_adds_no_instruction_and_keeps_thought_marks(gemini: StubServer) -> None:  # noqa: F811
    seen = _run("built-in", [THINKS, gemini_response("Again k1.")], gemini, ["Is k1 there?", "Again?"])
    theirs, ours = seen["theirs"], seen["ours"]
    assert ours["requests"] == theirs["requests"]
    # the model's own thought goes back to it marked as one, and its answer is not rewritten
    assert {"text": "/*PLANNING*/ Think first.", "thought": True} in theirs["requests"][1]["contents"][1]["parts"]
    assert theirs["stored"][1]["parts"] == [("/*PLANNING*/ Think first.", True), ("/*FINAL_ANSWER*/ k1.", False)]
    for side in ("theirs", "ours"):
        assert all(i.startswith("Answer about records.\n\nYou are ") and "PLANNING" not in i
                   for i in seen[side]["instructions"]), side
    assert ours["stored"] == theirs["stored"]


def test_clearing_thought_marks_leaves_the_sessions_parts_as_they_were() -> None:
    from adk_actors._types import Content, Part
    from adk_actors.planners._apply import without_thought_marks

    thought, plain = Part(text="a plan", thought=True), Part(text="an answer")
    history = [Content(role="model", parts=(thought, plain)), Content(role="user", parts=(Part(text="ok"),))]
    cleared = without_thought_marks(history)
    assert [[(p.text, p.thought) for p in c.parts] for c in cleared] == [[("a plan", None), ("an answer", None)],
                                                                        [("ok", None)]]
    assert thought.thought is True and history[0].parts[0] is thought and cleared[1] is history[1]
