"""Input-stream streaming tools in a live run, side by side with google-adk 2.13 (issue 52).

google-adk's streaming tool may take a parameter ``input_stream: LiveRequestQueue``
(its docs' ``monitor_video_stream``): the parameter is not declared to the model, and
when the model calls the tool, the live run makes the call a queue of its own and
passes it. From then until the tool ends or ``stop_streaming`` stops it, every request
the run reads from the caller's queue is copied to it before it is handled (content,
blobs, activity signals, ``close``), and so is every function response the run sends
to the model (google-adk sends those through the caller's queue too): the tool's own
"pending" answer first, its yielded values (``partial``).

Each side talks to its own Live API stand-in (tests/test_adk52_live_tools.py's
``both``, ``live_stub``) answering alike. The tool writes down each input it reads;
compared: those inputs, the events in order, the session, what the model received.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Callable
from typing import Any

import pytest
from test_adk52_live_tools import (  # the same stand-in and readers as the other live tool tests
    answer_text,
    both,
    call,
    rows,
    said,
    tls,  # noqa: F401 - a fixture
    tool_result,
    typed,
)

from adk_actors.agents import LiveRequestQueue

pytest.importorskip("google.adk")
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"), pytest.mark.timeout(120)]

PENDING = {"status": "The function is running asynchronously and the results are pending."}
STOPPED = {"status": "Successfully stopped streaming function watch_input"}

#: what the tool read from its input stream, in order ("stopped": it was cancelled)
INPUTS: list[str] = []


def seen_as(request: Any) -> str:
    """One request of the tool's input stream in a few words."""
    if request.close:
        return "close"
    if request.blob is not None:
        return f"blob {request.blob.mime_type} {request.blob.data!r}"
    if request.activity_start is not None:
        return "activity start"
    if request.activity_end is not None:
        return "activity end"
    partial = " (partial)" if request.partial else ""
    part = request.content.parts[0]
    if part.function_response is not None:
        response = part.function_response
        return f"{request.content.role}: result of {response.name} {json.dumps(response.response, sort_keys=True)}" \
               + partial
    return f"{request.content.role}: {part.text}{partial}"


async def watch_input(input_stream: LiveRequestQueue) -> Any:
    """Watches what the user sends; on "Report", tells what it saw since the last report."""
    seen: list[str] = []
    try:
        while True:
            request = await input_stream.get()
            INPUTS.append(seen_as(request))
            seen.append(INPUTS[-1])
            if request.content is not None and request.content.parts[0].text == "Report":
                yield {"seen": list(seen)}
                seen.clear()
    except asyncio.CancelledError:
        INPUTS.append("stopped")
        raise


def stop_streaming(function_name: str) -> None:
    """Stop a streaming function."""


