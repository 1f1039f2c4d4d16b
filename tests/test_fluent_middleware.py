"""Issue 33: adk-fluent's middleware (``M``, ``.middleware``, ``to_app``) on our engine.

Each middleware is run through real turns (embedded engine, scripted models); clocks
and sleeps are passed in, so nothing here waits.
"""

from __future__ import annotations

import asyncio
import re
import sys
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from adk_actors import Content, LlmResponse, Part, RunFailedError, UsageMetadata
from adk_actors.engine import App
from adk_actors.fluent import (
    Agent,
    CircuitBreakerMiddleware,
    LoopDirective,
    M,
    MComposite,
    MiddlewarePlugin,
    ModelCacheMiddleware,
    RateLimitMiddleware,
    RetryMiddleware,
    Route,
    StructuredLogMiddleware,
    T,
    TimeoutMiddleware,
    TopologyLogMiddleware,
)
from adk_actors.models import ScriptedModel, call
from adk_actors.runtime import Host


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def answer(text: str) -> ScriptedModel:
    return ScriptedModel(fallback=lambda request: text)


def only(composite: MComposite) -> Any:
    (middleware,) = composite.to_stack()
    return middleware


def test_retry_makes_a_failed_model_call_again_with_growing_waits() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    flaky = ScriptedModel([RuntimeError("overloaded"), RuntimeError("overloaded"), "ok"])
    agent = Agent("a", flaky).middleware(RetryMiddleware(3, 1.0, jitter=0, sleep=sleep))
    assert agent.ask("hi") == "ok"
    assert slept == [1.0, 2.0]
    # without it the first failure stands; with two attempts, the second failure does
    with pytest.raises(Exception, match="overloaded"):
        Agent("b", ScriptedModel([RuntimeError("overloaded"), "ok"])).ask("hi")
    with pytest.raises(Exception, match="overloaded"):
        Agent("c", ScriptedModel([RuntimeError("overloaded")] * 2 + ["ok"])).middleware(
            RetryMiddleware(2, 0, jitter=0, sleep=sleep)).ask("hi")


def test_retry_makes_a_failed_tool_call_again_and_the_model_sees_its_result() -> None:
    calls: list[int] = []

    def lookup(city: str) -> dict[str, str]:
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("weather service restarting")
        return {"forecast": f"sun in {city}"}

    seen: list[Any] = []
    model = ScriptedModel([call("lookup", city="Oslo"), lambda request: seen.append(request.contents[-1]) or "done"])

    async def no_wait(seconds: float) -> None:
        pass

    agent = Agent("a", model).tool(lookup).middleware(RetryMiddleware(3, 0, jitter=0, sleep=no_wait))
    assert agent.ask("weather?") == "done"
    assert len(calls) == 2
    assert seen[0].function_responses[0].response == {"forecast": "sun in Oslo"}


def test_a_pipelines_middleware_is_both_sides_each_once_and_sees_every_agent() -> None:
    log, cost, latency = M.log(), M.cost(), M.latency()
    writer = Agent("writer", answer("draft")).writes("draft").middleware(log | cost)
    editor = Agent("editor", answer("final")).reads("draft").middleware(latency | cost)
    pipeline = writer >> editor
    assert pipeline._middlewares == [*log, *cost, *latency]
    assert pipeline.ask("write") == "final"
    agents = [(e["event"], e.get("agent_name")) for e in only(log).log if e["event"].endswith("_agent")]
    assert agents == [("before_agent", "writer_then_editor"), ("before_agent", "writer"), ("after_agent", "writer"),
                      ("before_agent", "editor"), ("after_agent", "editor"), ("after_agent", "writer_then_editor")]
    assert [e["agent_name"] for e in only(log).log if e["event"] == "before_model"] == ["writer", "editor"]
    assert only(cost).calls == 2
    assert set(only(latency).latencies) == {"writer_then_editor", "writer", "editor"}


