"""``Runner.rewind_async`` on a running host (issue 52), side by side with google-adk.

One google-adk program (a notes agent whose tool sets state and saves artifacts) runs
on google-adk 2.13's in-memory Runner, and, with its imports rewritten, as an app of a
real host (actor processes, its SQLite store and artifact files) driven through the
host's Runner. Both talk to one Gemini REST stand-in on 127.0.0.1 named by environment
variables only. The steps: two turns, a rewind to before the second, one more turn.
Compared: the rewind event (author, its state and artifact deltas), the state after
it, the artifacts loaded afterwards, what the last turn's tool read, the final texts,
and every model request (the one after the rewind no longer carries the rewound turn).
Then what the host refuses: an unknown invocation (``InvocationNotFoundError``, a
``ValueError`` as google-adk's, nothing written) and a rewind while a run is in
progress (``SessionBusyError``).
"""

from __future__ import annotations

import asyncio
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import google_adk_harness as harness
import pytest
from conftest import turn_in_background
from google_adk_harness import calls, request_rows, rewritten

from adk_actors import InvalidRequestError, SessionBusyError, SessionNotFoundError
from adk_actors.errors import InvocationNotFoundError
from adk_actors.messages import RewindSession
from adk_actors.runtime import Host, HostConfig
from adk_actors.testing import StubResponse, StubServer, gemini_response
from supervision.testing import wait_until

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.tools.tool_context import ToolContext
from google.genai import types

async def note(text: str, tool_context: ToolContext) -> dict:
    """Keeps a note."""
    tool_context.state["last_note"] = text
    tool_context.state["notes"] = (tool_context.state.get("notes") or 0) + 1
    if text == "pears":
        tool_context.state["pears_seen"] = True
        await tool_context.save_artifact("extra.txt", types.Part(text="only after pears"))
    await tool_context.save_artifact("note.txt", types.Part(text=text))
    return {"kept": text}

async def read(tool_context: ToolContext) -> dict:
    """Reads the notes back."""
    found = {}
    for name in ("note.txt", "extra.txt"):
        part = await tool_context.load_artifact(name)
        found[name] = part.text if part else None
    return {"artifacts": found, "last_note": tool_context.state.get("last_note")}

