"""``App(tool_errors=...)`` (issue 52): what a tool that raises does to its run.

google-adk 2.13 re-raises a tool's exception when no on-tool-error callback answers
it (its ``flows/llm_flows/tools/_caller.py``): the root agent's run ends with an error
event (``errorCode`` the exception's class, ``errorMessage`` its text), then
``Runner.run_async`` raises the exception itself; when one of several parallel calls
raises, the calls still running are cancelled and the plain results of those that had
ended are yielded first, in one event. ``App(tool_errors="raise")`` gives that here;
the default, ``"to_model"``, keeps our answer: the error is the tool's result and the
model's turn goes on.

* In process, side by side with google-adk 2.13 on one Gemini stand-in (the program
  is google-adk's, its imports rewritten for ours, our App given
  ``tool_errors="raise"``): the same events streamed and stored, the same exception
  (type, message, the tool's own frame last in its traceback), the same next turn and
  the same model requests (but for the calls the failed turn left unanswered: google-adk
  leaves them out, ours sends them with our "interrupted" result, docs/design.md); an
  on-tool-error callback or plugin that answers still gives a result; a missing
  argument and an unknown tool are error results on both (in our words).
* Ours only: the default is unchanged; ``Retry`` and ``Fallback`` decisions still
  answer in ``raise`` mode, ``Reraise`` raises; the App checks the value.
* In a host: the run ends with exactly one terminal message, ``RunFailed`` (reason
  ``error``, the exception's type, a detail naming the tool), after the events before
  it, which are kept; the session's partition stays up and the next turn works.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from pathlib import Path
from typing import Any

import pytest
from google_adk_harness import calls, gemini, request_rows, rewritten, run_program, stand_in  # noqa: F401

from adk_actors import Content, LlmAgent, LlmRequest, RunFailedError
from adk_actors.compiler._contents import INTERRUPTED_RESULT
from adk_actors.engine import Fallback, Reraise, Retry
from adk_actors.models import ScriptedModel, call
from adk_actors.testing import StubResponse, StubServer, gemini_response

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"),
              pytest.mark.timeout(300)]

PROGRAM = '''
import asyncio
import traceback

from google.adk.agents import Agent
from google.adk.apps import App
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

SETTINGS = {}

ANSWERED = asyncio.Event()
CANCELLED = []


def lookup(key: str) -> dict:
    """Looks a record up."""
    raise ValueError(f"no record {key}")


async def quick(key: str) -> dict:
    """Answers at once."""
    ANSWERED.set()
    return {"quick": key}


async def late_failure(key: str) -> dict:
    """Fails once quick has answered."""
    await ANSWERED.wait()
    raise KeyError(key)


async def endless(key: str) -> dict:
    """Never answers."""
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        CANCELLED.append(key)
        raise
    return {}


def answer(tool, args, tool_context, error):
    return {"handled": f"{type(error).__name__}: {error}"}


class Answering(BasePlugin):
    def __init__(self):
        super().__init__(name="answering")

    async def on_tool_error_callback(self, *, tool, tool_args, tool_context, error):
        return {"handled by plugin": str(error)}


def app_of(case):
    kwargs, plugins = {}, []
    if case == "the agent's callback answers":
        kwargs["on_tool_error_callback"] = answer
    if case == "a plugin answers":
        plugins.append(Answering())
    agent = Agent(name="root", model="gemini-2.5-flash", instruction="Answer.",
                  tools=[lookup, quick, late_failure, endless], **kwargs)
    return App(name="e", root_agent=agent, plugins=plugins, **SETTINGS)


async def turn(runner, session, text):
    streamed, raised = [], None
    try:
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=types.Content(
                role="user", parts=[types.Part(text=text)])):
            streamed.append(event)
    except Exception as error:
        raised = (type(error).__name__, str(error), traceback.extract_tb(error.__traceback__)[-1].name)
    return streamed, raised


async def main(case):
    runner = InMemoryRunner(app=app_of(case))
    session = await runner.session_service.create_session(app_name="e", user_id="ann")
    first, raised = await turn(runner, session, "go")
    stored = await runner.session_service.get_session(app_name="e", user_id="ann", session_id=session.id)
    second, raised_next = await turn(runner, session, "again")
    await runner.close()
    return first, raised, stored.events, second, raised_next, list(CANCELLED)
'''

OURS = rewritten(PROGRAM).replace("SETTINGS = {}", 'SETTINGS = {"tool_errors": "raise"}')

DONE = gemini_response("Done.")
AGAIN = gemini_response("Here again.")

#: case -> the model's answers (the first turn's, then the second's)
CASES: dict[str, list[StubResponse]] = {
    "one call raises": [calls(("lookup", {"key": "k1"})), AGAIN],
    "one of parallel calls raises": [calls(("quick", {"key": "a"}), ("late_failure", {"key": "b"}),
                                           ("endless", {"key": "c"})), AGAIN],
    "the agent's callback answers": [calls(("lookup", {"key": "k1"})), DONE, AGAIN],
    "a plugin answers": [calls(("lookup", {"key": "k1"})), DONE, AGAIN],
    "a missing argument": [calls(("lookup", {})), DONE, AGAIN],
    "an unknown tool": [calls(("nowhere", {"key": "k1"})), DONE, AGAIN],
}


def rows(events: list[Any]) -> list[tuple[Any, ...]]:
    """What is compared of each event: author, calls, responses (a missing argument's and
    an unknown tool's by their key only: the words differ), text, error code and text."""
    found = []
    for event in events:
        content = event.content
        parts = (content.parts or []) if content is not None else []
        responses = []
        for part in parts:
            reply = part.function_response
            if reply is not None:
                response = dict(reply.response or {})
                responses.append((reply.name, sorted(response) if "error" in response else response))
        found.append((event.author, [(p.function_call.name, dict(p.function_call.args or {}))
                                     for p in parts if p.function_call is not None],
                      responses, "".join(p.text for p in parts if p.text), event.error_code, event.error_message))
    return found


def _answered_only(request: dict[str, Any]) -> dict[str, Any]:
    """A model request without the calls a failed turn left unanswered: google-adk's next
    request leaves them out, ours sends each with our "interrupted" result (a known
    difference of the engines, docs/design.md); the rest must be the same (an error
    result by its key only, as in :func:`rows`)."""
    parts = [part for content in request["contents"] for part in content["parts"]]
    unanswered = {p["functionResponse"]["name"] for p in parts
                  if p.get("functionResponse", {}).get("response") == INTERRUPTED_RESULT}
    contents = []
    for content in request["contents"]:
        kept = [_error_key(p) for p in content["parts"] if p.get("functionCall", {}).get("name") not in unanswered
                and p.get("functionResponse", {}).get("name") not in unanswered]
        if kept:
            contents.append({**content, "parts": kept})
    return {**request, "contents": contents}


def _error_key(part: dict[str, Any]) -> dict[str, Any]:
    reply = part.get("functionResponse")
    if reply is None or "error" not in reply.get("response", {}):
        return part
    return {"functionResponse": {**reply, "response": sorted(reply["response"])}}


def _side(source: str, case: str, server: StubServer) -> dict[str, Any]:
    _, (first, raised, stored, second, raised_next, cancelled) = run_program(source, CASES[case], server, case)
    assert len(server.responses) == 0, "the case must use its script"
    return {"first": rows(first), "raised": raised, "stored": rows(stored), "second": rows(second),
            "raised_next": raised_next, "cancelled": cancelled,
            "requests": [_answered_only(request) for request in request_rows(server)]}


@pytest.mark.parametrize("case", list(CASES))
def test_raise_mode_ends_the_run_as_google_adk_does(gemini: StubServer, case: str) -> None:  # noqa: F811
    """Side by side (see the module): the same streamed and stored events, the same
    exception, the same next turn, the same model requests."""
    theirs = _side(PROGRAM, case, gemini)
    ours = _side(OURS, case, gemini)
    assert ours == theirs
    if case == "one call raises":  # as observed on google-adk: the call, its error event, the exception
        assert [row[4] for row in theirs["first"]] == [None, "ValueError"]
        assert theirs["raised"] == ("ValueError", "no record k1", "lookup")
    if case == "one of parallel calls raises":  # the quick call's answer is kept, the endless one cancelled
        assert [row[2] for row in theirs["first"]] == [[], [("quick", {"quick": "a"})], []]
        assert theirs["raised"] is not None and theirs["raised"][0] == "KeyError"
        assert theirs["cancelled"] == ["c"]
    if case in ("the agent's callback answers", "a plugin answers", "a missing argument", "an unknown tool"):
        assert theirs["raised"] is None and theirs["first"][-1][3] == "Done."
    assert theirs["raised_next"] is None and theirs["second"][-1][3] == "Here again."


def test_the_default_gives_the_model_the_error(gemini: StubServer) -> None:  # noqa: F811
    """Without the setting (and with ``tool_errors="to_model"``) the error is the tool's
    result and the turn goes on: no error event, nothing raised."""
    for source in (rewritten(PROGRAM), rewritten(PROGRAM).replace("SETTINGS = {}",
                                                                  'SETTINGS = {"tool_errors": "to_model"}')):
        script = [calls(("lookup", {"key": "k1"})), DONE, AGAIN]
        _, (first, raised, *_) = run_program(source, script, gemini, "one call raises")
        assert raised is None
        assert [[dict(r.response) for r in e.content.function_responses] for e in first] == [
            [], [{"error": "ValueError: no record k1"}], []]
        assert not any(e.error_code for e in first) and first[-1].content.text == "Done."


# -- ours only: the error hooks' decisions, the App's check --------------------------------


class Flaky:
    """A tool that fails its first ``failures`` calls."""

    def __init__(self, failures: int) -> None:
        self.failures, self.calls = failures, 0

    def __call__(self, key: str) -> dict[str, Any]:
        """Looks a record up."""
        self.calls += 1
        if self.calls <= self.failures:
            raise ConnectionError(f"attempt {self.calls} failed")
        return {"found": key}


async def _in_process(decision: Any, failures: int, mode: str = "raise") -> tuple[list[Any], Any, int]:
    """One turn of an agent whose tool fails ``failures`` times and whose on-tool-error
    callback answers ``decision``: the events, what was raised, the tool's calls."""
    from adk_actors.apps import App
    from adk_actors.runners import InMemoryRunner

    flaky = Flaky(failures)

    def lookup(key: str) -> dict[str, Any]:
        """Looks a record up."""
        return flaky(key)

    def script(request: LlmRequest) -> Any:
        return "Done." if request.contents[-1].function_responses else [call("lookup", key="k1")]

    agent = LlmAgent(name="root", model=ScriptedModel(fallback=script), tools=[lookup],
                     on_tool_error_callback=lambda tool, args, tool_context, error: decision)
    runner = InMemoryRunner(app=App(name="e", root_agent=agent, tool_errors=mode))  # type: ignore[arg-type]
    session = await runner.session_service.create_session(app_name="e", user_id="ann")
    events: list[Any] = []
    raised = None
    try:
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=Content.user("go")):
            events.append(event)
    except ConnectionError as error:
        raised = error
    return events, raised, flaky.calls


