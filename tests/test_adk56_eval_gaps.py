"""Two eval gaps of issue 56, side by side with google-adk 2.13.

Grounding in recorded invocations: a google-adk program whose agent searches with
``google_search`` runs on google-adk and, its imports rewritten, on ours, against one
Gemini stand-in on 127.0.0.1 (tests/google_adk_harness.py); each side's session events
become eval invocations by its own ``EvaluationGenerator.convert_events_to_eval_invocations``,
and each side's ``get_grounding_metadata_as_json_str`` reads them. Both keep the
grounded final response's grounding on its (content-less) invocation event, and give
the same JSON; an invocation without grounding says none was provided on both. Our
eval run (``AgentEvaluator``'s inference) records the same.

Registered metrics: a metric registered in ``DEFAULT_METRIC_EVALUATOR_REGISTRY`` is
listed where metrics are listed (``adk_actors.evals.metrics_info``, which the
``/dev/apps/{app}/metrics-info`` route serves), as google-adk's dev server lists every
metric of that registry.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import rewritten, run_program

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

GROUNDING = {
    "webSearchQueries": ["weather in Paris today"],
    "searchEntryPoint": {"renderedContent": "<div>weather in Paris today</div>"},
    "groundingChunks": [{"web": {"uri": "https://example.org/paris", "title": "example.org"}}],
    "groundingSupports": [{"segment": {"startIndex": 0, "endIndex": 15, "text": "Paris is sunny."},
                           "groundingChunkIndices": [0], "confidenceScores": [0.75]}],
}


def grounded(text: str) -> StubResponse:
    return StubResponse(json={"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                                              "finishReason": "STOP", "index": 0, "groundingMetadata": GROUNDING}],
                              "modelVersion": "gemini-test",
                              "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                                                "totalTokenCount": 15}})


PROGRAM = '''
from google.adk.agents import Agent
from google.adk.evaluation.evaluation_generator import EvaluationGenerator
from google.adk.evaluation.llm_as_judge_utils import get_grounding_metadata_as_json_str
from google.adk.runners import InMemoryRunner
from google.adk.tools import google_search
from google.genai import types

root_agent = Agent(name="searcher", model="gemini-2.5-flash", instruction="Answer with Google Search.",
                   tools=[google_search])


async def main(turns):
    runner = InMemoryRunner(agent=root_agent, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="ann")
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            pass
    stored = await runner.session_service.get_session(app_name="app", user_id="ann", session_id=session.id)
    await runner.close()
    invocations = EvaluationGenerator.convert_events_to_eval_invocations(stored.events)
    return [{"final": invocation.final_response.parts[0].text,
             "events": [{"author": e.author, "has_content": e.content is not None,
                         "grounding": e.grounding_metadata.model_dump(mode="json", by_alias=True, exclude_none=True)
                         if e.grounding_metadata is not None else None}
                        for e in invocation.intermediate_data.invocation_events],
             "judge_sees": get_grounding_metadata_as_json_str(invocation.intermediate_data)}
            for invocation in invocations]
'''


def test_a_grounded_final_response_keeps_its_grounding_in_the_recorded_invocation(gemini: StubServer) -> None:
    answers = [grounded("Paris is sunny."), gemini_response("You are welcome.")]
    turns = ["Weather in Paris?", "Thanks"]
    _, theirs = run_program(PROGRAM, answers, gemini, turns)
    assert not gemini.responses
    _, ours = run_program(rewritten(PROGRAM), answers, gemini, turns)
    assert not gemini.responses
    first, second = theirs
    assert first["events"] == [{"author": "searcher", "has_content": False, "grounding": GROUNDING}]
    assert second["events"] == [{"author": "searcher", "has_content": False, "grounding": None}]
    assert second["judge_sees"] == "No grounding metadata was provided."
    assert json.loads(first["judge_sees"])["grounding_metadata"][0]["step"] == 0
    assert [{**o, "judge_sees": json.loads(o["judge_sees"]) if o["judge_sees"].startswith("{") else o["judge_sees"]}
            for o in ours] == \
           [{**t, "judge_sees": json.loads(t["judge_sees"]) if t["judge_sees"].startswith("{") else t["judge_sees"]}
            for t in theirs]
    # the text a judge's prompt carries: the same JSON (its keys in each side's field order), indented alike
    assert ours[0]["judge_sees"].splitlines()[:4] == theirs[0]["judge_sees"].splitlines()[:4]
    assert len(ours[0]["judge_sees"].splitlines()) == len(theirs[0]["judge_sees"].splitlines())


def test_our_eval_run_records_the_grounding_of_the_final_response(gemini: StubServer) -> None:
    """AgentEvaluator's inference (the eval runs' recording) keeps it too."""
    from adk_actors import LlmAgent
    from adk_actors.evals import AgentEvaluator, EvalCase, Invocation
    from adk_actors.evaluation.llm_as_judge_utils import get_grounding_metadata_as_json_str
    from adk_actors.sessions import InMemorySessionService
    from adk_actors.tools import google_search
    from adk_actors.types import Content, Part

    gemini.responses.clear()
    gemini.add(grounded("Paris is sunny."))
    agent = LlmAgent(name="searcher", model="gemini-2.5-flash", instruction="Answer.", tools=[google_search])
    case = EvalCase(eval_id="paris", conversation=[Invocation(
        user_content=Content(role="user", parts=[Part(text="Weather in Paris?")]),
        final_response=Content(role="model", parts=[Part(text="Paris is sunny.")]))])
    run = asyncio.run(AgentEvaluator._infer(agent, None, case, InMemorySessionService(), None, None, quiet=True))
    assert run.actual is not None, run.error
    (invocation,) = run.actual
    (event,) = invocation.intermediate_data.invocation_events
    assert event.content is None and event.grounding_metadata is not None
    assert event.grounding_metadata.model_dump(mode="json", by_alias=True, exclude_none=True) == GROUNDING
    seen = json.loads(get_grounding_metadata_as_json_str(invocation.intermediate_data))
    assert seen["grounding_metadata"][0]["grounding_metadata"]["web_search_queries"] == ["weather in Paris today"]


# -- registered metrics are listed -------------------------------------------------------------


@pytest.fixture
def registered() -> Iterator[Any]:
    """A metric of the user's registered in the default registry; its entry removed after."""
    from adk_actors.evals import MetricInfo
    from adk_actors.evals._models import Interval, MetricValueInfo
    from adk_actors.evaluation.evaluator import Evaluator
    from adk_actors.evaluation.metric_evaluator_registry import DEFAULT_METRIC_EVALUATOR_REGISTRY

    class Politeness(Evaluator):
        def __init__(self, eval_metric: Any = None) -> None:
            self.eval_metric = eval_metric

    info = MetricInfo(metric_name="politeness_v1", description="How polite the answers are.",
                      metric_value_info=MetricValueInfo(interval=Interval(min_value=0.0, max_value=5.0)))
    DEFAULT_METRIC_EVALUATOR_REGISTRY.register_evaluator(info, Politeness)
    yield info
    DEFAULT_METRIC_EVALUATOR_REGISTRY._registry.pop("politeness_v1", None)


