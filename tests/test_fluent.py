"""The fluent builder (issue 33): adk-fluent's names and meaning, building our plain
agents. The same builder code is run through adk-fluent (a dev dependency; it builds
google-adk agents) and through ``adk_actors.fluent``, and the instruction texts the
two compile are compared; then each operator, transform and contract check."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from types import ModuleType, SimpleNamespace
from typing import Any

import adk_fluent
import pytest
from google.adk.events import Event as GoogleEvent
from google.adk.flows.llm_flows.prompt import inject_session_state
from google.genai import types as g
from pydantic import BaseModel

import adk_actors.fluent as ours
from adk_actors import (
    Content,
    Event,
    FunctionCall,
    FunctionResponse,
    LlmAgent,
    LoopAgent,
    ParallelAgent,
    Part,
    SequentialAgent,
)
from adk_actors.compiler import CompileContext, build_request
from adk_actors.compiler._instructions import agent_instruction
from adk_actors.fluent import C, ContractError, FallbackAgent, P, S, UntilCheck, until
from adk_actors.models import ScriptedModel, call
from adk_actors.runners import InMemoryRunner

STATE = {"code": "def f(): pass", "topic": "dates", "empty": None, "verbose": True}
TURNS: list[tuple[str, Any]] = [("user", f"question {i}") if i % 2 == 0 else ("reviewer", f"answer {i}")
                                 for i in range(12)] + [
    ("helper", ("call", "lookup", {"q": "dates"})), ("helper", ("answer", "lookup", {"found": 2})),
    ("reviewer", "answer 11"), ("reviewer", "answer   11"),  # the same text again, and the same words
    ("helper", "a note"), ("helper", "my email is ann@example.com"), ("user", "the current question")]


def _google_part(item: Any) -> Any:
    if isinstance(item, str):
        return g.Part(text=item)
    kind, name, data = item
    if kind == "call":
        return g.Part(function_call=g.FunctionCall(name=name, args=data))
    return g.Part(function_response=g.FunctionResponse(name=name, response=data))


def _our_part(item: Any) -> Any:
    if isinstance(item, str):
        return Part(text=item)
    kind, name, data = item
    if kind == "call":
        return Part(function_call=FunctionCall(name=name, args=data))
    return Part(function_response=FunctionResponse(name=name, response=data))


def _programs() -> dict[str, Callable[[ModuleType], Any]]:
    """Builder code, written once, for either library (``f`` is adk_fluent or ours)."""
    return {
        "seed_004": lambda f: f.Agent("reviewer", "m").instruct(
            f.P.role("Senior code reviewer.") + f.P.task("Review for bugs.") + f.P.constraint("Be concise.")
        ).context(f.C.window(n=5) + f.C.from_state("code")).writes("review"),
        "every_section_in_any_order": lambda f: f.Agent("a", "m").instruct(
            f.P.example(input="x = 1", output="fine") + f.P.section("house_rules", "Be kind.")
            + f.P.format("Markdown.") + f.P.constraint("No fluff.", "Cite lines.") + f.P.task("Review.")
            + f.P.context("Python 3.") + f.P.role("A reviewer.") + f.P.example("free text")),
        "reads": lambda f: f.Agent("a", "m").instruct("Review {code} about {topic}.").reads("code", "topic"),
        "reads_keep_history": lambda f: f.Agent("a", "m").instruct("Go.").reads("code", keep_history=True),
        "reads_twice_adds_up": lambda f: f.Agent("a", "m").instruct("Go.").reads("code").reads("topic"),
        "user_only": lambda f: f.Agent("a", "m").instruct("Answer.").context(f.C.user_only()),
        "from_agents": lambda f: f.Agent("a", "m").instruct("Answer.").context(f.C.from_agents("helper")),
        "exclude_agents": lambda f: f.Agent("a", "m").instruct("Answer.").context(f.C.exclude_agents("reviewer")),
        "window_1": lambda f: f.Agent("a", "m").instruct("Answer.").context(f.C.window(n=1)),
        "none": lambda f: f.Agent("a", "m").instruct("Answer {topic}.").context(f.C.none()),
        "template": lambda f: f.Agent("a", "m").instruct("Answer.").context(f.C.template("Topic is {topic}.")),
        "missing_keys_stay": lambda f: f.Agent("a", "m").instruct("Use {missing} and {topic} {opt?}.").context(
            f.C.from_state("code", "empty")),
        "context_only": lambda f: f.Agent("a", "m").context(f.C.from_state("code")),
        "when": lambda f: f.Agent("a", "m").instruct("Answer.").context(
            f.C.when("verbose", f.C.from_state("topic")) + f.C.when("empty", f.C.from_state("code"))),
        "only": lambda f: f.Agent("a", "m").instruct(
            f.P.role("R.") + f.P.task("T.") + f.P.constraint("C1", "C2") + f.P.only("role", "task")),
        "without": lambda f: f.Agent("a", "m").instruct(
            f.P.role("R.") + f.P.task("T.") + f.P.constraint("C1") + f.P.format("F.") + f.P.without("constraint")),
        "scaffolded": lambda f: f.Agent("a", "m").instruct(f.P.scaffolded(f.P.role("R.") + f.P.task("T."))),
        "scaffolded_among_sections": lambda f: f.Agent("a", "m").instruct(
            f.P.role("R.") + f.P.scaffolded(f.P.task("T {topic}.") + f.P.constraint("C."), preamble="Pre.",
                                            postamble="Post.") + f.P.format("F.")),
        "versioned": lambda f: f.Agent("a", "m").instruct(
            f.P.versioned(f.P.role("R.") + f.P.task("T."), tag="v2") + f.P.constraint("C.")),
        "last_n_turns": lambda f: f.Agent("a", "m").instruct("Go.").context(f.C.last_n_turns(2)),
        "pipeline_aware": lambda f: f.Agent("a", "m").instruct("Go.").context(f.C.pipeline_aware("topic", "code")),
        "user_strategies": lambda f: f.Agent("a", "m").instruct("Go.").context(
            f.C.user(strategy="bookend") + f.C.user(strategy="first") + f.C.user(strategy="last")),
        "from_agents_windowed": lambda f: f.Agent("a", "m").instruct("Go.").context(
            f.C.from_agents_windowed(reviewer=2, helper=0)),
        "select": lambda f: f.Agent("a", "m").instruct("Go.").context(
            f.C.select(author=("helper", "reviewer"), type=("tool_call", "tool_response"))
            + f.C.select(author="user") + f.C.select(type="message", tag="x")),
        "recent": lambda f: f.Agent("a", "m").instruct("Go.").context(
            f.C.recent(half_life=3, min_weight=0.2) + f.C.recent(decay="linear", half_life=2)),
        "compact": lambda f: f.Agent("a", "m").instruct("Go.").context(
            f.C.compact() + f.C.compact(strategy="all")),
        "dedup": lambda f: f.Agent("a", "m").instruct("Go.").context(
            f.C.dedup() + f.C.dedup(strategy="structural")),
        "truncate": lambda f: f.Agent("a", "m").instruct("Go.").context(
            f.C.truncate(max_turns=2) + f.C.truncate(max_turns=2, strategy="head")
            + f.C.truncate(max_tokens=10) + f.C.truncate(max_tokens=10, strategy="head")),
        "project": lambda f: f.Agent("a", "m").instruct("Go.").context(
            f.C.project("author", "text", "function_call", "function_response", "branch")),
        "budget": lambda f: f.Agent("a", "m").instruct("Go.").context(
            f.C.budget(max_tokens=12) + f.C.budget(max_tokens=12, overflow="truncate_newest")
            + f.C.budget()),
        "fit": lambda f: f.Agent("a", "m").instruct("Go.").context(f.C.fit(max_tokens=20)),
        "redact": lambda f: f.Agent("a", "m").instruct("Go.").context(
            f.C.redact(r"[\w.]+@[\w.]+", r"question \d+")),
        "fresh_keeps_the_new": lambda f: f.Agent("a", "m").instruct("Go.").context(f.C.fresh()),
        "rolling_and_priority": lambda f: f.Agent("a", "m").instruct("Go.").context(
            f.C.rolling(n=2) + f.C.priority(tier=1)),
        "piped": lambda f: f.Agent("a", "m").instruct("Go.").context(
            (f.C.window(n=3) | f.C.redact("question")) + (f.C.from_state("code") | f.C.truncate(max_tokens=3))),
    }


def _google_instruction(builder: Any) -> tuple[str, str]:
    agent = builder.build()
    events = [GoogleEvent(author=a, content=g.Content(role="user" if a == "user" else "model",
                                                       parts=[_google_part(t)])) for a, t in TURNS]
    ctx = SimpleNamespace(state=dict(STATE), session=SimpleNamespace(events=events))
    instruction = agent.instruction
    if callable(instruction):  # a provider: google-adk sends its text as it is
        return asyncio.run(instruction(ctx)), agent.include_contents
    readonly = SimpleNamespace(_invocation_context=SimpleNamespace(session=SimpleNamespace(state=dict(STATE))))
    return asyncio.run(inject_session_state(instruction, readonly)), agent.include_contents


def _our_context() -> CompileContext:
    events = [Event(author=a, content=Content(role="user" if a == "user" else "model", parts=(_our_part(t),)))
              for a, t in TURNS]
    return CompileContext(state=STATE, events=events)


@pytest.mark.parametrize("program", sorted(_programs()))
def test_the_instruction_is_the_text_adk_fluent_compiles(program: str) -> None:
    code = _programs()[program]
    expected_text, expected_contents = _google_instruction(code(adk_fluent))
    agent = code(ours).unchecked().build()
    assert isinstance(agent, LlmAgent)
    assert agent_instruction(agent, _our_context()) == expected_text
    assert agent.include_contents == expected_contents


def test_with_history_left_out_the_model_gets_the_current_turn_only() -> None:
    agent = _programs()["seed_004"](ours).unchecked().build()  # "code" comes from the caller
    request = build_request(agent, _our_context())
    assert [c.text for c in request.contents] == ["the current question"]
    assert request.system_instruction.startswith("Senior code reviewer.\n\nTask:\nReview for bugs.\n\nConstraints:")
    assert "[user]: question 4\n[reviewer]: answer 5\n" in request.system_instruction  # the last five turn pairs
    assert "question 2" not in request.system_instruction


def test_a_users_braces_in_the_conversation_are_not_placeholders() -> None:
    agent = ours.Agent("a", "m").instruct("Hi {topic}.").context(C.user_only()).unchecked().build()
    ctx = CompileContext(state={"topic": "t", "user:secret": "s3cr3t"},
                         events=[Event(author="user", content=Content.user("show {user:secret}"))])
    assert agent_instruction(agent, ctx) == "Hi t.\n\n<conversation_context>\n[user]: show {user:secret}\n" \
                                            "</conversation_context>"


def _shape(agent: Any) -> tuple[Any, ...]:
    kind = {"SequentialAgent": "seq", "ParallelAgent": "par", "LoopAgent": "loop", "LlmAgent": "llm",
            "FallbackAgent": "fallback", "FnAgent": "state", "StateStep": "state", "_CheckpointAgent": "until",
            "UntilCheck": "until"}[type(agent).__name__]
    extra = getattr(agent, "max_iterations", None) if kind == "loop" else None
    return (kind, agent.name, extra, tuple(_shape(a) for a in agent.sub_agents))


class Verdict(BaseModel):
    ok: bool


@pytest.mark.parametrize("program", [
    lambda f: f.Agent("a", "m").writes("x") >> f.Agent("b", "m") >> f.Agent("c", "m"),
    lambda f: f.Agent("a", "m") | f.Agent("b", "m") | f.Agent("c", "m"),
    lambda f: f.Agent("a", "m") * 3,
    lambda f: (f.Agent("a", "m").writes("x") >> f.Agent("b", "m").reads("x")) * 2,
    lambda f: f.Agent("a", "m").writes("x") * f.until(lambda s: s.get("x") == "done", max=4),
    lambda f: f.Agent("a", "m") // f.Agent("b", "m") // f.Agent("c", "m"),
    lambda f: f.Agent("a", "m").writes("p") >> f.S.pick("p") >> f.S.rename(p="code")
    >> f.Agent("r", "m").reads("code"),
    lambda f: (f.Agent("a", "m").writes("x") | f.Agent("b", "m").writes("y")) >> f.Agent("m", "m").reads("x", "y"),
], ids=["sequence", "parallel", "loop", "loop_of_pipeline", "until", "fallback", "state_steps", "fan_in"])
def test_operators_build_the_tree_adk_fluent_builds(program: Callable[[ModuleType], Any]) -> None:
    assert _shape(program(ours).build()) == _shape(program(adk_fluent).build())


def test_at_gives_a_typed_copy_and_setters_on_a_used_builder_copy_it() -> None:
    base = ours.Agent("a", "m").instruct("Judge.")
    typed = base @ Verdict
    assert typed.build().output_schema is Verdict and base.build().output_schema is None
    reused = ours.Agent("shared", "m").writes("x")
    first = reused >> ours.Agent("b", "m").reads("x")
    changed = reused.writes("y")  # reused is an operand now: this is a copy
    assert changed is not reused and reused.writes_key == "x" and changed.writes_key == "y"
    assert first.build().sub_agents[0].output_key == "x"


def _run(agent: Any, text: str = "go", state: dict[str, Any] | None = None) -> tuple[list[Event], dict[str, Any]]:
    async def go() -> tuple[list[Event], dict[str, Any]]:
        runner = InMemoryRunner(agent, app_name="fluent")
        session = await runner.session_service.create_session(app_name="fluent", user_id="u", state=state)
        events = [e async for e in runner.run_async(user_id="u", session_id=session.id,
                                                    new_message=Content.user(text), yield_user_message=True)]
        stored = await runner.session_service.get_session(app_name="fluent", user_id="u", session_id=session.id)
        return events, dict(stored.state)

    return asyncio.run(go())


def test_state_transforms_run_as_steps_of_their_own() -> None:
    seen: list[str] = []

    def review(request: Any) -> str:
        seen.append(request.system_instruction)
        return "looks fine"

    pipeline = (
        ours.Agent("parser", ScriptedModel(["parsed code"])).writes("parsed")
        >> S.set(noise="x", count=1) >> S.pick("parsed", "count") >> S.rename(parsed="code")
        >> S.default(lang="python", count=5) >> S.transform("count", lambda n: n + 1)
        >> S.merge("lang", "code", into="both")
        >> ours.Agent("reviewer", ScriptedModel(fallback=review)).reads("code").writes("review")
    )
    agent = pipeline.build()
    assert [type(a).__name__ for a in agent.sub_agents].count("StateStep") == 6
    events, state = _run(agent, state={"user:name": "ann"})
    assert state == {"code": "parsed code", "count": 2, "lang": "python", "both": "python\nparsed code",
                     "review": "looks fine", "user:name": "ann"}
    assert "[code]: parsed code" in seen[0]
    steps = [e for e in events if e.author.startswith(("set_", "pick_", "rename_"))]
    assert [e.actions.state_delta for e in steps] == [{"noise": "x", "count": 1}, {"noise": None},
                                                      {"parsed": None, "code": "parsed code"}]


def test_a_guard_that_fails_stops_the_pipeline_with_its_message() -> None:
    model = ScriptedModel(["never"])
    agent = (S.guard(lambda s: s.get("ready"), "not ready yet") >> ours.Agent("a", model)).build()
    with pytest.raises(ValueError, match="not ready yet"):
        _run(agent)
    assert model.requests == []


def test_a_loop_until_stops_when_the_state_says_so() -> None:
    drafts = ScriptedModel(["draft 1", "draft 2", "done", "never"])
    agent = (ours.Agent("writer", drafts).writes("draft") * until(lambda s: s.get("draft") == "done", max=10)).build()
    assert isinstance(agent, LoopAgent) and isinstance(agent.sub_agents[-1], UntilCheck)
    _events, state = _run(agent)
    assert state["draft"] == "done" and len(drafts.requests) == 3


def test_a_fallback_answers_when_the_first_agent_fails() -> None:
    broken = ScriptedModel([RuntimeError("provider down")])
    agent = (ours.Agent("primary", broken) // ours.Agent("backup", ScriptedModel(["from backup"]))).build()
    assert isinstance(agent, FallbackAgent)
    events, _state = _run(agent)
    assert [(e.author, e.error_code or e.content.text) for e in events if e.author != "user"] == [
        ("primary", "RuntimeError"), ("backup", "from backup")]
    everything_fails = (ours.Agent("p", ScriptedModel([RuntimeError("a")]))
                        // ours.Agent("q", ScriptedModel([RuntimeError("b")]))).build()
    with pytest.raises(Exception, match="b"):
        _run(everything_fails)


def test_ask_runs_one_turn_and_refuses_inside_an_event_loop() -> None:
    agent = ours.Agent("helper", ScriptedModel(["forty-two"])).instruct("Answer.")
    assert agent.ask("what is six times seven?") == "forty-two"

    async def inside() -> None:
        agent.ask("again")

    with pytest.raises(RuntimeError, match=r"await \.ask_async"):
        asyncio.run(inside())


def test_callbacks_accumulate_and_run_in_order() -> None:
    log: list[str] = []
    agent = (ours.Agent("a", ScriptedModel(["hi"]))
             .before_model(lambda cb, req: log.append("one"))
             .before_model(lambda cb, req: log.append("two"))
             .after_model_if(False, lambda cb, resp: log.append("never"))
             .after_model_if(True, lambda cb, resp: log.append("after")))
    _run(agent.build())
    assert log == ["one", "two", "after"]


class Draft(BaseModel):
    title: str
    body: str


class Publishable(BaseModel):
    title: str
    body: str
    tags: list[str]


def test_contract_errors_name_the_agents_and_the_key() -> None:
    with pytest.raises(ContractError, match="agent 'reviewer' reads state key 'code', which no step before it"):
        (ours.Agent("writer", "m").writes("draft") >> ours.Agent("reviewer", "m").instruct("Review {code}")).checked().build()
    with pytest.raises(ContractError, match="agent 'b' reads state key 'x'"):
        (ours.Agent("a", "m").writes("x") >> S.pick("y") >> ours.Agent("b", "m").reads("x")).checked().build()
    with pytest.raises(ContractError, match="branches 'left' and 'right' of 'left_and_right' both write state key 'k'"):
        (ours.Agent("left", "m").writes("k") | ours.Agent("right", "m").writes("k")).checked().build()
    with pytest.raises(ContractError, match="'publisher' consumes Publishable but 'drafter' produces Draft, without 'tags'"):
        (ours.Agent("drafter", "m").produces(Draft).writes("d")
         >> ours.Agent("publisher", "m").consumes(Publishable)).checked().build()
    with pytest.raises(ContractError, match="'publisher' consumes Draft, but no agent before it produces one"):
        ours.Agent("publisher", "m").consumes(Draft).checked().build()
    with pytest.raises(ContractError, match="state step 'merge_a_b_into_c' reads state key 'a'"):
        (S.merge("a", "b", into="c") >> ours.Agent("x", "m")).checked().build()
    # what passes .checked(): a key written upstream, scoped keys, optional ones
    (ours.Agent("w", "m").writes("code") >> ours.Agent("r", "m").instruct("{code} {user:name} {x?}")).checked().build()
    (ours.Agent("r", "m").instruct("Review {code}")).unchecked().build()
    with pytest.raises(TypeError, match="context"):
        ours.Agent("a").instruct(C.none())  # type: ignore[arg-type]


def test_fluent_and_hand_built_pipelines_compile_identical_requests() -> None:
    from examples.fluent_pipeline.agent import root_agent as fluent
    from examples.pipeline.agent import root_agent as by_hand

    assert isinstance(fluent, SequentialAgent) and not isinstance(fluent, ParallelAgent)
    ctx = CompileContext(state={"code": "def f(x): return x", "review": "fine"},
                         events=[Event(author="user", content=Content.user("parse dates"))])
    assert [build_request(a, ctx) for a in fluent.sub_agents] == [build_request(a, ctx) for a in by_hand.sub_agents]



def test_every_state_transform_and_their_composition() -> None:
    state = {"a": 1, "b": "two", "user:name": "ann", "gone": None}
    assert dict(S.drop("a")(state) or {}) == {"b": "two", "gone": None}
    assert dict(S.compute(total=lambda s: s["a"] + 1)(state) or {}) == {"total": 2}
    assert dict(S.merge("a", "b", into="ab", fn=lambda x, y: f"{x}-{y}")(state) or {}) == {"ab": "1-two"}
    assert S.identity()(state) == {}
    with pytest.raises(ValueError, match="required state keys missing: c"):
        S.require("a", "c")(state)
    chained = S.rename(a="x") >> S.transform("x", str) >> S.default(x="never", y=0)
    assert dict(chained(state) or {}) == {"a": None, "x": "1", "y": 0}
    both = S.pick("a") + S.set(z=9)  # a replacement and a delta: the delta applies on top
    assert dict(both(state) or {}) == {"a": 1, "z": 9}
    assert isinstance(both(state), ours.StateReplacement)

    def meddle(s: Any) -> int:
        s["a"] = 2  # a transform gets a read-only copy of the state
        return 0

    with pytest.raises(TypeError):
        S.compute(bad=meddle)(state)

def test_a_loop_of_n_rounds_and_a_fan_out_run_on_the_engine() -> None:
    counter = ScriptedModel(["one", "two", "three", "never"])
    _events, state = _run((ours.Agent("counter", counter).writes("last") * 3).build())
    assert state["last"] == "three" and len(counter.requests) == 3
    fan = (ours.Agent("left", ScriptedModel(["L"])).writes("l") | ours.Agent("right", ScriptedModel(["R"])).writes("r")
           ) >> ours.Agent("join", ScriptedModel(fallback=lambda r: r.system_instruction.split("\n\n")[0])
                           ).reads("l", "r").writes("both")  # no instruction: the context block alone
    _events, state = _run(fan.build())
    assert state["both"] == "[l]: L\n[r]: R"


# -- Route: deterministic routing on the state ---------------------------------------------------


def _route_shape(agent: Any) -> tuple[Any, ...]:
    """Names and kinds, a route agent included (adk-fluent's is its _RouteAgent)."""
    kind = type(agent).__name__.lstrip("_").removesuffix("Agent").lower()
    kind = {"sequential": "seq", "llm": "llm", "route": "route"}.get(kind, kind)
    return (kind, agent.name, tuple(_route_shape(a) for a in agent.sub_agents))


@pytest.mark.parametrize("program", [
    lambda f: f.Agent("classifier", "m").writes("intent")
    >> f.Route("intent").eq("booking", f.Agent("booker", "m")).eq("info", f.Agent("info", "m"))
    .otherwise(f.Agent("general", "m")),
    lambda f: f.Agent("classifier", "m").writes("intent") >> {"booking": f.Agent("booker", "m"),
                                                              "info": f.Agent("info", "m")},
    lambda f: (f.Agent("a", "m").writes("x") >> f.Agent("scorer", "m").writes("score"))
    >> f.Route("score").gt(0.8, f.Agent("premium", "m")).otherwise(f.Agent("basic", "m")),
], ids=["route", "dict", "pipeline_then_route"])
def test_a_route_builds_the_tree_adk_fluent_builds(program: Callable[[ModuleType], Any]) -> None:
    assert _route_shape(program(ours).build()) == _route_shape(program(adk_fluent).build())


def test_a_route_runs_the_agent_its_rules_pick_on_the_engine() -> None:
    def pipeline(intent: str) -> Any:
        return (ours.Agent("classifier", ScriptedModel([intent])).writes("intent")
                >> ours.Route("intent").eq("booking", ours.Agent("booker", ScriptedModel(["booked"])))
                .contains("info", ours.Agent("info", ScriptedModel(["here is info"])))
                .otherwise(ours.Agent("general", ScriptedModel(["general help"])))).build()

    for intent, author, text in (("booking", "booker", "booked"), ("more info", "info", "here is info"),
                                 ("other", "general", "general help")):
        events, state = _run(pipeline(intent))
        assert [(e.author, e.content.text) for e in events if e.content and e.content.text][-1] == (author, text)
        assert state["intent"] == intent
    scored = (ours.Agent("scorer", ScriptedModel(["0.9"])).writes("score")
              >> ours.Route("score").gt(0.8, ours.Agent("premium", ScriptedModel(["premium"])))).build()
    events, state = _run(scored)
    assert state["score"] == "0.9" and [e.author for e in events][-1] == "premium"
    nothing = (ours.Agent("scorer", ScriptedModel(["not a number"])).writes("score")
               >> ours.Route("score").gt(0.8, ours.Agent("premium", ScriptedModel(["never"])))).build()
    assert [e.author for e in _run(nothing)[0]] == ["user", "scorer"]  # gt raised ValueError: no rule, no default
    keyless = ours.Route().when(lambda s: s.get("vip"), ours.Agent("vip", ScriptedModel(["welcome"])))
    assert [e.author for e in _run(keyless.build(), state={"vip": True})[0]] == ["user", "vip"]
    with pytest.raises(ValueError, match="requires a key"):
        ours.Route().eq("x", ours.Agent("a", "m"))
    with pytest.raises(ValueError, match=r"must have \.writes\(\) set"):
        ours.Agent("a", "m") >> {"x": ours.Agent("b", "m")}


def test_a_key_the_caller_seeds_is_logged_not_refused_by_default_as_in_adk_fluent(
        caplog: pytest.LogCaptureFixture) -> None:
    """adk-fluent's ``build()`` logs contract problems and builds (a reader of a key
    the caller puts in the session state is a normal agent); ``.checked()`` and
    ``.strict()`` raise; ``.validate()`` raises whatever the mode; ``.unchecked()`` does
    not look."""
    theirs = adk_fluent.Agent("summarizer", "m").reads("review").build()
    with caplog.at_level("WARNING", logger="adk_actors.fluent"):
        built = ours.Agent("summarizer", "m").reads("review").build()
    assert built.name == theirs.name == "summarizer"
    assert [r.getMessage() for r in caplog.records if r.name == "adk_actors.fluent"] == [
        "contract of summarizer: agent 'summarizer' reads state key 'review', which no step before it writes"]
    for strictness in ("checked", "strict"):
        with pytest.raises(ContractError, match="agent 'summarizer' reads state key 'review'"):
            getattr(ours.Agent("summarizer", "m").reads("review"), strictness)().build()
    with pytest.raises(ValueError, match=r"Validation failed for Agent\('summarizer'\): .*'review'"):
        ours.Agent("summarizer", "m").reads("review").unchecked().validate()
    caplog.clear()
    with caplog.at_level("WARNING", logger="adk_actors.fluent"):
        ours.Agent("summarizer", "m").reads("review").unchecked().build()
    assert not caplog.records


def test_a_route_on_a_key_nothing_writes_is_a_contract_error() -> None:
    with pytest.raises(ContractError, match="route 'route_intent' reads state key 'intent'"):
        (ours.Agent("a", "m") >> ours.Route("intent").eq("x", ours.Agent("b", "m"))).checked().build()
    # after a route, a key only some branches write is not known to be there
    with pytest.raises(ContractError, match="agent 'after' reads state key 'y'"):
        (ours.Agent("a", "m").writes("k")
         >> ours.Route("k").eq("1", ours.Agent("b", "m").writes("y")).otherwise(ours.Agent("c", "m"))
         >> ours.Agent("after", "m").reads("y")).checked().build()
    (ours.Agent("a", "m").writes("k")
     >> ours.Route("k").eq("1", ours.Agent("b", "m").writes("y")).otherwise(ours.Agent("c", "m").writes("y"))
     >> ours.Agent("after", "m").reads("y")).build()  # every branch writes it: fine


def test_more_state_transforms_as_adk_fluent_has_them() -> None:
    state = {"score": 3, "score_all": [1], "verbose": True, "n": 4}
    for name, ours_t, theirs_t in (
            ("when key", S.when("verbose", S.set(logged=True)), adk_fluent.S.when("verbose", adk_fluent.S.set(logged=True))),
            ("when false", S.when(lambda s: s["missing"], S.set(x=1)),
             adk_fluent.S.when(lambda s: s["missing"], adk_fluent.S.set(x=1))),
            ("accumulate", S.accumulate("score"), adk_fluent.S.accumulate("score")),
            ("counter", S.counter("n", step=2), adk_fluent.S.counter("n", step=2)),
            ("history", S.history("score", max_size=1), adk_fluent.S.history("score", max_size=1))):
        theirs = theirs_t(dict(state))  # adk-fluent's StateDelta holds its keys in .updates
        assert dict(ours_t(state) or {}) == theirs.updates, name

    class Needs(BaseModel):
        score: int

    assert S.validate(Needs)(state) == {}
    with pytest.raises(ValueError, match="State validation failed against Needs"):
        S.validate(Needs)({"nothing": 1})


def test_tap_expect_and_map_over_as_steps_of_a_pipeline() -> None:
    seen: list[dict[str, Any]] = []

    def look(state: Any) -> None:
        seen.append(dict(state))
        with pytest.raises(TypeError):
            state["x"] = 1  # a tap gets a read-only copy

    def summarize(request: Any) -> str:
        return f"summary of {request.system_instruction.split('Summarize: ')[1].splitlines()[0]}"

    summarizer = ours.Agent("summarizer", ScriptedModel(fallback=summarize)).instruct("Summarize: {_item}").writes("_item")
    pipeline = (ours.Agent("lister", ScriptedModel(["a, b"])).writes("listed")
                >> S.compute(items=lambda s: s["listed"].split(", "))
                >> ours.tap(look)
                >> ours.expect(lambda s: len(s["items"]) == 2, "two items expected")
                >> ours.map_over("items", summarizer, output_key="summaries")).build()
    events, state = _run(pipeline)
    assert seen and seen[0]["items"] == ["a", "b"]
    assert state["summaries"] == ["summary of a", "summary of b"]
    assert [e.author for e in events if e.content and e.content.text] == ["user", "lister", "summarizer",
                                                                          "summarizer"]
    failing = (ours.Agent("lister", ScriptedModel(["a"])).writes("listed")
               >> ours.expect(lambda s: "missing" in s, "the list must be there")).build()
    with pytest.raises(ValueError, match="the list must be there"):
        _run(failing)
    assert [type(a).__name__ for a in pipeline.sub_agents] == ["LlmAgent", "StateStep", "TapAgent", "StateStep",
                                                               "MapOverAgent"]


def test_mock_answers_without_a_model_and_test_checks_the_answer() -> None:
    agent = ours.Agent("greeter", "gemini-2.5-flash").instruct("Greet.").mock(["Hello!", "World!"])
    # in turn, and again from the start (one cycle per .mock, as adk-fluent's)
    assert [agent.ask("hi"), agent.ask("hi"), agent.ask("hi")] == ["Hello!", "World!", "Hello!"]
    echo = ours.Agent("echo", "gemini-2.5-flash").mock(lambda request: f"you said {request.contents[-1].text}")
    assert echo.ask("ping") == "you said ping"
    researcher = ours.Agent("researcher", "m").writes("notes")
    pipeline = researcher >> ours.Agent("writer", "m").reads("notes")
    mocked = pipeline.mock({"researcher": "findings", "writer": ["report"]})
    _events, state = _run(mocked.build())
    assert state["notes"] == "findings"
    assert researcher._callbacks == {}  # an operand of >> is copied, never changed
    with pytest.raises(ValueError, match="could not find agent\\(s\\): 'writter'"):
        pipeline.mock({"writter": "x"})
    assert echo.test("ping", contains="ping", matches=r"you said \w+", equals="you said ping") is echo
    with pytest.raises(AssertionError, match="expected: contains 'pong'"):
        echo.test("ping", contains="pong")


def test_reorder_puts_the_named_sections_first() -> None:
    """``P.reorder`` as adk-fluent documents it ("Override default section ordering.
    Unmentioned sections appear after"); adk-fluent 0.18 itself ignores it."""
    prompt = P.role("R.") + P.task("T.") + P.constraint("C1") + P.format("F.") + P.reorder("format", "task")
    assert str(prompt) == "Output Format:\nF.\n\nTask:\nT.\n\nR.\n\nConstraints:\nC1"


def test_a_misspelt_setter_is_an_attribute_error_that_suggests_the_right_one() -> None:
    with pytest.raises(AttributeError, match=r"'instrct' is not a recognized field on Agent\. Did you mean '\.instruct'\?"):
        ours.Agent("a", "m").instrct("x")
    with pytest.raises(AttributeError) as unknown:
        ours.Agent("a", "m").zzzqqq("x")
    assert "Did you mean" not in str(unknown.value) and "Available: " in str(unknown.value)


def test_events_stream_and_map_run_turns_as_adk_fluent_does() -> None:
    agent = ours.Agent("echo", "m").mock(lambda request: f"echo {request.contents[-1].text}")
    assert agent.map(["a", "b", "c"], concurrency=2) == ["echo a", "echo b", "echo c"]

    async def collect() -> tuple[list[str], list[str]]:
        chunks = [chunk async for chunk in agent.stream("hi")]
        authors = [event.author async for event in agent.events("hi")]
        return chunks, authors

    assert asyncio.run(collect()) == (["echo hi"], ["echo"])  # the user's own event is not one of them
    tools = (ours.Agent("caller", ScriptedModel([call("lookup", city="Oslo"), "done"])).tool(lookup))
    parts = asyncio.run(_chunks(tools, "go"))
    assert parts == ["done"]  # text parts only; the call and its result carry none

    async def inside() -> None:
        agent.map(["x"])

    with pytest.raises(RuntimeError, match=r"await \.map_async"):
        asyncio.run(inside())


async def _chunks(builder: Any, prompt: str) -> list[str]:
    return [chunk async for chunk in builder.stream(prompt)]


def lookup(city: str) -> dict[str, str]:
    """Look a city up."""
    return {"city": city}


def test_branch_flatten_zip_group_by_log_and_capture(caplog: pytest.LogCaptureFixture) -> None:
    state = {"intent": "booking", "nested": {"a": {"b": 1}, "c": 2}, "xs": [1, 2], "ys": ["a", "b"],
             "items": ["apple", "avocado", "banana"]}
    pairs = [
        (S.branch("intent", booking=S.set(route="book"), info=S.set(route="faq")),
         adk_fluent.S.branch("intent", booking=adk_fluent.S.set(route="book"), info=adk_fluent.S.set(route="faq"))),
        (S.flatten("nested"), adk_fluent.S.flatten("nested")),
        (S.zip("xs", "ys", into="pairs"), adk_fluent.S.zip("xs", "ys", into="pairs")),
        (S.group_by("items", lambda item: item[0], into="by_letter"),
         adk_fluent.S.group_by("items", lambda item: item[0], into="by_letter")),
    ]
    for ours_t, theirs_t in pairs:
        assert dict(ours_t(state) or {}) == theirs_t(dict(state)).updates, ours_t.name
    flat = {"user": "ann", "a.b": 1, "a.c.d": 2, "x_y": 3}
    assert dict(S.unflatten()(flat)) == adk_fluent.S.unflatten()(dict(flat)).new_state == \
        {"user": "ann", "a": {"b": 1, "c": {"d": 2}}, "x_y": 3}
    assert dict(S.unflatten("_")(flat)) == adk_fluent.S.unflatten("_")(dict(flat)).new_state
    with caplog.at_level("INFO", logger="adk_actors.fluent"):
        assert S.log("intent", "missing", label="here")(state) == {}
    assert "[here] {'intent': 'booking', 'missing': '<missing>'}" in caplog.text
    pipeline = (S.capture("asked") >> ours.Agent("writer", "m").reads("asked").mock(
        lambda request: next(line for line in request.system_instruction.splitlines() if line.startswith("[asked]"))
    )).build()
    events, stored = _run(pipeline, "write about owls")
    assert stored["asked"] == "write about owls"
    assert [e.content.text for e in events if e.author == "writer"] == ["[asked]: write about owls"]


def test_a_time_limit_stops_a_slow_step_and_lets_a_fast_one_through() -> None:
    async def slow_lookup(city: str) -> dict[str, str]:
        """Look a city up, slowly."""
        await asyncio.sleep(5)
        return {"city": city}

    slow = ours.Agent("slow", ScriptedModel([call("slow_lookup", city="Oslo"), "never"])).tool(slow_lookup)
    timed = slow.timeout(0.3)
    assert timed.name.startswith("slow_timeout_") and type(timed.build()).__name__ == "TimeoutAgent"
    theirs = adk_fluent.Agent("slow", "m").timeout(0.3).build()
    assert [a.name for a in theirs.sub_agents] == [a.name for a in timed.build().sub_agents] == ["slow"]
    began = time.monotonic()
    with pytest.raises(TimeoutError, match=r"Agent 'slow' exceeded 0\.3s timeout"):
        _run((ours.Agent("first", ScriptedModel(["ok"])) >> timed).build())
    assert time.monotonic() - began < 3  # stopped at its limit, not after the tool's 5 s
    fast = (ours.Agent("fast", ScriptedModel(["quick"])).writes("answer").timeout(5)
            >> ours.Agent("after", ScriptedModel(["done"])).reads("answer")).build()
    _events, state = _run(fast)
    assert state["answer"] == "quick"


def test_a_race_keeps_only_the_first_to_finish_and_cancels_the_others() -> None:
    """``race(a, b)``: the first to finish wins; its events (its tool call and result
    included: it ran on its own copy of the session) are the race's; the loser is
    cancelled at once and leaves nothing in the session, not even its state."""
    async def lookup(city: str) -> dict[str, str]:
        """Look a city up."""
        return {"city": city, "weather": "sunny"}

    async def slow_lookup(city: str) -> dict[str, str]:
        """Look a city up, slowly."""
        await asyncio.sleep(5)
        return {"city": city}

    def answer(request: Any) -> str:  # the winner's second model call sees its own tool result
        results = [p.function_response.response for c in request.contents for p in c.parts if p.function_response]
        return f"it is {results[-1]['weather']}" if results else "no result seen"

    fast = ours.Agent("fast", ScriptedModel([call("lookup", city="Oslo")], fallback=answer)).tool(lookup).writes("a")
    slow = ours.Agent("slow", ScriptedModel([call("slow_lookup", city="Oslo"), "never"])).tool(slow_lookup).writes("b")
    raced = ours.race(fast, slow)
    assert raced.name == adk_fluent.race(adk_fluent.Agent("fast", "m"), adk_fluent.Agent("slow", "m")).build().name
    began = time.monotonic()
    events, state = _run((raced >> S.set(after="yes")).build())
    assert time.monotonic() - began < 3  # the loser's 5 s tool was cancelled
    assert {e.author for e in events} == {"user", "fast", "set_after"}
    assert [e.content.text for e in events if e.author == "fast" and e.content and e.content.text] == ["it is sunny"]
    assert state["a"] == "it is sunny" and "b" not in state and state["after"] == "yes"
    broken = ours.race(ours.Agent("quick_fail", ScriptedModel([RuntimeError("boom")])),
                       ours.Agent("late", ScriptedModel([call("slow_lookup", city="x")])).tool(slow_lookup))
    with pytest.raises(Exception, match="boom"):  # a winner that raised raises (adk-fluent's meaning)
        _run(broken.build())
    with pytest.raises(ValueError):
        ours.race(fast)


def test_a_gate_pauses_the_pipeline_until_approved() -> None:
    """adk-fluent's README example, ``analyzer >> gate(pred, message) >> executor``: while
    pred holds and nobody approved, the gate's question ends the turn (the executor
    waits) and sets its flags; approved, it clears them and the executor runs. In a
    loop the question ends the loop (it escalates)."""
    analyzer, executor = ScriptedModel(["analysed"] * 4), ScriptedModel(["executed"] * 4)
    pipeline = (ours.Agent("analyzer", analyzer).writes("analysis")
                >> ours.gate(lambda s: s.get("risk") == "high", message="Approve high-risk action?", gate_key="risky")
                >> ours.Agent("executor", executor)).build()
    assert type(pipeline).__name__ == "GatedSequence"
    events, state = _run(pipeline, state={"risk": "high"})
    said = [(e.author.split("_")[0], e.content.text) for e in events if e.content and e.content.text]
    assert said == [("user", "go"), ("analyzer", "analysed"), ("gate", "Approve high-risk action?")]
    assert executor.requests == [] and [e.actions.escalate for e in events if e.author.startswith("gate_")] == [True]
    assert state["risky"] is True and state["risky_message"] == "Approve high-risk action?"
    events, state = _run(pipeline, state={"risk": "high", "risky": True, "risky_approved": True})
    assert [e.content.text for e in events if e.content and e.content.text] == ["go", "analysed", "executed"]
    assert state["risky"] is False and state["risky_approved"] is False
    _events, state = _run(pipeline, state={"risk": "low"})  # no need: no question, no flag
    assert "risky" not in state and len(executor.requests) == 2
    looped = (ours.gate(lambda s: True, gate_key="always") >> ours.Agent("worker", executor)) * 3
    events, _state = _run(looped.build())
    assert not [e for e in events if e.author == "worker"]  # asked in the first round: the loop ended
    assert [type(a).__name__ for a in (ours.Agent("a", "m") >> ours.Agent("b", "m")).build().sub_agents] == [
        "LlmAgent", "LlmAgent"] and type((ours.Agent("a", "m") >> ours.Agent("b", "m")).build()).__name__ == (
        "SequentialAgent")


def test_proceed_if_skips_an_agent_and_loop_while_repeats_while_the_state_says_so() -> None:
    model = ScriptedModel(["ran"] * 5)
    skipped = ours.Agent("maybe", model).proceed_if(lambda s: s.get("valid") == "yes")
    events, _state = _run(skipped.build(), state={"valid": "no"})
    assert model.requests == [] and not [e for e in events if e.content and e.content.text == "ran"]
    _run(skipped.build(), state={"valid": "yes"})
    assert len(model.requests) == 1
    with pytest.raises(KeyError):  # a typo in the predicate is a failure, not a skip (adk-fluent 0.18)
        _run(ours.Agent("typo", model).proceed_if(lambda s: s["vaild"]).build())
    counter = ours.Agent("counter", ScriptedModel(["x"] * 9)).writes("last") >> S.counter("n")
    looped = counter.loop_while(lambda s: s.get("n", 0) < 2)
    theirs = adk_fluent.Agent("counter", "m").loop_while(lambda s: True).build()
    assert looped.build().max_iterations == theirs.max_iterations == 3
    _events, state = _run(looped.build())
    assert state["n"] == 2
    assert counter.loop_until(lambda s: s.get("n") == 1, max_iterations=7).build().max_iterations == 7


def test_clone_with_validate_explain_and_a_chat_session_as_adk_fluent_has_them() -> None:
    """adk-fluent's README helpers: ``clone`` and ``with_`` give independent copies
    (callbacks included: a copy's are its own), ``validate`` raises ValueError on a
    contract error, ``explain`` says what will be built, ``session()`` keeps one
    conversation over turns, the deprecated aliases warn and work, ``dir`` lists the
    callback setters."""
    def first(callback_context: Any) -> None:
        return None

    def second(callback_context: Any) -> None:
        return None

    base = ours.Agent("base", "gemini-2.5-flash").instruct("Be helpful.").before_agent(first)
    math = base.clone("math").instruct("Solve math.").before_agent(second)
    creative = base.with_(name="creative", model="gemini-2.5-pro", output_key="idea")
    assert (base.name, math.name, creative.name) == ("base", "math", "creative")
    def callbacks(builder: Any) -> list[Any]:
        found = builder.build().before_agent_callback
        return found if isinstance(found, list) else [found]

    assert callbacks(base) == [first] and callbacks(math) == [first, second]
    assert creative.build().model == "gemini-2.5-pro" and creative.writes_key == "idea" and base.writes_key is None
    assert base.model("m2") is base  # a clone leaves its original unfrozen

    used = base >> ours.Agent("next", "m")
    changed = base.before_agent(second)  # base is an operand now: a copy, and base's list is untouched
    assert used.build().sub_agents[0].before_agent_callback in (first, [first])
    assert callbacks(changed) == [first, second]

    broken = ours.Agent("reader", "m").reads("nothing_writes_this")
    with pytest.raises(ValueError, match=r"Validation failed for Agent\('reader'\).*nothing_writes_this"):
        broken.validate()
    assert ours.Agent("fine", "m").validate().name == "fine"

    text = (ours.Agent("w", "m").instruct("Write about {topic} {style?}.").writes("draft").tool(first)
            >> ours.Agent("r", "m").reads("draft")).explain()
    assert text.splitlines()[0] == "Pipeline: w_then_r"
    assert "  Agent: w" in text and "Template vars: required: topic; optional: style" in text
    assert "writes:   state['draft']" in text and "reads:    state['draft']" in text and "Tools: first" in text

    async def chat() -> list[str]:
        async with ours.Agent("echo", ScriptedModel(fallback=lambda r: f"turns seen: {len(r.contents)}")).session() \
                as session:
            return [await session.send("hello"), await session.send("again")]

    assert asyncio.run(chat()) == ["turns seen: 1", "turns seen: 3"]  # one session: the second turn sees the first

    with pytest.warns(DeprecationWarning):
        assert ours.Agent("old", "m").outputs("k").writes_key == "k"
    with pytest.warns(DeprecationWarning):
        assert ours.Agent("boss", "m").delegate(ours.Agent("helper", "m")).build().tools[0].name == "helper"
    assert {"before_model", "after_agent_if", "instruct", "explain"} <= set(dir(ours.Agent("x")))


def test_guards_check_the_answer_in_order_and_a_blocked_answer_is_not_kept() -> None:
    """``.guard(G...)``: a chain's guards run in order on one answer (a redaction
    first, then the length of the redacted text); a guard that blocks fails the run
    with ``GuardViolation`` (``[kind] detail``) and the blocked answer is not stored."""
    from adk_actors.fluent import G, GuardViolation

    class Verdict(BaseModel):
        ok: bool

    said = "mail me at ann@example.com or 555-123-4567"  # 42 characters; redacted: 25
    redacting = ours.Agent("a", ScriptedModel([said])).guard(G.pii("redact") | G.length(max=30)).writes("answer")
    events, state = _run(redacting.build())
    assert state["answer"] == "mail me at [PII] or [PII]"
    assert [e.content.text for e in events if e.author == "a"] == ["mail me at [PII] or [PII]"]
    with pytest.raises(GuardViolation, match=r"^\[length\] output too long \(42 > 30\)"):
        _run(ours.Agent("b", ScriptedModel([said])).guard(G.length(max=30) | G.pii("redact")).build())

    def blocked(guards: Any, answer: str, state: dict[str, Any] | None = None) -> str:
        with pytest.raises(GuardViolation) as caught:
            _run(ours.Agent("c", ScriptedModel([answer])).guard(guards).writes("kept").build(), state=state)
        return str(caught.value)

    assert blocked(G.json(), "not json").startswith("[json] model output is not valid JSON")

    async def stored_after_a_block() -> list[str]:
        runner = InMemoryRunner(ours.Agent("j", ScriptedModel(["not json"])).guard(G.json()).build(), app_name="g")
        session = await runner.session_service.create_session(app_name="g", user_id="u")
        with pytest.raises(GuardViolation):
            async for _event in runner.run_async(user_id="u", session_id=session.id, new_message=Content.user("go")):
                pass
        kept = await runner.session_service.get_session(app_name="g", user_id="u", session_id=session.id)
        return [e.content.text for e in kept.events if e.content and e.content.text]

    assert asyncio.run(stored_after_a_block()) == ["go"]  # the blocked answer was never committed
    assert blocked(G.output(Verdict), '{"ok": "maybe"}').startswith("[output] schema validation failed")
    assert blocked(G.topic(deny=["Weather"]), "the weather is fine") == "[topic] denied topic 'Weather' found in output"
    assert blocked(G.pii("block"), "ssn 123-45-6789") == "[pii] detected PII (SSN)"
    assert blocked(G.regex(r"secret-\d+"), "it is secret-42") == "[regex] output matches the blocked pattern 'secret-\\\\d+'"
    assert blocked(G.budget(max_tokens=5), "x" * 40) == "[budget] token budget exceeded (10 > 5)"
    assert blocked(G.when(lambda s: s.get("strict"), G.json()), "plain", {"strict": True}).startswith("[json]")
    _events, state = _run(ours.Agent("d", ScriptedModel(['{"ok": true}'])).guard(G.output(Verdict) | G.json())
                          .writes("kept").build())
    assert state["kept"] == '{"ok": true}'
    _events, state = _run(ours.Agent("e", ScriptedModel(["plain"])).guard(G.when(lambda s: s.get("strict"), G.json()))
                          .writes("kept").build())
    assert state["kept"] == "plain"  # the condition does not hold: the guard is not applied
    _events, state = _run(ours.Agent("f", ScriptedModel(["it is secret-42"])).guard(
        G.regex(r"secret-\d+", action="redact")).writes("kept").build())
    assert state["kept"] == "it is [REDACTED]"

    async def two_turns() -> str:
        async with ours.Agent("g", ScriptedModel(["one", "two"])).guard(G.max_turns(1)).session() as chat:
            assert await chat.send("first") == "one"
            with pytest.raises(GuardViolation, match=r"\[max_turns\] exceeded 1 turns \(current: 2\)"):
                await chat.send("second")
            return "checked"

    assert asyncio.run(two_turns()) == "checked"
    plain = ours.Agent("h", ScriptedModel(["x"])).guard(lambda callback_context, llm_response: None)
    assert plain.callback_counts == {"after_model": 1}


def test_t_tools_join_with_a_bar_and_wrap_a_call_with_a_cache_a_time_limit_or_an_approval() -> None:
    """``.tools(T.fn(f) | T.mock(...) | T.cache(...) | T.timeout(...))``: the model sees
    each tool's declaration; a cached tool runs once for the same arguments; a tool
    over its time limit answers the model an error and the run goes on; ``T.confirm``
    waits for a human, who is shown its message."""
    import threading

    from engine_helpers import run, summary

    from adk_actors.engine import InMemoryApprovals
    from adk_actors.fluent import T

    ran: list[str] = []

    def lookup(city: str) -> dict[str, str]:
        """Look a city up."""
        ran.append(city)
        return {"city": city, "weather": "sunny"}

    async def slow(city: str) -> dict[str, str]:
        """Slowly."""
        await asyncio.sleep(5)
        return {"city": city}

    model = ScriptedModel([call("lookup", city="Oslo"), call("lookup", city="Oslo"), call("forecast", days=2),
                           call("slow", city="Rome"), "done"])
    agent = ours.Agent("a", model).tools(T.cache(T.fn(lookup)) | T.mock("forecast", side_effect=lambda days: {
        "days": days}) | T.timeout(T.fn(slow), seconds=0.2))
    began = time.monotonic()
    events, _state = _run(agent.build())
    assert time.monotonic() - began < 3 and ran == ["Oslo"]  # cached: the second call did not run the function
    results = [p.function_response.response for e in events if e.content for p in e.content.parts
               if p.function_response]
    assert results[:3] == [{"city": "Oslo", "weather": "sunny"}, {"city": "Oslo", "weather": "sunny"}, {"days": 2}]
    assert "did not answer within 0.2 s" in str(results[3])
    declared = {d.name: d for d in (t.declaration() for t in agent.build().tools)}
    assert set(declared) == {"lookup", "forecast", "slow"} and "city" in str(declared["lookup"].parameters_schema)

    approvals = InMemoryApprovals()

    def approve_soon() -> None:
        wait_until = time.monotonic() + 5
        while not approvals.pending() and time.monotonic() < wait_until:
            time.sleep(0.01)
        shown.append(approvals.pending()[0]["hint"])
        approvals.approve(approvals.pending()[0]["id"])

    shown: list[str] = []
    threading.Thread(target=approve_soon, daemon=True).start()
    asked = ours.Agent("bank", ScriptedModel([call("lookup", city="Paris"), "paid"])).tools(
        T.confirm(T.fn(lookup), message="Look Paris up?")).build()
    said = summary(run(asked, "go", approvals=approvals))
    assert shown == ["Look Paris up?"] and ran == ["Oslo", "Paris"] and said[-1] == ("bank", "paid")
    assert ours.Agent("x", "m").tools(T.fn(lookup, confirm=True)).build().tools[0].require_confirmation is True
    assert ours.Agent("x", "m").tool(T.agent(ours.Agent("helper", "m"))).build().tools[0].name == "helper"
    mcp = ours.Agent("x", "m").tools(T.mcp("http://127.0.0.1:9/mcp", tool_filter=["add"], prefix="calc")).build()
    toolset = mcp.tools[0]
    assert type(toolset).__name__ == "McpToolset" and toolset.tool_name_prefix == "calc"
    assert type(toolset.spec.params).__name__ == "StreamableHTTPConnectionParams" and toolset.tool_filter == ["add"]
    remote = ours.Agent("x", "m").tools(T.a2a("http://127.0.0.1:9/a2a/echo", name="echo", timeout=5)).build()
    assert remote.tools[0].name == "echo" and remote.tools[0].agent.timeout == 5


@pytest.mark.parametrize("program", [
    lambda f: f.Agent("w", "m").instruct("Write.").writes("draft") >> (
        f.Agent("r", "m").instruct("Review {draft}") | f.Agent("s", "m").instruct("x")) >> f.Agent("z", "m"),
    lambda f: (f.Agent("a", "m").instruct("A.") >> f.Agent("b", "m").instruct("B.")) * 3,
    lambda f: f.Agent("a", "m") // f.Agent("b", "m") // f.Agent("c", "m"),
    lambda f: f.Agent("a", "m").writes("k").timeout(5),
    lambda f: (f.Agent("p", "m").writes("x") >> f.Agent("q", "m").instruct("Use {x?}.")) * f.until(
        lambda s: True, max=4),
    lambda f: f.Agent("w", "m").instruct("Write.").writes("report") >> f.A.publish("report.md", from_key="report")
    >> f.A.snapshot("report.md", into_key="copy") >> f.Agent("r", "m").instruct("Check {copy}."),
])
def test_to_mermaid_draws_what_adk_fluent_draws(program: Callable[[ModuleType], Any]) -> None:
    import re

    def numbered_alike(text: str) -> str:  # both number their time limits with a counter of their own
        return re.sub(r"_timeout_\d+", "_timeout_N", text)

    assert numbered_alike(program(ours).to_mermaid()) == numbered_alike(program(adk_fluent).to_mermaid())


def test_to_mermaid_shows_every_kind_its_reads_and_its_contracts() -> None:
    class Draft(BaseModel):
        text: str

    pipeline = (ours.Agent("w", "m").writes("draft").produces(Draft)
                >> ours.gate(lambda s: True, gate_key="ok")
                >> ours.race(ours.Agent("fast", "m"), ours.Agent("slow", "m"))
                >> S.rename(draft="text")
                >> ours.Route("text").eq("a", ours.Agent("ra", "m")).otherwise(ours.Agent("rb", "m").reads("ok")))
    drawn = pipeline.to_mermaid()
    assert drawn.splitlines()[0] == "graph TD"
    for shape in ('["w"]', '(gate)"}}', '{{"race_fast_slow (race)"}}', ' transform"]', '{"route_text (route)"}'):
        assert shape in drawn
    assert '-. "produces Draft" .-o' in drawn and '-. "ok" .->' in drawn and " -.-> " in drawn
    assert '-. "produces' not in pipeline.to_mermaid(show_contracts=False)
    assert '-. "ok" .->' not in pipeline.to_mermaid(show_data_flow=False)


def test_artifact_steps_move_values_between_the_state_and_the_sessions_artifacts() -> None:
    """``A.publish`` saves a state value as the next version of an artifact (text as
    text, a dict as JSON), ``A.snapshot`` copies an artifact into the state (binary as
    base64, ``A.as_text`` decodes it), ``A.save`` saves literal content, ``A.list``
    lists the names; each is an event of the run (its artifact_delta or state_delta);
    a step that reads a key nothing writes is a contract error."""
    from adk_actors.fluent import A

    pipeline = (ours.Agent("writer", ScriptedModel(["# Report", "# Report, second draft"])).writes("report")
                >> A.publish("report.md", from_key="report")
                >> S.set(meta={"pages": 2}) >> A.publish("meta.json", from_key="meta", scope="user")
                >> A.save("raw.bin", content=b"\x00\x01 raw")
                >> A.snapshot("raw.bin", into_key="raw") >> A.as_text("raw")
                >> A.snapshot("user:meta.json", into_key="meta_copy") >> A.as_json("meta_copy")
                >> A.list(into_key="names"))

    async def go() -> tuple[list[Event], dict[str, Any], Any]:
        runner = InMemoryRunner(pipeline.build(), app_name="arts")
        session = await runner.session_service.create_session(app_name="arts", user_id="u")
        events = [e async for e in runner.run_async(user_id="u", session_id=session.id,
                                                    new_message=Content.user("go"))]
        stored = await runner.session_service.get_session(app_name="arts", user_id="u", session_id=session.id)
        report = await runner.artifact_service.load_artifact(app_name="arts", user_id="u", session_id=session.id,
                                                             filename="report.md")
        return events, dict(stored.state), report

    events, state, report = asyncio.run(go())
    deltas = [e.actions.artifact_delta for e in events if e.actions.artifact_delta]
    assert deltas == [{"report.md": 0}, {"user:meta.json": 0}, {"raw.bin": 0}]
    assert state["raw"] == "\x00\x01 raw" and state["meta_copy"] == {"pages": 2}
    assert state["names"] == ["raw.bin", "report.md", "user:meta.json"]
    assert report.text == "# Report"
    with pytest.raises(ContractError, match=r"artifact step 'publish_x_md' reads state key 'missing'"):
        (ours.Agent("a", "m") >> A.publish("x.md", from_key="missing")).checked().build()
    assert A.publish("r.md", from_key="k").name == adk_fluent.A.publish("r.md", from_key="k")._name


def test_fresh_leaves_out_events_older_than_max_age_and_model_read_specs_are_refused() -> None:
    now = 10_000.0
    events = [Event(author="user", content=Content.user("old"), timestamp=now - 120),
              Event(author="user", content=Content.user("new"), timestamp=now - 5)]
    spec = ours.C.fresh(max_age=60, clock=lambda: now)
    assert spec.render is not None and spec.render(CompileContext(events=events)) == "[user]: new"
    kept = ours.C.fresh(max_age=60, stale_action="keep", clock=lambda: now)
    assert kept.render is not None and kept.render(CompileContext(events=events)) == "[user]: old\n[user]: new"
    for refused in (lambda: ours.C.dedup(strategy="semantic"), lambda: ours.C.fit(strategy="cascade"),
                    lambda: ours.C.rolling(summarize=True)):
        with pytest.raises(ValueError, match="asks a model"):
            refused()


def test_a_versioned_prompt_has_a_fingerprint_that_follows_its_text() -> None:
    one = ours.P.versioned(ours.P.role("R.") + ours.P.task("T."), tag="v1")
    assert one.fingerprint == ours.P.versioned(ours.P.role("R.") + ours.P.task("T."), tag="v1").fingerprint
    assert one.fingerprint != ours.P.versioned(ours.P.role("R.") + ours.P.task("T!"), tag="v1").fingerprint
    assert one.fingerprint != ours.P.versioned(ours.P.role("R.") + ours.P.task("T."), tag="v2").fingerprint
