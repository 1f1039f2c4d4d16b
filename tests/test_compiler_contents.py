"""History assembly (roles, other agents, branches, pairing, compaction) and compressors."""

from __future__ import annotations

from typing import Any

import pytest

from adk_actors import (
    AgentDefinitionError,
    Compaction,
    Content,
    Event,
    EventActions,
    FunctionCall,
    FunctionResponse,
    LlmAgent,
    Part,
)
from adk_actors.agents._fencing import (
    OTHER_AGENT_CONTEXT_PREAMBLE,
    QUOTED_CONTENT_BEGIN,
    QUOTED_CONTENT_END,
)
from adk_actors.compiler import (
    INTERRUPTED_RESULT,
    CompileContext,
    SlidingWindow,
    Summarize,
    TokenBudget,
    Truncate,
    branch_visible,
    build_contents,
    build_request,
    history,
)


def user(text: str, **kw: object) -> Event:
    return Event(author="user", content=Content.user(text), **kw)  # type: ignore[arg-type]


def said(author: str, text: str, **kw: object) -> Event:
    return Event(author=author, content=Content.model(text), **kw)  # type: ignore[arg-type]


def call(author: str, name: str, call_id: str, **args: object) -> Event:
    return Event(author=author, content=Content(role="model", parts=(
        Part(function_call=FunctionCall(id=call_id, name=name, args=dict(args))),)))


def result(author: str, name: str, call_id: str, **response: object) -> Event:
    return Event(author=author, content=Content(role="user", parts=(
        Part(function_response=FunctionResponse(id=call_id, name=name, response=dict(response))),)))


def texts(messages: list[Content]) -> list[tuple[str | None, str]]:
    return [(m.role, " | ".join(p.text or (p.function_call and f"call:{p.function_call.name}#{p.function_call.id}")
                                or (p.function_response and f"result:{p.function_response.id}:{p.function_response.response}")
                                or "?" for p in m.parts)) for m in messages]


def test_roles_and_other_agents_as_context() -> None:
    events = [
        user("hi"),
        said("bot", "hello"),
        call("helper", "lookup", "c1", q="x"),
        result("helper", "lookup", "c1", value=3),
        said("helper", "found 3"),
        Event(author="bot", content=None, error_code="boom"),
        said("bot", "partial thing", partial=True),
    ]
    messages = build_contents("bot", events, new_message=Content.user("next"))
    # another agent's turn: google-adk 2.13's preamble, each payload between its quote
    # markers (tests/test_adk52_fencing.py compares it with google-adk's byte for byte)
    assert [(role, text.replace(OTHER_AGENT_CONTEXT_PREAMBLE, "<preamble>")) for role, text in texts(messages)] == [
        ("user", "hi"),
        ("model", "hello"),
        ("user", "<preamble> | [helper] called tool `lookup` with parameters:\n"
                 f"{QUOTED_CONTENT_BEGIN}\n{{'q': 'x'}}\n{QUOTED_CONTENT_END}"),
        ("user", "<preamble> | [helper] `lookup` tool returned result:\n"
                 f"{QUOTED_CONTENT_BEGIN}\n{{'value': 3}}\n{QUOTED_CONTENT_END}"),
        ("user", f"<preamble> | [helper] said:\n{QUOTED_CONTENT_BEGIN}\nfound 3\n{QUOTED_CONTENT_END}"),
        ("user", "next"),
    ]
    # the first part says what the quotes are: a sentence naming the markers, starting
    # "For context:" as google-adk's (programs, such as the examples' scripted models,
    # tell relayed turns by it)
    assert OTHER_AGENT_CONTEXT_PREAMBLE.startswith("For context:")
    assert QUOTED_CONTENT_BEGIN in OTHER_AGENT_CONTEXT_PREAMBLE and QUOTED_CONTENT_END in OTHER_AGENT_CONTEXT_PREAMBLE