def test_a_metric_registered_in_the_default_registry_is_listed_with_its_info(registered: Any) -> None:
    from google.adk.evaluation.eval_metrics import Interval as TheirInterval
    from google.adk.evaluation.eval_metrics import MetricInfo as TheirInfo
    from google.adk.evaluation.eval_metrics import MetricValueInfo as TheirValueInfo
    from google.adk.evaluation.evaluator import Evaluator as TheirEvaluator
    from google.adk.evaluation.metric_evaluator_registry import (
        DEFAULT_METRIC_EVALUATOR_REGISTRY as THEIRS,
    )

    from adk_actors.evals import metrics_info

    class TheirPoliteness(TheirEvaluator):
        pass

    THEIRS.register_evaluator(TheirInfo(metric_name="politeness_v1", description="How polite the answers are.",
                                        metric_value_info=TheirValueInfo(
                                            interval=TheirInterval(min_value=0.0, max_value=5.0))),
                              TheirPoliteness)
    try:
        their_listed = {i.metric_name: i.model_dump(mode="json", by_alias=True, exclude_none=True)
                        for i in THEIRS.get_registered_metrics()}
    finally:
        THEIRS._registry.pop("politeness_v1", None)
    ours = {i.metric_name: i.wire() for i in metrics_info()}
    assert ours["politeness_v1"] == their_listed["politeness_v1"]
    assert list(ours)[-1] == "politeness_v1"  # after the built-in metrics
    assert "tool_trajectory_avg_score" in ours and "safety_v1" not in ours  # the standard list is unchanged


def test_a_registered_metric_replacing_a_built_in_ones_info_is_listed_once_with_the_new_info() -> None:
    from adk_actors.evals import MetricInfo, metrics_info
    from adk_actors.evals._models import Interval, MetricValueInfo
    from adk_actors.evaluation.metric_evaluator_registry import DEFAULT_METRIC_EVALUATOR_REGISTRY
    from adk_actors.evaluation.response_evaluator import ResponseEvaluator

    before = DEFAULT_METRIC_EVALUATOR_REGISTRY._registry["response_match_score"]
    info = MetricInfo(metric_name="response_match_score", description="ROUGE-1, my way.",
                      metric_value_info=MetricValueInfo(interval=Interval(min_value=0.0, max_value=1.0)))
    DEFAULT_METRIC_EVALUATOR_REGISTRY.register_evaluator(info, ResponseEvaluator)
    try:
        listed = [i for i in metrics_info() if i.metric_name == "response_match_score"]
    finally:
        DEFAULT_METRIC_EVALUATOR_REGISTRY._registry["response_match_score"] = before
    assert [i.description for i in listed] == ["ROUGE-1, my way."]
    assert [i.description for i in metrics_info() if i.metric_name == "response_match_score"] != ["ROUGE-1, my way."]


