"""Code executors (issue 56): ``UnsafeLocalCodeExecutor`` as google-adk's, the
``SandboxedCodeExecutor`` and its limits on a real Python subprocess, and
``LlmAgent(code_executor=...)``'s loop, also side by side with google-adk 2.13 on one
Gemini stand-in (tests/google_adk_harness.py)."""

from __future__ import annotations

import os
import re
import socket
import sys
from pathlib import Path
from typing import Any

import google_adk_harness as harness
import pytest
from engine_helpers import run
from google_adk_harness import event_rows, request_rows, rewritten, run_program
from pydantic import Field

from adk_actors import AgentDefinitionError, Content, Part
from adk_actors.agents import LlmAgent
from adk_actors.code_executors import (
    BaseCodeExecutor,
    CodeExecutionInput,
    CodeExecutionResult,
    File,
    SandboxedCodeExecutor,
    UnsafeLocalCodeExecutor,
    _sandboxed,
    network_isolation,
)
from adk_actors.engine import SessionView
from adk_actors.engine._agent_config import load_agent_config
from adk_actors.models import ScriptedModel
from adk_actors.testing import StubServer, gemini_response

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini


def sandboxed(code: str, **limits: Any) -> CodeExecutionResult:
    limits.setdefault("timeout_seconds", 60)
    return SandboxedCodeExecutor(**limits).execute_code(None, CodeExecutionInput(code=code))


# -- the sandbox: each limit on a real subprocess ------------------------------------------


def test_a_sandboxed_run_prints_and_reads_its_input_files_in_a_folder_of_its_own() -> None:
    executor = SandboxedCodeExecutor()
    code = "import os\nprint(open('prices.csv').read().strip())\nopen('note.txt', 'w').write('x')\nprint(os.getcwd())"
    result = executor.execute_code(None, CodeExecutionInput(code=code, input_files=[
        File(name="prices.csv", content=b"apple,3"), File(name="../../escape.csv", content=b"no")]))
    assert result.stderr == "" and result.exit_code == 0
    first, folder = result.stdout.splitlines()
    assert first == "apple,3"
    assert folder != os.getcwd() and not Path(folder).exists()  # its own folder, removed afterwards
    assert not (Path(folder).parents[1] / "escape.csv").exists()


def test_code_that_loops_forever_is_stopped_at_its_cpu_time_limit() -> None:
    result = sandboxed("while True:\n    pass", cpu_seconds=1)
    assert "CPU-time limit of 1 seconds" in result.stderr
    assert result.exit_code is not None and result.exit_code < 0


def test_code_that_waits_forever_is_stopped_at_its_wall_time_limit() -> None:
    result = sandboxed("import time\nprint('started', flush=True)\ntime.sleep(3600)", timeout_seconds=2)
    assert result.stdout == "started\n"
    assert "timed out after 2 seconds" in result.stderr


def test_code_that_allocates_2_gb_gets_a_memory_error_naming_the_limit() -> None:
    result = sandboxed("data = bytearray(2 * 1024 ** 3)\nprint('allocated')", memory_bytes=256 << 20)
    assert "allocated" not in result.stdout
    assert result.stderr.startswith("MemoryError") and str(256 << 20) in result.stderr
    assert result.exit_code == 1


def test_code_that_forks_or_starts_a_process_is_refused(tmp_path: Path) -> None:
    forked = sandboxed("import os\nos.fork()\nprint('after fork')")
    assert "after fork" not in forked.stdout  # printed twice had the fork happened
    assert "PermissionError: the sandbox does not allow starting processes" in forked.stderr
    marker = tmp_path / "made-by-a-child"
    started = sandboxed(f"import subprocess\nsubprocess.run(['touch', {str(marker)!r}])")
    assert "PermissionError" in started.stderr and not marker.exists()
    system = sandboxed(f"import os\nos.system('touch {marker}')")
    assert "PermissionError" in system.stderr and not marker.exists()


def _listener() -> socket.socket:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    return server