def test_branch_visibility_isolates_parallel_siblings() -> None:
    assert branch_visible(None, "par.a") and branch_visible("par", "par.a") and branch_visible("par.a", "par.a")
    assert branch_visible("par.a", "par.a.x")
    assert not branch_visible("par.b", "par.a")
    assert not branch_visible("par.ab", "par.a") and not branch_visible("par.a", "par.ab")
    events = [user("go"), said("a", "from a", branch="par.a"), said("b", "from b", branch="par.b"),
              said("root", "root speaks", branch="par")]
    seen = [t for _, t in texts(build_contents("a", events, branch="par.a"))]
    assert seen == ["go", "from a", f"{OTHER_AGENT_CONTEXT_PREAMBLE} | [root] said:\n{QUOTED_CONTENT_BEGIN}\n"
                                    f"root speaks\n{QUOTED_CONTENT_END}"]


def test_interrupted_call_gets_a_synthetic_result() -> None:
    events = [user("do it"), call("bot", "slow_tool", "c9"), user("hello again?")]
    messages = build_contents("bot", events)
    assert texts(messages) == [
        ("user", "do it"),
        ("model", "call:slow_tool#c9"),
        ("user", f"result:c9:{INTERRUPTED_RESULT}"),
        ("user", "hello again?"),
    ]


def test_results_are_moved_after_their_call_latest_wins_orphans_dropped() -> None:
    two_calls = Event(author="bot", content=Content(role="model", parts=(
        Part(function_call=FunctionCall(id="a", name="f", args={})),
        Part(function_call=FunctionCall(id="b", name="g", args={})),
    )))
    events = [
        user("go"),
        two_calls,
        result("bot", "g", "b", v="first-b"),
        said("bot", "thinking"),
        result("bot", "f", "a", v="late-a"),
        result("bot", "g", "b", v="second-b"),
        result("bot", "h", "zzz", v="orphan"),
    ]
    messages = build_contents("bot", events)
    assert texts(messages) == [
        ("user", "go"),
        ("model", "call:f#a | call:g#b"),
        ("user", "result:a:{'v': 'late-a'} | result:b:{'v': 'second-b'}"),
        ("model", "thinking"),
    ]


def test_well_formed_history_reuses_the_session_objects() -> None:
    events = [user("go"), call("bot", "f", "x"), result("bot", "f", "x", ok=True), said("bot", "done")]
    messages = build_contents("bot", events)
    assert [m is e.content for m, e in zip(messages, events, strict=True)] == [True, True, True, True]


def test_include_contents_none_keeps_only_the_current_turn() -> None:
    events = [user("old question"), said("bot", "old answer"), user("new question"),
              call("bot", "f", "c1"), result("bot", "f", "c1", ok=1)]
    messages = build_contents("bot", events, include_contents="none")
    assert [t for _, t in texts(messages)] == ["new question", "call:f#c1", "result:c1:{'ok': 1}"]
    agent = LlmAgent(name="bot", include_contents="none")
    assert len(build_request(agent, CompileContext(events=events)).contents) == 3


def test_compaction_event_replaces_summarized_messages() -> None:
    events = [user("q1"), said("bot", "a1"), user("q2"), said("bot", "a2"),
              Event(author="bot", actions=EventActions(compaction=Compaction(message_count=2, summary="asked q1, got a1"))),
              user("q3")]
    messages = build_contents("bot", events)
    assert [t for _, t in texts(messages)] == [
        "Summary of the earlier conversation:\nasked q1, got a1", "q2", "a2", "q3"]


def _conversation(turns: int) -> list[Content]:
    out: list[Content] = []
    for i in range(turns):
        out.append(Content.user(f"question {i}"))
        out.append(Content(role="model", parts=(Part(function_call=FunctionCall(id=f"c{i}", name="f", args={})),)))
        out.append(Content(role="user", parts=(
            Part(function_response=FunctionResponse(id=f"c{i}", name="f", response={"i": i})),)))
        out.append(Content.model(f"answer {i}"))
    return out


def test_sliding_window_never_splits_a_call_from_its_result() -> None:
    messages = _conversation(5)  # 20 messages, turns of 4
    kept = SlidingWindow(max_messages=6).compress(messages)
    assert kept == messages[16:]  # the cut at 14 falls inside turn 3; the next turn starts at 16
    assert SlidingWindow(max_messages=50).compress(messages) == messages
    current_turn = messages[:18]  # ends inside the last turn: never cut inside it
    assert SlidingWindow(max_messages=1).compress(current_turn) == messages[16:18]


