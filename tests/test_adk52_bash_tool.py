"""google-adk 2.13's ``ExecuteBashTool`` and ``BashToolPolicy``
(``google.adk.tools.bash_tool``, issue 52) side by side with google-adk's.

In a run (one program on google-adk and on ours, imports rewritten, one Gemini
stand-in): the declaration (its description's wording aside), the confirmation a
command waits for (the ``adk_request_confirmation`` call, the turn ending without
asking the model again), the approved command's result, a rejection, and a command
the policy refuses at once. Called directly on both tools with the same commands:
the policy's verdicts (which commands are refused; the wording of the refusals is each
side's), the outputs and exit codes, a timeout (what the command wrote, SIGKILL's
exit code), and that nothing the command started outlives the call, whether it ended,
timed out or (ours) was cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, event_rows, rewritten, run_program

from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"),
              pytest.mark.skipif(os.name != "posix", reason="the command runs on POSIX only"),
              pytest.mark.timeout(120)]

stand_in, gemini = harness.stand_in, harness.gemini

PROGRAM = '''
import pathlib

from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools.bash_tool import BashToolPolicy, ExecuteBashTool
from google.genai import types

bash = ExecuteBashTool(workspace=pathlib.Path(WORKSPACE),
                       policy=BashToolPolicy(allowed_command_prefixes=("sh -c", "ls"), blocked_operators=("&&",)))
root_agent = Agent(name="ops", model="gemini-2.5-flash", instruction="Run what is asked.", tools=[bash])


async def main(answer):
    runner = InMemoryRunner(agent=root_agent, app_name="ops")
    session = await runner.session_service.create_session(app_name="ops", user_id="u")
    first, second, asked = [], [], None
    message = types.Content(role="user", parts=[types.Part(text="go")])
    async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        first.append(event)
        asked = next((c for c in event.get_function_calls() if c.name == "adk_request_confirmation"), asked)
    if asked is not None:
        reply = types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
            name="adk_request_confirmation", id=asked.id, response=answer))])
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message=reply):
            second.append(event)
    await runner.close()
    return first, second, None if asked is None else dict(asked.args)
'''

COMMAND = "sh -c 'echo out; echo err >&2; exit 3'"


def _plain(value: Any) -> Any:
    """A result with each side's wording replaced by what it is: an ``error`` as
    present, an empty stream's placeholder as ``<none>``, the confirmation hint as
    naming the command."""
    if isinstance(value, dict):
        plain = {k: _plain(v) for k, v in value.items()}
        if isinstance(plain.get("error"), str):
            plain["error"] = "..."
        for stream in ("stdout", "stderr"):
            if isinstance(plain.get(stream), str) and plain[stream].startswith("<"):
                plain[stream] = "<none>"
        if isinstance(plain.get("originalFunctionCall"), dict):  # its id is random on both sides
            plain["originalFunctionCall"].pop("id", None)
        if isinstance(plain.get("hint"), str):
            assert COMMAND in plain["hint"] or "rm" in plain["hint"]
            plain["hint"] = "..."
        return plain
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _run(server: StubServer, source: str, script: list[Any], answer: Any, folder: Path) -> dict[str, Any]:
    source = source.replace("WORKSPACE", repr(str(folder)))
    _, (first, second, asked) = run_program(source, script, server, answer)
    assert not server.responses, "the script is used"
    declared = server.requests[0].body["tools"][0]["functionDeclarations"]
    return {"first": _plain(event_rows(first)), "second": _plain(event_rows(second)),
            "asked": None if asked is None else _plain(asked["toolConfirmation"]),
            "declared": declared, "requests": len(server.requests)}


@pytest.mark.parametrize("answer", [{"confirmed": True}, {"confirmed": False}])
def test_a_command_waits_for_approval_then_runs_or_not_as_on_google_adk(
        gemini: StubServer, tmp_path: Path, answer: dict[str, Any]) -> None:
    script = [calls(("execute_bash", {"command": COMMAND})), gemini_response("Ran it.")]
    theirs = _run(gemini, PROGRAM, script, answer, tmp_path)
    ours = _run(gemini, rewritten(PROGRAM), script, answer, tmp_path)
    assert ours["first"] == theirs["first"]
    assert ours["second"] == theirs["second"]
    assert ours["asked"] == theirs["asked"] == {"hint": "...", "confirmed": False}
    assert ours["requests"] == theirs["requests"] == 2  # the waiting call ends the first turn
    their_declared, our_declared = theirs["declared"][0], ours["declared"][0]
    assert "Allowed:" in their_declared.pop("description") and "Allowed:" in our_declared.pop("description")
    their_declared["parameters_json_schema"]["properties"]["command"].pop("description")
    our_declared["parameters_json_schema"]["properties"]["command"].pop("description")
    assert our_declared == their_declared
    waiting = [r for row in theirs["first"] for r in row["responses"]]
    assert waiting[0][1:] == ["execute_bash", {"error": "..."}] and theirs["first"][-1]["skip_summarization"]
    results = [r[2] for row in theirs["second"] for r in row["responses"] if r[1] == "execute_bash"]
    if answer["confirmed"]:
        assert results == [{"stdout": "out\n", "stderr": "err\n", "returncode": 3}]
    else:
        assert results == [{"error": "..."}]


def test_a_refused_command_asks_no_one_as_on_google_adk(gemini: StubServer, tmp_path: Path) -> None:
    script = [calls(("execute_bash", {"command": "rm -rf /tmp/nothing"})), gemini_response("Not allowed.")]
    theirs = _run(gemini, PROGRAM, script, None, tmp_path)
    ours = _run(gemini, rewritten(PROGRAM), script, None, tmp_path)
    assert ours["first"] == theirs["first"] and ours["asked"] is None and theirs["asked"] is None
    assert [r[2] for row in theirs["first"] for r in row["responses"]] == [{"error": "..."}]
    assert theirs["first"][-1]["text"] == "Not allowed."


def _tools(policy: dict[str, Any], folder: Path) -> tuple[Any, Any]:
    from google.adk.tools import bash_tool as theirs

    from adk_actors.tools import bash_tool as ours

    return (theirs.ExecuteBashTool(workspace=folder, policy=theirs.BashToolPolicy(**policy)),
            ours.ExecuteBashTool(workspace=folder, policy=ours.BashToolPolicy(**policy)))


def _call(tool: Any, command: Any, confirmed: bool | None = True) -> Any:
    context = SimpleNamespace(tool_confirmation=None if confirmed is None else SimpleNamespace(confirmed=confirmed),
                              actions=SimpleNamespace(skip_summarization=False),
                              request_confirmation=lambda hint=None, payload=None: None)
    return asyncio.run(asyncio.wait_for(tool.run_async(args={"command": command}, tool_context=context), 60))


POLICY = {"allowed_command_prefixes": ("ls", "/bin/echo", "git status", "sh -c", 'bad "quote'),
          "blocked_operators": ("|", "$("), "timeout_seconds": 5}
VERDICTS = ["ls -la", "lsof", "./ls", "/bin/ls", "/bin/echo hi", "echo hi", "git status -s", "git push",
            "ls | wc", "ls $(pwd)", "   ", "", None, 42, "ls 'unclosed", "sh -c 'exit 0'"]


def test_the_policy_refuses_the_commands_google_adks_refuses(tmp_path: Path) -> None:
    theirs, ours = _tools(POLICY, tmp_path)
    their_verdicts = [_plain(_call(theirs, c, confirmed=None)) for c in VERDICTS]
    our_verdicts = [_plain(_call(ours, c, confirmed=None)) for c in VERDICTS]
    assert our_verdicts == their_verdicts
    # refused at once vs waiting for approval (the same "error" key: only the wording tells)
    refused = [c for c, v in zip(VERDICTS, their_verdicts, strict=True) if v == {"error": "..."}]
    assert len(refused) == len(VERDICTS)
    waiting = [c for c in VERDICTS if not _refused_by(ours, c)]
    assert waiting == [c for c in VERDICTS if not _refused_by(theirs, c)]
    assert waiting == ["ls -la", "/bin/echo hi", "git status -s", "sh -c 'exit 0'"]


def _refused_by(tool: Any, command: Any) -> bool:
    """Whether the call was refused without asking anyone (no confirmation requested)."""
    asked: list[Any] = []
    context = SimpleNamespace(tool_confirmation=None, actions=SimpleNamespace(skip_summarization=False),
                              request_confirmation=lambda hint=None, payload=None: asked.append(hint))
    asyncio.run(tool.run_async(args={"command": command}, tool_context=context))
    return not asked


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError):  # a zombie of ours is reaped; one of init's is gone
        waited, _ = os.waitpid(pid, os.WNOHANG)
        if waited:
            return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()


def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_outputs_timeouts_and_what_a_command_leaves_behind_as_on_google_adk(tmp_path: Path) -> None:
    (tmp_path / "here.txt").write_text("x")
    for tool in _tools({"timeout_seconds": 1}, tmp_path):
        assert _plain(_call(tool, "ls")) == {"stdout": "here.txt\n", "stderr": "<none>", "returncode": 0}
        assert _plain(_call(tool, "sh -c 'echo a | tr a b'")) == {"stdout": "b\n", "stderr": "<none>",
                                                                  "returncode": 0}
        assert _plain(_call(tool, "sh -c 'exit 4'")) == {"stdout": "<none>", "stderr": "<none>", "returncode": 4}
        assert _plain(_call(tool, "ls", confirmed=False)) == {"error": "..."}
        assert set(_call(tool, "no-such-program-here")) == {"error", "stdout", "stderr"}
        # a timeout: killed by SIGKILL, its background child too (what it wrote before is
        # not kept, on either side: the read of it was cancelled)
        marker = tmp_path.parent / f"{tmp_path.name}-pid"
        marker.unlink(missing_ok=True)
        timed_out = _call(tool, f"sh -c 'sleep 300 & echo $! > {marker}; wait'")
        assert _plain(timed_out) == {"error": "...", "stdout": "<none>", "stderr": "<none>",
                                     "returncode": -signal.SIGKILL}
        assert _gone(int(marker.read_text())), "the timed-out command's child outlived it"
        # a command that ends, leaving a child behind in its group: the child is killed
        ended = _call(tool, "sh -c 'sleep 300 >/dev/null 2>&1 & echo $!'")
        assert ended["returncode"] == 0
        assert _gone(int(ended["stdout"])), "the command's leftover child outlived the call"


def test_a_cancelled_call_kills_the_command_and_its_children(tmp_path: Path) -> None:
    _, ours = _tools({"timeout_seconds": 60}, tmp_path)
    marker = tmp_path / "pid"

    async def cancel() -> None:
        context = SimpleNamespace(tool_confirmation=SimpleNamespace(confirmed=True))
        task = asyncio.ensure_future(ours.run_async(
            args={"command": f"sh -c 'sleep 300 & echo $! > {marker}; wait'"}, tool_context=context))
        deadline = time.monotonic() + 30
        while not (marker.exists() and marker.read_text().strip()) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(cancel(), 60))
    assert _gone(int(marker.read_text()))


def test_bad_policies_and_tools_as_on_google_adk(tmp_path: Path) -> None:
    from google.adk.tools import bash_tool as theirs

    from adk_actors.tools import bash_tool as ours

    for module in (theirs, ours):
        policy = module.BashToolPolicy()
        assert (policy.allowed_command_prefixes, policy.blocked_operators, policy.timeout_seconds,
                policy.max_memory_bytes, policy.max_file_size_bytes, policy.max_child_processes) == (
            ("*",), (), 30, None, None, None)
        with pytest.raises(dataclasses_frozen_error()):
            policy.timeout_seconds = 3
        module.BashToolPolicy(allowed_command_prefixes=('bad "quote',))  # logged, not raised
        with pytest.raises(TypeError):
            module.ExecuteBashTool(tmp_path)  # keyword-only
        with pytest.raises(TypeError):
            module.BashToolPolicy(bogus=1)
        assert module.ExecuteBashTool().name == "execute_bash"
        assert module.ExecuteBashTool()._workspace == Path.cwd()


def dataclasses_frozen_error() -> type[Exception]:
    import dataclasses

    return dataclasses.FrozenInstanceError


if sys.platform == "win32":  # pragma: no cover
    pytest.skip("POSIX only", allow_module_level=True)
