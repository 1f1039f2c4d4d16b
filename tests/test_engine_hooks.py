"""Callbacks, plugins and policies: order, short-circuits, tagged error results, isolation."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from engine_helpers import collect, run, summary

from adk_actors import Content, Event, LlmAgent, LlmResponse, Part, RunConfig, StreamingMode
from adk_actors.engine import (
    ALLOW,
    CallbackError,
    Deny,
    Fallback,
    LoggingPlugin,
    Plugin,
    Policy,
    RateLimitPlugin,
    ReflectAndRetryToolPlugin,
    Reject,
    Reraise,
    Retry,
    SessionView,
)
from adk_actors.models import Chunks, ScriptedModel, call

# -- order and short-circuits -------------------------------------------------------------


class Recorder(Plugin):
    def __init__(self, name: str, log: list[str], *, skip_model: bool = False) -> None:
        self.name = name
        self.log = log
        self.skip_model = skip_model

    def before_agent(self, state: Any, cb: Any) -> tuple[Any, Any]:
        self.log.append(f"{self.name}:before_agent")
        return state, None

    def before_model(self, state: Any, cb: Any, request: Any) -> tuple[Any, Any]:
        self.log.append(f"{self.name}:before_model")
        return state, (LlmResponse(content=Content.model("from plugin")) if self.skip_model else None)

    def before_tool(self, state: Any, tool: Any, args: Any, tool_context: Any) -> tuple[Any, Any]:
        self.log.append(f"{self.name}:before_tool")
        return state, None

    def after_run(self, state: Any, ctx: Any, error: BaseException | None) -> Any:
        self.log.append(f"{self.name}:after_run:{type(error).__name__ if error else 'ok'}")
        return state


def echo(text: str) -> str:
    return text


def test_agent_callbacks_run_first_then_plugins() -> None:
    log: list[str] = []
    agent = LlmAgent(
        name="bot",
        model=ScriptedModel([call("echo", text="x"), "done"]),
        tools=[echo],
        before_agent_callback=lambda cb: log.append("agent:before_agent"),
        before_model_callback=[lambda cb, req: log.append("agent:before_model:1"),
                               lambda cb, req: log.append("agent:before_model:2")],
        before_tool_callback=lambda tool, args, tc: log.append("agent:before_tool"),
    )
    run(agent, "go", plugins=[Recorder("p1", log), Recorder("p2", log)])
    assert log == [
        "agent:before_agent", "p1:before_agent", "p2:before_agent",
        "agent:before_model:1", "agent:before_model:2", "p1:before_model", "p2:before_model",
        "agent:before_tool", "p1:before_tool", "p2:before_tool",
        "agent:before_model:1", "agent:before_model:2", "p1:before_model", "p2:before_model",
        "p1:after_run:ok", "p2:after_run:ok",
    ]


def test_first_non_none_short_circuits() -> None:
    log: list[str] = []
    model = ScriptedModel(["never"])
    agent = LlmAgent(name="bot", model=model,
                     before_model_callback=lambda cb, req: LlmResponse(content=Content.model("cached answer")))
    events = run(agent, "hi", plugins=[Recorder("p", log)])
    assert summary(events)[-1] == ("bot", "cached answer") and model.requests == []
    assert "p:before_model" not in log  # the agent callback already answered
    model = ScriptedModel(["never"])
    events = run(LlmAgent(name="bot", model=model), "hi", plugins=[Recorder("p", log, skip_model=True)])
    assert summary(events)[-1] == ("bot", "from plugin") and model.requests == []


def test_before_tool_skips_the_tool_and_after_hooks_replace() -> None:
    ran: list[str] = []

    def real_tool(x: int) -> int:
        ran.append("ran")
        return x

    agent = LlmAgent(
        name="bot",
        model=ScriptedModel([call("real_tool", x=1), call("real_tool", x=2), "raw answer"]),
        tools=[real_tool],
        before_tool_callback=lambda tool, args, tc: {"result": "cached"} if args["x"] == 1 else None,
        after_tool_callback=lambda tool, args, tc, result: {"result": result * 10} if args["x"] == 2 else None,
        after_model_callback=lambda cb, resp: LlmResponse(content=Content.model("polished answer"))
        if resp.content and resp.content.text == "raw answer" else None,
    )
    events = run(agent, "go")
    assert ran == ["ran"]
    results = [w for _, w in summary(events) if w.startswith("result:")]
    assert results == ["result:real_tool={'result': 'cached'}", "result:real_tool={'result': 20}"]
    assert summary(events)[-1] == ("bot", "polished answer")


def test_before_agent_content_ends_the_agent_and_after_agent_adds_a_reply() -> None:
    model = ScriptedModel(["model answer"])
    closed = LlmAgent(name="bot", model=model, before_agent_callback=lambda cb: "We are closed.")
    assert summary(run(closed, "hi"))[1:] == [("bot", "We are closed.")] and model.requests == []
    signed = LlmAgent(name="bot", model=ScriptedModel(["answer"]), after_agent_callback=lambda cb: "-- the bot")
    assert summary(run(signed, "hi"))[1:] == [("bot", "answer"), ("bot", "-- the bot")]


def test_callback_state_writes_become_a_state_delta() -> None:
    def stamp(cb: Any) -> None:
        cb.state["visits"] = cb.state.get("visits", 0) + 1

    session = SessionView(state={"visits": 4})
    run(LlmAgent(name="bot", model=ScriptedModel(["hi"]), before_agent_callback=stamp), "hi", session)
    assert session.state["visits"] == 5


# -- tagged error results -----------------------------------------------------------------------


def test_model_error_retry_fallback_reraise() -> None:
    flaky = ScriptedModel([ConnectionError("reset"), ConnectionError("reset"), "third time lucky"])
    agent = LlmAgent(name="bot", model=flaky, on_model_error_callback=lambda cb, req, err: Retry(max_attempts=3))
    assert summary(run(agent, "hi"))[-1] == ("bot", "third time lucky")
    always = ScriptedModel([ConnectionError("reset")] * 5)
    agent = LlmAgent(name="bot", model=always, on_model_error_callback=lambda cb, req, err: Retry(max_attempts=2))
    assert run(agent, "hi")[-1].error_code == "ConnectionError" and len(always.requests) == 2
    agent = LlmAgent(name="bot", model=ScriptedModel([TimeoutError("slow")]),
                     on_model_error_callback=lambda cb, req, err: Fallback(LlmResponse(content=Content.model("backup"))))
    assert summary(run(agent, "hi"))[-1] == ("bot", "backup")
    agent = LlmAgent(name="bot", model=ScriptedModel([TimeoutError("slow")]),
                     on_model_error_callback=lambda cb, req, err: Reraise())
    assert run(agent, "hi")[-1].error_code == "TimeoutError"


def test_error_callback_must_return_a_tagged_result() -> None:
    agent = LlmAgent(name="bot", model=ScriptedModel([TimeoutError("slow")]),
                     on_model_error_callback=lambda cb, req, err: "retry please")
    with pytest.raises(CallbackError, match="Retry"):
        run(agent, "hi")


def test_tool_error_retry_and_fallback() -> None:
    attempts: list[int] = []

    def flaky_tool() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise ConnectionError("try again")
        return "worked"

    agent = LlmAgent(name="bot", model=ScriptedModel([call("flaky_tool"), "ok"]), tools=[flaky_tool],
                     on_tool_error_callback=lambda tool, args, tc, err: Retry(max_attempts=5))
    assert summary(run(agent, "go"))[2] == ("bot", "result:flaky_tool={'result': 'worked'}")
    agent = LlmAgent(name="bot", model=ScriptedModel([call("flaky_tool"), "ok"]), tools=[flaky_tool],
                     on_tool_error_callback=lambda tool, args, tc, err: Fallback({"result": "default"}))
    attempts.clear()
    assert summary(run(agent, "go"))[2] == ("bot", "result:flaky_tool={'result': 'default'}")


# -- plugins -----------------------------------------------------------------------------------------


class Counter(Plugin):
    """Counts model calls in its per-invocation state and reports it at the end."""

    name = "counter"

    def __init__(self) -> None:
        self.finals: list[int] = []

    def initial_state(self) -> int:
        return 0

    async def before_model(self, state: int, cb: Any, request: Any) -> tuple[Any, Any]:
        await asyncio.sleep(0.01)  # let concurrent runs interleave
        return state + 1, None

    def after_run(self, state: int, ctx: Any, error: BaseException | None) -> Any:
        self.finals.append(state)
        return state


def test_plugin_state_is_isolated_between_concurrent_runs() -> None:
    counter = Counter()

    async def both() -> None:
        one = LlmAgent(name="one", model=ScriptedModel([call("echo", text="a"), call("echo", text="b"), "done"]),
                       tools=[echo])
        two = LlmAgent(name="two", model=ScriptedModel(["done"]))
        await asyncio.gather(collect(one, "x", plugins=[counter]), collect(two, "y", plugins=[counter]))

    asyncio.run(both())
    assert sorted(counter.finals) == [1, 3]


def test_duplicate_plugin_names_are_rejected_and_after_run_fires_on_error() -> None:
    from adk_actors import AgentDefinitionError

    log: list[str] = []
    with pytest.raises(AgentDefinitionError, match="duplicate plugin"):
        run(LlmAgent(name="bot", model=ScriptedModel()), "hi", plugins=[Recorder("same", log), Recorder("same", log)])
    broken = LlmAgent(name="bot", model=ScriptedModel([TimeoutError()]),
                      on_model_error_callback=lambda cb, req, err: "not tagged")
    with pytest.raises(CallbackError):
        run(broken, "hi", plugins=[Recorder("p", log)])
    assert log[-1] == "p:after_run:CallbackError"


def test_rate_limit_plugin_really_counts() -> None:
    now = [0.0]
    limiter = RateLimitPlugin(max_calls=2, period=60, clock=lambda: now[0])
    model = ScriptedModel([call("echo", text="1"), call("echo", text="2"), "never"])
    events = run(LlmAgent(name="bot", model=model, tools=[echo]), "go", plugins=[limiter])
    assert events[-1].error_code == "rate_limited" and len(model.requests) == 2


def test_reflect_and_retry_gives_the_model_guidance_then_gives_up() -> None:
    def picky(n: int) -> int:
        raise ValueError(f"{n} is not prime")

    model = ScriptedModel([call("picky", n=4), call("picky", n=6), "I give up."])
    events = run(LlmAgent(name="bot", model=model, tools=[picky]), "go",
                 plugins=[ReflectAndRetryToolPlugin(max_retries=1)])
    first, second = [e.content.function_responses[0].response for e in events  # type: ignore[union-attr]
                     if e.content and e.content.function_responses]
    assert "reflection" in first and "attempt 1 of 1" in first["reflection"]
    assert second == {"error": "ValueError: 6 is not prime"}


def test_logging_plugin_logs_and_counts(caplog: pytest.LogCaptureFixture) -> None:
    plugin = LoggingPlugin()
    with caplog.at_level(logging.INFO, logger="adk_actors.events"):
        run(LlmAgent(name="bot", model=ScriptedModel([call("echo", text="a"), "b"]), tools=[echo]), "go",
            plugins=[plugin])
    assert "tool echo called" in caplog.text  # on_event sees the agent's 3 events (not the user's)
    assert "'events': 3, 'model_calls': 2, 'tool_calls': 1" in caplog.text


# -- policies ------------------------------------------------------------------------------------------


class NoSecrets(Policy):
    stream_holdback = len("4111-1111")  # the longest text filter_output rewrites

    def filter_input(self, ctx: Any, message: Content) -> Content | Reject:
        if "password" in message.text:
            return Reject("messages may not contain passwords")
        return Content(role="user", parts=(Part(text=message.text.replace("darn", "****")),))

    def filter_output(self, ctx: Any, event: Event) -> Event:
        if event.content is None or not event.content.text:
            return event
        redacted = event.content.text.replace("4111-1111", "[card]")
        return event.model_copy(update={"content": Content(role=event.content.role, parts=(Part(text=redacted),))})

    def authorize_tool(self, ctx: Any, tool_name: str, args: dict[str, Any]) -> Any:
        return Deny("deleting is not allowed") if tool_name == "delete_all" else ALLOW


def test_input_policy_rejects_before_any_agent_sees_the_message() -> None:
    model = ScriptedModel(["never"])
    session = SessionView()
    events = run(LlmAgent(name="bot", model=model), "my password is hunter2", session, policies=[NoSecrets()])
    assert [(e.error_code, e.error_message) for e in events] == [("input_rejected", "messages may not contain passwords")]
    assert model.requests == [] and session.events == []


def test_input_policy_rewrites() -> None:
    model = ScriptedModel(["ok"])
    run(LlmAgent(name="bot", model=model), "darn it", policies=[NoSecrets()])
    assert model.requests[0].contents[-1].text == "**** it"


def test_output_policy_redacts_partials_and_finals() -> None:
    model = ScriptedModel([Chunks(["card 4111-", "1111 ok"]), ])
    events = run(LlmAgent(name="bot", model=model), "card?", policies=[NoSecrets()],
                 run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    assert events[-1].content.text == "card [card] ok"  # type: ignore[union-attr]
    single_chunk = ScriptedModel([Chunks(["card 4111-1111", " ok"])])
    events = run(LlmAgent(name="bot", model=single_chunk), "card?", policies=[NoSecrets()],
                 run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    streamed = "".join(e.content.text for e in events if e.partial)  # type: ignore[union-attr]
    assert "4111" not in streamed and "card [card] ok".startswith(streamed) and streamed.startswith("card ")


@pytest.mark.parametrize("cut", range(1, 14))
def test_a_secret_split_across_partials_never_reaches_the_caller(cut: int) -> None:
    """Issue 19 item 4: however the stream is cut, the streamed text is always a prefix
    of the redacted answer; with no declared holdback nothing is streamed at all."""
    answer = "code SECRET ok"

    class Redact(Policy):
        stream_holdback = len("SECRET")

        def filter_output(self, ctx: Any, event: Event) -> Event:
            if event.content is None or not event.content.text:
                return event
            text = event.content.text.replace("SECRET", "******")
            return event.model_copy(update={"content": Content(role=event.content.role, parts=(Part(text=text),))})

    class Undeclared(Redact):
        stream_holdback = None

    sse = RunConfig(streaming_mode=StreamingMode.SSE)
    for policy, streams in ((Redact(), True), (Undeclared(), False)):
        model = ScriptedModel([Chunks([answer[:cut], answer[cut:]])])
        events = run(LlmAgent(name="bot", model=model), "go", policies=[policy], run_config=sse)
        streamed = "".join(e.content.text for e in events if e.partial)  # type: ignore[union-attr]
        assert events[-1].content.text == "code ****** ok"  # type: ignore[union-attr]
        assert "SEC" not in streamed and "code ****** ok".startswith(streamed)
        assert bool(streamed) == streams


def test_denied_tool_never_runs_and_the_model_sees_why() -> None:
    ran: list[bool] = []

    def delete_all() -> str:
        ran.append(True)
        return "deleted"

    model = ScriptedModel([call("delete_all"), "I was not allowed."])
    events = run(LlmAgent(name="bot", model=model, tools=[delete_all]), "clean up", policies=[NoSecrets()])
    assert ran == []
    assert "denied by policy: deleting is not allowed" in summary(events)[2][1]
    assert model.requests[1].contents[-1].function_responses[0].response["error"].endswith("deleting is not allowed")


def test_on_user_message_and_before_run_plugins() -> None:
    class Greeter(Plugin):
        name = "greeter"

        def on_user_message(self, state: Any, ctx: Any, message: Content) -> tuple[Any, Any]:
            return state, Content.user(message.text.upper())

        def before_run(self, state: Any, ctx: Any) -> tuple[Any, Any]:
            return state, (Content.model("Maintenance window, back soon.")
                           if ctx.session.state.get("app:maintenance") else None)

    model = ScriptedModel(["ok"])
    session = SessionView()
    run(LlmAgent(name="bot", model=model), "shout", session, plugins=[Greeter()])
    assert session.events[0].content.text == "SHOUT" and model.requests[0].contents[-1].text == "SHOUT"  # type: ignore[union-attr]
    closed = SessionView(state={"app:maintenance": True})
    events = run(LlmAgent(name="bot", model=ScriptedModel(["never"])), "hi", closed, plugins=[Greeter()])
    assert summary(events) == [("user", "HI"), ("model", "Maintenance window, back soon.")]
