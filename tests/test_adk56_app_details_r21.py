"""What each agent was told (google-adk 2.13's ``AppDetails``) reaches the judge prompts
of evals run on a host too, with google-adk's values and in google-adk's places.

A real ``serve`` runs the ``rester`` app below: its instruction names the session's
``who`` (a ``{who}`` placeholder, filled from the case's state as the turn runs), it
has one tool (``nap``), and its model stand-in asks for a nap, then says it is done.
An eval set runs on it through an ``HttpRunner`` (``adk-actors eval APP --url``),
scored by ``hallucinations_v1`` and the three rubric metrics, with a judge registered
here that keeps every prompt it is given. Each prompt must carry the instruction as
the model got it (``Ida``, not ``{who}``) and the ``nap`` declaration, where
google-adk's prompt carries them (compared with what google-adk's own evaluators put
in theirs for the same invocation); and the details must be the ones the same case
gets when ``AgentEvaluator`` runs it in this process, and when the host runs it
through google-adk's eval routes (as adk-web does) and saves the result.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from adk_actors import LlmAgent, LlmRequest
from adk_actors.evals import (
    AgentEvaluator,
    EvalMetric,
    EvalSet,
    Invocation,
    run_eval_set,
)
from adk_actors.evals._app_details import details_from_trace
from adk_actors.models import BaseLlm, LLMRegistry, LlmResponse, ScriptedModel, call
from adk_actors.sessions import InMemorySessionService
from adk_actors.types import Content

APP = "rester"
INSTRUCTION = "You help {who} rest. Offer a nap before anything else."
TOLD = "You help Ida rest. Offer a nap before anything else."
ANSWER = "You napped for 5 minutes."


async def nap(minutes: int) -> dict[str, Any]:
    """Take a nap of some minutes."""
    return {"slept_minutes": minutes}


def _answer(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if any(part.function_response is not None for part in last.parts):
        return ANSWER
    return call("nap", minutes=5)


rester = LlmAgent(name="rester", model=ScriptedModel(fallback=_answer, name="rester-model"), instruction=INSTRUCTION,
                  tools=[nap])
agent = SimpleNamespace(root_agent=rester)  # AgentEvaluator's module shape

PROMPTS: list[str] = []


class PromptKeeper(BaseLlm):
    """A judge that keeps every prompt and says yes to everything."""

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"prompt-keeper-judge"]

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        prompt = llm_request.contents[-1].text
        PROMPTS.append(prompt)
        if "supporting_excerpt" in prompt:  # hallucinations_v1: label the sentences
            said = (f"sentence: {ANSWER}\nlabel: supported\nrationale: the tool said so\n"
                    f"supporting_excerpt: null\ncontradicting_excerpt: null")
        elif "<sentence>" in prompt:  # hallucinations_v1: cut the answer into sentences
            said = f"<sentence>{ANSWER}</sentence>"
        else:
            said = "ID: nap\nProperty: The agent offers a nap.\nRationale: it did.\nVerdict: yes"
        yield LlmResponse(content=Content.model(said))


JUDGE = {"threshold": 0.5, "judge_model_options": {"judge_model": "prompt-keeper-judge", "num_samples": 1}}
RUBRIC = {"rubric_id": "nap", "rubric_content": {"text_property": "The agent offers a nap."}}
CRITERIA = {"hallucinations_v1": JUDGE,
            "rubric_based_final_response_quality_v1": {**JUDGE, "rubrics": [RUBRIC]},
            "rubric_based_tool_use_quality_v1": {**JUDGE, "rubrics": [RUBRIC]}}
EVAL_SET = {"eval_set_id": "rest_set", "eval_cases": [{
    "eval_id": "one_nap", "session_input": {"app_name": APP, "user_id": "ida", "state": {"who": "Ida"}},
    "conversation": [{"invocation_id": "i-1", "user_content": {"role": "user", "parts": [{"text": "I am tired."}]},
                      "final_response": {"role": "model", "parts": [{"text": ANSWER}]},
                      "intermediate_data": {"tool_uses": [{"name": "nap", "args": {"minutes": 5}}]}}]}]}


@pytest.fixture(autouse=True)
def judge() -> Iterator[None]:
    LLMRegistry.register(PromptKeeper)
    PROMPTS.clear()
    yield
    PROMPTS.clear()


def _metrics() -> list[EvalMetric]:
    return [EvalMetric.model_validate({"metric_name": name, "threshold": 0.5, "criterion": criterion})
            for name, criterion in CRITERIA.items()]


def _block(prompt: str, tag: str) -> str:
    """The last ``<tag>`` block of a prompt (google-adk's have examples before theirs)."""
    found = re.findall(rf"<{tag}>\n?(.*?)\n?\s*</{tag}>", prompt, re.DOTALL)
    assert found, (tag, prompt)
    return str(found[-1]).strip()


def _prompts_of_kinds() -> dict[str, str]:
    """The judge prompts of one invocation, by metric."""
    kinds: dict[str, str] = {}
    for prompt in PROMPTS:
        if "supporting_excerpt" in prompt:
            kinds["hallucinations_v1"] = prompt
        elif "<final_answer>" in prompt:
            kinds["rubric_based_final_response_quality_v1"] = prompt
        elif "<properties>" in prompt:
            kinds["rubric_based_tool_use_quality_v1"] = prompt
    assert set(kinds) == set(CRITERIA), PROMPTS
    return kinds


def _assert_google_adks_sections(invocation: Invocation, prompts: dict[str, str]) -> None:
    """Our prompts carry what google-adk's evaluators put in theirs for the same
    invocation: the same instructions, the same tool declarations (as data)."""
    from google.adk.evaluation.eval_case import Invocation as TheirInvocation
    from google.adk.evaluation.eval_metrics import EvalMetric as TheirMetric
    from google.adk.evaluation.hallucinations_v1 import HallucinationsV1Evaluator
    from google.adk.evaluation.rubric_based_final_response_quality_v1 import (
        RubricBasedFinalResponseQualityV1Evaluator,
    )
    from google.adk.evaluation.rubric_based_tool_use_quality_v1 import RubricBasedToolUseV1Evaluator

    theirs = TheirInvocation.model_validate(invocation.model_dump(mode="json"))

    def their_metric(name: str) -> Any:
        criterion = {**CRITERIA[name], "judge_model_options": {"judge_model": "gemini-2.5-flash"}}  # not called
        return TheirMetric.model_validate({"metric_name": name, "threshold": 0.5, "criterion": criterion})

    final = RubricBasedFinalResponseQualityV1Evaluator(their_metric("rubric_based_final_response_quality_v1"))
    their_final = final.format_auto_rater_prompt(theirs, None)
    ours = prompts["rubric_based_final_response_quality_v1"]
    assert _block(ours, "agent_instructions") == _block(their_final, "developer_instructions")
    assert _block(ours, "agent_instructions").startswith(TOLD)
    assert json.loads(_block(ours, "agent_tools")) == json.loads(_block(their_final, "available_tools"))
    # where google-adk's are: both before the user's request
    assert ours.index("<agent_instructions>") < ours.index("<agent_tools>") < ours.index("<user_request>")

    tool_use = RubricBasedToolUseV1Evaluator(their_metric("rubric_based_tool_use_quality_v1"))
    their_tool_use = tool_use.format_auto_rater_prompt(theirs, None)
    ours = prompts["rubric_based_tool_use_quality_v1"]
    assert json.loads(_block(ours, "agent_tools")) == json.loads(_block(their_tool_use, "available_tools"))
    assert "<agent_instructions>" not in ours and ours.index("<agent_tools>") < ours.index("<user_request>")

    hallucinations = HallucinationsV1Evaluator(their_metric("hallucinations_v1"))
    their_context = hallucinations._create_context_for_step(theirs.app_details, theirs, [])
    ours = prompts["hallucinations_v1"]
    assert f"rester:\n{TOLD}" in their_context and f"developer_instructions:\nrester:\n{TOLD}\n" in ours
    their_tools = their_context.split("Tool definitions:\n", 1)[1].split("\n\nGrounding metadata:", 1)[0]
    our_tools = ours.split("tool_declarations:\n", 1)[1].split("\n\n", 1)[0]
    assert json.loads(our_tools) == json.loads(their_tools)
    # in google-adk's order: instructions, the user's message, the tools, then what happened
    assert (ours.index("developer_instructions:") < ours.index("user_prompt:") < ours.index("tool_declarations:")
            < ours.index("tool_calls:"))


def _assert_told(invocation: Invocation) -> None:
    details = invocation.app_details
    assert details is not None, "the turn has no app_details"
    assert list(details.agent_details) == ["rester"]
    told = details.get_developer_instructions("rester")
    assert told.startswith(TOLD) and "{who}" not in told  # as the model got it (and the agent's identity after)
    [tools] = details.get_tools_by_agent_name()["rester"]
    assert [d["name"] for d in tools["function_declarations"]] == ["nap"]


def _run_over_google_adks_routes(client: httpx.Client) -> Invocation:
    """A session of Ida's made an eval case, run by the host (google-adk's eval routes,
    as adk-web calls them): the saved result's actual invocation."""
    session = client.post(f"/apps/{APP}/users/ida/sessions", json={"state": {"who": "Ida"}}).json()["id"]
    ran = client.post("/run", json={"appName": APP, "userId": "ida", "sessionId": session,
                                    "newMessage": {"role": "user", "parts": [{"text": "I am tired."}]}})
    assert ran.status_code == 200, ran.text
    for method, path, body in [
            ("POST", f"/dev/apps/{APP}/eval-sets", {"eval_set": {"eval_set_id": "rest_routes"}}),
            ("POST", f"/dev/apps/{APP}/eval_sets/rest_routes/add_session",
             {"evalId": "one_nap", "sessionId": session, "userId": "ida"}),
            ("PUT", f"/dev/apps/{APP}/eval_sets/rest_routes/evals/one_nap", None),
            ("POST", f"/dev/apps/{APP}/eval-sets/rest_routes/run",
             {"eval_metrics": [{"metric_name": "tool_trajectory_avg_score", "threshold": 1.0}]})]:
        if method == "PUT":  # the case runs with Ida's state, as the case of EVAL_SET does
            body = client.get(path).json()
            body["session_input" if "session_input" in body else "sessionInput"]["state"] = {"who": "Ida"}
        answer = client.request(method, path, json=body)
        assert answer.status_code == 200, answer.text
    [result_id] = client.get(f"/dev/apps/{APP}/eval_results").json()
    stored = client.get(f"/dev/apps/{APP}/eval_results/{result_id}").json()
    [case] = stored["eval_case_results"] if "eval_case_results" in stored else stored["evalCaseResults"]
    rows = case.get("eval_metric_result_per_invocation") or case["evalMetricResultPerInvocation"]
    [row] = rows
    return Invocation.model_validate(row.get("actual_invocation") or row["actualInvocation"])


def test_a_host_run_eval_gives_the_judges_the_agents_instruction_and_tools(tmp_path: Path) -> None:
    from conftest import serving

    from adk_actors.remote import HttpRunner

    in_process = asyncio.run(asyncio.wait_for(AgentEvaluator._infer(
        rester, None, EvalSet.model_validate(EVAL_SET).eval_cases[0], InMemorySessionService(), None), timeout=60))
    assert in_process.actual is not None
    [here] = in_process.actual
    _assert_told(here)

    with serving(tmp_path, apps=f'{APP} = "test_adk56_app_details_r21:rester"\n') as info, \
            HttpRunner(info["url"], APP) as remote:
        result = run_eval_set(remote, APP, EvalSet.model_validate(EVAL_SET), _metrics())
        with httpx.Client(base_url=info["url"], timeout=60) as client:
            over_http = _run_over_google_adks_routes(client)
    _assert_told(over_http)
    assert over_http.app_details == here.app_details
    [case] = result.eval_case_results
    assert case.final_eval_status.name == "PASSED", case
    [row] = case.eval_metric_result_per_invocation
    actual = row.actual_invocation
    _assert_told(actual)
    assert actual.app_details == here.app_details  # the host's turn, told as the in-process one
    prompts = _prompts_of_kinds()
    for name, prompt in prompts.items():  # google-adk's tool-use prompt has the tools only
        assert (TOLD in prompt) == (name != "rubric_based_tool_use_quality_v1"), (name, prompt)
        assert '"name": "nap"' in prompt and "{who}" not in prompt, (name, prompt)
    _assert_google_adks_sections(actual, prompts)


def test_the_details_come_from_the_recorded_request_even_when_it_was_cut() -> None:
    """A recorded request is cut at MAX_CHARS; its config comes first and is still read.
    The first event of each author with a recorded request counts; the user's, a
    model call of another invocation, and a request that cannot be read do not."""
    from adk_actors import Event
    from adk_actors.tracing import EVENT_ID, TraceSpan

    def span(event_id: str, request: str) -> TraceSpan:
        return TraceSpan("generate_content m", 0, 1, 1, 1, None,
                         {EVENT_ID: event_id, "gcp.vertex.agent.llm_request": request})

    config = {"system_instruction": "Be brief.",
              "tools": [{"function_declarations": [{"name": "nap", "description": "Nap."}]}]}
    whole = json.dumps({"model": "m", "config": config, "contents": [{"role": "user", "parts": [{"text": "x" * 50}]}]})
    second = json.dumps({"model": "m", "config": {"system_instruction": "Second call."}, "contents": []})
    spans = [span("e1", whole[:-20] + "…(cut)"), span("e2", second), span("e3", '{"model": "m", "con'),
             span("elsewhere", second)]
    events = [Event(id="u", author="user"), Event(id="e1", author="rester"), Event(id="e2", author="rester"),
              Event(id="e3", author="other")]
    details = details_from_trace(spans, events)
    assert details is not None and list(details.agent_details) == ["rester"]
    assert details.agent_details["rester"].instructions == "Be brief."
    assert details.agent_details["rester"].tool_declarations == config["tools"]
    assert details_from_trace(spans, [Event(id="u", author="user")]) is None
    assert details_from_trace([], events) is None


def test_judge_prompts_without_details_say_no_tools_were_declared() -> None:
    """An invocation without app_details (a host that keeps no trace): the sections are
    there, empty of instructions, and the tools say none were declared."""
    from adk_actors.evals import score_async
    from adk_actors.evals._app_details import NO_TOOLS

    invocation = Invocation.model_validate({
        "invocation_id": "i", "user_content": {"role": "user", "parts": [{"text": "I am tired."}]},
        "final_response": {"role": "model", "parts": [{"text": ANSWER}]}})
    for metric in _metrics():
        asyncio.run(score_async(metric, [(invocation, None)]))
    prompts = _prompts_of_kinds()
    assert _block(prompts["rubric_based_final_response_quality_v1"], "agent_instructions") == ""
    for name in ("rubric_based_final_response_quality_v1", "rubric_based_tool_use_quality_v1"):
        assert _block(prompts[name], "agent_tools") == NO_TOOLS
    assert f"tool_declarations:\n{NO_TOOLS}\n" in prompts["hallucinations_v1"]