# -- the judges see the grounding ---------------------------------------------------------------

JUDGE_PROMPTS: list[str] = []
SAID = "Paris is sunny."


@pytest.fixture
def prompt_keeper() -> Iterator[str]:
    """A judge model (by name, in our registry) that keeps every prompt and agrees."""
    from adk_actors.models import BaseLlm, LLMRegistry, LlmResponse
    from adk_actors.types import Content

    class GroundingJudge(BaseLlm):
        @classmethod
        def supported_models(cls) -> list[str]:
            return [r"grounding-judge"]

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            prompt = llm_request.contents[-1].text
            JUDGE_PROMPTS.append(prompt)
            if "supporting_excerpt" in prompt:
                said = (f"sentence: {SAID}\nlabel: supported\nrationale: grounded\n"
                        "supporting_excerpt: null\ncontradicting_excerpt: null")
            elif "<sentence>" in prompt:
                said = f"<sentence>{SAID}</sentence>"
            else:
                said = "ID: sunny\nProperty: It says the weather.\nRationale: it does.\nVerdict: yes"
            yield LlmResponse(content=Content.model(said))

    LLMRegistry.register(GroundingJudge)
    JUDGE_PROMPTS.clear()
    yield "grounding-judge"
    JUDGE_PROMPTS.clear()


def test_the_judges_of_hallucinations_and_final_response_quality_are_shown_the_grounding(prompt_keeper: str) -> None:
    """As google-adk's prompts carry ``get_grounding_metadata_as_json_str`` of the
    invocation (hallucinations_v1: of the events before each checked text, the text's
    own event included; rubric final-response quality: of all its events); the
    tool-use rubric metric's prompt has none, as google-adk's has none."""
    from adk_actors.evals import EvalMetric, Invocation, score_async
    from adk_actors.evaluation.llm_as_judge_utils import get_grounding_metadata_as_json_str

    invocation = Invocation.model_validate({
        "invocation_id": "i", "user_content": {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        "final_response": {"role": "model", "parts": [{"text": SAID}]},
        "intermediate_data": {"invocation_events": [
            {"author": "searcher", "content": {"role": "model", "parts": [{"text": "Let me look."}]},
             "grounding_metadata": GROUNDING},
            {"author": "searcher", "grounding_metadata": GROUNDING}]}})
    grounding = get_grounding_metadata_as_json_str(invocation.intermediate_data)
    assert json.loads(grounding)["grounding_metadata"][1]["grounding_metadata"]["web_search_queries"] == \
        ["weather in Paris today"]
    judge = {"threshold": 0.5, "judge_model_options": {"judge_model": prompt_keeper, "num_samples": 1}}
    rubric = {"rubric_id": "sunny", "rubric_content": {"text_property": "It says the weather."}}
    for name, criterion in {"hallucinations_v1": {**judge, "evaluate_intermediate_nl_responses": True},
                            "rubric_based_final_response_quality_v1": {**judge, "rubrics": [rubric]},
                            "rubric_based_tool_use_quality_v1": {**judge, "rubrics": [rubric]}}.items():
        metric = EvalMetric.model_validate({"metric_name": name, "threshold": 0.5, "criterion": criterion})
        asyncio.run(score_async(metric, [(invocation, None)]))
    labelled = [p for p in JUDGE_PROMPTS if "supporting_excerpt" in p]
    assert len(labelled) == 2  # "Let me look." with its own event's grounding, then the final response
    from adk_actors.evals import InvocationEvent, InvocationEvents

    own = get_grounding_metadata_as_json_str(InvocationEvents(invocation_events=[
        InvocationEvent(author="searcher", grounding_metadata=invocation.intermediate_data.invocation_events[0]
                        .grounding_metadata)]))
    assert f"grounding_metadata:\n{own}\n" in labelled[0]
    assert f"grounding_metadata:\n{grounding}\n" in labelled[1]
    final_quality = next(p for p in JUDGE_PROMPTS if "<final_answer>" in p)
    assert f"<grounding_metadata>\n{grounding}\n</grounding_metadata>" in final_quality
    tool_use = next(p for p in JUDGE_PROMPTS if "<properties>" in p and "<final_answer>" not in p)
    assert "grounding_metadata" not in tool_use