def _connections(server: socket.socket) -> int:
    count = 0
    while True:
        try:
            conn, _ = server.accept()
        except BlockingIOError:
            return count
        conn.close()
        count += 1


CONNECT = "import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=5)\ns.sendall(b'hi')\nprint('sent')"


def test_code_that_opens_a_socket_to_loopback_reaches_nothing() -> None:
    server = _listener()
    try:
        result = sandboxed(CONNECT.format(port=server.getsockname()[1]))
        assert "sent" not in result.stdout
        assert result.exit_code == 1 and "Error" in result.stderr
        if network_isolation() == "namespace":  # a network namespace of its own: no interface up
            assert "Network is unreachable" in result.stderr
        else:
            assert "the sandbox does not allow network access" in result.stderr
        assert _connections(server) == 0  # a connection made would be waiting in the backlog
    finally:
        server.close()


def test_without_a_network_namespace_the_audit_hook_refuses_sockets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_sandboxed, "network_isolation", lambda: "audit-hook")
    server = _listener()
    try:
        result = sandboxed(CONNECT.format(port=server.getsockname()[1]))
        assert "PermissionError: the sandbox does not allow network access" in result.stderr
        assert _connections(server) == 0
    finally:
        server.close()


def test_code_that_writes_or_deletes_outside_its_folder_is_refused(tmp_path: Path) -> None:
    outside, kept = tmp_path / "outside.txt", tmp_path / "kept.txt"
    kept.write_text("mine")
    wrote = sandboxed(f"open({str(outside)!r}, 'w').write('x')")
    assert "PermissionError: the sandbox does not allow writing outside its working folder" in wrote.stderr
    assert not outside.exists()
    deleted = sandboxed(f"import os\nos.remove({str(kept)!r})")
    assert "PermissionError" in deleted.stderr and kept.read_text() == "mine"
    climbed = sandboxed("open('../../escaped.txt', 'w').write('x')")
    assert "PermissionError" in climbed.stderr
    raised = sandboxed("import resource\nresource.setrlimit(resource.RLIMIT_CPU, (100, 100))")
    assert "PermissionError: the sandbox does not allow changing its resource limits" in raised.stderr
    signalled = sandboxed(f"import os, signal\nos.kill({os.getpid()}, signal.SIGKILL)")
    assert "PermissionError: the sandbox does not allow signalling other processes" in signalled.stderr


def test_a_file_past_the_size_limit_and_a_flood_of_output_are_cut() -> None:
    big = sandboxed("open('big.bin', 'wb').write(b'x' * (8 << 20))\nprint('wrote')", file_size_bytes=1 << 20)
    assert "wrote" not in big.stdout and f"size limit of {1 << 20} bytes" in big.stderr
    flood = sandboxed("print('y' * 500_000)", max_output_chars=1000)
    assert flood.stdout.startswith("y" * 1000) and flood.stdout.endswith("[output cut at 1000 characters]")
    assert flood.stderr == ""


def test_the_sandbox_refuses_what_it_cannot_do() -> None:
    with pytest.raises(ValueError, match="optimize_data_file"):
        SandboxedCodeExecutor(optimize_data_file=True)
    with pytest.raises(ValueError):
        SandboxedCodeExecutor(cpu_seconds=0)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")


