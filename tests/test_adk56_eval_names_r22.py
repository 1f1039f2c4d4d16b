"""google-adk's eval service, eval set managers and eval helpers at google-adk's paths
(``adk_actors.evaluation.*``), side by side with google-adk 2.13's own.

The same eval set, in one file, goes through google-adk's ``LocalEvalService`` and ours
against one Gemini REST stand-in (``test_evals_in_process``'s, which answers by what
it is asked): both make the same invocations and give the same scores. The managers
read and write the same files; the helpers give the same values on the same
invocation.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.errors.not_found_error import NotFoundError as TheirNotFound
from google.adk.evaluation import eval_case as their_case
from google.adk.evaluation import eval_metrics as their_metrics
from google.adk.evaluation.base_eval_service import EvaluateConfig as TheirEvaluateConfig
from google.adk.evaluation.base_eval_service import EvaluateRequest as TheirEvaluateRequest
from google.adk.evaluation.base_eval_service import InferenceConfig as TheirInferenceConfig
from google.adk.evaluation.base_eval_service import InferenceRequest as TheirInferenceRequest
from google.adk.evaluation.eval_config import EvalConfig as TheirEvalConfig
from google.adk.evaluation.eval_config import append_default_efficiency_metrics as their_append
from google.adk.evaluation.eval_config import get_eval_metrics_from_config as their_metrics_of
from google.adk.evaluation.eval_rubrics import RubricScore as TheirRubricScore
from google.adk.evaluation.evaluation_constants import EvalConstants as TheirConstants
from google.adk.evaluation.local_eval_service import LocalEvalService as TheirService
from google.adk.evaluation.local_eval_set_results_manager import (
    LocalEvalSetResultsManager as TheirResults,
)
from google.adk.evaluation.local_eval_sets_manager import LocalEvalSetsManager as TheirSets
from google.adk.evaluation.local_eval_sets_manager import (
    convert_eval_set_to_pydantic_schema as their_convert,
)
from google_adk_harness import agent_packages, on_stand_in
from pydantic import ValidationError
from test_evals_in_process import AGENT, answer

from adk_actors.errors.not_found_error import NotFoundError
from adk_actors.evals import EvalCaseResult, EvalError, EvalSet, EvalStatus
from adk_actors.evaluation import eval_case as our_case
from adk_actors.evaluation import eval_metrics as our_metrics
from adk_actors.evaluation.agent_evaluator import load_json
from adk_actors.evaluation.base_eval_service import (
    EvaluateConfig,
    EvaluateRequest,
    InferenceConfig,
    InferenceRequest,
    InferenceResult,
    InferenceStatus,
)
from adk_actors.evaluation.common import EvalBaseModel
from adk_actors.evaluation.eval_config import (
    EvalConfig,
    append_default_efficiency_metrics,
    get_eval_metrics_from_config,
)
from adk_actors.evaluation.eval_rubrics import RubricScore
from adk_actors.evaluation.eval_set_results_manager import EvalSetResultsManager
from adk_actors.evaluation.evaluation_constants import EvalConstants
from adk_actors.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
from adk_actors.evaluation.local_eval_service import LocalEvalService
from adk_actors.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager
from adk_actors.evaluation.local_eval_sets_manager import (
    LocalEvalSetsManager,
    convert_eval_set_to_pydantic_schema,
    load_eval_set_from_file,
)
from adk_actors.testing import StubServer, gemini_answers

DEADLINE = 120
JUDGE = {"threshold": 0.5, "judge_model_options": {"judge_model": "gemini-2.5-flash", "num_samples": 3}}
SUNNY = {"rubric_id": "r_sunny", "rubric_content": {"text_property": "The answer says it is sunny."}}
CRITERIA: dict[str, Any] = {
    "tool_trajectory_avg_score": 1.0, "response_match_score": 0.8,
    "final_response_match_v2": JUDGE,
    "rubric_based_final_response_quality_v1": {**JUDGE, "rubrics": [SUNNY]}}


def _turn(text: str, response: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return {"invocation_id": f"i-{len(text)}", "user_content": {"role": "user", "parts": [{"text": text}]},
            "final_response": {"role": "model", "parts": [{"text": response}]},
            "intermediate_data": {"tool_uses": [{"name": n, "args": a} for n, a in calls]}}


def _case(eval_id: str, *turns: dict[str, Any]) -> dict[str, Any]:
    return {"eval_id": eval_id, "conversation": list(turns),
            "session_input": {"app_name": "weather", "user_id": "tia", "state": {}}}


EVAL_SET = {"eval_set_id": "weather_set", "name": "weather_set", "eval_cases": [
    _case("paris", _turn("What is the weather in Paris?", "It is sunny in Paris.",
                         [("get_weather", {"city": "Paris"})])),
    _case("hello_then_oslo", _turn("hello", "Hello! Ask me about the weather.", []),
          _turn("What is the weather in Oslo?", "Oslo is rainy today.", [("get_weather", {"city": "Oslo"})])),
    _case("rome_in_other_order", _turn("What is the weather in Rome, and the time?", "It is cloudy in Rome.",
                                       [("get_weather", {"city": "Rome"}), ("get_time", {"city": "Rome"})])),
]}


@pytest.fixture(scope="module")
def stand_in() -> Iterator[str]:
    with StubServer(gemini_answers(answer)) as server:
        yield server.url


@pytest.fixture
def agents(stand_in: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``their_weather`` (google-adk's agent) and ``our_weather`` (its source rewritten),
    on the stand-in; the eval set written as app ``weather``'s under ``tmp/agents``."""
    on_stand_in(stand_in, monkeypatch)
    for folder in agent_packages(tmp_path, AGENT, "their_weather", "our_weather", monkeypatch):
        (folder / "agents" / "weather").mkdir()
        (folder / "agents" / "weather" / "weather_set.evalset.json").write_text(json.dumps(EVAL_SET))
        yield folder / "agents"


async def _collect(generator: AsyncIterator[Any]) -> list[Any]:
    return [item async for item in generator]