root_agent = Agent(name="notes", model="gemini-2.5-flash", instruction="Keep notes.", tools=[note, read])
'''

ANSWERS = [calls(("note", {"text": "apples"})), gemini_response("Noted apples."),
           calls(("note", {"text": "pears"})), gemini_response("Noted pears."),
           calls(("read", {})), gemini_response("Your note says apples.")]
TURNS = ["Note apples.", "Note pears.", "What is my note?"]


def _text(content: Any) -> str:
    return "".join(p.text for p in (content.parts or []) if p.text) if content is not None else ""


def _responses(events: list[Any]) -> list[Any]:
    return [harness._plain(r.response) for e in events for r in e.get_function_responses()]


def _outcome(events_by_turn: list[list[Any]], rewind: Any, state_after_rewind: dict[str, Any],
             final_state: dict[str, Any], artifacts: dict[str, str | None], server: StubServer) -> dict[str, Any]:
    return {
        "finals": [_text(e.content) for turn in events_by_turn for e in turn
                   if e.author != "user" and e.is_final_response()],
        "rewind": {"author": rewind.author, "state_delta": harness._plain(dict(rewind.actions.state_delta)),
                   "artifact_delta": dict(rewind.actions.artifact_delta)},
        "state_after_rewind": harness._plain({k: v for k, v in state_after_rewind.items() if v is not None}),
        "final_state": harness._plain({k: v for k, v in final_state.items() if v is not None}),
        "artifacts": artifacts,
        "read": _responses(events_by_turn[2]),
        "requests": request_rows(server),
    }


def _first_invocation(events: list[Any]) -> str:
    return str(next(e.invocation_id for e in events if e.author != "user"))


def _google_adk_side(server: StubServer) -> dict[str, Any]:
    """The program on google-adk 2.13's InMemoryRunner: the steps, and what they left."""
    from google.adk.runners import InMemoryRunner
    from google.genai import types as genai_types

    module = types.ModuleType("host_rewind_theirs")
    exec(compile(PROGRAM, "<google-adk program>", "exec"), module.__dict__)

    async def steps() -> dict[str, Any]:
        runner = InMemoryRunner(agent=module.root_agent, app_name="notes")
        session = await runner.session_service.create_session(app_name="notes", user_id="ann", session_id="s1",
                                                              state={"kept": "yes"})

        async def turn(text: str) -> list[Any]:
            message = genai_types.Content(role="user", parts=[genai_types.Part(text=text)])
            return [e async for e in runner.run_async(user_id="ann", session_id=session.id, new_message=message)]

        turns = [await turn(TURNS[0]), await turn(TURNS[1])]
        await runner.rewind_async(user_id="ann", session_id="s1", rewind_before_invocation_id=_first_invocation(turns[1]))
        stored = await runner.session_service.get_session(app_name="notes", user_id="ann", session_id="s1")
        assert stored is not None
        rewind, state_after = stored.events[-1], dict(stored.state)
        turns.append(await turn(TURNS[2]))
        stored = await runner.session_service.get_session(app_name="notes", user_id="ann", session_id="s1")
        assert stored is not None
        artifacts = {}
        for name in ("note.txt", "extra.txt"):
            part = await runner.artifact_service.load_artifact(app_name="notes", user_id="ann", session_id="s1",
                                                               filename=name)
            artifacts[name] = part.text if part else None
        await runner.close()
        return _outcome(turns, rewind, state_after, dict(stored.state), artifacts, server)

    _reset(server)
    return asyncio.run(asyncio.wait_for(steps(), timeout=60))


def _reset(server: StubServer) -> None:
    with server._lock:
        server.requests.clear()
        server.responses.clear()
    server.add(*ANSWERS)


@pytest.fixture
def rewind_host(gemini: StubServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                request: pytest.FixtureRequest) -> Iterator[Host]:
    """A host serving the program (imports rewritten) as app ``notes``; the stand-in's
    environment and the program's folder are set before its actor system starts, so
    its actor processes (forked) have both."""
    folder = tmp_path / "program"
    folder.mkdir()
    (folder / "host_rewind_ours.py").write_text(rewritten(PROGRAM))
    assert "google" not in rewritten(PROGRAM)
    monkeypatch.syspath_prepend(str(folder))
    actor_system = request.getfixturevalue("actor_system")
    config = HostConfig(apps={"notes": "host_rewind_ours:root_agent"}, data_dir=str(tmp_path / "data"))
    with Host(config, system=actor_system) as running:
        yield running
    sys.modules.pop("host_rewind_ours", None)


def test_a_rewind_on_the_host_leaves_what_google_adks_runner_leaves(rewind_host: Host, gemini: StubServer) -> None:
    theirs = _google_adk_side(gemini)
    # what google-adk leaves, so that the comparison means something
    assert theirs["rewind"]["state_delta"] == {"last_note": "apples", "notes": 1, "pears_seen": None, "kept": None}
    assert set(theirs["rewind"]["artifact_delta"]) == {"note.txt", "extra.txt"}
    assert theirs["read"][0] == {"artifacts": {"note.txt": "apples", "extra.txt": None}, "last_note": "apples"}
    assert "pears" not in str(theirs["requests"][-2]["contents"])

    _reset(gemini)
    runner = rewind_host.runner("notes")
    runner.create_session("ann", "s1", state={"kept": "yes"})
    turns = [list(runner.run("ann", "s1", TURNS[0])), list(runner.run("ann", "s1", TURNS[1]))]
    assert runner.load_artifact("ann", "s1", "extra.txt") is not None  # the second turn saved it
    asyncio.run(runner.rewind_async(user_id="ann", session_id="s1",
                                    rewind_before_invocation_id=_first_invocation(turns[1])))
    after = runner.get_session("ann", "s1")
    rewind, state_after = after.events[-1], dict(after.state)
    assert rewind.actions.rewind_before_invocation_id == _first_invocation(turns[1])
    assert rewind.invocation_id not in {_first_invocation(t) for t in turns}
    turns.append(list(runner.run("ann", "s1", TURNS[2])))
    final = runner.get_session("ann", "s1")
    artifacts = {name: (part.text if (part := runner.load_artifact("ann", "s1", name)) else None)
                 for name in ("note.txt", "extra.txt")}
    ours = _outcome(turns, rewind, state_after, dict(final.state), artifacts, gemini)

    assert ours["state_after_rewind"] == theirs["state_after_rewind"] == {"last_note": "apples", "notes": 1}
    assert ours["artifacts"] == theirs["artifacts"] == {"note.txt": "apples", "extra.txt": None}
    assert ours == theirs
    assert len(gemini.responses) == 0


def test_the_host_refuses_an_unknown_invocation_and_a_busy_session(rewind_host: Host, gemini: StubServer) -> None:
    _reset(gemini)
    runner = rewind_host.runner("notes")
    runner.create_session("ann", "s2")
    first = list(runner.run("ann", "s2", TURNS[0]))
    before = runner.get_session("ann", "s2")
    with pytest.raises(InvocationNotFoundError) as refused:
        asyncio.run(runner.rewind_async(user_id="ann", session_id="s2", rewind_before_invocation_id="e-no-such"))
    assert isinstance(refused.value, ValueError) and "e-no-such" in str(refused.value)
    with pytest.raises(SessionNotFoundError):
        asyncio.run(runner.rewind_async(user_id="ann", session_id="s-none", rewind_before_invocation_id="e-1"))
    assert len(runner.get_session("ann", "s2").events) == len(before.events)  # nothing written
    # a malformed request of the message API is refused, typed; the partition serves on
    for bad in (RewindSession("notes", "ann", "s2", _first_invocation(first), {"note.txt": "one"}, 0),  # type: ignore[dict-item]
                RewindSession("notes", "ann", "s2", _first_invocation(first), {}, "all")):  # type: ignore[arg-type]
        with pytest.raises(InvalidRequestError):
            runner._router.call(bad, "s2", "ann")
    with pytest.raises(InvocationNotFoundError):  # the partition's own check, typed the same
        runner._router.call(RewindSession("notes", "ann", "s2", "e-no-such", {}, len(before.events)), "s2", "ann")
    stale = RewindSession("notes", "ann", "s2", _first_invocation(first), {}, len(before.events) - 1)
    with pytest.raises(SessionBusyError, match="changed"):  # the session has more events than its caller read
        runner._router.call(stale, "s2", "ann")
    assert len(runner.get_session("ann", "s2").events) == len(before.events)

    # a turn whose model answers late: while it runs, the session is not rewound
    with gemini._lock:
        gemini.responses.clear()
    gemini.add(StubResponse(json=calls(("note", {"text": "figs"})).json, delay=3.0), gemini_response("Noted figs."))
    asked = len(gemini.requests)
    thread, outcome = turn_in_background(runner, "ann", "s2", "Note figs.")
    try:
        wait_until(lambda: len(gemini.requests) > asked, timeout=30, message="the late turn never asked its model")
        with pytest.raises(SessionBusyError):
            asyncio.run(runner.rewind_async(user_id="ann", session_id="s2",
                                            rewind_before_invocation_id=_first_invocation(first)))
    finally:
        thread.join(timeout=60)
    assert not thread.is_alive() and isinstance(outcome[0], list)
    assert runner.get_session("ann", "s2").state["last_note"] == "figs"  # the turn went on, unrewound
    # once it has ended, the same rewind is taken
    asyncio.run(runner.rewind_async(user_id="ann", session_id="s2", rewind_before_invocation_id=_first_invocation(first)))
    assert runner.get_session("ann", "s2").state.get("last_note") is None
    assert runner.load_artifact("ann", "s2", "note.txt") is None
