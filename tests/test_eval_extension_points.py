"""google-adk 2.13's extension points of evaluation, side by side with google-adk: an
``Evaluator`` of the user's registered in the metric evaluator registry, an
``LlmAsJudge`` and a ``RubricBasedEvaluator`` of the user's against a scripted judge,
``register_custom_metrics_from_config``, and the default user personas.

The user's code is one source, google-adk's, and the same with its imports rewritten
for ours (``google.adk`` -> ``adk_actors``), each imported as a package. Both
``AgentEvaluator``s run the same agent against one Gemini REST stand-in on
127.0.0.1; the judges are models registered in each side's ``LLMRegistry`` that
answer by what they are asked, in this process.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import re
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import google.adk.evaluation.eval_case as their_case
import google.adk.evaluation.eval_metrics as their_metrics
import pytest
from google.adk.errors.not_found_error import NotFoundError as TheirNotFound
from google.adk.evaluation import metric_evaluator_registry as their_registry
from google.adk.evaluation.agent_evaluator import AgentEvaluator as TheirEvaluator
from google.adk.evaluation.eval_config import EvalConfig as TheirEvalConfig
from google.adk.evaluation.simulation import llm_backed_user_simulator_prompts as their_prompts
from google.adk.evaluation.simulation import (
    per_turn_user_simulator_quality_prompts as their_quality,
)
from google.adk.evaluation.simulation import pre_built_personas as their_personas
from google.adk.models import BaseLlm as TheirBaseLlm
from google.adk.models.llm_response import LlmResponse as TheirLlmResponse
from google.adk.models.registry import LLMRegistry as TheirLLMRegistry
from google.genai import types as genai_types
from google_adk_harness import agent_packages, on_stand_in

import adk_actors.evaluation.eval_case as our_case
import adk_actors.evaluation.eval_metrics as our_metrics
from adk_actors.errors.not_found_error import NotFoundError
from adk_actors.evals import AgentEvaluator
from adk_actors.evals._custom import CustomMetricError
from adk_actors.evals._models import ConversationScenario
from adk_actors.evals._simulator import LlmBackedUserSimulator, LlmBackedUserSimulatorConfig
from adk_actors.evaluation import metric_evaluator_registry as our_registry
from adk_actors.evaluation.base_eval_service import (
    EvaluateConfig,
    EvaluateRequest,
    InferenceConfig,
    InferenceRequest,
)
from adk_actors.evaluation.eval_case import EvalCase
from adk_actors.evaluation.eval_config import EvalConfig
from adk_actors.evaluation.eval_metrics import EvalMetric, MetricInfo
from adk_actors.evaluation.evaluator import Evaluator
from adk_actors.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
from adk_actors.evaluation.local_eval_service import LocalEvalService
from adk_actors.evaluation.simulation import llm_backed_user_simulator_prompts as our_prompts
from adk_actors.evaluation.simulation import per_turn_user_simulator_quality_prompts as our_quality
from adk_actors.evaluation.simulation import pre_built_personas as our_personas
from adk_actors.evaluation.trajectory_evaluator import TrajectoryEvaluator
from adk_actors.models import BaseLlm, LLMRegistry, LlmResponse
from adk_actors.testing import StubServer, gemini_answers, gemini_response
from adk_actors.types import Content

SOURCE = '''
import re

from google.adk.agents import Agent
from google.adk.evaluation.eval_metrics import EvalStatus, LlmAsAJudgeCriterion, RubricsBasedCriterion
from google.adk.evaluation.evaluator import EvaluationResult, Evaluator, PerInvocationResult
from google.adk.evaluation.llm_as_judge import AutoRaterScore, LlmAsJudge
from google.adk.evaluation.llm_as_judge_utils import get_eval_status
from google.adk.evaluation.rubric_based_evaluator import RubricBasedEvaluator


def get_weather(city: str) -> dict:
    """The weather in a city."""
    return {"weather": {"Paris": "sunny", "Oslo": "rainy"}.get(city, "unknown")}


root_agent = Agent(name="weather", model="gemini-2.5-flash", instruction="Answer about the weather.",
                   tools=[get_weather])


def said(invocation):
    if invocation is None or invocation.final_response is None:
        return ""
    return " ".join(part.text for part in invocation.final_response.parts if part.text)


def mean_result(rows, threshold):
    scores = [row.score for row in rows if row.score is not None]
    overall = sum(scores) / len(scores) if scores else None
    return EvaluationResult(overall_score=overall, overall_eval_status=get_eval_status(overall, threshold),
                            per_invocation_results=rows)


class NamesTheCity(Evaluator):
    """1.0 for a turn whose answer names every city its expected answer names."""

    def __init__(self, eval_metric):
        self._threshold = eval_metric.criterion.threshold

    def evaluate_invocations(self, actual_invocations, expected_invocations=None, conversation_scenario=None):
        rows = []
        for actual, expected in zip(actual_invocations, expected_invocations):
            wanted = [city for city in ("Paris", "Oslo") if city in said(expected)]
            score = 1.0 if all(city in said(actual) for city in wanted) else 0.0
            rows.append(PerInvocationResult(actual_invocation=actual, expected_invocation=expected, score=score,
                                            eval_status=get_eval_status(score, self._threshold)))
        return mean_result(rows, self._threshold)


class TooFew(Evaluator):
    def __init__(self, eval_metric):
        pass

    async def evaluate_invocations(self, actual_invocations, expected_invocations=None, conversation_scenario=None):
        return EvaluationResult(overall_score=1.0, overall_eval_status=EvalStatus.PASSED)


def names_the_city(eval_metric, actual_invocations, expected_invocations, conversation_scenario):
    """The function of a custom metric: NamesTheCity's rule."""
    return NamesTheCity(eval_metric).evaluate_invocations(actual_invocations, expected_invocations)