def _run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout=DEADLINE))


def _invocation_row(invocation: Any) -> dict[str, Any]:
    """What a user reads of an invocation, through either side's helpers."""
    helpers = their_case if type(invocation).__module__.startswith("google") else our_case
    text = "".join(part.text or "" for part in (invocation.final_response.parts or [])) \
        if invocation.final_response else None
    return {"user": invocation.user_content.parts[0].text, "final": text,
            "calls": [(c.name, dict(c.args or {})) for c in helpers.get_all_tool_calls(invocation.intermediate_data)],
            "answers": [(r.name, dict(r.response or {}))
                        for r in helpers.get_all_tool_responses(invocation.intermediate_data)],
            "paired": [(c.name, r is not None and r.name == c.name)
                       for c, r in helpers.get_all_tool_calls_with_responses(invocation.intermediate_data)],
            "usage": [u.prompt_token_count for u in helpers.get_all_usage_metadata(invocation)]}


def _metric_rows(results: list[Any]) -> list[tuple[Any, ...]]:
    """(metric, score, status) per metric, overall then per invocation; the turn's
    duration (a clock's reading) left out."""
    rows = []
    for result in results:
        if result.metric_name != "invocation_duration_v1":
            rows.append((result.metric_name, result.score, result.eval_status.name))
    return rows


def _case_rows(case_results: list[Any]) -> dict[str, Any]:
    return {result.eval_id: {"status": result.final_eval_status.name, "user": result.user_id,
                             "overall": _metric_rows(result.overall_eval_metric_results),
                             "each": [_metric_rows(row.eval_metric_results)
                                      for row in result.eval_metric_result_per_invocation]}
            for result in case_results}


