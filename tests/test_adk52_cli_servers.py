"""google-adk's ``google.adk.cli.api_server`` and ``google.adk.cli.dev_server`` at
``adk_actors.cli.api_server`` / ``adk_actors.cli.dev_server`` (issue 52).

The request and answer models a Python client builds HTTP requests with are driven
side by side with google-adk's own (installed in .venv): the same inputs give the same
validation errors, and the same dump (``by_alias=True, exclude_none=True``). Requests
built with ours are then served by a real host, through ``ApiServer(...)`` /
``DevServer(...)``'s ``get_fast_api_app()`` (Starlette's TestClient runs the app's
lifespan, which starts and stops the host), and its answers read into the answer
models of both sides. Service objects and the arguments a host cannot honour are
refused, each by name. The span exporters are fed the same spans as google-adk's.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.cli import api_server as g_api
from google.adk.cli import dev_server as g_dev
from google_adk_harness import on_stand_in, rewritten
from pydantic import ValidationError

from adk_actors.cli import api_server as o_api
from adk_actors.cli import dev_server as o_dev
from adk_actors.cli.fast_api import UnsupportedParameterError
from adk_actors.cli.utils.agent_loader import AgentLoader
from adk_actors.testing import StubServer, gemini_answers
from supervision.lowlevel import free_port

#: The public names of the two modules (docs/google-adk.md's name table)
API_NAMES = ("ApiServer", "ApiServerSpanExporter", "AppInfo", "CreateSessionRequest",
             "FinalizeAgentIdentityCredentialsRequest", "InMemoryExporter", "ListAppsResponse", "RunAgentRequest",
             "SaveArtifactRequest", "UpdateMemoryRequest", "UpdateSessionRequest")
DEV_NAMES = ("AddSessionToEvalSetRequest", "CreateEvalSetRequest", "CreateTestRequest", "DevServer", "EvalResult",
             "GetEventGraphResult", "ListEvalResultsResponse", "ListEvalSetsResponse", "ListMetricsInfoResponse",
             "RunEvalRequest", "RunEvalResponse", "RunEvalResult", "TelemetryConsentRequest")

REPLY = "Hello from the stand-in."
AGENT = '''from google.adk.agents import Agent

root_agent = Agent(name="greeter", model="gemini-2.0-flash", instruction="Greet the user.")
'''

EVENT = {"id": "e1", "invocationId": "i1", "author": "user", "timestamp": 1.5,
         "content": {"role": "user", "parts": [{"text": "hi"}]}}
MESSAGE = {"role": "user", "parts": [{"text": "hi"}]}
AGENT_INFO = {"name": "r", "description": "", "instruction": "i", "tools": [], "sub_agents": []}
RESULT = {"evalSetFile": "f", "evalSetId": "s", "evalId": "e", "finalEvalStatus": 1, "overallEvalMetricResults": [],
          "evalMetricResultPerInvocation": [], "userId": "u", "sessionId": "s"}

#: (module, model, inputs): each input validated (and, when valid, dumped) by both sides
CASES: list[tuple[str, str, list[Any]]] = [
    ("api", "RunAgentRequest", [
        {"appName": "a", "userId": "u", "sessionId": "s", "newMessage": MESSAGE},
        {"userId": "u", "sessionId": "s", "serviceTier": "flex", "stateDelta": {"k": 1}, "customMetadata": {"m": 1}},
        {"user_id": "u", "session_id": "s", "streaming": True, "functionCallEventId": "f", "invocationId": "i"},
        {}, {"userId": 1, "sessionId": "s"}, {"userId": "u", "sessionId": "s", "newMessage": "x"},
        {"userId": "u", "sessionId": "s", "newMessage": {"parts": [{"bogus": 1}]}},
        {"userId": "u", "sessionId": "s", "streaming": "maybe"}, {"userId": "u", "sessionId": "s", "extra": 1}]),
    ("api", "CreateSessionRequest", [
        {}, {"sessionId": "s", "state": {"a": 1}, "options": {"x": 1}},
        {"events": [{**EVENT, "nodeInfo": {"path": "wf/n"}, "actions": {"stateDelta": {"x": 1}}}]},
        {"events": "x"}, {"state": []}, {"events": [{"author": 3}]}]),
    ("api", "UpdateSessionRequest", [{"stateDelta": {"a": 1}}, {}, {"stateDelta": 3}, {"state_delta": {}}]),
    ("api", "UpdateMemoryRequest", [{"sessionId": "s"}, {}, {"sessionId": 4}, {"session_id": "s"}]),
    ("api", "SaveArtifactRequest", [
        {"filename": "f", "artifact": {"text": "hi"}},
        {"filename": "f", "artifact": {"inlineData": {"mimeType": "text/plain", "data": "aGk="}},
         "customMetadata": {"a": 1}},
        {}, {"filename": "f", "artifact": "x"}, {"filename": "f", "artifact": {"nope": 1}}]),
    ("api", "FinalizeAgentIdentityCredentialsRequest", [
        {"connectorName": "c", "userId": "u", "userIdValidationState": "v", "consentNonce": "n"}, {}]),
    ("api", "AppInfo", [
        {"name": "a", "rootAgentName": "r", "description": "", "language": "python"},
        {"name": "a", "rootAgentName": "r", "description": "", "language": "js"},
        {"name": "a", "rootAgentName": "r", "description": "d", "language": "yaml", "isComputerUse": True,
         "agents": {"r": AGENT_INFO}}]),
    ("api", "ListAppsResponse", [{"apps": []}, {}, {"apps": [{"name": "a"}]}]),
    ("dev", "AddSessionToEvalSetRequest", [{"evalId": "e", "sessionId": "s", "userId": "u"}, {}]),
    ("dev", "CreateEvalSetRequest", [{"evalSet": {"eval_set_id": "x", "eval_cases": []}}, {}, {"evalSet": 3}]),
    ("dev", "CreateTestRequest", [{"sessionData": {"a": 1}}, {}]),
    ("dev", "RunEvalRequest", [
        {"evalMetrics": [{"metricName": "m", "threshold": 0.5}]}, {"evalCaseIds": ["a"], "evalMetrics": []},
        {}, {"evalMetrics": [], "userSimulatorConfig": {"type": "x"}}, {"evalMetrics": [], "liveModelConfig": {}},
        {"evalMetrics": "x"}]),
    ("dev", "RunEvalResult", [RESULT, {}, {**RESULT, "finalEvalStatus": 9}]),
    ("dev", "RunEvalResponse", [{"runEvalResults": [RESULT]}, {}]),
    ("dev", "GetEventGraphResult", [{"dotSrc": "digraph {}"}, {}]),
    ("dev", "ListEvalSetsResponse", [{"evalSetIds": ["a"]}, {}]),
    ("dev", "ListEvalResultsResponse", [{"evalResultIds": ["a"]}, {"evalResultIds": [1]}]),
    ("dev", "ListMetricsInfoResponse", [{"metricsInfo": []}, {}]),
    ("dev", "TelemetryConsentRequest", [{"telemetry": True}, {}, {"telemetry": "x"}]),
    ("dev", "EvalResult", [{"evalSetResultId": "r", "evalSetId": "s", "evalCaseResults": [],
                            "creationTimestamp": 1.0}, {}]),
]
SIDES = {"api": (g_api, o_api), "dev": (g_dev, o_dev)}


def _outcome(model: Any, data: Any) -> tuple[str, Any]:
    """("errors", [(type, loc, msg)...]) or ("dump", the model's wire dump)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the deprecated fields, on both sides
        try:
            made = model.model_validate(data)
        except ValidationError as exc:
            return "errors", [(e["type"], e["loc"], e["msg"]) for e in exc.errors()]
        return "dump", made.model_dump(by_alias=True, exclude_none=True, mode="json")


@pytest.mark.parametrize(("module", "names"), [("api_server", API_NAMES), ("dev_server", DEV_NAMES)])
def test_every_public_name_resolves_at_google_adks_path(module: str, names: tuple[str, ...]) -> None:
    import importlib

    google = importlib.import_module(f"google.adk.cli.{module}")
    ours = importlib.import_module(f"adk_actors.cli.{module}")
    assert all(hasattr(google, name) for name in names)
    assert [name for name in names if not isinstance(getattr(ours, name, None), type)] == []
    assert sorted(ours.__all__) == sorted(names)


@pytest.mark.parametrize(("module", "name", "inputs"), CASES, ids=[f"{m}.{n}" for m, n, _ in CASES])
def test_each_model_validates_and_dumps_as_google_adks(module: str, name: str, inputs: list[Any]) -> None:
    google, ours = (getattr(side, name) for side in SIDES[module])
    for data in inputs:
        assert _outcome(ours, data) == _outcome(google, data), data


def test_a_model_a_host_route_takes_is_that_routes_own() -> None:
    """One model per wire shape: the routes' bodies are exported, not copied."""
    from adk_actors.http._evals import AddSessionBody, CreateEvalSetBody
    from adk_actors.http._memory import MemoryBody
    from adk_actors.http._sessions import PatchSessionBody

    assert (o_api.UpdateMemoryRequest, o_api.UpdateSessionRequest) == (MemoryBody, PatchSessionBody)
    assert (o_dev.AddSessionToEvalSetRequest, o_dev.CreateEvalSetRequest) == (AddSessionBody, CreateEvalSetBody)


def test_the_deprecated_fields_warn_when_read_as_google_adks_do() -> None:
    request = o_dev.RunEvalRequest(eval_ids=["a"], eval_metrics=[])
    with pytest.warns(DeprecationWarning):
        assert request.eval_ids == ["a"]
    result = o_dev.RunEvalResult.model_validate(RESULT)
    with pytest.warns(DeprecationWarning):
        assert result.eval_metric_results == []
    assert issubclass(o_dev.EvalResult, __import__("adk_actors.evaluation.eval_result").evaluation.eval_result
                      .EvalSetResult)


def test_a_content_given_as_a_google_genai_object_is_taken() -> None:
    from google.genai import types

    message = types.Content(role="user", parts=[types.Part(text="hi")])
    mine = o_api.RunAgentRequest(user_id="u", session_id="s", new_message=message)  # type: ignore[arg-type]
    theirs = g_api.RunAgentRequest(user_id="u", session_id="s", new_message=message)
    assert mine.model_dump(by_alias=True, exclude_none=True) == theirs.model_dump(by_alias=True, exclude_none=True)


# -- ApiServer / DevServer -----------------------------------------------------------------------


def _agents(folder: Path) -> Path:
    (folder / "greeter").mkdir(parents=True)
    (folder / "greeter" / "__init__.py").write_text("from . import agent\n")
    (folder / "greeter" / "agent.py").write_text(rewritten(AGENT))
    return folder


@pytest.fixture(scope="module")
def model() -> Iterator[StubServer]:
    reply = {"candidates": [{"content": {"role": "model", "parts": [{"text": REPLY}]}, "finishReason": "STOP"}],
             "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}
    with StubServer(gemini_answers(lambda body: reply)) as server:
        yield server


def _dump(model: Any) -> dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")  # type: ignore[no-any-return]


def test_an_api_server_serves_requests_built_with_these_models(
        tmp_path: Path, model: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ApiServer(agent_loader=AgentLoader(dir), agents_dir=dir, session_service_uri=...)``
    serves google-adk's production API on a host: sessions, a run, a state update,
    an artifact and memory, each request built with a model of ``api_server``; the
    list of apps reads into ``ListAppsResponse`` of both sides; no console."""
    from fastapi.testclient import TestClient

    on_stand_in(model.url, monkeypatch)
    monkeypatch.setenv("ADK_ACTORS_HOST__PORT", str(free_port()))
    folder = _agents(tmp_path / "agents")
    server = o_api.ApiServer(agent_loader=AgentLoader(str(folder)), agents_dir=str(folder),
                             session_service_uri=f"sqlite:///{tmp_path / 'sessions.db'}")
    app = server.get_fast_api_app(allow_origins=["http://localhost:4200"], bind_host="127.0.0.1")
    base = "/apps/greeter/users/u1/sessions"
    with TestClient(app, base_url="http://127.0.0.1") as client:  # bind_host loopback: the rebinding guard is on
        assert client.get("/list-apps", headers={"host": "evil.example"}).status_code == 403
        apps = client.get("/list-apps", params={"detailed": "true"}).json()
        assert [a.name for a in o_api.ListAppsResponse.model_validate(apps).apps] == ["greeter"]
        assert [a.name for a in g_api.ListAppsResponse.model_validate(apps).apps] == ["greeter"]
        made = client.post(base, json=_dump(o_api.CreateSessionRequest(session_id="s1", state={"n": 1})))
        assert made.status_code == 200 and made.json()["state"] == {"n": 1}
        patched = client.patch(f"{base}/s1", json=_dump(o_api.UpdateSessionRequest(state_delta={"n": 2})))
        assert patched.status_code == 200 and patched.json()["state"]["n"] == 2
        run = o_api.RunAgentRequest(app_name="greeter", user_id="u1", session_id="s1",
                                    new_message={"role": "user", "parts": [{"text": "hi"}]})  # type: ignore[arg-type]
        events = client.post("/run", json=_dump(run))
        assert events.status_code == 200 and events.json()[-1]["content"]["parts"][0]["text"] == REPLY
        saved = client.post(f"{base}/s1/artifacts", json=_dump(o_api.SaveArtifactRequest(
            filename="note.txt", artifact={"text": "kept"}, custom_metadata={"k": "v"})))  # type: ignore[arg-type]
        assert saved.status_code == 200 and saved.json()["customMetadata"] == {"k": "v"}
        assert client.get(f"{base}/s1/artifacts/note.txt").json() == {"text": "kept"}
        memory = client.patch("/apps/greeter/users/u1/memory", json=_dump(o_api.UpdateMemoryRequest(session_id="s1")))
        assert memory.status_code == 200
        assert client.get("/").status_code == 404  # no console


def test_a_dev_server_serves_the_dev_routes_with_these_models(
        tmp_path: Path, model: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """``DevServer(...)`` serves the console and the ``/dev`` routes too: an eval set made
    and a session added with ``dev_server``'s models, an eval run with ``RunEvalRequest``
    whose answer reads into ``RunEvalResponse`` of both sides, the listings into theirs."""
    from fastapi.testclient import TestClient

    from adk_actors.evaluation.eval_metrics import EvalMetric

    on_stand_in(model.url, monkeypatch)
    monkeypatch.setenv("ADK_ACTORS_HOST__PORT", str(free_port()))
    folder = _agents(tmp_path / "agents")
    server = o_dev.DevServer(agent_loader=AgentLoader(str(folder)), agents_dir=str(folder),
                             session_service_uri="memory://")
    dev = "/dev/apps/greeter"
    with TestClient(server.get_fast_api_app(), client=("127.0.0.1", 40000)) as client:
        assert client.get("/").status_code == 200  # the console
        client.post("/apps/greeter/users/u1/sessions", json=_dump(o_api.CreateSessionRequest(session_id="s1")))
        run = o_api.RunAgentRequest(app_name="greeter", user_id="u1", session_id="s1",
                                    new_message={"role": "user", "parts": [{"text": "hi"}]})  # type: ignore[arg-type]
        assert client.post("/run", json=_dump(run)).status_code == 200
        eval_set = o_dev.CreateEvalSetRequest.model_validate({"evalSet": {"eval_set_id": "set1", "eval_cases": []}})
        assert client.post(f"{dev}/eval-sets", json=_dump(eval_set)).status_code == 200
        add = o_dev.AddSessionToEvalSetRequest(eval_id="case1", session_id="s1", user_id="u1")
        assert client.post(f"{dev}/eval-sets/set1/add-session", json=_dump(add)).status_code == 200
        listed = client.get(f"{dev}/eval-sets").json()
        assert o_dev.ListEvalSetsResponse.model_validate(listed).eval_set_ids == ["set1"]
        assert g_dev.ListEvalSetsResponse.model_validate(listed).eval_set_ids == ["set1"]
        request = o_dev.RunEvalRequest(eval_case_ids=["case1"], eval_metrics=[
            EvalMetric(metric_name="tool_trajectory_avg_score", threshold=1.0)])
        ran = client.post(f"{dev}/eval-sets/set1/run", json=_dump(request))
        assert ran.status_code == 200, ran.text
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            for side in (o_dev, g_dev):
                results = side.RunEvalResponse.model_validate(ran.json()).run_eval_results
                assert [(r.eval_id, r.user_id) for r in results] == [("case1", "u1")]
        results = client.get(f"{dev}/eval-results").json()
        assert len(o_dev.ListEvalResultsResponse.model_validate(results).eval_result_ids) == 1
        assert len(g_dev.ListEvalResultsResponse.model_validate(results).eval_result_ids) == 1
        result = client.get(f"{dev}/eval-results/{results['evalResultIds'][0]}").json()
        assert o_dev.EvalResult.model_validate(result).eval_set_id == g_dev.EvalResult.model_validate(result).eval_set_id
        metrics = client.get(f"{dev}/metrics-info").json()
        assert o_dev.ListMetricsInfoResponse.model_validate(metrics).metrics_info
        assert g_dev.ListMetricsInfoResponse.model_validate(metrics).metrics_info
        graph = client.get(f"{dev}/graph").json()
        assert "digraph" in o_dev.GetEventGraphResult.model_validate(graph).dot_src
        assert g_dev.GetEventGraphResult.model_validate(graph).dot_src == graph["dotSrc"]


def test_service_objects_and_what_a_host_cannot_honour_are_refused_each_named(tmp_path: Path) -> None:
    from google.adk.artifacts import InMemoryArtifactService
    from google.adk.memory import InMemoryMemoryService
    from google.adk.sessions import InMemorySessionService

    folder = _agents(tmp_path / "agents")
    with pytest.raises(UnsupportedParameterError) as refused:
        o_api.ApiServer(agent_loader=AgentLoader(str(tmp_path)), agents_dir=str(folder),
                        session_service=InMemorySessionService(), memory_service=InMemoryMemoryService(),
                        artifact_service=InMemoryArtifactService(), url_prefix="/api", max_llm_calls=3)
    assert set(refused.value.parameters) == {"session_service", "memory_service", "artifact_service", "agent_loader",
                                             "url_prefix", "max_llm_calls"}
    assert str(refused.value).startswith("ApiServer: not supported")
    assert isinstance(refused.value, ValueError)
    server = o_dev.DevServer(agent_loader=AgentLoader(str(folder)), agents_dir=str(folder))
    with pytest.raises(UnsupportedParameterError) as later:
        server.get_fast_api_app(web_assets_dir=str(tmp_path), setup_observer=lambda o, s: None,
                                register_processors=lambda p: None, otel_to_cloud=True)
    assert set(later.value.parameters) == {"web_assets_dir", "setup_observer", "register_processors",
                                           "otel_to_cloud"}
    with pytest.raises(UnsupportedParameterError, match="svc52none"):
        o_api.ApiServer(agent_loader=AgentLoader(str(folder)), agents_dir=str(folder),
                        session_service_uri="svc52none://x").get_fast_api_app()


def test_the_installed_adk_web_folder_is_taken_as_web_assets_dir(tmp_path: Path) -> None:
    """google-adk's ``get_fast_api_app(web=True)`` passes its own adk-web folder: the
    host serves that one itself, so it is taken (and nothing starts until the lifespan)."""
    import google.adk.cli

    folder = _agents(tmp_path / "agents")
    server = o_dev.DevServer(agent_loader=AgentLoader(str(folder)), agents_dir=str(folder))
    app = server.get_fast_api_app(web_assets_dir=str(Path(google.adk.cli.__file__).parent / "browser"))
    assert app.router.lifespan_context is not None


# -- span exporters ------------------------------------------------------------------------------


def _spans() -> list[Any]:
    """Finished spans made on an SDK provider: a model call's and a tool call's (with
    google-adk's tracing helpers' attributes, by our tracer), an agent's naming its
    session (as the host's own spans do), and one of another trace and session."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    collected = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(collected))
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("invoke_agent greeter", attributes={"gen_ai.conversation.id": "s1"}):
        with tracer.start_as_current_span("generate_content gemini", attributes={
                "gcp.vertex.agent.event_id": "ev1", "gen_ai.conversation.id": "s1"}):
            pass
        with tracer.start_as_current_span("execute_tool lookup", attributes={"gcp.vertex.agent.event_id": "ev2"}):
            pass
        with tracer.start_as_current_span("call_llm", attributes={"gcp.vertex.agent.event_id": "ev1",
                                                                   "gcp.vertex.agent.session_id": "s1"}):
            pass
    with tracer.start_as_current_span("invoke_agent other", attributes={"gcp.vertex.agent.session_id": "s2"}):
        pass
    return list(collected.get_finished_spans())


def test_the_span_exporters_keep_what_google_adks_keep() -> None:
    spans = _spans()
    mine: dict[str, Any] = {}
    theirs: dict[str, Any] = {}
    o_api.ApiServerSpanExporter(mine).export(spans)
    g_api.ApiServerSpanExporter(theirs).export(spans)
    assert mine == theirs and set(mine) == {"ev1", "ev2"}
    sessions_mine: dict[str, list[int]] = {}
    sessions_theirs: dict[str, list[int]] = {}
    kept, reference = o_api.InMemoryExporter(sessions_mine), g_api.InMemoryExporter(sessions_theirs)
    kept.export(spans)
    reference.export(spans)
    assert sessions_mine == sessions_theirs and set(sessions_mine) == {"s1", "s2"}
    for session in ("s1", "s2", "nobody"):
        assert kept.get_finished_spans(session) == reference.get_finished_spans(session)
    assert len(kept.get_finished_spans("s1")) == 4
    assert kept.force_flush() and o_api.ApiServerSpanExporter({}).force_flush()
    kept.clear()
    assert kept.get_finished_spans("s1") == [] and sessions_mine