def _responses(events: list[Any]) -> list[dict[str, Any]]:
    return [dict(r.response) for e in events if e.content is not None for r in e.content.function_responses]


def test_decisions_of_the_error_hooks_still_answer_in_raise_mode() -> None:
    """``Retry`` runs the tool again (a success is its result; still failing at the
    last attempt raises that attempt's exception), ``Fallback`` is the result,
    ``Reraise`` raises (and in the default mode is an error result, as before)."""
    events, raised, attempts = asyncio.run(_in_process(Retry(max_attempts=2), failures=1))
    assert raised is None and attempts == 2 and _responses(events) == [{"found": "k1"}]
    events, raised, attempts = asyncio.run(_in_process(Retry(max_attempts=2), failures=5))
    assert isinstance(raised, ConnectionError) and str(raised) == "attempt 2 failed" and attempts == 2
    assert [e.error_code for e in events if e.error_code] == ["ConnectionError"]
    events, raised, _ = asyncio.run(_in_process(Fallback({"cached": True}), failures=5))
    assert raised is None and _responses(events) == [{"cached": True}]
    events, raised, _ = asyncio.run(_in_process(Reraise(), failures=5))
    assert isinstance(raised, ConnectionError) and str(raised) == "attempt 1 failed"
    events, raised, _ = asyncio.run(_in_process(Reraise(), failures=5, mode="to_model"))
    assert raised is None and _responses(events) == [{"error": "ConnectionError: attempt 1 failed"}]