async def _their_eval(agents: Path, criteria: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    from their_weather.agent import root_agent

    service = TheirService(root_agent=root_agent, eval_sets_manager=TheirSets(str(agents)),
                           eval_set_results_manager=TheirResults(str(agents / "theirs")))
    inferences = await _collect(service.perform_inference(TheirInferenceRequest(
        app_name="weather", eval_set_id="weather_set", inference_config=TheirInferenceConfig(parallelism=2))))
    metrics = their_metrics_of(TheirEvalConfig(criteria=criteria))
    results = await _collect(service.evaluate(TheirEvaluateRequest(
        inference_results=inferences, evaluate_config=TheirEvaluateConfig(eval_metrics=metrics, parallelism=2))))
    return inferences, results


async def _our_eval(agents: Path, criteria: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    from our_weather.agent import root_agent

    service = LocalEvalService(root_agent=root_agent, eval_sets_manager=LocalEvalSetsManager(str(agents)),
                               eval_set_results_manager=LocalEvalSetResultsManager(str(agents / "ours")))
    inferences = await _collect(service.perform_inference(InferenceRequest(
        app_name="weather", eval_set_id="weather_set", inference_config=InferenceConfig(parallelism=2))))
    metrics = get_eval_metrics_from_config(EvalConfig(criteria=criteria))
    results = await _collect(service.evaluate(EvaluateRequest(
        inference_results=inferences, evaluate_config=EvaluateConfig(eval_metrics=metrics, parallelism=2))))
    return inferences, results


def test_the_eval_service_runs_and_scores_an_eval_set_as_google_adks(agents: Path) -> None:
    their_inferences, their_results = _run(_their_eval(agents, CRITERIA))
    our_inferences, our_results = _run(_our_eval(agents, CRITERIA))

    def inference_rows(inferences: list[Any]) -> dict[str, Any]:
        return {one.eval_case_id: {"status": one.status.name, "app": one.app_name, "set": one.eval_set_id,
                                   "session": (one.session_id or "")[:len("adk-eval-session-")],
                                   "invocations": [_invocation_row(i) for i in one.inferences or []]}
                for one in inferences}

    theirs, ours = inference_rows(their_inferences), inference_rows(our_inferences)
    assert ours == theirs
    assert ours["paris"]["invocations"][0]["calls"] == [("get_weather", {"city": "Paris"})]
    assert ours["paris"]["invocations"][0]["paired"] == [("get_weather", True)]
    assert _case_rows(our_results) == _case_rows(their_results)
    rows = _case_rows(our_results)
    assert rows["paris"]["status"] == "PASSED" and rows["rome_in_other_order"]["status"] == "FAILED"
    assert ("final_response_match_v2", 0.0, "FAILED") in rows["rome_in_other_order"]["overall"]

    # each side saved one result of the set, which the other side's manager reads alike
    [their_id] = TheirResults(str(agents / "theirs")).list_eval_set_results("weather")
    [our_id] = LocalEvalSetResultsManager(str(agents / "ours")).list_eval_set_results("weather")
    assert our_id.startswith("weather_weather_set_")
    mine_by_them = TheirResults(str(agents / "ours")).get_eval_set_result("weather", our_id)
    theirs_by_me = LocalEvalSetResultsManager(str(agents / "theirs")).get_eval_set_result("weather", their_id)
    assert _case_rows(mine_by_them.eval_case_results) == _case_rows(theirs_by_me.eval_case_results) == rows


def test_a_failed_run_and_bad_requests_fail_alike(agents: Path) -> None:
    """A case whose agent raises is a FAILURE inference and a FAILED case without
    metric results, on both sides; an unknown set, a parallelism of 0 and a case
    whose inferences do not match its turns are refused on both."""
    (agents / "weather" / "broken.evalset.json").write_text(json.dumps({
        "eval_set_id": "broken", "eval_cases": [_case("paris", *EVAL_SET["eval_cases"][0]["conversation"])]}))

    async def both() -> tuple[Any, ...]:
        from our_weather.agent import root_agent as ours
        from their_weather.agent import root_agent as theirs

        def boom(*_: Any, **__: Any) -> None:
            raise RuntimeError("the agent broke")

        theirs.before_agent_callback, ours.before_agent_callback = boom, boom
        try:
            their_service = TheirService(root_agent=theirs, eval_sets_manager=TheirSets(str(agents)))
            our_service = LocalEvalService(root_agent=ours, eval_sets_manager=LocalEvalSetsManager(str(agents)))
            their_failed = await _collect(their_service.perform_inference(TheirInferenceRequest(
                app_name="weather", eval_set_id="broken", inference_config=TheirInferenceConfig())))
            our_failed = await _collect(our_service.perform_inference(InferenceRequest(
                app_name="weather", eval_set_id="broken", inference_config=InferenceConfig())))
            their_scored = await _collect(their_service.evaluate(TheirEvaluateRequest(
                inference_results=their_failed, evaluate_config=TheirEvaluateConfig(
                    eval_metrics=their_metrics_of(TheirEvalConfig(criteria={"response_match_score": 0.8}))))))
            our_scored = await _collect(our_service.evaluate(EvaluateRequest(
                inference_results=our_failed, evaluate_config=EvaluateConfig(
                    eval_metrics=get_eval_metrics_from_config(EvalConfig(criteria={"response_match_score": 0.8}))))))
        finally:
            theirs.before_agent_callback = ours.before_agent_callback = None
        return their_failed, our_failed, their_scored, our_scored, our_service

    logging.disable(logging.ERROR)  # both sides log the failed run with its traceback
    try:
        their_failed, our_failed, their_scored, our_scored, our_service = _run(both())
    finally:
        logging.disable(logging.NOTSET)
    assert [(r.status.name, r.inferences) for r in our_failed] == [(r.status.name, r.inferences)
                                                                  for r in their_failed] == [("FAILURE", None)]
    assert "the agent broke" in our_failed[0].error_message and "the agent broke" in their_failed[0].error_message
    assert _case_rows(our_scored) == _case_rows(their_scored) == {
        "paris": {"status": "FAILED", "user": "tia", "overall": [], "each": []}}

    with pytest.raises(NotFoundError, match="nope"):
        _run(_collect(our_service.perform_inference(InferenceRequest(
            app_name="weather", eval_set_id="nope", inference_config=InferenceConfig()))))
    with pytest.raises(ValueError, match="parallelism"):
        _run(_collect(our_service.perform_inference(InferenceRequest(
            app_name="weather", eval_set_id="broken", inference_config=InferenceConfig(parallelism=0)))))
    two = our_failed[0].model_copy(update={"status": InferenceStatus.SUCCESS,
                                           "inferences": EvalSet.model_validate(EVAL_SET).eval_cases[1].conversation})
    with pytest.raises(ValueError, match="must match"):
        _run(_collect(our_service.evaluate(EvaluateRequest(
            inference_results=[two], evaluate_config=EvaluateConfig(eval_metrics=[])))))
    with pytest.raises(EvalError, match="not offered"):
        _run(_collect(our_service.evaluate(EvaluateRequest(
            inference_results=[two], evaluate_config=EvaluateConfig(eval_metrics=get_eval_metrics_from_config(
                EvalConfig(criteria={"no_such_metric": 0.5})))))))


def test_a_request_and_a_result_read_google_adks_json() -> None:
    """The requests and an inference result move between the two sides as JSON
    (camelCase)."""
    request = TheirInferenceRequest(app_name="a", eval_set_id="s", eval_case_ids=["c"],
                                    inference_config=TheirInferenceConfig(parallelism=3, labels={"k": "v"}))
    ours = InferenceRequest.model_validate_json(request.model_dump_json(by_alias=True))
    assert ours.model_dump(mode="json") == request.model_dump(mode="json")
    result = InferenceResult(app_name="a", eval_set_id="s", eval_case_id="c", session_id="x",
                             status=InferenceStatus.FAILURE, error_message="no")
    wire = json.loads(result.model_dump_json(by_alias=True))
    assert wire["evalCaseId"] == "c" and wire["status"] == 2 and wire["errorMessage"] == "no"
    from google.adk.evaluation.base_eval_service import InferenceResult as TheirResult
    assert TheirResult.model_validate(wire).model_dump(mode="json") == result.model_dump(mode="json")
    with pytest.raises(ValidationError):
        EvaluateConfig.model_validate({"parallelism": 2})  # eval_metrics is required, as in google-adk


# -- the managers ----------------------------------------------------------------------------


def _case_data(eval_set: Any) -> list[dict[str, Any]]:
    return [{"id": case.eval_id, "turns": [_invocation_row(i) for i in case.conversation or []],
             "user": case.session_input.user_id if case.session_input else None} for case in eval_set.eval_cases]


def test_the_eval_sets_managers_share_their_files(tmp_path: Path) -> None:
    theirs, ours = TheirSets(str(tmp_path)), LocalEvalSetsManager(str(tmp_path))
    their_case_obj = their_case.EvalCase.model_validate(EVAL_SET["eval_cases"][0])
    our_case_obj = our_case.EvalCase.model_validate(EVAL_SET["eval_cases"][1])

    theirs.create_eval_set("weather", "made_by_them")
    ours.create_eval_set("weather", "made_by_us")
    assert ours.list_eval_sets("weather") == theirs.list_eval_sets("weather") == ["made_by_them", "made_by_us"]
    theirs.add_eval_case("weather", "made_by_us", their_case_obj)
    ours.add_eval_case("weather", "made_by_them", our_case_obj)
    for eval_set_id in ("made_by_them", "made_by_us"):
        assert _case_data(ours.get_eval_set("weather", eval_set_id)) == _case_data(
            theirs.get_eval_set("weather", eval_set_id))
    assert _case_data(ours.get_eval_set("weather", "made_by_us"))[0]["id"] == "paris"

    changed = our_case_obj.model_copy(update={"session_input": our_case_obj.session_input.model_copy(
        update={"user_id": "ola"})})
    ours.update_eval_case("weather", "made_by_them", changed)
    assert theirs.get_eval_case("weather", "made_by_them", "hello_then_oslo").session_input.user_id == "ola"
    ours.delete_eval_case("weather", "made_by_us", "paris")
    assert theirs.get_eval_set("weather", "made_by_us").eval_cases == []

    # the same refusals
    for manager, missing in ((ours, NotFoundError), (theirs, TheirNotFound)):
        assert manager.get_eval_set("weather", "nope") is None
        assert manager.get_eval_case("weather", "made_by_them", "nope") is None
        with pytest.raises(ValueError):
            manager.create_eval_set("weather", "made_by_us")  # taken
        with pytest.raises(ValueError):
            manager.create_eval_set("weather", "has-dash")  # not letters, digits, _
        with pytest.raises(ValueError):
            manager.add_eval_case("weather", "made_by_them", our_case_obj if manager is ours else their_case_obj
                                  .model_copy(update={"eval_id": "hello_then_oslo"}))  # a case of that id
        with pytest.raises(missing):
            manager.add_eval_case("weather", "nope", our_case_obj if manager is ours else their_case_obj)
        with pytest.raises(missing):
            manager.delete_eval_case("weather", "made_by_us", "nope")
        with pytest.raises(missing):
            manager.list_eval_sets("no_app")
        with pytest.raises(ValueError):
            manager.get_eval_set("..", "made_by_us")


def test_the_oldest_eval_set_format_reads_alike(tmp_path: Path) -> None:
    old = [{"name": "dice", "data": [
        {"query": "Roll a die", "expected_tool_use": [{"tool_name": "roll", "tool_input": {"sides": 6}}],
         "expected_intermediate_agent_responses": [{"author": "helper", "text": "rolling"}], "reference": "4"},
        {"query": "Thanks"}], "initial_session": {"app_name": "dice", "user_id": "u", "state": {"n": 1}}},
        {"name": "bare", "data": []}]
    (tmp_path / "dice").mkdir()
    (tmp_path / "dice" / "old.evalset.json").write_text(json.dumps(old))

    def plain(eval_set: Any) -> Any:
        data = json.loads(eval_set.model_dump_json(exclude_none=True))
        for case in data["eval_cases"]:
            case.pop("creation_timestamp")
            for turn in case["conversation"]:
                turn.pop("invocation_id"), turn.pop("creation_timestamp")
        data.pop("creation_timestamp")
        return {k: v for k, v in data.items() if k in ("eval_set_id", "name", "eval_cases")}

    ours = plain(convert_eval_set_to_pydantic_schema("old", old))
    theirs = plain(their_convert("old", old))
    assert [(c["eval_id"], c.get("session_input"), [(t["user_content"]["parts"][0]["text"],
                                                     t["final_response"]["parts"][0]["text"],
                                                     t["intermediate_data"]) for t in c["conversation"]])
            for c in ours["eval_cases"]] == [
        (c["eval_id"], c.get("session_input"), [(t["user_content"]["parts"][0]["text"],
                                                 t["final_response"]["parts"][0].get("text", ""),
                                                 t["intermediate_data"]) for t in c["conversation"]])
        for c in theirs["eval_cases"]]
    assert ours["eval_cases"][0]["session_input"]["state"] == {"n": 1}
    loaded = LocalEvalSetsManager(str(tmp_path)).get_eval_set("dice", "old")
    assert loaded is not None and plain(loaded) == ours
    assert load_eval_set_from_file(str(tmp_path / "dice" / "old.evalset.json"), "x").eval_set_id == "x"


def test_the_in_memory_manager_keeps_sets_as_google_adks() -> None:
    manager = InMemoryEvalSetsManager()
    made = manager.create_eval_set("app", "s")
    assert made.name is None and manager.list_eval_sets("app") == ["s"] and manager.list_eval_sets("x") == []
    case = our_case.EvalCase.model_validate(EVAL_SET["eval_cases"][0])
    manager.add_eval_case("app", "s", case)
    assert manager.get_eval_case("app", "s", "paris") is case and made.eval_cases == [case]
    with pytest.raises(ValueError):
        manager.add_eval_case("app", "s", case)
    with pytest.raises(ValueError):
        manager.create_eval_set("app", "s")
    manager.update_eval_case("app", "s", case.model_copy(update={"rubrics": []}))
    assert manager.get_eval_case("app", "s", "paris").rubrics == []
    with pytest.raises(NotFoundError):
        manager.update_eval_case("app", "s", case.model_copy(update={"eval_id": "nope"}))
    with pytest.raises(NotFoundError):
        manager.add_eval_case("app", "nope", case)
    manager.delete_eval_case("app", "s", "paris")
    assert manager.get_eval_set("app", "s").eval_cases == [] and manager.get_eval_case("app", "s", "paris") is None
    with pytest.raises(NotFoundError):
        manager.delete_eval_case("app", "s", "paris")


def test_the_eval_service_runs_from_an_in_memory_set(agents: Path) -> None:
    """The in-memory manager serves the service, the case's own session id is used,
    and the results go to any EvalSetResultsManager."""
    from our_weather.agent import root_agent

    class Kept(EvalSetResultsManager):
        def __init__(self) -> None:
            self.saved: list[tuple[str, str, list[EvalCaseResult]]] = []

        def save_eval_set_result(self, app_name: str, eval_set_id: str,
                                 eval_case_results: list[EvalCaseResult]) -> None:
            self.saved.append((app_name, eval_set_id, eval_case_results))

        def get_eval_set_result(self, app_name: str, eval_set_result_id: str) -> Any:
            raise NotFoundError(eval_set_result_id)

        def list_eval_set_results(self, app_name: str) -> list[str]:
            return []

    sets, kept = InMemoryEvalSetsManager(), Kept()
    sets.create_eval_set("weather", "mem")
    case = our_case.EvalCase.model_validate(EVAL_SET["eval_cases"][0])
    case.session_input.session_id = "pinned-session"
    sets.add_eval_case("weather", "mem", case)
    service = LocalEvalService(root_agent, sets, eval_set_results_manager=kept)

    async def go() -> tuple[list[InferenceResult], list[EvalCaseResult]]:
        inferences = await _collect(service.perform_inference(InferenceRequest(
            app_name="weather", eval_set_id="mem", eval_case_ids=["paris"], inference_config=InferenceConfig())))
        results = await _collect(service.evaluate(EvaluateRequest(inference_results=inferences,
            evaluate_config=EvaluateConfig(eval_metrics=get_eval_metrics_from_config(
                EvalConfig(criteria={"tool_trajectory_avg_score": 1.0}))))))
        return inferences, results

    [inference], [result] = _run(go())
    assert inference.session_id == result.session_id == "pinned-session"
    assert result.final_eval_status == EvalStatus.PASSED
    assert [(app, set_id, [r.eval_id for r in rs]) for app, set_id, rs in kept.saved] == [("weather", "mem", ["paris"])]
    with pytest.raises(ValueError, match="live"):
        _run(_collect(service.perform_inference(InferenceRequest(
            app_name="weather", eval_set_id="mem", inference_config=InferenceConfig(use_live=True)))))
    with pytest.raises(TypeError, match="metric_evaluator_registry must be a MetricEvaluatorRegistry"):
        LocalEvalService(root_agent, sets, metric_evaluator_registry=object())


# -- the helpers and the small types ---------------------------------------------------------


INVOCATION = {
    "invocation_id": "e-1", "user_content": {"role": "user", "parts": [{"text": "weather?"}]},
    "final_response": {"role": "model", "parts": [{"text": "sunny"}]},
    "intermediate_data": {"invocation_events": [
        {"author": "a", "content": {"role": "model", "parts": [
            {"function_call": {"id": "c1", "name": "get_weather", "args": {"city": "Paris"}}},
            {"function_call": {"id": "c2", "name": "get_time", "args": {}}}]},
         "usage_metadata": {"prompt_token_count": 7, "candidates_token_count": 2}},
        {"author": "a", "content": {"role": "user", "parts": [
            {"function_response": {"id": "c1", "name": "get_weather", "response": {"w": "sunny"}}}]}},
        {"author": "b", "content": {"role": "model", "parts": [{"text": "thinking"}]},
         "usage_metadata": {"prompt_token_count": 3}}]}}


@pytest.mark.parametrize("data", [
    INVOCATION,
    {**INVOCATION, "intermediate_data": {"tool_uses": [{"id": "x", "name": "t", "args": {"a": 1}}],
                                         "tool_responses": [{"id": "x", "name": "t", "response": {"r": 2}}]}},
    {**INVOCATION, "intermediate_data": None},
])
def test_the_invocation_helpers_give_google_adks_values(data: dict[str, Any]) -> None:
    theirs = their_case.Invocation.model_validate(data)
    ours = our_case.Invocation.model_validate(data)
    assert _invocation_row(ours) == _invocation_row(theirs)
    ids = [(c.id, r.id if r else None) for c, r in our_case.get_all_tool_calls_with_responses(ours.intermediate_data)]
    assert ids == [(c.id, r.id if r else None)
                   for c, r in their_case.get_all_tool_calls_with_responses(theirs.intermediate_data)]
    if data is INVOCATION:
        assert ids == [("c1", "c1"), ("c2", None)] and _invocation_row(ours)["usage"] == [7, 3]
    with pytest.raises(ValueError):
        our_case.get_all_tool_calls("not intermediate data")  # type: ignore[arg-type]


@pytest.mark.parametrize("match_type", ["EXACT", "in-order", "any order", 2, "sometimes", None])
def test_the_trajectory_criterion_reads_match_types_as_google_adks(match_type: Any) -> None:
    def made(kind: Any) -> Any:
        try:
            return kind(threshold=1.0, match_type=match_type).match_type.name
        except ValidationError:
            return "refused"

    ours = made(our_metrics.ToolTrajectoryCriterion)
    assert ours == made(their_metrics.ToolTrajectoryCriterion)
    if ours != "refused":  # and the metric reads the criterion as it was built
        metric = our_metrics.EvalMetric(metric_name="tool_trajectory_avg_score", threshold=1.0,
                                        criterion=our_metrics.ToolTrajectoryCriterion(
                                            threshold=1.0, match_type=match_type).model_dump(mode="json"))
        from adk_actors.evals._metrics import check_metric
        check_metric(metric)


def test_the_small_types_and_constants_are_google_adks(tmp_path: Path) -> None:
    assert [(m.name, m.value) for m in our_metrics.PrebuiltMetrics] == [
        (m.name, m.value) for m in their_metrics.PrebuiltMetrics]
    assert {k: v for k, v in vars(EvalConstants).items() if k.isupper()} == {
        k: v for k, v in vars(TheirConstants).items() if k.isupper()}
    named = [our_metrics.EvalMetric(metric_name="response_match_score", threshold=0.5),
             our_metrics.EvalMetric(metric_name="token_usage_v1")]
    their_named = [their_metrics.EvalMetric(metric_name="response_match_score", threshold=0.5),
                   their_metrics.EvalMetric(metric_name="token_usage_v1")]
    assert [m.metric_name for m in append_default_efficiency_metrics(named)] == [
        m.metric_name for m in their_append(their_named)]
    assert len(named) == 2  # not changed

    details = {"rubric_scores": [{"rubric_id": "r", "rationale": "ok", "score": 1.0}],
               "token_usage_details": {"total_tokens": 12, "input_tokens": 10, "output_tokens": 2},
               "duration_details": {"total_seconds": 1.5, "model_seconds": 1.0}}
    assert our_metrics.EvalMetricResultDetails.model_validate(details).model_dump(mode="json") == \
        their_metrics.EvalMetricResultDetails.model_validate(details).model_dump(mode="json")
    result = our_metrics.EvalMetricResult(metric_name="m", eval_status=EvalStatus.FAILED,
                                          details={**details, "error": "why"})
    assert our_metrics.EvalMetricResultDetails.of(result).rubric_scores == [RubricScore(
        rubric_id="r", rationale="ok", score=1.0)]
    wire = RubricScore(rubric_id="r", score=0.5).model_dump(by_alias=True)
    assert wire == TheirRubricScore(rubric_id="r", score=0.5).model_dump(by_alias=True) and "rubricId" in wire
    for kind in (RubricScore, our_metrics.TokenUsageDetails, our_metrics.Interval):
        assert issubclass(kind, (EvalBaseModel, our_metrics.Interval))
    with pytest.raises(ValidationError):
        RubricScore(rubric_id="r", extra_field=1)  # type: ignore[call-arg]
    interval = {"min_value": 0, "max_value": 1, "open_at_max": True}
    assert our_metrics.MetricValueInfo(interval=interval).model_dump(mode="json") == \
        their_metrics.MetricValueInfo(interval=interval).model_dump(mode="json")

    (tmp_path / "a.json").write_text('[{"query": "hi"}]')
    assert load_json(str(tmp_path / "a.json")) == [{"query": "hi"}]


def test_the_evaluation_generator_makes_google_adks_responses(agents: Path) -> None:
    """Each case run ``repeat_num`` times, by module path, makes the same invocations
    on both sides; a run that raises stops ours with a RuntimeError naming the case."""
    from google.adk.evaluation.eval_set import EvalSet as TheirEvalSet
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator as TheirGenerator

    from adk_actors.evaluation.evaluation_generator import EvaluationGenerator

    data = {**EVAL_SET, "eval_cases": EVAL_SET["eval_cases"][:2]}
    theirs = _run(TheirGenerator.generate_responses(TheirEvalSet.model_validate(data), "their_weather", repeat_num=2))
    ours = _run(EvaluationGenerator.generate_responses(EvalSet.model_validate(data), "our_weather", repeat_num=2))

    def rows(responses: list[Any]) -> list[Any]:
        return [(one.eval_case.eval_id, [[_invocation_row(i) for i in run] for run in one.responses])
                for one in responses]

    assert rows(ours) == rows(theirs)
    assert [len(one.responses) for one in ours] == [2, 2] and len(ours[1].responses[0]) == 2

    from our_weather.agent import root_agent

    def boom(*_: Any, **__: Any) -> None:
        raise RuntimeError("the agent broke")

    root_agent.before_agent_callback = boom
    try:
        with pytest.raises(RuntimeError, match=r"'paris' failed to run.*the agent broke"):
            _run(EvaluationGenerator.generate_responses(EvalSet.model_validate(data), "our_weather", repeat_num=1))
    finally:
        root_agent.before_agent_callback = None
    with pytest.raises(ValueError, match="nobody"):
        _run(EvaluationGenerator.generate_responses(EvalSet.model_validate(data), "our_weather", agent_name="nobody"))


@pytest.mark.parametrize("data", [
    INVOCATION,
    {**INVOCATION, "intermediate_data": {"tool_uses": [{"id": "x", "name": "t", "args": {"a": 1}}],
                                         "tool_responses": [{"id": "x", "name": "t", "response": {"r": 2}}],
                                         "intermediate_responses": [["helper", [{"text": "one"}, {"text": "two"}]]]}},
    {**INVOCATION, "intermediate_data": None, "final_response": None},
])
def test_the_judge_helpers_read_an_invocation_as_google_adks(data: dict[str, Any]) -> None:
    from google.adk.evaluation import llm_as_judge_utils as their_utils

    from adk_actors.evaluation import llm_as_judge_utils as our_utils

    theirs = their_case.Invocation.model_validate(data)
    ours = our_case.Invocation.model_validate(data)
    for flag in (False, True):
        assert our_utils.get_text_from_content(ours, include_intermediate_responses_in_final=flag) == \
            their_utils.get_text_from_content(theirs, include_intermediate_responses_in_final=flag)
    assert our_utils.get_text_from_content(ours.user_content) == their_utils.get_text_from_content(
        theirs.user_content) == "weather?"
    ours_json = our_utils.get_tool_calls_and_responses_as_json_str(ours.intermediate_data)
    theirs_json = their_utils.get_tool_calls_and_responses_as_json_str(theirs.intermediate_data)
    if theirs_json.startswith("{"):
        assert json.loads(ours_json) == json.loads(theirs_json)
    else:
        assert ours_json == theirs_json == "No intermediate steps were taken."


def test_the_judge_helpers_score_as_google_adks() -> None:
    from google.adk.evaluation import llm_as_judge_utils as their_utils
    from google.adk.evaluation.app_details import AppDetails as TheirAppDetails

    from adk_actors.evaluation import llm_as_judge_utils as our_utils
    from adk_actors.evaluation.app_details import AppDetails

    for score, threshold in ((None, 0.5), (0.5, 0.5), (0.4, 0.5), (1.0, 0.0)):
        assert our_utils.get_eval_status(score, threshold).name == their_utils.get_eval_status(score, threshold).name
    for scores in ([], [None], [1.0, None, 0.0, 0.5]):
        assert our_utils.get_average_rubric_score([RubricScore(rubric_id=str(i), score=s) for i, s in enumerate(
            scores)]) == their_utils.get_average_rubric_score([TheirRubricScore(rubric_id=str(i), score=s)
                                                                for i, s in enumerate(scores)])
    assert [(m.name, m.value) for m in our_utils.Label] == [(m.name, m.value) for m in their_utils.Label]
    details = {"agent_details": {"weather": {"name": "weather", "instructions": "Be brief.", "tool_declarations": [
        {"function_declarations": [{"name": "get_weather", "description": "The weather in a city."}]}]}}}
    assert json.loads(our_utils.get_tool_declarations_as_json_str(AppDetails.model_validate(details))) == json.loads(
        their_utils.get_tool_declarations_as_json_str(TheirAppDetails.model_validate(details)))
    from adk_actors.types import GenerateContentConfig
    given = GenerateContentConfig(temperature=0.2)
    made = our_utils.build_judge_request_config(given)
    assert made == given and made is not given and our_utils.build_judge_request_config(None) == GenerateContentConfig()


def test_a_scenario_case_is_played_by_the_user_simulator_as_google_adks(agents: Path) -> None:
    """A ``conversation_scenario`` case through both services, the simulator's config
    carried by ``UserSimulatorProvider``: the simulated user (the stand-in's model) asks
    about Paris, then Oslo, then stops; both make those invocations and score them
    alike (the metrics that need expected invocations are not evaluated)."""
    from google.adk.evaluation.simulation.llm_backed_user_simulator import (
        LlmBackedUserSimulatorConfig as TheirSimulatorConfig,
    )
    from google.adk.evaluation.simulation.user_simulator_provider import (
        UserSimulatorProvider as TheirProvider,
    )

    from adk_actors.evaluation.simulation.llm_backed_user_simulator import (
        LlmBackedUserSimulatorConfig,
    )
    from adk_actors.evaluation.simulation.user_simulator_provider import UserSimulatorProvider

    scenario = {"starting_prompt": "What is the weather in Paris?",
                "conversation_plan": "Ask for the weather in Paris, then in Oslo, then stop."}
    (agents / "weather" / "played.evalset.json").write_text(json.dumps({"eval_set_id": "played", "eval_cases": [
        {"eval_id": "paris_then_oslo", "conversation_scenario": scenario,
         "session_input": {"app_name": "weather", "user_id": "tia", "state": {}}}]}))
    criteria = {"tool_trajectory_avg_score": 1.0, "rubric_based_final_response_quality_v1": {**JUDGE, "rubrics": [SUNNY]}}

    async def theirs() -> tuple[list[Any], list[Any]]:
        from their_weather.agent import root_agent

        service = TheirService(root_agent=root_agent, eval_sets_manager=TheirSets(str(agents)),
                               user_simulator_provider=TheirProvider(user_simulator_config=TheirSimulatorConfig(
                                   model="gemini-2.5-flash", max_allowed_invocations=5)))
        inferences = await _collect(service.perform_inference(TheirInferenceRequest(
            app_name="weather", eval_set_id="played", inference_config=TheirInferenceConfig())))
        return inferences, await _collect(service.evaluate(TheirEvaluateRequest(
            inference_results=inferences, evaluate_config=TheirEvaluateConfig(
                eval_metrics=their_metrics_of(TheirEvalConfig(criteria=criteria))))))

    async def ours() -> tuple[list[Any], list[Any]]:
        from our_weather.agent import root_agent

        service = LocalEvalService(root_agent=root_agent, eval_sets_manager=LocalEvalSetsManager(str(agents)),
                                   user_simulator_provider=UserSimulatorProvider(user_simulator_config=(
                                       LlmBackedUserSimulatorConfig(model="gemini-2.5-flash",
                                                                    max_allowed_invocations=5))))
        inferences = await _collect(service.perform_inference(InferenceRequest(
            app_name="weather", eval_set_id="played", inference_config=InferenceConfig())))
        return inferences, await _collect(service.evaluate(EvaluateRequest(
            inference_results=inferences, evaluate_config=EvaluateConfig(
                eval_metrics=get_eval_metrics_from_config(EvalConfig(criteria=criteria))))))

    their_inferences, their_results = _run(theirs())
    our_inferences, our_results = _run(ours())
    [their_run], [our_run] = their_inferences, our_inferences
    assert [_invocation_row(i) for i in our_run.inferences] == [_invocation_row(i) for i in their_run.inferences]
    assert [i.user_content.parts[0].text for i in our_run.inferences] == [
        "What is the weather in Paris?", "Thanks. And what is the weather in Oslo?"]
    assert _case_rows(our_results) == _case_rows(their_results)
    assert ("tool_trajectory_avg_score", None, "NOT_EVALUATED") in _case_rows(our_results)["paris_then_oslo"]["overall"]

    with pytest.raises(EvalError, match="user simulator type"):
        UserSimulatorProvider(user_simulator_config={"type": "audio"})


def _actual(text: str, answer_text: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return {"invocation_id": "a", "user_content": {"role": "user", "parts": [{"text": text}]},
            "final_response": {"role": "model", "parts": [{"text": answer_text}]},
            "intermediate_data": {"invocation_events": [
                {"author": "weather", "content": {"role": "model", "parts": [
                    {"function_call": {"id": f"c{i}", "name": n, "args": a}} for i, (n, a) in enumerate(calls)]}},
                {"author": "weather", "content": {"role": "user", "parts": [
                    {"function_response": {"id": f"c{i}", "name": n, "response": {"ok": True}}}
                    for i, (n, _) in enumerate(calls)]}}]}}


ACTUAL = [_actual("What is the weather in Paris?", "It is sunny in Paris.", [("get_weather", {"city": "Paris"})]),
          _actual("What is the weather in Rome, and the time?", "It is sunny in Rome at noon.",
                  [("get_time", {"city": "Rome"}), ("get_weather", {"city": "Rome"})])]
EXPECTED = [EVAL_SET["eval_cases"][0]["conversation"][0], EVAL_SET["eval_cases"][2]["conversation"][0]]


def _evaluation_rows(result: Any) -> Any:
    return (result.overall_score, result.overall_eval_status.name,
            [(row.score, row.eval_status.name) for row in result.per_invocation_results])


@pytest.mark.parametrize(("kind", "given"), [
    ("trajectory", {"threshold": 1.0}),
    ("trajectory", {"eval_metric": {"metric_name": "tool_trajectory_avg_score", "threshold": 0.5,
                                    "criterion": {"threshold": 0.5, "match_type": "ANY_ORDER"}}}),
    ("trajectory", {"eval_metric": {"metric_name": "tool_trajectory_avg_score", "threshold": 1.0}}),
    ("rouge", {"eval_metric": {"metric_name": "response_match_score", "threshold": 0.8}}),
    ("response", {"threshold": 0.7, "metric_name": "response_match_score"}),
])
def test_the_metric_evaluators_score_invocations_as_google_adks(kind: str, given: dict[str, Any]) -> None:
    from google.adk.evaluation.final_response_match_v1 import RougeEvaluator as TheirRouge
    from google.adk.evaluation.response_evaluator import ResponseEvaluator as TheirResponse
    from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator as TheirTrajectory

    from adk_actors.evaluation.final_response_match_v1 import RougeEvaluator
    from adk_actors.evaluation.response_evaluator import ResponseEvaluator
    from adk_actors.evaluation.trajectory_evaluator import TrajectoryEvaluator

    kinds = {"trajectory": (TrajectoryEvaluator, TheirTrajectory), "rouge": (RougeEvaluator, TheirRouge),
             "response": (ResponseEvaluator, TheirResponse)}
    ours_kind, theirs_kind = kinds[kind]
    metric = given.get("eval_metric")
    their_given = {**given, **({"eval_metric": their_metrics.EvalMetric.model_validate({
        **metric, **({"criterion": their_metrics.ToolTrajectoryCriterion.model_validate(metric["criterion"])}
                     if "criterion" in metric else {})})} if metric else {})}
    our_given = {**given, **({"eval_metric": our_metrics.EvalMetric.model_validate(metric)} if metric else {})}
    theirs = theirs_kind(**their_given).evaluate_invocations(
        [their_case.Invocation.model_validate(one) for one in ACTUAL],
        [their_case.Invocation.model_validate(one) for one in EXPECTED])
    ours = ours_kind(**our_given).evaluate_invocations(
        [our_case.Invocation.model_validate(one) for one in ACTUAL],
        [our_case.Invocation.model_validate(one) for one in EXPECTED])
    assert _evaluation_rows(ours) == _evaluation_rows(theirs)


def test_the_metric_evaluators_refuse_as_google_adks() -> None:
    from adk_actors.evals import VertexEvalRequired
    from adk_actors.evaluation.final_response_match_v2 import FinalResponseMatchV2Evaluator
    from adk_actors.evaluation.response_evaluator import ResponseEvaluator
    from adk_actors.evaluation.trajectory_evaluator import TrajectoryEvaluator

    with pytest.raises(ValueError):
        TrajectoryEvaluator()
    with pytest.raises(ValueError):
        TrajectoryEvaluator(threshold=1.0, eval_metric=our_metrics.EvalMetric(metric_name="x", threshold=1.0))
    with pytest.raises(ValueError, match="match_type"):
        TrajectoryEvaluator(eval_metric=our_metrics.EvalMetric(
            metric_name="tool_trajectory_avg_score", threshold=1.0, criterion={"threshold": 1.0, "match_type": "X"}))
    with pytest.raises(VertexEvalRequired):
        ResponseEvaluator(threshold=0.5, metric_name="response_evaluation_score")
    with pytest.raises(ValueError, match="num_samples"):
        FinalResponseMatchV2Evaluator(our_metrics.EvalMetric(metric_name="final_response_match_v2", criterion={
            "threshold": 0.5, "judge_model_options": {"num_samples": 0}}))
    with pytest.raises(ValueError, match="must match"):
        TrajectoryEvaluator(threshold=1.0).evaluate_invocations(
            [our_case.Invocation.model_validate(ACTUAL[0])], [])


def test_a_judged_evaluator_scores_as_google_adks(agents: Path) -> None:
    """``final_response_match_v2`` and ``hallucinations_v1`` on the stand-in's judge."""
    from google.adk.evaluation.final_response_match_v2 import (
        FinalResponseMatchV2Evaluator as TheirV2,
    )
    from google.adk.evaluation.hallucinations_v1 import (
        HallucinationsV1Evaluator as TheirHallucinations,
    )

    from adk_actors.evaluation.final_response_match_v2 import FinalResponseMatchV2Evaluator
    from adk_actors.evaluation.hallucinations_v1 import HallucinationsV1Evaluator

    for name, ours_kind, theirs_kind, criterion in (
            ("final_response_match_v2", FinalResponseMatchV2Evaluator, TheirV2, JUDGE),
            ("hallucinations_v1", HallucinationsV1Evaluator, TheirHallucinations, {**JUDGE, "threshold": 0.8})):
        their_criterion = (their_metrics.LlmAsAJudgeCriterion if name == "final_response_match_v2"
                           else their_metrics.HallucinationsCriterion).model_validate(criterion)
        theirs = _run(theirs_kind(their_metrics.EvalMetric(metric_name=name, criterion=their_criterion))
                      .evaluate_invocations([their_case.Invocation.model_validate(one) for one in ACTUAL],
                                            [their_case.Invocation.model_validate(one) for one in EXPECTED]))
        ours = _run(ours_kind(our_metrics.EvalMetric(metric_name=name, criterion=criterion)).evaluate_invocations(
            [our_case.Invocation.model_validate(one) for one in ACTUAL],
            [our_case.Invocation.model_validate(one) for one in EXPECTED]))
        assert _evaluation_rows(ours) == _evaluation_rows(theirs)
        if name == "final_response_match_v2":
            assert _evaluation_rows(ours)[2] == [(1.0, "PASSED"), (0.0, "FAILED")]


def test_an_eval_metrics_criterion_given_as_an_object_is_taken_as_its_fields() -> None:
    """google-adk's way, ``EvalMetric(criterion=ToolTrajectoryCriterion(...))``, with its
    class or ours: kept as the criterion's fields, which the metric reads (before, a
    criterion object was refused: the field takes a dict)."""
    from google.adk.evaluation.eval_metrics import ToolTrajectoryCriterion as TheirCriterion

    from adk_actors.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion

    for criterion_class in (ToolTrajectoryCriterion, TheirCriterion):
        metric = EvalMetric(metric_name="tool_trajectory_avg_score",
                            criterion=criterion_class(threshold=0.5, match_type="IN_ORDER"))
        assert metric.criterion is not None and metric.criterion["threshold"] == 0.5
        assert metric.criterion["match_type"] == criterion_class.MatchType.IN_ORDER.value