def model(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The model: ``Watch`` calls ``watch_input``; ``Stop`` stops it; each tool result is
    read back (``got <result>``)."""
    text = typed(message)
    if text == "Watch":
        return call("fc-1", "watch_input", {})
    if text == "Stop":
        return call("fc-2", "stop_streaming", {"function_name": "watch_input"})
    result = tool_result(message)
    return said("got " + json.dumps(result, sort_keys=True)) if result is not None else []


class User:
    """What the client does with its side's queue and types."""

    def __init__(self, queue: Any, types: Any) -> None:
        self.queue, self.types = queue, types

    def say(self, text: str) -> None:
        self.queue.send_content(self.types.Content(role="user", parts=[self.types.Part(text=text)]))

    def frame(self, data: bytes) -> None:
        self.queue.send_realtime(self.types.Blob(mime_type="image/jpeg", data=data))


Client = Callable[[str, User], None]


async def run_live(side: str, url: str, client: Client, plain: bool = False) -> dict[str, Any]:
    """One side's run_live (the agent's tools: ``watch_input`` as a FunctionTool, or as
    it is with ``plain``, and ``stop_streaming``), "Watch" sent first, ``client(the
    last answer, user)`` at each end of a turn, read to its end after the client closes
    the queue: the events, the stored events after the first, what the tool read."""
    if side == "theirs":
        from google.adk.agents import Agent
        from google.adk.agents import LiveRequestQueue as Queue
        from google.adk.agents.run_config import RunConfig
        from google.adk.models import Gemini
        from google.adk.runners import InMemoryRunner
        from google.adk.tools.function_tool import FunctionTool
        from google.genai import types

        agent_model: Any = Gemini(model="gemini-live-2.5-flash", base_url=url)
        modalities: list[Any] = [types.Modality.TEXT]
    else:
        from adk_actors import types  # type: ignore[no-redef]
        from adk_actors.agents import Agent  # type: ignore[assignment]
        from adk_actors.agents import LiveRequestQueue as Queue  # type: ignore[assignment]
        from adk_actors.agents.run_config import RunConfig  # type: ignore[assignment]
        from adk_actors.models import GeminiModel
        from adk_actors.runners import InMemoryRunner  # type: ignore[assignment]
        from adk_actors.tools import FunctionTool  # type: ignore[assignment]

        agent_model = GeminiModel("gemini-live-2.5-flash", base_url=url, api_key="test-key")
        modalities = ["TEXT"]
    INPUTS.clear()
    watcher: Any = watch_input if plain else FunctionTool(watch_input)
    agent = Agent(name="root", model=agent_model, instruction="Help.", tools=[watcher, stop_streaming])
    runner = InMemoryRunner(agent=agent, app_name="p")
    session = await runner.session_service.create_session(app_name="p", user_id="ann")
    queue = Queue()
    user = User(queue, types)
    user.say("Watch")
    streamed, last = [], ""
    async for event in runner.run_live(user_id="ann", session_id=session.id, live_request_queue=queue,
                                       run_config=RunConfig(response_modalities=modalities)):
        streamed.append(event)
        last = answer_text(event) or last
        if event.turn_complete:
            if not queue.closed:
                client(last, user)
            last = ""
    stored = await runner.session_service.get_session(app_name="p", user_id="ann", session_id=session.id)
    await runner.close()
    assert stored is not None
    return {"streamed": rows(streamed), "stored": rows(stored.events[1:]), "inputs": list(INPUTS)}


def realtime(messages: list[dict[str, Any]]) -> list[Any]:
    """The realtime inputs the model received (frames, activity signals), in order, as
    the model reads them: google-genai sends a Gemini 2.x model's frame in the older
    ``media_chunks``, ours as ``video`` (tests/test_live_google_adk.py)."""
    out: list[Any] = []
    for message in messages:
        realtime = message.get("realtime_input", {})
        blobs = realtime.get("media_chunks", []) + [realtime[k] for k in ("video", "audio") if k in realtime]
        out += [("blob", b["mime_type"], b["data"]) for b in blobs]
        out += [key for key in ("activity_start", "activity_end", "audio_stream_end") if key in realtime]
    return out


def watch_declaration(setup: dict[str, Any]) -> dict[str, Any]:
    declarations = [d for tool in setup["tools"] for d in tool.get("function_declarations", [])]
    return next(d for d in declarations if d["name"] == "watch_input")


def report_then_stop(answer: str, user: User) -> None:
    """After the tool's "pending": a video frame, then "Report"; after its report, "Stop";
    after it stopped, the end of the run."""
    if answer == "got " + json.dumps(PENDING, sort_keys=True):
        user.frame(b"frame-1")
        user.say("Report")
    elif answer.startswith('got {"seen"'):
        user.say("Stop")
    elif answer == "got " + json.dumps(STOPPED, sort_keys=True):
        user.queue.close()


def test_an_input_stream_tool_reads_the_users_input_until_it_is_stopped(tls: ssl.SSLContext) -> None:  # noqa: F811
    seen = both(tls, model, lambda side, url: run_live(side, url, report_then_stop))
    theirs, ours = seen["theirs"], seen["ours"]
    pending = f"user: result of watch_input {json.dumps(PENDING, sort_keys=True)}"
    first_report = [pending, "blob image/jpeg b'frame-1'", "user: Report"]
    assert theirs["inputs"] == [*first_report, f"user: result of watch_input {json.dumps({'seen': first_report})} "
                                               "(partial)", "user: Stop", "stopped"]
    assert ours["inputs"] == theirs["inputs"]
    assert ours["streamed"] == theirs["streamed"]
    assert ours["stored"] == theirs["stored"]
    assert ours["received"] == theirs["received"]
    assert theirs["received"][-3:] == ["Stop", STOPPED, None] or theirs["received"][-2:] == ["Stop", STOPPED]
    assert realtime(ours["messages"]) == realtime(theirs["messages"]) != []
    # input_stream is not declared; the tool answers later (NON_BLOCKING)
    declared = watch_declaration(theirs["setup"])
    assert "input_stream" not in json.dumps(declared) and declared["behavior"] == "NON_BLOCKING"
    assert watch_declaration(ours["setup"]) == declared


async def monitor_video_stream(input_stream: LiveRequestQueue, city: str, every: int = 5) -> Any:
    """Watches the video of a city.

    Args:
      city: the city.
      every: how many frames to skip.
    """
    yield {"city": city, "every": every}


def test_input_stream_is_not_declared_to_the_model() -> None:
    from google.adk.tools.function_tool import FunctionTool as TheirTool

    from adk_actors.tools import FunctionTool

    theirs = TheirTool(monitor_video_stream)._get_declaration()
    ours = FunctionTool(monitor_video_stream).declaration()
    assert theirs is not None and ours is not None
    assert "input_stream" not in json.dumps(theirs.parameters_json_schema)
    assert (ours.name, ours.description, ours.parameters_json_schema) == (
        theirs.name, theirs.description, theirs.parameters_json_schema)


def signal_then_close(answer: str, user: User) -> None:
    """After the tool's "pending": a frame, the user's activity start and end, then the
    end of the run."""
    if answer == "got " + json.dumps(PENDING, sort_keys=True):
        user.frame(b"frame-2")
        user.queue.send_activity_start()
        user.queue.send_activity_end()
        user.queue.close()


def test_an_input_stream_tool_reads_the_close_of_the_run_and_is_then_cancelled(tls: ssl.SSLContext) -> None:  # noqa: F811
    seen = both(tls, model, lambda side, url: run_live(side, url, signal_then_close))
    theirs, ours = seen["theirs"], seen["ours"]
    assert theirs["inputs"] == [f"user: result of watch_input {json.dumps(PENDING, sort_keys=True)}",
                                "blob image/jpeg b'frame-2'", "activity start", "activity end", "close", "stopped"]
    assert ours["inputs"] == theirs["inputs"]
    assert ours["streamed"] == theirs["streamed"]
    assert ours["stored"] == theirs["stored"]
    assert realtime(ours["messages"]) == realtime(theirs["messages"]) != []


def test_a_plain_function_with_an_input_stream_as_a_tool_of_the_agent(tls: ssl.SSLContext) -> None:  # noqa: F811
    """google-adk's docs give the function as it is (``tools=[monitor_video_stream, ...]``)."""
    seen = both(tls, model, lambda side, url: run_live(side, url, signal_then_close, plain=True))
    assert seen["ours"]["inputs"] == seen["theirs"]["inputs"]
    assert seen["ours"]["streamed"] == seen["theirs"]["streamed"]