def test_the_app_checks_the_setting() -> None:
    from adk_actors.apps import App as AdkApp
    from adk_actors.engine import App

    agent = LlmAgent(name="root", model=ScriptedModel())
    for kind in (App, AdkApp):
        assert kind(root_agent=agent).tool_errors == "to_model"
        assert kind(root_agent=agent, tool_errors="raise").tool_errors == "raise"
        with pytest.raises(ValueError, match="tool_errors 'rase'"):
            kind(root_agent=agent, tool_errors="rase")  # type: ignore[arg-type]


# -- in a host -----------------------------------------------------------------------------


def lookup(key: str) -> dict[str, Any]:
    """Looks a record up."""
    raise ValueError(f"no record {key}")


def _host_script(request: LlmRequest) -> Any:
    text = next((c.text for c in reversed(request.contents) if c.role == "user" and c.text), "")
    if text == "go" and not request.contents[-1].function_responses:
        return [call("lookup", key="k1")]
    return f"fine: {text}"


def raising_app() -> Any:
    from adk_actors.apps import App

    return App(root_agent=LlmAgent(name="root", model=ScriptedModel(fallback=_host_script), tools=[lookup]),
               tool_errors="raise")


RAISING_APP = raising_app()


def _until_terminal(endpoint: Any, run_id: str, timeout: float = 30.0) -> list[Any]:
    """Every message of run ``run_id`` (envelopes opened), up to its terminal one."""
    from adk_actors.messages import RunDone, RunFailed, RunMessages

    received: list[Any] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = endpoint.listen(0.5)
        if getattr(message, "run_id", None) != run_id:
            continue
        received.extend(message.messages if isinstance(message, RunMessages) else (message,))
        if any(isinstance(m, (RunDone, RunFailed)) for m in received):
            return received
    raise AssertionError(f"no terminal message for {run_id} within {timeout} s; got {received}")