def test_to_app_gives_an_app_whose_one_plugin_runs_the_middleware() -> None:
    log = M.log()
    app = Agent("a", answer("hi")).middleware(log).to_app()
    assert isinstance(app, App) and app.root_agent.name == "a"
    (plugin,) = app.plugins
    assert isinstance(plugin, MiddlewarePlugin) and plugin.stack == log.to_stack()
    assert Agent("plain", answer("hi")).to_app().plugins == ()


def test_the_trees_shape_is_told_loops_fanouts_routes_fallbacks_and_time_limits() -> None:
    topology = TopologyLogMiddleware(clock=lambda: 0.0)
    loop = (Agent("w", answer("x")) * 3).middleware(
        M.on_loop(lambda ctx, name, i: LoopDirective(break_loop=True) if i == 2 else None))
    broken = Agent("primary", ScriptedModel([RuntimeError("down")]))
    program = (
        Agent("classify", answer("b")).writes("kind")
        >> Route("kind").eq("a", Agent("for_a", answer("A"))).eq("b", Agent("for_b", answer("B")))
        >> (Agent("left", answer("L")) | Agent("right", answer("R")))
        >> (broken // Agent("backup", answer("saved")))
        >> Agent("quick", answer("q")).timeout(5)
        >> loop
    ).middleware(topology)
    program.ask("go")
    events = [{k: v for k, v in e.items() if k != "time"} for e in topology.log]
    assert events == [
        {"event": "route_selected", "route": events[0]["route"], "selected": "for_b"},
        {"event": "fanout_start", "fanout": "left_and_right", "branches": ["left", "right"]},
        {"event": "fanout_complete", "fanout": "left_and_right", "branches": ["left", "right"]},
        {"event": "fallback_attempt", "fallback": "primary_or_backup", "agent": "primary", "attempt": 0, "error": None},
        {"event": "fallback_attempt", "fallback": "primary_or_backup", "agent": "backup", "attempt": 1,
         "error": events[4]["error"]},
        {"event": "timeout", "timeout": events[5]["timeout"], "seconds": 5, "timed_out": False},
        {"event": "loop_iteration", "loop": "w_x3", "iteration": 0},
        {"event": "loop_iteration", "loop": "w_x3", "iteration": 1},
    ]  # iteration 2: the on_loop hook before the log answered (a directive), so the log was not asked
    assert "down" in events[4]["error"]


def test_a_loop_directive_ends_the_loop_before_the_iteration() -> None:
    model = ScriptedModel(["one", "two", "three"])
    loop = (Agent("w", model) * 3).middleware(
        M.on_loop(lambda ctx, name, i: LoopDirective(break_loop=True) if i == 1 else None))
    assert loop.ask("go") == "one"
    assert len(model.requests) == 1


def test_scope_limits_a_middleware_to_its_agents() -> None:
    log = StructuredLogMiddleware()
    pipeline = (Agent("a", answer("1")) >> Agent("b", answer("2")) >> Agent("c", answer("3"))).middleware(
        M.scope(("b", "c"), log))
    pipeline.ask("go")
    assert {e["agent_name"] for e in log.log} == {"b", "c"}
    pattern = StructuredLogMiddleware()
    Agent("writer_1", answer("x")).middleware(M.scope(re.compile(r"^writer_"), pattern)).ask("go")
    assert {e["agent_name"] for e in pattern.log} == {"writer_1"}


def test_when_and_sample_decide_at_each_call() -> None:
    on = [False]
    log = StructuredLogMiddleware()
    agent = Agent("a", answer("x")).middleware(M.when(lambda: on[0], log))
    agent.ask("one")
    assert not log.log
    on[0] = True
    agent.ask("two")
    assert [e["event"] for e in log.log] == ["before_agent", "before_model", "after_model", "after_agent"]
    streamed, plain = StructuredLogMiddleware(), StructuredLogMiddleware()
    Agent("b", answer("x")).middleware(M.when("stream", streamed) | M.when("pipeline", plain)).ask("go")
    assert not streamed.log and plain.log
    with pytest.raises(ValueError, match="stream, pipeline, dispatched"):
        M.when("sometimes", log)
    never, always = StructuredLogMiddleware(), StructuredLogMiddleware()
    Agent("c", answer("x")).middleware(M.sample(0.0, never) | M.sample(1.0, always)).ask("go")
    assert not never.log and always.log


def test_the_circuit_breaker_stops_calling_a_failing_model_then_tries_again() -> None:
    clock = Clock()
    model = ScriptedModel([RuntimeError("500"), RuntimeError("500"), "back", "again"])
    breaker = CircuitBreakerMiddleware(threshold=2, reset_after=10, clock=clock)
    agent = Agent("a", model).middleware(breaker)
    for _ in range(2):
        with pytest.raises(Exception, match="500"):
            agent.ask("hi")
    refused = Agent("a", model).middleware(breaker)  # same breaker, same agent name
    answer_text = _error_of(refused, "hi")
    assert "Circuit open for agent 'a'" in answer_text and len(model.requests) == 2  # no call was made
    clock.now += 11
    assert agent.ask("hi") == "back"
    assert agent.ask("hi") == "again"
    assert breaker.breakers["a"].state == "closed"


def _error_of(builder: Any, prompt: str) -> str:
    events = asyncio.run(_events(builder, prompt))
    return " ".join(f"{e.error_code}: {e.error_message}" for e in events if e.error_code)


def test_the_timeout_middleware_refuses_a_model_call_past_the_agents_time() -> None:
    clock = Clock()

    def slow_search(query: str) -> str:
        clock.now += 31
        return "results"

    model = ScriptedModel([call("slow_search", query="x"), "never asked"])
    agent = Agent("a", model).tool(slow_search).middleware(TimeoutMiddleware(30, clock=clock))
    assert "timeout: Agent 'a' exceeded 30s timeout" in _error_of(agent, "go")
    assert len(model.requests) == 1


def test_the_cache_answers_a_request_asked_before_until_its_time_to_live_ends() -> None:
    clock = Clock()
    model = ScriptedModel(["first", "second"])
    agent = Agent("a", model).middleware(ModelCacheMiddleware(ttl=60, clock=clock))
    assert agent.ask("same") == "first"
    assert agent.ask("same") == "first"
    assert len(model.requests) == 1
    clock.now += 61
    assert agent.ask("same") == "second"


def test_dedup_answers_a_request_among_the_last_ones_again() -> None:
    model = ScriptedModel(fallback=lambda request: f"answer {len(model.requests)}")
    agent = Agent("a", model).middleware(M.dedup(window=1))
    assert [agent.ask("x"), agent.ask("x"), agent.ask("y"), agent.ask("x")] == \
        ["answer 1", "answer 1", "answer 2", "answer 3"]  # y pushed x out of a window of one


async def _events(builder: Any, prompt: str) -> list[Any]:
    return [event async for event in builder.events(prompt)]


def test_rate_limit_makes_a_call_over_the_rate_wait_for_its_turn() -> None:
    clock = Clock()
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock.now += seconds

    limit = RateLimitMiddleware(2, time_period=10, clock=clock, sleep=sleep)
    agent = Agent("a", answer("x")).middleware(limit)
    agent.ask("1")
    clock.now += 4
    agent.ask("2")
    agent.ask("3")
    assert waits == [6.0]


def test_fallback_model_answers_when_the_model_fails() -> None:
    agent = Agent("a", ScriptedModel([RuntimeError("down")])).middleware(
        M.fallback_model(ScriptedModel(["from the fallback"])))
    assert agent.ask("hi") == "from the fallback"


def test_a_middleware_that_raises_is_reported_to_the_others_and_the_run_goes_on() -> None:
    reports: list[tuple[str, str]] = []

    class Broken:
        def before_model(self, ctx: Any, request: Any) -> None:
            raise ValueError("bad middleware")

    class Watcher:
        def on_middleware_error(self, ctx: Any, hook: str, error: Exception, middleware: Any) -> None:
            reports.append((hook, str(error)))

    assert Agent("a", answer("fine")).middleware(Broken()).middleware(Watcher()).ask("hi") == "fine"
    assert reports == [("before_model", "bad middleware")]


def test_single_hooks_answer_first_and_custom_classes_compose() -> None:
    class Shout:
        async def after_model(self, ctx: Any, response: LlmResponse) -> LlmResponse:
            return LlmResponse(content=response.content.model_copy(update={"parts": (
                response.content.parts[0].model_copy(update={"text": response.content.text.upper()}),)}))

    canned = M.before_model(lambda ctx, request: LlmResponse(content=Content(role="model", parts=(Part(text="canned"),))) if ctx.agent_name == "b" else None)
    chain = canned | Shout()
    assert isinstance(chain, MComposite) and len(chain) == 2
    assert Agent("a", answer("quiet")).middleware(chain).ask("go") == "QUIET"
    # A before-model answer skips the after-model hooks, as in google-adk (and so adk-fluent).
    assert (Agent("a", answer("quiet")) >> Agent("b", answer("never"))).middleware(chain).ask("go") == "canned"


def test_middleware_refuses_a_tool_chain() -> None:
    with pytest.raises(TypeError, match=r"Did you mean \.tools"):
        Agent("a", answer("x")).middleware(T.fn(lambda: 1))


def test_a_host_runs_a_fluent_apps_middleware_in_its_run_workers(host: Host) -> None:
    """``to_app()`` names an app a host serves: its retry middleware makes each turn
    of a model that fails every other call succeed; the same model without it fails."""
    runner = host.runner("fluent_retry")
    runner.create_session("ann", "s1")
    for text in ("one", "two", "three"):
        events = list(runner.run("ann", "s1", text))
        assert events[-1].content.text == f"steady: {text}"
    assert runner.get_state("ann", "s1") == {"answer": "steady: three"}
    plain = host.runner("fluent_plain")
    plain.create_session("ann", "s1")
    with pytest.raises(RunFailedError, match="provider hiccup"):
        list(plain.run("ann", "s1", "one"))


def test_trace_and_metrics_report_agents_and_model_calls_to_opentelemetry() -> None:
    spans = InMemorySpanExporter()
    tracing = TracerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    answered = LlmResponse(content=Content(role="model", parts=(Part(text="hi"),)),
                           usage_metadata=UsageMetadata(prompt_token_count=7, candidates_token_count=3))

    async def no_wait(seconds: float) -> None:
        pass

    pipeline = (Agent("a", ScriptedModel([answered])) >> Agent("b", ScriptedModel([RuntimeError("down"), "ok"]))
                ).middleware(M.trace(tracer=tracing.get_tracer("test")) | M.metrics(meter=meters.get_meter("test"))
                             | RetryMiddleware(2, 0, jitter=0, sleep=no_wait))
    assert pipeline.ask("go") == "ok"
    finished = {span.name: span for span in spans.get_finished_spans()}
    assert set(finished) == {"agent:a_then_b", "agent:a", "model:a", "agent:b", "model:b"}
    assert finished["model:a"].attributes["adk.model.input_tokens"] == 7
    assert finished["model:a"].attributes["adk.model.output_tokens"] == 3
    assert finished["model:b"].status.status_code is StatusCode.ERROR  # the failed call; its retry answered
    assert finished["agent:b"].attributes["adk.agent.latency_ms"] >= 0
    points = {metric.name: {p.attributes["agent"]: getattr(p, "value", getattr(p, "count", None))
                            for p in metric.data.data_points}
              for resource in reader.get_metrics_data().resource_metrics
              for scope in resource.scope_metrics for metric in scope.metrics}
    assert points["adk.agent.calls"] == {"a": 1, "b": 1, "a_then_b": 1}
    assert points["adk.agent.errors"] == {"b": 1}
    assert points["adk.model.input_tokens"]["a"] == 7 and points["adk.agent.latency"]["a"] == 1


def test_trace_and_metrics_without_opentelemetry_say_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.trace", None)  # as if not installed
    for make in (M.trace, M.metrics):
        with pytest.raises(ImportError, match=r"adk-actors\[otel\]"):
            make()