def test_truncate_adds_a_marker() -> None:
    messages = _conversation(3)
    kept = Truncate(max_messages=5).compress(messages)
    assert kept[0].text == "[8 earlier messages were truncated]"
    assert kept[1:] == messages[8:]
    with pytest.raises(AgentDefinitionError):
        Truncate(max_messages=1)


def test_token_budget_algorithm() -> None:
    def msg(role: str, chars: int) -> Content:
        return Content(role=role, parts=(Part(text="x" * chars),))  # type: ignore[arg-type]

    # tokens: ceil(chars/4) -> 10, 10, 10, 10, 10, 10 (40 chars each)
    messages = [msg("user" if i % 2 == 0 else "model", 40) for i in range(6)]
    assert TokenBudget(token_budget=35, keep_recent=2).compress(messages) == messages[4:]  # 20 + 10 fits, aligned to user
    assert TokenBudget(token_budget=40, keep_recent=2).compress(messages) == messages[2:]
    assert TokenBudget(token_budget=1000, keep_recent=0).compress(messages) == messages
    # keep_recent is kept even over budget
    assert TokenBudget(token_budget=1, keep_recent=2).compress(messages) == messages[4:]
    # greedy from the newest stops at the first message that does not fit
    mixed = [msg("user", 4), msg("model", 400), msg("user", 40), msg("model", 40)]
    assert TokenBudget(token_budget=25, keep_recent=1).compress(mixed) == mixed[2:]


def test_summarize_plans_and_the_compiler_reads_compaction_back() -> None:
    messages = _conversation(4)  # 16
    plan = Summarize(max_messages=10, keep_recent=5).plan(messages)
    assert plan is not None and plan.message_count == 12 and plan.messages == tuple(messages[:12])
    assert Summarize(max_messages=20, keep_recent=5).plan(messages) is None
    agent = LlmAgent(name="bot", context_compressor=Summarize(max_messages=3, keep_recent=1))
    events = [user("q1"), said("bot", "a1"), user("q2"), said("bot", "a2")]
    assert len(history(agent, CompileContext(events=events))) == 4
    summarized = [*events, Event(author="bot", actions=EventActions(compaction=Compaction(message_count=2, summary="S")))]
    request = build_request(agent, CompileContext(events=summarized, new_message=Content.user("q3")))
    assert [c.text for c in request.contents] == ["Summary of the earlier conversation:\nS", "q2", "a2", "q3"]


def test_agent_compressor_is_applied_by_build_request() -> None:
    agent = LlmAgent(name="bot", context_compressor=SlidingWindow(max_messages=2))
    events = [user("q1"), said("bot", "a1"), user("q2"), said("bot", "a2")]
    request = build_request(agent, CompileContext(events=events, new_message=Content.user("q3")))
    assert [c.text for c in request.contents] == ["q3"]  # the window of 2 starts at a user turn


def test_json_wire_form_is_camel_case_and_accepts_snake_case() -> None:
    event = Event(author="bot", invocation_id="e-1", actions=EventActions(state_delta={"k": 1}),
                  content=Content(role="model", parts=(Part(inline_data={"mime_type": "image/png", "data": b"\x89PNG"}),)))
    wire = event.to_dict()
    assert wire["invocationId"] == "e-1" and wire["actions"]["stateDelta"] == {"k": 1}
    assert wire["content"]["parts"][0]["inlineData"] == {"mimeType": "image/png", "data": "iVBORw=="}
    assert "errorCode" not in wire
    assert Event.model_validate(wire) == event
    snake = Event.model_validate({"author": "bot", "invocation_id": "e-2", "actions": {"state_delta": {"a": 2}}})
    assert snake.invocation_id == "e-2" and snake.actions.state_delta == {"a": 2}
    assert Event.model_validate_json(event.to_json()) == event


