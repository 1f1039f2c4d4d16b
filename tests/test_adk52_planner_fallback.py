"""A planner that is no ``BasePlanner``, side by side with google-adk 2.13 on one Gemini
stand-in (issue 52).

google-adk's rule: ``LlmAgent(planner=...)`` validates the field (an instance of
``BasePlanner``, else pydantic's ValidationError, a ValueError); an object assigned to
``agent.planner`` afterwards is not validated, and its flow's NL-planning processors
(``flows/llm_flows/extensions/_planning._get_planner``) use a new ``PlanReActPlanner``
in its place when it is set (truthy) but no ``BasePlanner`` (its own methods are never
called), and no planner when it is falsy.

Compared: the requests the stand-in received (contents and tools; the planning text
closing the system instruction is each side's own PlanReActPlanner's), and the events
streamed and stored (each part's text and thought mark).
"""

from __future__ import annotations

from typing import Any

import pytest
from google_adk_harness import calls, gemini, request_rows, rewritten, run_program, stand_in  # noqa: F401

from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"), pytest.mark.timeout(300)]

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types


def lookup(key: str) -> dict:
    """Looks a record up."""
    return {"found": key}


class NotAPlanner:
    """A planner's two methods on a class that is no BasePlanner."""

    def build_planning_instruction(self, readonly_context, llm_request):
        return "NOT-A-PLANNER INSTRUCTION"

    def process_planning_response(self, callback_context, response_parts):
        raise RuntimeError("NotAPlanner.process_planning_response was called")


PLANNERS = {"object": NotAPlanner, "string": lambda: "plan it", "falsy": lambda: ""}


def make(planner):
    return Agent(name="root", model="gemini-2.5-flash", instruction="Answer about records.", tools=[lookup],
                 planner=PLANNERS[planner]())


async def main(planner, turns):
    agent = Agent(name="root", model="gemini-2.5-flash", instruction="Answer about records.", tools=[lookup])
    agent.planner = PLANNERS[planner]()
    runner = InMemoryRunner(agent=agent, app_name="p")
    session = await runner.session_service.create_session(app_name="p", user_id="ann")
    streamed = []
    for turn in turns:
        async for event in runner.run_async(user_id="ann", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=turn)])):
            streamed.append(event)
    stored = await runner.session_service.get_session(app_name="p", user_id="ann", session_id=session.id)
    await runner.close()
    return streamed, stored.events
'''

PLANS = calls(("lookup", {"key": "k1"}))
PLANS.json["candidates"][0]["content"]["parts"].insert(
    0, {"text": "/*PLANNING*/\n1. Look k1 up with lookup.\n/*ACTION*/\n"})
ANSWERS = gemini_response("/*REASONING*/\nThe record k1 was found.\n/*FINAL_ANSWER*/\nRecord k1 exists.")


def _parts(event: Any) -> list[Any]:
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
    return [{"author": e.author, "parts": _parts(e), "final": e.is_final_response()} for e in events]


def _run(planner: str, server: StubServer) -> dict[str, dict[str, Any]]:
    seen = {}
    for side, source in (("theirs", PROGRAM), ("ours", rewritten(PROGRAM))):
        _, (streamed, stored) = run_program(source, [PLANS, ANSWERS], server, planner, ["Is k1 there?"])
        assert len(server.responses) == 0, f"{side}: the case must use its script"
        seen[side] = {"streamed": _events(streamed), "stored": _events(stored), "requests": request_rows(server),
                      "instructions": ["".join(p.get("text", "") for p in r.body["systemInstruction"]["parts"])
                                       for r in server.requests]}
    return seen


def _plan_re_act_texts() -> dict[str, str]:
    from google.adk.models.llm_request import LlmRequest as TheirRequest
    from google.adk.planners import PlanReActPlanner as TheirPlanner

    from adk_actors._types import LlmRequest
    from adk_actors.planners import PlanReActPlanner
    return {"theirs": TheirPlanner().build_planning_instruction(None, TheirRequest()),  # type: ignore[arg-type]
            "ours": PlanReActPlanner().build_planning_instruction(None, LlmRequest())}


@pytest.mark.parametrize("planner", ["object", "string"])
def test_a_planner_of_another_type_is_applied_as_plan_re_act_as_in_google_adk(
        planner: str, gemini: StubServer) -> None:  # noqa: F811
    seen = _run(planner, gemini)
    theirs, ours = seen["theirs"], seen["ours"]
    assert ours["requests"] == theirs["requests"]
    planning = _plan_re_act_texts()
    for side in ("theirs", "ours"):
        assert len(seen[side]["instructions"]) == 2
        for instruction in seen[side]["instructions"]:
            assert instruction.startswith("Answer about records.\n\nYou are ")
            assert instruction.endswith("\n\n" + planning[side]), side
            assert "NOT-A-PLANNER" not in instruction
    # PlanReAct's rewriting: the plan and reasoning are thoughts, the final answer text
    assert ours["streamed"] == theirs["streamed"]
    assert ours["stored"] == theirs["stored"]
    assert theirs["streamed"][0]["parts"] == [("\n1. Look k1 up with lookup.\n\n", True),
                                              ("call", "lookup", {"key": "k1"})]
    assert theirs["streamed"][-1]["parts"] == [("\nThe record k1 was found.\n", True), ("\nRecord k1 exists.", False)]


def test_a_falsy_planner_is_no_planner_as_in_google_adk(gemini: StubServer) -> None:  # noqa: F811
    seen = _run("falsy", gemini)
    theirs, ours = seen["theirs"], seen["ours"]
    assert ours["requests"] == theirs["requests"]
    assert ours["streamed"] == theirs["streamed"]
    for side in ("theirs", "ours"):
        assert all("FINAL_ANSWER" not in instruction for instruction in seen[side]["instructions"])
    # no rewriting: the model's tagged answer is the text the user reads
    assert theirs["streamed"][-1]["parts"] == [(ANSWERS.json["candidates"][0]["content"]["parts"][0]["text"], False)]


@pytest.mark.parametrize("planner", ["object", "string"])
def test_the_constructor_refuses_a_planner_of_another_type_as_google_adk(planner: str) -> None:
    errors = []
    for source in (PROGRAM, rewritten(PROGRAM)):
        namespace: dict[str, Any] = {}
        exec(compile(source, "<planner case>", "exec"), namespace)
        with pytest.raises(ValueError) as raised:
            namespace["make"](planner)
        errors.append(raised.value)
    theirs, ours = errors
    assert "planner" in str(theirs) and "BasePlanner" in str(theirs)
    assert "planner" in str(ours) and "BasePlanner" in str(ours)