def test_a_stateful_sandbox_keeps_variables_per_execution_id_until_a_limit_ends_them() -> None:
    executor = SandboxedCodeExecutor(stateful=True, cpu_seconds=1, timeout_seconds=60)

    def run_in(execution_id: str, code: str) -> CodeExecutionResult:
        return executor.execute_code(None, CodeExecutionInput(code=code, execution_id=execution_id))

    try:
        assert run_in("a", "import os\nx = 41\nprint(os.getpid())").stderr == ""
        pid = int(run_in("a", "print(os.getpid())").stdout)
        assert run_in("a", "print(x + 1)").stdout == "42\n"
        assert "NameError" in run_in("b", "print(x)").stderr  # another execution, other globals
        assert "PermissionError" in run_in("a", "os.fork()").stderr
        assert run_in("a", "y = bytearray(2 * 1024 ** 3)").stderr.startswith("MemoryError")
        assert run_in("a", "print(x)").stdout == "41\n"  # refusals and errors keep the variables
        looped = run_in("a", "while True:\n    pass")
        assert "CPU-time limit of 1 seconds" in looped.stderr and "variables are lost" in looped.stderr
        assert not _alive(pid)
        assert "NameError" in run_in("a", "print(x)").stderr  # a fresh process
    finally:
        executor.close()
    assert executor.execute_code(None, CodeExecutionInput(code="print(1)")).stdout == "1\n"  # no id: one-shot


OWNER = """
import sys
from adk_actors.code_executors import CodeExecutionInput, SandboxedCodeExecutor
executor = SandboxedCodeExecutor(stateful=True)
result = executor.execute_code(None, CodeExecutionInput(code="import os\\nprint(os.getpid(), os.getcwd())",
                                                       execution_id="e"))
print(result.stdout.strip(), flush=True)
sys.stdin.read()
"""