class ScoreJudge(LlmAsJudge):
    """The judge answers "score=<x>"; the samples' highest score wins."""

    def __init__(self, eval_metric):
        super().__init__(eval_metric, criterion_type=LlmAsAJudgeCriterion, expected_invocations_required=True)

    def format_auto_rater_prompt(self, actual, expected):
        return f"SCORE\\nACTUAL: {said(actual)}\\nEXPECTED: {said(expected)}"

    def convert_auto_rater_response_to_score(self, auto_rater_response):
        text = auto_rater_response.content.parts[0].text if auto_rater_response.content else ""
        found = re.search(r"score=([0-9.]+)", text or "")
        return AutoRaterScore(score=float(found.group(1)) if found else None)

    def aggregate_per_invocation_samples(self, per_invocation_samples):
        scores = [sample.score for sample in per_invocation_samples if sample.score is not None]
        best = max(scores) if scores else None
        first = per_invocation_samples[0]
        return PerInvocationResult(actual_invocation=first.actual_invocation,
                                   expected_invocation=first.expected_invocation, score=best,
                                   eval_status=get_eval_status(best, self._threshold))

    def aggregate_invocation_results(self, per_invocation_results):
        return mean_result(per_invocation_results, self._threshold)


class CityRubrics(RubricBasedEvaluator):
    """Rubrics of type CITY (and the criterion's) on each answer."""

    def __init__(self, eval_metric):
        super().__init__(eval_metric, criterion_type=RubricsBasedCriterion, rubric_type="CITY")

    def format_auto_rater_prompt(self, actual, expected):
        self.create_effective_rubrics_list(actual.rubrics)
        listed = "\\n".join(f"[{r.rubric_id}] {r.rubric_content.text_property}"
                            for r in self.get_effective_rubrics_list())
        return f"RUBRICS\\nANSWER: {said(actual)}\\n{listed}"