def test_a_host_run_ends_with_one_typed_failure_and_the_session_goes_on(actor_system: Any, tmp_path: Path) -> None:
    from adk_actors.messages import AdkEvent, RunFailed, RunRequest
    from adk_actors.runtime import Host, HostConfig
    from supervision import call as ask
    from supervision.protocol import OsPid

    config = HostConfig(apps={"raising": "test_tool_errors_raise:RAISING_APP"}, data_dir=str(tmp_path))
    with Host(config, system=actor_system) as host:
        runner = host.runner("raising")
        runner.create_session("ann", "s1")
        partition = host.partition_for("raising", "ann", "s1")
        pid = ask(host.system, partition, OsPid())
        with host.system.private() as endpoint:
            request = RunRequest("raising", "ann", "s1", new_message=Content.user("go"))
            ask(endpoint, partition, request, timeout=10)
            messages = _until_terminal(endpoint, request.run_id)
            # the caller's Runner shows the same failure as any other run's
            with pytest.raises(RunFailedError) as failed:
                list(runner.run("ann", "s1", "go"))
            # nothing more of the first run arrives while the second one runs
            assert not [m for m in _drain(endpoint) if getattr(m, "run_id", None) == request.run_id]
        ends = [m for m in messages if isinstance(m, RunFailed)]
        assert len(ends) == 1 and messages[-1] is ends[0]
        assert (ends[0].reason, ends[0].error_type, ends[0].detail) == ("error", "ValueError", "tool 'lookup': no record k1")
        assert (failed.value.reason, failed.value.error_type, failed.value.detail) == (
            "error", "ValueError", "tool 'lookup': no record k1")
        streamed = [m.event for m in messages if isinstance(m, AdkEvent)]
        assert [(e.author, [c.name for c in e.content.function_calls] if e.content else [], e.error_code)
                for e in streamed] == [("user", [], None), ("root", ["lookup"], None), ("root", [], "ValueError")]
        after = list(runner.run("ann", "s1", "again"))
        assert after[-1].content is not None and after[-1].content.text == "fine: again"
        stored = runner.get_session("ann", "s1").events
        assert [e.id for e in stored[:3]] == [e.id for e in streamed]  # what was streamed is kept
        assert [e.error_code for e in stored] == [None, None, "ValueError", None, None, "ValueError", None, None]
        _over_http(host)
        assert ask(host.system, host.partition_for("raising", "ann", "s1"), OsPid()) == pid