def test_a_stateful_sandbox_ends_with_the_process_that_owns_it() -> None:
    import signal
    import subprocess
    import time

    owner = subprocess.Popen([sys.executable, "-c", OWNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout is not None
        pid, folder = owner.stdout.readline().split()
        child = int(pid)
        assert _alive(child) and Path(folder).is_dir()
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(30)
        deadline = time.monotonic() + 30
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(child)
        assert not Path(folder).exists()  # the child removed its folder as it went
    finally:
        owner.kill()
        owner.wait(30)


# -- UnsafeLocalCodeExecutor: google-adk's, case by case ----------------------------------

UNSAFE_CASES = {
    "prints": "print(6 * 7)",
    "raises": "x = 1\nraise ValueError('bad input')",
    "exits with a status": "import sys\nprint('partial')\nsys.exit(3)",
    "dies without a word": "import os\nos._exit(4)",
    "warns but succeeds": "import sys\nprint('careful', file=sys.stderr)\nprint('done')",
    "main guard": "if __name__ == '__main__':\n    print('as main')",
    "no main guard": "print(globals().get('__name__'))",
    "times out": "import time\ntime.sleep(60)",
}


@pytest.mark.parametrize("name", list(UNSAFE_CASES))
def test_unsafe_local_executor_gives_google_adks_results(name: str) -> None:
    from google.adk.code_executors import UnsafeLocalCodeExecutor as Theirs
    from google.adk.code_executors.code_execution_utils import CodeExecutionInput as TheirInput

    code = UNSAFE_CASES[name]
    theirs = Theirs(timeout_seconds=1).execute_code(None, TheirInput(code=code))  # type: ignore[arg-type]
    ours = UnsafeLocalCodeExecutor(timeout_seconds=1).execute_code(None, CodeExecutionInput(code=code))
    assert (ours.stdout, ours.stderr, ours.exit_code) == (theirs.stdout, theirs.stderr, theirs.exit_code)


def test_unsafe_local_executor_has_google_adks_defaults_and_refusals() -> None:
    from google.adk.code_executors import UnsafeLocalCodeExecutor as Theirs

    assert UnsafeLocalCodeExecutor().model_dump() == Theirs().model_dump()
    for flag in ("stateful", "optimize_data_file"):
        with pytest.raises(ValueError) as ours:
            UnsafeLocalCodeExecutor(**{flag: True})
        with pytest.raises(ValueError) as theirs:
            Theirs(**{flag: True})
        assert str(ours.value) == str(theirs.value)


# -- LlmAgent(code_executor=...): the loop ------------------------------------------------


def _answer_from_result(request: Any) -> str:
    """The model's second answer, read from what it was sent: the result's number."""
    shown = request.contents[-1].parts[0].text
    found = re.search(r"Code execution result:\n(\d+)", shown)
    return f"The answer is {found.group(1)}." if found else f"I could not compute it: {shown}"


def test_a_code_block_in_the_answer_runs_and_the_model_answers_with_its_result() -> None:
    model = ScriptedModel(["Let me compute.\n```python\nprint(sum(range(10)))\n```\nThat is it.", _answer_from_result])
    agent = LlmAgent(name="calc", model=model, code_executor=SandboxedCodeExecutor())
    events = run(agent, "What is 0+1+...+9?")
    code_event, result_event, final = events[1:]
    assert [p.to_dict() for p in code_event.content.parts] == [  # the answer cut after its code
        {"text": "Let me compute.\n"}, {"executableCode": {"code": "print(sum(range(10)))", "language": "PYTHON"}}]
    assert result_event.content.parts[0].code_execution_result.to_dict() == {
        "outcome": "OUTCOME_OK", "output": "Code execution result:\n45\n\n"}
    assert result_event.actions.state_delta == {"_code_execution_context": {}}
    assert not result_event.is_final_response() and result_event.has_trailing_code_execution_result()
    assert final.content.text == "The answer is 45." and final.is_final_response()
    second = [c.to_dict() for c in model.requests[1].contents]
    assert second[1:] == [
        {"role": "model", "parts": [{"text": "Let me compute.\n"}, {"text": "```tool_code\nprint(sum(range(10)))\n```"}]},
        {"role": "user", "parts": [{"text": "```tool_output\nCode execution result:\n45\n\n\n```"}]}]


def test_code_that_breaks_a_limit_is_a_failed_result_the_model_reads_and_the_run_goes_on() -> None:
    model = ScriptedModel(["```python\nx = bytearray(2 * 1024 ** 3)\n```", _answer_from_result])
    agent = LlmAgent(name="calc", model=model, code_executor=SandboxedCodeExecutor(memory_bytes=256 << 20))
    events = run(agent, "Allocate 2 GB.")
    result = events[2].content.parts[0].code_execution_result
    assert result.outcome == "OUTCOME_FAILED" and result.output.startswith("MemoryError")
    assert events[-1].content.text.startswith("I could not compute it: ```tool_output\nMemoryError")


def test_executable_code_parts_and_the_executors_own_delimiters_are_used() -> None:
    executor = SandboxedCodeExecutor(code_block_delimiters=[("<run>", "</run>")],
                                     execution_result_delimiters=("<out>", "</out>"))
    native = Content(role="model", parts=(Part(text="Native:"), Part.from_executable_code(code="print(5)")))
    model = ScriptedModel([native, "Now: <run>print(6)</run> and ```python\nprint(7)\n```", "Done."])
    events = run(LlmAgent(name="calc", model=model, code_executor=executor), "Go.")
    ran = [e.content.parts[-1].executable_code.code for e in events
           if e.content and e.content.parts[-1].executable_code is not None]
    assert ran == ["print(5)", "print(6)"]  # the earliest block between the executor's delimiters
    last = [c.to_dict() for c in model.requests[2].contents]
    assert last[1:] == [
        {"role": "model", "parts": [{"text": "Native:"}, {"text": "<run>print(5)</run>"}]},
        {"role": "user", "parts": [{"text": "<out>Code execution result:\n5\n\n</out>"}]},
        {"role": "model", "parts": [{"text": "Now: "}, {"text": "<run>print(6)</run>"}]},
        {"role": "user", "parts": [{"text": "<out>Code execution result:\n6\n\n</out>"}]}]


def test_after_error_retry_attempts_failed_runs_the_answer_stands() -> None:
    failing = "Trying.\n```python\nraise RuntimeError('nope')\n```"
    model = ScriptedModel(fallback=failing)
    agent = LlmAgent(name="calc", model=model, code_executor=UnsafeLocalCodeExecutor(error_retry_attempts=2))
    events = run(agent, "Go.")
    outcomes = [e.content.parts[-1].code_execution_result.outcome for e in events
                if e.has_trailing_code_execution_result()]
    assert outcomes == ["OUTCOME_FAILED", "OUTCOME_FAILED"]
    assert events[-1].content.text == failing and events[-1].is_final_response()  # the third answer, as written
    assert len(model.requests) == 3


class _Remembering(BaseCodeExecutor):
    """A stateful executor for the loop's test: variables kept per execution id."""

    stateful: bool = True
    scopes: dict[str, dict[str, Any]] = Field(default_factory=dict)
    ids: list[str | None] = Field(default_factory=list)

    def execute_code(self, invocation_context: Any, code_execution_input: CodeExecutionInput) -> CodeExecutionResult:
        self.ids.append(code_execution_input.execution_id)
        scope = self.scopes.setdefault(code_execution_input.execution_id or "", {})
        printed: list[str] = []
        scope["print"] = lambda *a: printed.append(" ".join(map(str, a)))
        exec(code_execution_input.code, scope)
        return CodeExecutionResult(stdout="\n".join(printed))


def test_a_stateful_executor_gets_the_sessions_id_as_execution_id_across_turns() -> None:
    executor = _Remembering()
    model = ScriptedModel(["```python\nx = 41\n```", "Stored.", "```python\nprint(x + 1)\n```", _answer_from_result])
    agent = LlmAgent(name="calc", model=model, code_executor=executor)
    session = SessionView(session_id="s-7")
    run(agent, "Store 41.", session)
    events = run(agent, "Add one.", session)
    assert executor.ids == ["s-7", "s-7"]
    assert session.state["_code_execution_context"] == {"execution_session_id": "s-7"}
    assert events[-1].content.text == "The answer is 42."


def test_an_agent_with_a_stateful_sandbox_keeps_its_variables_across_turns() -> None:
    executor = SandboxedCodeExecutor(stateful=True)
    model = ScriptedModel(["```python\nx = 41\n```", "Stored.", "```python\nprint(x + 1)\n```", _answer_from_result])
    agent = LlmAgent(name="calc", model=model, code_executor=executor)
    session = SessionView(session_id="s-8")
    try:
        run(agent, "Store 41.", session)
        events = run(agent, "Add one.", session)
    finally:
        executor.close()
    assert events[-1].content.text == "The answer is 42."
    assert session.state["_code_execution_context"] == {"execution_session_id": "s-8"}


def test_an_executor_that_raises_is_a_failed_result_and_a_non_executor_is_refused() -> None:
    class Broken(BaseCodeExecutor):
        def execute_code(self, invocation_context: Any, code_execution_input: CodeExecutionInput) -> CodeExecutionResult:
            raise OSError("disk gone")

    model = ScriptedModel(["```python\nprint(1)\n```", "Sorry."])
    events = run(LlmAgent(name="calc", model=model, code_executor=Broken()), "Go.")
    assert events[2].content.parts[0].code_execution_result.output == "The code executor failed: OSError: disk gone"
    assert events[-1].content.text == "Sorry."
    with pytest.raises(AgentDefinitionError, match="code_executor"):
        LlmAgent(name="calc", model=model, code_executor="python")


def test_yaml_agents_refuse_code_executor_as_google_adk_does(tmp_path: Path) -> None:
    (tmp_path / "root_agent.yaml").write_text(
        "name: calc\nmodel: gemini-2.5-flash\ninstruction: hi\n"
        "code_executor: adk_actors.code_executors.UnsafeLocalCodeExecutor\n")
    with pytest.raises(Exception, match="code_executor"):
        load_agent_config(tmp_path / "root_agent.yaml")


# -- side by side with google-adk 2.13 -----------------------------------------------------

PROGRAM = '''
from google.adk.agents import LlmAgent
from google.adk.code_executors import UnsafeLocalCodeExecutor
from google.adk.runners import InMemoryRunner
from google.genai import types

calc = LlmAgent(name="calc", model="gemini-2.5-flash", instruction="Compute with Python.",
                code_executor=UnsafeLocalCodeExecutor(error_retry_attempts=1))

async def main(turns):
    runner = InMemoryRunner(agent=calc, app_name="calc")
    session = await runner.session_service.create_session(app_name="calc", user_id="ann")
    seen, finals = [], []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append("".join(p.text or "" for p in event.content.parts))
    stored = await runner.session_service.get_session(app_name="calc", user_id="ann", session_id=session.id)
    await runner.close()
    return seen, finals, dict(stored.state)
'''


def _parts(events: list[Any]) -> list[list[Any]]:
    """Each event's parts as the model and a UI read them, and its state delta."""
    rows = []
    for event in events:
        parts = []
        for part in (event.content.parts or []) if event.content else []:
            if part.executable_code is not None:
                parts.append(("code", part.executable_code.code, str(getattr(part.executable_code.language, "value",
                                                                               part.executable_code.language))))
            elif part.code_execution_result is not None:
                result = part.code_execution_result
                parts.append(("result", str(getattr(result.outcome, "value", result.outcome)), result.output))
            elif part.text is not None:
                parts.append(("text", part.text))
        rows.append([event.author, parts, harness._plain(dict(event.actions.state_delta))])
    return rows


def test_the_loop_matches_google_adk_side_by_side(gemini: StubServer) -> None:
    answers = [
        gemini_response("I will compute it.\n```python\nprint(6 * 7)\n```\nDone."),
        gemini_response("Again:\n```tool_code\nprint(1 / 0)\n```"),
        gemini_response("That failed:\n```python\nprint(2)\n```"),  # retries used up: stands as the answer
        gemini_response("6 times 7 is 42."),
    ]
    turns = ["What is 6 times 7?", "And 1/0?"]
    answers = [answers[0], answers[3], answers[1], answers[2]]
    seen: dict[str, Any] = {}
    for side, source in (("theirs", PROGRAM), ("ours", rewritten(PROGRAM))):
        _, (events, finals, state) = run_program(source, answers, gemini, turns)
        seen[side] = {"events": event_rows(events), "parts": _parts(events), "finals": finals,
                      "state": harness._plain(state), "requests": request_rows(gemini)}
    assert len(seen["theirs"]["requests"]) == 4
    assert seen["ours"]["events"] == seen["theirs"]["events"]
    assert seen["ours"]["parts"] == seen["theirs"]["parts"]
    assert seen["ours"]["finals"] == seen["theirs"]["finals"]
    assert seen["ours"]["state"] == seen["theirs"]["state"]
    assert seen["ours"]["requests"][1]["contents"] == seen["theirs"]["requests"][1]["contents"]
    assert seen["ours"]["requests"] == seen["theirs"]["requests"]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


# -- in a host: a run worker (an actor process) survives what the code does ---------------


def test_in_a_host_code_past_its_limits_ends_in_error_results_and_the_worker_goes_on(
        actor_system: Any, tmp_path: Path) -> None:
    import code_executor_agents

    from adk_actors.runtime import Host, HostConfig

    config = HostConfig(apps=code_executor_agents.APPS, data_dir=str(tmp_path / "data"))
    with Host(config, system=actor_system) as host:
        runner = host.runner("coder")
        runner.create_session("ann", "s1")
        finals = []
        for word in ("allocate", "loop", "add"):
            events = list(runner.run("ann", "s1", word))
            finals.append(events[-1].content.text)
        assert finals[0] == "result: MemoryError: the code ran out of memory (its limit is 268435456 bytes " \
                            "of address space)"
        assert finals[1] == "result: Code execution used up its CPU-time limit of 1 seconds; it was stopped."
        assert finals[2] == "result: Code execution result: | 42"
        stored = runner.get_session("ann", "s1")  # the code and its results are on record, as events
        codes = [p.executable_code.code for e in stored.events if e.content for p in e.content.parts
                 if p.executable_code is not None]
        assert codes == [code_executor_agents.CODE[word] for word in ("allocate", "loop", "add")]
        assert stored.state["_code_execution_context"] == {}