'''


def _gemini(body: dict[str, Any]) -> Any:
    """The agent's model: a get_weather call for the city asked about, then the weather
    in words; a greeting for anything else."""
    contents = body.get("contents") or []
    last = contents[-1]["parts"] if contents else []
    results = [part["functionResponse"] for part in last if "functionResponse" in part]
    if results:
        asked = [part["functionCall"] for part in contents[-2]["parts"] if "functionCall" in part]
        return gemini_response(f"It is {results[0]['response']['weather']} in {asked[0]['args']['city']}.").json
    city = re.search(r"weather in (\w+)", "".join(part.get("text", "") for part in last))
    if city is None:
        return gemini_response("Hello! Ask me about the weather.").json
    return gemini_response(function_calls=[("get_weather", {"city": city.group(1)})]).json


@pytest.fixture(scope="module")
def stand_in() -> Iterator[StubServer]:
    with StubServer(gemini_answers(_gemini)) as server:
        yield server


@pytest.fixture
def packages(stand_in: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    on_stand_in(stand_in.url, monkeypatch)
    yield from agent_packages(tmp_path, SOURCE, "their_evalext", "our_evalext", monkeypatch)


def _module(package: str) -> Any:
    return importlib.import_module(f"{package}.agent")


# -- the scripted judge, one rule for both sides ------------------------------------------------

ASKED: dict[tuple[str, str], int] = {}


def judge_text(side: str, prompt: str) -> str:
    """The judge's answer to ``prompt`` on ``side``, by how often ``side`` asked it:

    * a score prompt: "score=1.0" when the actual answer names the expected city, else
      "score=0.0" on odd samples and "score=0.5" on even ones; no score for a greeting;
    * a rubric prompt: per rubric, ``r_city`` yes when the answer names a city;
      ``r_brief`` yes on the first two samples, no on the third; ``r_moot`` "maybe" (no
      score); a greeting gets an answer that does not parse.
    """
    key = (side, prompt)
    ASKED[key] = ASKED.get(key, 0) + 1
    sample = ASKED[key]
    answer = re.search(r"ANSWER: (.*)|ACTUAL: (.*)", prompt)
    text = next(group for group in answer.groups() if group is not None) if answer else ""
    if text.startswith("Hello"):
        return "I cannot judge this."
    if prompt.startswith("SCORE"):
        expected = prompt.split("EXPECTED: ", 1)[1]
        city = next((c for c in ("Paris", "Oslo") if c in expected), None)
        return "score=1.0" if city and city in text else f"score={'0.0' if sample % 2 else '0.5'}"
    verdicts = {"r_city": "yes" if re.search(r"Paris|Oslo", text) else "no",
                "r_brief": "yes" if sample < 3 else "no", "r_moot": "maybe"}
    return "\n\n".join(f"ID: {rid}\nProperty: {prop}\nRationale: read\nVerdict: {verdicts.get(rid, 'no')}"
                       for rid, prop in re.findall(r"^\[(\w+)\] (.*)$", prompt, re.M))


class OurJudge(BaseLlm):
    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"evalext-judge"]

    async def generate_content_async(self, llm_request: Any, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        yield LlmResponse(content=Content.model(judge_text("ours", llm_request.contents[-1].parts[0].text)))


class TheirJudge(TheirBaseLlm):
    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"evalext-judge"]

    async def generate_content_async(self, llm_request: Any, stream: bool = False
                                     ) -> AsyncGenerator[TheirLlmResponse, None]:
        text = judge_text("theirs", llm_request.contents[-1].parts[0].text)
        yield TheirLlmResponse(content=genai_types.Content(role="model", parts=[genai_types.Part(text=text)]))


@pytest.fixture
def judges() -> None:
    LLMRegistry.register(OurJudge)
    TheirLLMRegistry.register(TheirJudge)
    ASKED.clear()


# -- in-process invocations, built from one description per side --------------------------------

def _rubric(rubric_id: str, text: str, kind: str | None = None) -> dict[str, Any]:
    return {"rubric_id": rubric_id, "rubric_content": {"text_property": text}, **({"type": kind} if kind else {})}


TURNS = [("What is the weather in Paris?", "It is sunny in Paris.", "It is sunny in Paris."),
         ("And in Oslo?", "It is rainy in Paris.", "It is rainy in Oslo."),
         ("hello", "Hello! Ask me about the weather.", "Hello!")]
#: the invocations' own rubrics: one of the metric's type, one of another type (left out)
OWN_RUBRICS = [_rubric("r_brief", "The answer is brief.", "CITY"), _rubric("r_other", "Not read.", "OTHER")]


def _invocations(module: Any) -> tuple[list[Any], list[Any]]:
    """(actual, expected) invocations of ``TURNS`` in ``module``'s ``Invocation`` type."""
    def one(n: int, user: str, reply: str, rubrics: list[dict[str, Any]] | None) -> Any:
        return module.Invocation.model_validate({
            "invocation_id": f"i{n}", "user_content": {"role": "user", "parts": [{"text": user}]},
            "final_response": {"role": "model", "parts": [{"text": reply}]}, "rubrics": rubrics})
    actual = [one(n, user, got, OWN_RUBRICS) for n, (user, got, _) in enumerate(TURNS)]
    expected = [one(n, user, wanted, None) for n, (user, _, wanted) in enumerate(TURNS)]
    return actual, expected


def _sides() -> dict[str, Any]:
    return {"theirs": (their_case, their_metrics), "ours": (our_case, our_metrics)}


def _result_rows(result: Any) -> dict[str, Any]:
    def rubric_scores(scores: Any) -> Any:
        if scores is None:
            return None
        return sorted((one["rubric_id"], one["score"]) if isinstance(one, dict) else (one.rubric_id, one.score)
                      for one in scores)
    return {"overall": (result.overall_score, result.overall_eval_status.name,
                        rubric_scores(result.overall_rubric_scores)),
            "per_invocation": [(row.score, row.eval_status.name, rubric_scores(row.rubric_scores))
                               for row in result.per_invocation_results]}


def _judge_metric(metrics: Any, name: str, criterion_type: str, **more: Any) -> Any:
    options = metrics.JudgeModelOptions(judge_model="evalext-judge", num_samples=3)
    criterion = getattr(metrics, criterion_type)(threshold=0.5, judge_model_options=options, **more)
    return metrics.EvalMetric(metric_name=name, threshold=0.5, criterion=criterion)


def _run(awaitable_or_value: Any) -> Any:
    return asyncio.run(awaitable_or_value) if inspect.isawaitable(awaitable_or_value) else awaitable_or_value


def test_a_custom_llm_as_judge_scores_as_google_adks(packages: Path, judges: None) -> None:
    got = {}
    for side, package in (("theirs", "their_evalext"), ("ours", "our_evalext")):
        case, metrics = _sides()[side]
        actual, expected = _invocations(case)
        judge = _module(package).ScoreJudge(_judge_metric(metrics, "score_judge", "LlmAsAJudgeCriterion"))
        got[side] = _result_rows(_run(judge.evaluate_invocations(actual, expected)))
    # turn 1 names Paris (1.0); turn 2 names Paris, not Oslo (samples 0.0, 0.5, 0.0: the best, 0.5);
    # turn 3's answers do not parse: no score, not evaluated
    assert got["ours"]["per_invocation"] == [(1.0, "PASSED", None), (0.5, "PASSED", None),
                                             (None, "NOT_EVALUATED", None)]
    assert got["ours"] == got["theirs"]
    with pytest.raises(ValueError, match="expected"):  # the metric needs the expected invocations
        _run(_module("our_evalext").ScoreJudge(_judge_metric(_sides()["ours"][1], "score_judge",
                                                             "LlmAsAJudgeCriterion")).evaluate_invocations(
            _invocations(_sides()["ours"][0])[0], None))


def test_a_custom_rubric_based_evaluator_scores_as_google_adks(packages: Path, judges: None) -> None:
    got = {}
    criterion_rubrics = [_rubric("r_city", "The answer names a city."), _rubric("r_moot", "The answer is moot.")]
    for side, package in (("theirs", "their_evalext"), ("ours", "our_evalext")):
        case, metrics = _sides()[side]
        actual, expected = _invocations(case)
        metric = _judge_metric(metrics, "city_rubrics", "RubricsBasedCriterion", rubrics=criterion_rubrics)
        evaluator = _module(package).CityRubrics(metric)
        got[side] = _result_rows(_run(evaluator.evaluate_invocations(actual, expected)))
    # per answer: r_city yes for a city, r_brief yes 2 of 3 (the majority), r_moot no score;
    # the greeting's answers do not parse: not evaluated, no rubric score
    assert got["ours"]["per_invocation"] == [
        (1.0, "PASSED", [("r_brief", 1.0), ("r_city", 1.0), ("r_moot", None)]),
        (1.0, "PASSED", [("r_brief", 1.0), ("r_city", 1.0), ("r_moot", None)]),
        (None, "NOT_EVALUATED", [])]
    assert got["ours"]["overall"][:2] == (1.0, "PASSED")
    assert got["ours"] == got["theirs"]


def test_a_rubric_evaluator_without_rubrics_or_criterion_is_a_value_error(packages: Path, judges: None) -> None:
    for side, package in (("theirs", "their_evalext"), ("ours", "our_evalext")):
        case, metrics = _sides()[side]
        actual, _ = _invocations(case)
        bare = [one.model_copy(update={"rubrics": None}) for one in actual]
        evaluator = _module(package).CityRubrics(_judge_metric(metrics, "city_rubrics", "RubricsBasedCriterion"))
        with pytest.raises(ValueError, match=r"(?i)rubric"):
            _run(evaluator.evaluate_invocations(bare, None))
        with pytest.raises(ValueError, match="criterion"):
            _module(package).ScoreJudge(metrics.EvalMetric(metric_name="score_judge", threshold=0.5))


# -- the registry, consulted by the eval runs ---------------------------------------------------

CASE = {"eval_id": "paris_then_oslo", "session_input": {"app_name": "weather", "user_id": "tia", "state": {}},
        "conversation": [
            {"invocation_id": "t1", "user_content": {"role": "user", "parts": [{"text": "What is the weather in Paris?"}]},
             "final_response": {"role": "model", "parts": [{"text": "It is sunny in Paris."}]}},
            {"invocation_id": "t2", "user_content": {"role": "user", "parts": [{"text": "hello"}]},
             "final_response": {"role": "model", "parts": [{"text": "Ask me about Oslo."}]}}]}


class Kept:
    def __init__(self) -> None:
        self.results: list[Any] = []

    def save_eval_set_result(self, app_name: str, eval_set_id: str, eval_case_results: list[Any]) -> None:
        self.results += eval_case_results


def _info(name: str, description: str = "") -> MetricInfo:
    return MetricInfo.model_validate({"metric_name": name, "description": description,
                                      "metric_value_info": {"interval": {"min_value": 0.0, "max_value": 1.0}}})


def _write(folder: Path, config: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test_config.json").write_text(json.dumps(config))
    path = folder / "case.test.json"
    path.write_text(json.dumps({"eval_set_id": "ext", "eval_cases": [CASE]}))
    return path


def _evaluate(evaluator: Any, package: str, path: Path, name: str) -> dict[str, Any]:
    """One evaluation's kept results of metric ``name``, and its failure lines."""
    kept = Kept()
    failures: list[str] = []
    try:
        asyncio.run(asyncio.wait_for(evaluator.evaluate(package, str(path), num_runs=1, app_name="weather",
                                                        eval_set_results_manager=kept), timeout=120))
    except AssertionError as failed:
        failures = [line.replace(package, "<agent>").split(" See the logs")[0].split(" Why:")[0]
                    for line in str(failed).splitlines()[1:]]

    def row(result: Any) -> tuple[Any, ...]:
        return result.metric_name, result.score, result.eval_status.name, result.threshold

    return {"failures": failures,
            "overall": [row(m) for case in kept.results for m in case.overall_eval_metric_results
                        if m.metric_name == name],
            "per_invocation": [[row(m) for m in r.eval_metric_results if m.metric_name == name]
                               for case in kept.results for r in case.eval_metric_result_per_invocation]}


@pytest.fixture
def registered(packages: Path) -> Iterator[None]:
    """``names_the_city`` -> NamesTheCity in both default registries, and gone after."""
    for registry, package, info in (
            (their_registry.DEFAULT_METRIC_EVALUATOR_REGISTRY, "their_evalext", their_registry._get_default_metric_info),
            (our_registry.DEFAULT_METRIC_EVALUATOR_REGISTRY, "our_evalext", None)):
        metric_info = (info("names_the_city", "the user's evaluator") if info else
                       _info("names_the_city", "the user's evaluator"))
        registry.register_evaluator(metric_info=metric_info, evaluator=_module(package).NamesTheCity)
    yield
    for registry in (their_registry.DEFAULT_METRIC_EVALUATOR_REGISTRY, our_registry.DEFAULT_METRIC_EVALUATOR_REGISTRY):
        registry._registry.pop("names_the_city", None)


@pytest.mark.parametrize("threshold", [0.5, 0.8], ids=["passes", "fails"])
def test_an_evaluator_registered_by_the_user_is_what_agent_evaluator_runs(
        threshold: float, packages: Path, registered: None) -> None:
    got = {}
    for package, evaluator in (("their_evalext", TheirEvaluator), ("our_evalext", AgentEvaluator)):
        path = _write(packages / "evals" / package, {"criteria": {"names_the_city": threshold}})
        got[package] = _evaluate(evaluator, package, path, "names_the_city")
    ours = got["our_evalext"]
    # turn 1 names Paris (1.0); turn 2's greeting does not name Oslo (0.0): the mean, 0.5
    assert ours["overall"] == [("names_the_city", 0.5, "PASSED" if threshold == 0.5 else "FAILED", threshold)]
    assert [[row[1] for row in rows] for rows in ours["per_invocation"]] == [[1.0], [0.0]]
    assert ours == got["their_evalext"]


def test_local_eval_service_consults_its_own_registry(packages: Path) -> None:
    module = _module("our_evalext")
    sets = InMemoryEvalSetsManager()
    sets.create_eval_set("weather", "ext")
    sets.add_eval_case("weather", "ext", EvalCase.model_validate(CASE))
    registry = our_registry.MetricEvaluatorRegistry()
    registry.register_evaluator(_info("names_the_city"), module.NamesTheCity)
    metric = EvalMetric(metric_name="names_the_city", threshold=0.5)

    async def go(service: LocalEvalService) -> list[Any]:
        inferences = [one async for one in service.perform_inference(InferenceRequest(
            app_name="weather", eval_set_id="ext", inference_config=InferenceConfig()))]
        return [one async for one in service.evaluate(EvaluateRequest(
            inference_results=inferences, evaluate_config=EvaluateConfig(eval_metrics=[metric])))]

    [result] = asyncio.run(go(LocalEvalService(module.root_agent, sets, metric_evaluator_registry=registry)))
    [overall] = result.overall_eval_metric_results
    assert (overall.score, overall.eval_status.name) == (0.5, "PASSED")
    assert [r.eval_metric_results[0].score for r in result.eval_metric_result_per_invocation] == [1.0, 0.0]
    # the default registry has no such metric: refused before any case is scored, as before
    with pytest.raises(ValueError, match="names_the_city"):
        asyncio.run(go(LocalEvalService(module.root_agent, sets)))
    # an evaluator that answers a result for no invocation, passing: a typed error (google-adk: ValueError)
    registry.register_evaluator(_info("names_the_city"), module.TooFew)
    with pytest.raises(CustomMetricError, match="0 per-invocation results for 2 invocations"):
        asyncio.run(go(LocalEvalService(module.root_agent, sets, metric_evaluator_registry=registry)))
    with pytest.raises(TypeError, match="MetricEvaluatorRegistry"):
        LocalEvalService(module.root_agent, sets, metric_evaluator_registry=object())  # type: ignore[arg-type]


def test_register_custom_metrics_from_config(packages: Path) -> None:
    infos, scores = {}, {}
    for side, package, registry_module in (("theirs", "their_evalext", their_registry),
                                           ("ours", "our_evalext", our_registry)):
        config_type = TheirEvalConfig if side == "theirs" else EvalConfig
        config = config_type.model_validate({
            "criteria": {"names_the_city": 0.5},
            "custom_metrics": {"names_the_city": {"code_config": {"name": f"{package}.agent.names_the_city"},
                                                  "description": "the user's function"}}})
        fresh = registry_module.MetricEvaluatorRegistry()
        assert registry_module.register_custom_metrics_from_config(config, fresh) is fresh
        [info] = [one for one in fresh.get_registered_metrics() if one.metric_name == "names_the_city"]
        infos[side] = info.model_dump(mode="json")
        case, metrics = _sides()[side]
        actual, expected = _invocations(case)
        evaluator = fresh.get_evaluator(metrics.EvalMetric(metric_name="names_the_city", threshold=0.5,
                                                           criterion=metrics.BaseCriterion(threshold=0.5)))
        scores[side] = _result_rows(_run(evaluator.evaluate_invocations(actual, expected)))
        with pytest.raises(TheirNotFound if side == "theirs" else NotFoundError):
            fresh.get_evaluator(metrics.EvalMetric(metric_name="no_such_metric", threshold=0.5))
    assert infos["ours"] == infos["theirs"]
    assert scores["ours"]["per_invocation"] == [(1.0, "PASSED", None), (0.0, "FAILED", None), (1.0, "PASSED", None)]
    assert scores["ours"] == scores["theirs"]


def test_register_custom_metrics_from_config_in_the_default_registry_reaches_agent_evaluator(
        packages: Path) -> None:
    config = EvalConfig.model_validate({"custom_metrics": {"names_the_city": {
        "code_config": {"name": "our_evalext.agent.names_the_city"}}}})
    assert our_registry.register_custom_metrics_from_config(config) is our_registry.DEFAULT_METRIC_EVALUATOR_REGISTRY
    try:  # the eval's own config names the metric, without custom_metrics
        path = _write(packages / "evals" / "default", {"criteria": {"names_the_city": 0.5}})
        got = _evaluate(AgentEvaluator, "our_evalext", path, "names_the_city")
    finally:
        our_registry.DEFAULT_METRIC_EVALUATOR_REGISTRY._registry.pop("names_the_city", None)
        our_registry.DEFAULT_METRIC_EVALUATOR_REGISTRY._custom_function_paths.pop("names_the_city", None)
    assert got["overall"] == [("names_the_city", 0.5, "PASSED", 0.5)]


def test_the_registry_and_its_entries() -> None:
    ours = our_registry.MetricEvaluatorRegistry()
    theirs = their_registry.MetricEvaluatorRegistry()
    assert [m.metric_name for m in ours.get_registered_metrics()] == \
        [m.metric_name for m in theirs.get_registered_metrics()]
    assert [(m.metric_value_info.interval is None) for m in ours.get_registered_metrics()] == \
        [(m.metric_value_info.interval is None) for m in theirs.get_registered_metrics()]
    trajectory = ours.get_evaluator(EvalMetric(metric_name="tool_trajectory_avg_score", threshold=1.0))
    assert isinstance(trajectory, TrajectoryEvaluator) and isinstance(trajectory, Evaluator)
    with pytest.raises(NotFoundError, match="no_such_metric"):
        ours.get_evaluator(EvalMetric(metric_name="no_such_metric", threshold=0.5))
    with pytest.raises(TypeError, match="Evaluator"):
        ours.register_evaluator(_info("x"), object)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="MetricInfo"):
        ours.register_evaluator({"metric_name": "x"}, TrajectoryEvaluator)  # type: ignore[arg-type]
    forked = ours.fork()
    forked.register_evaluator(_info("x"), TrajectoryEvaluator)
    assert "x" not in [m.metric_name for m in ours.get_registered_metrics()]


# -- the user personas --------------------------------------------------------------------------

def test_the_default_personas_are_google_adks() -> None:
    def shape(module: Any) -> Any:
        registry = module.get_default_persona_registry()
        return [(p.id, [b.name for b in p.behaviors]) for p in registry.get_registered_personas()]

    assert shape(our_personas) == shape(their_personas)
    assert [(b.name, b.value.name) for b in our_personas.PreBuiltBehaviors] == \
        [(b.name, b.value.name) for b in their_personas.PreBuiltBehaviors]
    for behavior in our_personas.PreBuiltBehaviors:
        assert behavior.value.description and behavior.value.behavior_instructions and behavior.value.violation_rubrics
    with pytest.raises(NotFoundError, match="NOBODY"):
        our_personas.get_default_persona_registry().get_persona("NOBODY")
    with pytest.raises(TheirNotFound):
        their_personas.get_default_persona_registry().get_persona("NOBODY")


def test_the_prompt_functions_take_google_adks_arguments() -> None:
    templates = ["{{ stop_signal }} {{ conversation_plan }} {{ conversation_history }} {{ persona.description }}",
                 "{{ stop_signal }} {{ conversation_plan }}", "{{ stop_signal ", "no placeholder"]
    required = ["stop_signal", "conversation_plan", "conversation_history", "persona"]
    assert [our_prompts.is_valid_user_simulator_template(t, required) for t in templates] == \
        [their_prompts.is_valid_user_simulator_template(t, required) for t in templates] == [True, False, False, False]
    sides = ((our_prompts, our_quality, our_personas), (their_prompts, their_quality, their_personas))
    for prompts, quality, personas in sides:
        novice = personas.get_default_persona_registry().get_persona("NOVICE")
        prompt = prompts.get_llm_backed_user_simulator_prompt("PLAN-X", "HISTORY-Y", "</stop>", user_persona=novice)
        judged = quality.get_per_turn_user_simulator_quality_prompt("PLAN-X", "HISTORY-Y", "MESSAGE-Z", "</stop>",
                                                                    user_persona=novice)
        for text in (prompt, judged):
            assert all(part in text for part in ("PLAN-X", "HISTORY-Y", "</stop>"))
            assert all(behavior.name in text for behavior in novice.behaviors)
            assert "{{" not in text  # the behaviours' own placeholders are filled too
        assert "MESSAGE-Z" in judged
        custom = prompts.get_llm_backed_user_simulator_prompt("PLAN-X", "HISTORY-Y", "</stop>",
                                                              custom_instructions="Plan: {{ conversation_plan }}")
        assert custom == "Plan: PLAN-X"
        with pytest.raises(ValueError):  # with a persona, the four placeholders are needed
            prompts.get_llm_backed_user_simulator_prompt("PLAN-X", "HISTORY-Y", "</stop>", user_persona=novice,
                                                         custom_instructions="Plan: {{ conversation_plan }}")


def test_a_scenario_names_a_built_in_persona_by_its_id() -> None:
    """Our simulator reads a persona id as google-adk's scenario does: the built-in
    persona's behaviours reach its prompt; an unknown id is a NotFoundError."""
    scenario = ConversationScenario.model_validate({"starting_prompt": "hi", "conversation_plan": "Ask about Paris.",
                                                    "user_persona": "EXPERT"})
    simulator = LlmBackedUserSimulator(LlmBackedUserSimulatorConfig(), scenario, lambda name: None)
    prompt = simulator._prompt("user: hi")
    expert = our_personas.get_default_persona_registry().get_persona("EXPERT")
    assert expert.description in prompt and all(b.name in prompt for b in expert.behaviors)
    unknown = scenario.model_copy(update={"user_persona": "NOBODY"})
    with pytest.raises(NotFoundError, match="NOBODY"):
        LlmBackedUserSimulator(LlmBackedUserSimulatorConfig(), unknown, lambda name: None)._prompt("")