def _over_http(host: Any) -> None:
    """google-adk's routes on the host: ``/run_sse`` streams the call and the error event,
    then google-adk's error line (the exception's type; the text naming the tool);
    ``/run`` answers 500 as for any failed run; the next turn answers."""
    import json

    from fastapi.testclient import TestClient

    from adk_actors.config import HttpSection
    from adk_actors.engine import AppCatalog
    from adk_actors.http._app import create_app

    app = create_app(host, AppCatalog({"raising": "test_tool_errors_raise:RAISING_APP"}, None), HttpSection())
    message = {"app_name": "raising", "user_id": "ann", "session_id": "h1",
               "new_message": {"role": "user", "parts": [{"text": "go"}]}}
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert client.post("/apps/raising/users/ann/sessions/h1", json={}).status_code == 200
        streamed = client.post("/run_sse", json=message)
        assert streamed.status_code == 200
        payloads = [json.loads(f[len("data: "):]) for f in streamed.text.split("\n\n") if f]
        assert [p.get("errorCode") for p in payloads[:-1]] == [None, "ValueError"]
        line = payloads[-1]
        assert line["error"] == "ValueError: tool 'lookup': no record k1"
        assert line["error_details"]["error_type"] == "ValueError"
        answered = client.post("/run", json=message)
        assert answered.status_code == 500 and answered.json() == {"detail": "error: tool 'lookup': no record k1"}
        again = client.post("/run", json={**message, "new_message": {"role": "user", "parts": [{"text": "again"}]}})
        assert again.status_code == 200 and again.json()[-1]["content"]["parts"][0]["text"] == "fine: again"


def _drain(endpoint: Any) -> list[Any]:
    """What the endpoint still receives within a moment."""
    found = []
    while (message := endpoint.listen(0.3)) is not None:
        found.append(message)
    return found


def test_the_error_keeps_its_traceback_in_process() -> None:
    """The exception the caller gets is the tool's own: its type, its message, and the
    tool's frame where it was raised."""
    async def run() -> BaseException:
        from adk_actors.apps import App
        from adk_actors.runners import InMemoryRunner

        runner = InMemoryRunner(app=App(name="e", root_agent=LlmAgent(
            name="root", model=ScriptedModel(fallback=_host_script), tools=[lookup]), tool_errors="raise"))
        session = await runner.session_service.create_session(app_name="e", user_id="ann")
        try:
            async for _ in runner.run_async(user_id="ann", session_id=session.id, new_message=Content.user("go")):
                pass
        except ValueError as error:
            return error
        raise AssertionError("the run did not raise")

    error = asyncio.run(run())
    assert type(error) is ValueError and str(error) == "no record k1"
    assert traceback.extract_tb(error.__traceback__)[-1].name == "lookup"
