"""Agents the runtime tests run inside actor processes (imported there by path)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from adk_actors import Blob, Content, LlmAgent, LlmRequest, Part
from adk_actors.engine import ALLOW, Allow, App, Deny, Plugin, Policy, Reject
from adk_actors.fluent import Agent as FluentAgent
from adk_actors.fluent import RetryMiddleware, dispatch
from adk_actors.models import Chunks, ScriptedModel, call
from adk_actors.tools import ToolContext


def last_user_text(request: LlmRequest) -> str:
    for content in reversed(request.contents):
        if content.role == "user" and content.text:
            return content.text
    return ""


def last_is_tool_result(request: LlmRequest) -> bool:
    return bool(request.contents) and bool(request.contents[-1].function_responses)


def _echo(request: LlmRequest) -> str:
    turns = sum(1 for c in request.contents if c.role == "user" and c.text)
    return f"echo: {last_user_text(request)} (turn {turns})"


echo_agent = LlmAgent(name="echo", model=ScriptedModel(fallback=_echo))


def bump(tool_context: ToolContext) -> dict[str, Any]:
    """Count this turn in session, user and app state."""
    count = int(tool_context.state.get("count", 0)) + 1
    tool_context.state["count"] = count
    tool_context.state["user:visits"] = int(tool_context.state.get("user:visits", 0)) + 1
    tool_context.state["app:total"] = int(tool_context.state.get("app:total", 0)) + 1
    tool_context.state["temp:scratch"] = "never persisted"
    return {"count": count}


def _counter(request: LlmRequest) -> Any:
    if last_is_tool_result(request):
        return f"count is {request.contents[-1].function_responses[0].response['count']}"
    return call("bump")


counter_agent = LlmAgent(name="counter", model=ScriptedModel(fallback=_counter), tools=[bump])


def sleep_for(seconds: float, marker: str = "") -> str:
    """Sleep for a while; first create the file ``marker`` if one is named, so that a
    test knows the tool is running."""
    if marker:
        with open(marker, "w"):
            pass
    time.sleep(seconds)
    return "slept"


def _sleepy(request: LlmRequest) -> Any:
    if last_is_tool_result(request):
        return "woke up"
    text = last_user_text(request)
    if text.startswith("sleep "):
        words = text.split()
        if len(words) > 2 and words[2].startswith("/"):  # "sleep N /path": a marker (other words: a label)
            return call("sleep_for", seconds=float(words[1]), marker=words[2])
        return call("sleep_for", seconds=float(words[1]))
    return f"awake: {text}"


sleepy_agent = LlmAgent(name="sleepy", model=ScriptedModel(fallback=_sleepy), tools=[sleep_for])

APPS = {
    "echo": "runtime_agents:echo_agent",
    "counter": "runtime_agents:counter_agent",
    "sleepy": "runtime_agents:sleepy_agent",
}

# A real provider (an OpenAI-compatible stub server in the tests); model name "stubbed".
provider_agent = LlmAgent(name="provider", model="stubbed")


def save_note(text: str, tool_context: ToolContext, name: str = "note.txt") -> dict[str, Any]:
    """Save a note as an artifact."""
    from adk_actors import Part

    return {"version": tool_context.save_artifact(name, Part(text=text))}


def read_note(tool_context: ToolContext, name: str = "note.txt") -> dict[str, Any]:
    """Read a note back, and list the artifacts."""
    part = tool_context.load_artifact(name)
    return {"text": part.text if part else None, "names": tool_context.list_artifacts()}


def _notes(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        return str(last.function_responses[0].response)
    text = last.text
    if text.startswith("save "):
        return call("save_note", text=text[5:])
    if text.startswith("badname"):
        return call("save_note", text="x", name="../../escape.txt")
    return call("read_note")


notes_agent = LlmAgent(name="notes", model=ScriptedModel(fallback=_notes), tools=[save_note, read_note])
APPS["notes"] = "runtime_agents:notes_agent"


def _recall(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        memories = last.function_responses[0].response["result"]["memories"]
        return " | ".join(m["content"]["parts"][0]["text"] for m in memories) or "nothing remembered"
    return call("load_memory", query=last.text)


from adk_actors.tools import load_memory  # noqa: E402

recall_agent = LlmAgent(name="recall", model=ScriptedModel(fallback=_recall), tools=[load_memory])
APPS["recall"] = "runtime_agents:recall_agent"


DELETED: list[str] = []


def delete_file(path: str) -> dict[str, Any]:
    """Delete a file (sensitive: needs a human's approval)."""
    DELETED.append(path)
    return {"deleted": path}


def _careful(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        return f"result: {last.function_responses[0].response}"
    return call("delete_file", path=last.text)


from adk_actors.engine import ConfirmationPolicy  # noqa: E402

careful_agent = LlmAgent(name="careful", model=ScriptedModel(fallback=_careful), tools=[delete_file],
                         confirmation_policy=ConfirmationPolicy(tools=["delete_file"], timeout=30,
                                                                hint="deleting a file"))
APPS["careful"] = "runtime_agents:careful_agent"


def read_calendar(tool_context: ToolContext) -> dict[str, Any]:
    """Read the user's calendar (needs the user's OAuth2 authorization)."""
    credential = tool_context.get_credential("calendar")
    if credential is None:
        return tool_context.request_credential("calendar", {"type": "oauth2",
                                                            "authorization_url": "https://auth.example/authorize"})
    token = credential.access_token.get_secret_value()
    return {"events": ["standup 9:00"], "token_length": len(token)}


def _calendar(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        return f"calendar: {last.function_responses[0].response}"
    return call("read_calendar")


calendar_agent = LlmAgent(name="calendar", model=ScriptedModel(fallback=_calendar), tools=[read_calendar])
APPS["calendar"] = "runtime_agents:calendar_agent"

impatient_agent = LlmAgent(name="impatient", model=ScriptedModel(fallback=_careful), tools=[delete_file],
                           confirmation_policy=ConfirmationPolicy(tools=["delete_file"], timeout=1.0))
APPS["impatient"] = "runtime_agents:impatient_agent"


async def _dawdle(callback_context: Any) -> None:
    """After the answer: time passes on the worker with next to no CPU used (as when a
    busy machine preempts it), then one turn of its loop that waits for nothing."""
    time.sleep(0.05)
    await asyncio.sleep(0)


dawdling_agent = LlmAgent(name="dawdling", model=ScriptedModel(fallback=_echo), after_agent_callback=_dawdle)
APPS["dawdling"] = "runtime_agents:dawdling_agent"


def _think_hard(request: LlmRequest) -> Any:
    """The answer comes after 5 ms of the worker's CPU with no wait (a cold first turn,
    or a CPU shared with a busy sibling, costs the same kind of time)."""
    began = time.thread_time()
    while time.thread_time() - began < 0.005:
        pass
    return _echo(request)


thinking_agent = LlmAgent(name="thinking", model=ScriptedModel(fallback=_think_hard), after_agent_callback=_dawdle)
APPS["thinking"] = "runtime_agents:thinking_agent"


def _broken(request: LlmRequest) -> Any:
    raise RuntimeError("this model is broken on purpose")


broken_agent = LlmAgent(name="broken", model=ScriptedModel(fallback=_broken))
APPS["broken"] = "runtime_agents:broken_agent"


BULK = 100_000  # characters: more than a run actor's direct line takes in one message (_link.MAX_MESSAGE)


async def grow(tool_context: ToolContext) -> dict[str, Any]:
    """Put a large value in session state, after a wait (the events before it leave first)."""
    await asyncio.sleep(0.05)
    tool_context.state["blob"] = "x" * BULK
    return {"grown": BULK}


def _bulky(request: LlmRequest) -> Any:
    if last_is_tool_result(request):
        return "grown"
    if last_user_text(request) == "grow":
        return call("grow")
    # The answer says what the run was given (the state's blob arrives through the
    # instruction), and is large itself.
    turns = sum(1 for c in request.contents if c.role == "user" and c.text)
    return f"{last_user_text(request)}: turn {turns}, blob {request.system_instruction.count('x')} " + "y" * BULK


bulky_agent = LlmAgent(name="bulky", model=ScriptedModel(fallback=_bulky), tools=[grow], instruction="{blob?}")
APPS["bulky"] = "runtime_agents:bulky_agent"


async def _die_soon(callback_context: Any) -> None:
    """After the answer: this run actor's process is killed 50 ms later (kill -9), once
    its output has left."""
    import os
    import signal
    import threading

    threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGKILL)).start()


def _echo_from(request: LlmRequest) -> str:
    import os

    return f"{_echo(request)} from {os.getpid()}"


short_lived_agent = LlmAgent(name="short_lived", model=ScriptedModel(fallback=_echo_from),
                             after_agent_callback=_die_soon)
APPS["short_lived"] = "runtime_agents:short_lived_agent"


def _chatty(request: LlmRequest) -> Any:
    """"loop": calls bump for ever (until a limit stops it); anything else: one answer."""
    if last_user_text(request).startswith("loop"):
        return call("bump")
    return f"quiet: {last_user_text(request)}"


chatty_agent = LlmAgent(name="chatty", model=ScriptedModel(fallback=_chatty), tools=[bump])
APPS["chatty"] = "runtime_agents:chatty_agent"


def _briefed(request: LlmRequest) -> Any:
    """"save X": saves X as brief.txt; anything else: answers with its system instruction."""
    if last_is_tool_result(request):
        return "saved"
    text = last_user_text(request)
    if text.startswith("save "):
        return call("save_note", text=text[5:], name="brief.txt")
    return request.system_instruction


briefed_agent = LlmAgent(name="briefed", model=ScriptedModel(fallback=_briefed), tools=[save_note],
                         instruction="The brief: {artifact.brief.txt?}")
APPS["briefed"] = "runtime_agents:briefed_agent"


class ModelCallsThisTurn(Plugin):
    """Per-invocation state: counts this turn's model calls and stamps the count on
    each model answer that is text."""

    name = "model-calls"

    def initial_state(self) -> Any:
        return 0

    def before_model(self, state: Any, cb: Any, request: Any) -> tuple[Any, Any]:
        return state + 1, None

    def after_model(self, state: Any, cb: Any, response: Any) -> tuple[Any, Any]:
        if response.content is None or not response.content.text:
            return state, None
        stamped = Content(role="model", parts=(Part(text=f"{response.content.text} [model calls: {state}]"),))
        return state, response.model_copy(update={"content": stamped})


class NoWiping(Policy):
    def filter_input(self, ctx: Any, message: Content) -> Content | Reject:
        return Reject("no shouting here") if message.text.startswith("SHOUT") else message

    def authorize_tool(self, ctx: Any, tool_name: str, args: dict[str, Any]) -> Allow | Deny:
        return Deny("wiping is not allowed here") if tool_name == "wipe" else ALLOW


def wipe() -> dict[str, Any]:
    """Wipe everything."""
    return {"wiped": True}


def _guarded(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        return f"tool said: {last.function_responses[0].response}"
    text = last_user_text(request)
    if text.startswith("wipe"):
        return call("wipe")
    if text.startswith("count"):
        return call("bump")
    return f"hello: {text}"


guarded_app = App(root_agent=LlmAgent(name="guarded", model=ScriptedModel(fallback=_guarded), tools=[wipe, bump]),
                  plugins=(ModelCallsThisTurn(),), policies=(NoWiping(),))


def save_blob(tool_context: ToolContext) -> dict[str, Any]:
    """Save raw bytes declared as text/plain (inline data, not text)."""
    return {"version": tool_context.save_artifact("raw.txt", Part(inline_data=Blob(mime_type="text/plain",
                                                                                  data=b"raw \x00 bytes")))}


def describe_blob(tool_context: ToolContext) -> dict[str, Any]:
    """How raw.txt comes back."""
    part = tool_context.load_artifact("raw.txt")
    if part is None:
        return {"kind": None}
    if part.inline_data is not None:
        return {"kind": "inline_data", "mime": part.inline_data.mime_type, "size": len(part.inline_data.data)}
    return {"kind": "text", "text": part.text}


def _blobs(request: LlmRequest) -> Any:
    if last_is_tool_result(request):
        return str(request.contents[-1].function_responses[0].response)
    return call("save_blob") if last_user_text(request).startswith("save") else call("describe_blob")


blobs_agent = LlmAgent(name="blobs", model=ScriptedModel(fallback=_blobs), tools=[save_blob, describe_blob])
APPS["blobs"] = "runtime_agents:blobs_agent"


def remember(value: str, tool_context: ToolContext) -> dict[str, Any]:
    """Keep a value in session state."""
    tool_context.state["kept"] = value
    return {"kept": value}


def forget(tool_context: ToolContext) -> dict[str, Any]:
    """Delete the kept value (a state_delta of None)."""
    tool_context.state["kept"] = None
    return {"forgot": True}


def _keeper(request: LlmRequest) -> Any:
    if last_is_tool_result(request):
        return "done"
    text = last_user_text(request)
    return call("remember", value=text[9:]) if text.startswith("remember ") else call("forget")


keeper_agent = LlmAgent(name="keeper", model=ScriptedModel(fallback=_keeper), tools=[remember, forget])
APPS["keeper"] = "runtime_agents:keeper_agent"


def _stream_answer(request: LlmRequest) -> Any:
    """A streamed answer in three pieces, 50 ms apart ("slow <text>": 1 s apart)."""
    text = last_user_text(request)
    delay = 1.0 if text.startswith("slow ") else 0.05
    return Chunks(["You said: ", text, "."], delay=delay)


streaming_agent = LlmAgent(name="streamer", model=ScriptedModel(fallback=_stream_answer))
APPS["streaming"] = "runtime_agents:streaming_agent"


class _SlowConnection:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def send_realtime(self, blob: Blob) -> None:
        await asyncio.sleep(10)


class _SlowEarsModel:
    """A live model that takes 10 s to hear each chunk of audio (its caller gets ahead)."""

    name = "slow-ears"

    def generate(self, request: LlmRequest, *, stream: bool = False) -> Any:
        return ScriptedModel(["typed answer"]).generate(request, stream=stream)

    def connect(self, request: LlmRequest) -> Any:
        from contextlib import asynccontextmanager

        @asynccontextmanager
        async def opened() -> Any:
            async with ScriptedModel().connect(request) as inner:
                yield _SlowConnection(inner)

        return opened()


slow_ears_agent = LlmAgent(name="slow_ears", model=_SlowEarsModel())
APPS["slow_ears"] = "runtime_agents:slow_ears_agent"


# -- a tool whose result the store could not read back (issue 30) -------------------------------


def poison(kind: str) -> dict[str, Any]:
    """Return a value that cannot be stored: nested 300 levels deep, or text with a lone surrogate."""
    if kind == "deep":
        value: Any = 1
        for _ in range(300):
            value = {"a": value}
        return {"value": value}
    return {"value": "bad \ud800 text"}


def _poisoner(request: LlmRequest) -> Any:
    if last_is_tool_result(request):
        return "poisoned"
    text = last_user_text(request)
    if text.startswith("poison "):
        return call("poison", kind=text.split()[1])
    return f"fine: {text}"


poisoner_agent = LlmAgent(name="poisoner", model=ScriptedModel(fallback=_poisoner), tools=[poison])
APPS["poisoner"] = "runtime_agents:poisoner_agent"


# -- issue 33: a fluent app with middleware, run by a host's run workers -------------
def _flaky(calls: list[int]) -> Any:
    """A model function whose odd calls (in this process) fail, the first one included."""
    def answer(request: LlmRequest) -> str:
        calls[0] += 1
        if calls[0] % 2:
            raise ConnectionError("provider hiccup")
        return f"steady: {last_user_text(request)}"
    return answer


fluent_retry_app = (FluentAgent("steady", ScriptedModel(fallback=_flaky([0]))).writes("answer")
                    .middleware(RetryMiddleware(3, 0, jitter=0)).to_app())
fluent_plain_app = FluentAgent("unsteady", ScriptedModel(fallback=_flaky([0]))).to_app()
APPS["fluent_retry"] = "runtime_agents:fluent_retry_app"
APPS["fluent_plain"] = "runtime_agents:fluent_plain_app"
fluent_dispatch_app = (
    FluentAgent("writer", ScriptedModel(fallback=lambda request: "draft")).writes("draft")
    >> dispatch(FluentAgent("emailer", ScriptedModel(fallback=lambda request: "mail sent")), stream_to="mail")
    >> FluentAgent("formatter", ScriptedModel(fallback=lambda request: "formatted"))
).to_app()
APPS["fluent_dispatch"] = "runtime_agents:fluent_dispatch_app"