def test_a_run_summarizes_with_its_model_and_the_request_reads_the_summary_back() -> None:
    from engine_helpers import run

    from adk_actors.engine import SessionView
    from adk_actors.models import ScriptedModel

    def answer(request: Any) -> str:
        if request.system_instruction.startswith("Summarize the conversation"):
            return "Ann asked about q1 and q2."
        return f"answer to {request.contents[-1].text}"

    model = ScriptedModel(fallback=answer)
    agent = LlmAgent(name="bot", model=model, context_compressor=Summarize(max_messages=4, keep_recent=2))
    session = SessionView(events=[user("q1"), said("bot", "a1"), user("q2"), said("bot", "a2")])
    events = run(agent, "q3", session)
    compaction = next(e for e in events if e.actions.compaction is not None)
    assert compaction.actions.compaction.summary == "Ann asked about q1 and q2."
    assert compaction.actions.compaction.message_count == 4  # kept: q3 (the turn boundary)
    summary_request, answer_request = model.requests
    assert "user: q1" in summary_request.contents[0].text and "bot" not in summary_request.system_instruction
    assert [c.text for c in answer_request.contents] == [
        "Summary of the earlier conversation:\nAnn asked about q1 and q2.", "q3"]
    assert events[-1].content.text == "answer to q3"
    run(agent, "q4", session)  # history is summary + 4 messages now: under the limit again
    assert len([r for r in model.requests if r.system_instruction.startswith("Summarize")]) == 1


def test_a_failed_summary_leaves_the_full_history() -> None:
    from engine_helpers import run

    from adk_actors.engine import SessionView
    from adk_actors.models import ScriptedModel, ServerError

    model = ScriptedModel([ServerError("503")], fallback="fine")
    agent = LlmAgent(name="bot", model=model, context_compressor=Summarize(max_messages=2, keep_recent=1))
    events = run(agent, "q3", SessionView(events=[user("q1"), said("bot", "a1"), user("q2"), said("bot", "a2")]))
    assert all(e.actions.compaction is None for e in events) and events[-1].content.text == "fine"
    assert len(model.requests[-1].contents) == 5


def test_a_growing_history_compiles_as_it_would_from_the_start() -> None:
    """The fold kept from the last call (see _contents) gives, at every length of a
    growing history, the contents a fold from the start gives: with tool calls and
    results (one interrupted), other agents, a role-less content, partial events,
    branches, a compaction, and a history that diverges from the prefix kept."""
    import random
    import uuid

    rng = random.Random(7)

    def event_for(step: int) -> Event:
        kind = rng.choice(["user", "said", "other", "call", "result", "partial", "branch", "roleless", "compaction"])
        if kind == "user":
            return user(f"q{step}")
        if kind == "said":
            return said("bot", f"a{step}")
        if kind == "other":
            return said("helper", f"h{step}")
        if kind == "call":
            return call("bot", "lookup", f"c{step}", n=step)
        if kind == "result":
            return result("bot", "lookup", f"c{step - 1}", value=step)
        if kind == "partial":
            return said("bot", f"p{step}", partial=True)
        if kind == "branch":
            return said("bot", f"b{step}", branch=rng.choice(["root.a", "root.b"]))
        if kind == "roleless":
            return Event(author="bot", content=Content(parts=(Part(text=f"r{step}"),)))
        return Event(author="bot", actions=EventActions(compaction=Compaction(message_count=rng.randint(0, 3),
                                                                            summary=f"s{step}")))

    def from_the_start(events: list[Event], branch: str | None) -> list[Content]:
        # The same events under ids never seen before: no fold is kept for them.
        nonce = uuid.uuid4().hex
        return build_contents("bot", [e.model_copy(update={"id": f"{nonce}-{i}"}) for i, e in enumerate(events)],
                              branch=branch)

    for branch in (None, "root.a"):
        events: list[Event] = [user("hello")]
        for step in range(1, 120):
            events.append(event_for(step))
            incremental = build_contents("bot", list(events), branch=branch, new_message=Content.user("now"))
            assert incremental[:-1] == from_the_start(events, branch), f"step {step}"
            assert incremental[-1].text == "now"
        # A longer history that shares the first 50 events but not the rest: folded afresh.
        other = events[:50] + [said("bot", f"elsewhere {i}") for i in range(len(events))]
        assert build_contents("bot", other, branch=branch) == from_the_start(other, branch)
