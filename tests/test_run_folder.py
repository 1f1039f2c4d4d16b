"""``adk-actors run AGENT_DIR`` (google-adk's ``adk run``: in this process, no host) and
``adk-actors create NAME`` (``adk create``), driven as a user drives them: real
``adk-actors`` processes, standard input piped (or a pseudo-terminal), their output
read; google-adk's own ``adk run`` on the same folder, imports rewritten, for the
transcript's shape; a real HTTP server speaking Gemini's wire format for the model."""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from adk_actors.testing import StubServer, gemini_response
from supervision.lowlevel import free_port
from supervision.testing import kill_marked_processes, process_marker, wait_until

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "adk_actors.cli"]
ADK = ROOT / ".venv" / "bin" / "adk"
KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_BASE_URL", "GOOGLE_GEMINI_BASE_URL", "GREETING",
        "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")

MEMO = '''import os

from adk_actors.agents import LlmAgent
from adk_actors.models import ScriptedModel, call


def note(text: str) -> str:
    """Keep a note."""
    return "noted " + text


def _model(request):
    said = [p.text for c in request.contents if c.role == "user" for p in c.parts if p.text]
    last = request.contents[-1]
    if last.function_responses:
        return "tool said " + str(last.function_responses[0].response["result"])
    if said and said[-1].startswith("note "):
        return call("note", text=said[-1][5:])
    return os.environ.get("GREETING", "hi") + "; heard so far: " + " | ".join(said)


root_agent = LlmAgent(name="memo", model=ScriptedModel(fallback=_model), tools=[note])
'''

WEATHER = '''from google.adk.agents import LlmAgent


def get_weather(city: str) -> dict:
    """The weather in a city."""
    return {"city": city, "sky": "sunny"}


root_agent = LlmAgent(name="weather", model="gemini-2.5-flash", instruction="Answer about the weather.",
                      tools=[get_weather])
'''


def _env(**extra: str) -> dict[str, str]:
    """This environment without any model key or endpoint (a test names the ones it wants)."""
    return {**{k: v for k, v in os.environ.items() if k not in KEYS}, "PYTHONPATH": str(ROOT),
            "ADK_DISABLE_TELEMETRY": "1", **extra}


def _cli(*args: str, cwd: Path, stdin: str = "", env: dict[str, str] | None = None,
         command: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """``adk-actors ARGS`` (or ``command``) in ``cwd``, ``stdin`` piped to it; ends within 120 s."""
    return subprocess.run([*(command or CLI), *args], cwd=cwd, input=stdin, capture_output=True, text=True,
                          env=env or _env(), timeout=120)


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    """An agents folder holding ``memo`` (a tool, the scripted model, its .env)."""
    folder = tmp_path / "agents"
    (folder / "memo").mkdir(parents=True)
    (folder / "memo" / "__init__.py").write_text("from . import agent\n")
    (folder / "memo" / "agent.py").write_text(MEMO)
    (folder / "memo" / ".env").write_text("GREETING=hello-from-env\n")
    return folder


def test_run_agent_dir_is_a_repl_over_standard_input(agents: Path) -> None:
    done = _cli("run", "memo", cwd=agents, stdin="first\n\nnote milk\nexit\nnever sent\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Running agent memo, type exit to exit.",
        "[user]: [memo]: hello-from-env; heard so far: first",  # the folder's .env was read
        "[user]: [user]: [memo]: tool said noted milk",  # a blank line asks again
        "[user]: ",
    ]
    assert done.stderr == ""
    # the sessions were kept beside the agents, in the kit's data folder, not in the agent's
    assert (agents / ".adk-actors" / "run-sessions.db").is_file()


def test_a_variable_set_before_wins_over_the_env_file(agents: Path) -> None:
    done = _cli("run", "memo", cwd=agents, stdin="x\nexit\n", env=_env(GREETING="from-the-shell"))
    assert "[memo]: from-the-shell; heard so far: x" in done.stdout


def test_replay_runs_each_query_of_the_file_on_a_new_session(agents: Path, tmp_path: Path) -> None:
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps({"state": {"k": 1}, "queries": ["one", "note two"]}))
    done = _cli("run", "memo", "--replay", str(replay), "--save_session", "--session_id", "rep", cwd=agents)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[user]: one",
        "[memo]: hello-from-env; heard so far: one",
        "[user]: note two",
        "[memo]: tool said noted two",
        f"Session saved to {agents / 'memo' / 'rep.session.json'}",
    ]
    saved = json.loads((agents / "memo" / "rep.session.json").read_text())
    assert saved["state"]["k"] == 1 and "_time" in saved["state"]  # the file's state, and google-adk's _time
    state_file = tmp_path / "state.json"
    state_file.write_text('{"k": 3}')
    for flag, value, expected in (("--state", '{"k": 2}', 2), ("--state_file", str(state_file), 3)):
        done = _cli("run", "memo", flag, value, "--save_session", "--session_id", "st", cwd=agents, stdin="exit\n")
        assert done.returncode == 0, done.stderr
        assert json.loads((agents / "memo" / "st.session.json").read_text())["state"] == {"k": expected}


def test_a_session_service_uri_names_where_sessions_are_kept(agents: Path, tmp_path: Path) -> None:
    store = tmp_path / "elsewhere.db"
    for query, heard in (("one", "one"), ("two", "one | two")):
        done = _cli("run", "memo", query, "--session_id", "u1", "--session_service_uri", f"sqlite:///{store}",
                    cwd=agents)
        assert done.stdout == f"[memo]: hello-from-env; heard so far: {heard}\n", done.stderr
    assert store.is_file() and not (agents / ".adk-actors").exists()
    done = _cli("run", "memo", "three", "--session_id", "u1", "--session_service_uri", "memory://", cwd=agents)
    assert done.stdout == "[memo]: hello-from-env; heard so far: three\n"  # a new session, in memory


def test_save_session_then_resume_continues_the_conversation(agents: Path) -> None:
    first = _cli("run", "memo", "--save_session", cwd=agents, stdin="first\nnote milk\nexit\nmine\n")
    assert first.returncode == 0, first.stderr
    path = agents / "memo" / "mine.session.json"
    assert first.stdout.splitlines()[-1] == f"[user]: Session ID to save: Session saved to {path}"
    saved = json.loads(path.read_text())
    assert (saved["appName"], saved["userId"]) == ("memo", "user")
    assert [e["author"] for e in saved["events"]] == ["user", "memo", "user", "memo", "memo", "memo"]

    again = _cli("run", "memo", "--resume", str(path), cwd=agents, stdin="again\nexit\n")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == [
        "[user]: first",  # the saved conversation, shown again
        "[memo]: hello-from-env; heard so far: first",
        "[user]: note milk",
        "[memo]: tool said noted milk",
        # ... and continued: the model is sent the whole history
        "[user]: [memo]: hello-from-env; heard so far: first | note milk | again",
        "[user]: ",
    ]


def test_a_query_runs_one_turn_and_session_id_continues_it(agents: Path) -> None:
    one = _cli("run", "memo", "hello", "--session_id", "q1", cwd=agents)
    assert (one.returncode, one.stdout, one.stderr) == (0, "[memo]: hello-from-env; heard so far: hello\n",
                                                        "Session ID: q1\n")
    two = _cli("run", "memo", "again", "--session_id", "q1", cwd=agents)
    assert two.stdout == "[memo]: hello-from-env; heard so far: hello | again\n"  # kept on disk between runs
    lines = _cli("run", "memo", "json please", "--jsonl", "--in_memory", cwd=agents)
    events = [json.loads(line) for line in lines.stdout.splitlines()]
    assert [e["author"] for e in events] == ["memo"] and events[0]["session_id"] and lines.stderr == ""
    assert events[0]["content"]["parts"][0]["text"] == "hello-from-env; heard so far: json please"


def test_bad_input_is_a_clear_error_and_a_failing_exit_code(agents: Path, tmp_path: Path) -> None:
    (agents / "empty").mkdir()
    done = _cli("run", "empty", cwd=agents)
    assert done.returncode == 2
    assert done.stderr == ("error: empty is not an agent folder: it holds no agent.py (defining root_agent) "
                           "and no root_agent.yaml (for an app of a running host, add --port or --url)\n")
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    done = _cli("run", "memo", "--replay", str(bad), cwd=agents)
    assert done.returncode == 2 and done.stderr.startswith(f"error: --replay {bad} is not JSON: ")
    bad.write_text('{"queries": "one"}')
    done = _cli("run", "memo", "--replay", str(bad), cwd=agents)
    assert done.returncode == 2 and "expected {\"state\"" in done.stderr
    done = _cli("run", "memo", "--resume", str(tmp_path / "nowhere.json"), cwd=agents)
    assert done.returncode == 2 and "No such file" in done.stderr
    done = _cli("run", "memo", "--session_service_uri", "redis://x", cwd=agents)
    assert done.returncode == 2 and "memory://, sqlite://PATH or postgresql://" in done.stderr
    (agents / "broken").mkdir()
    (agents / "broken" / "agent.py").write_text("root_agent = (\n")
    done = _cli("run", "broken", cwd=agents)
    assert done.returncode == 1 and "SyntaxError" in done.stderr and "agent.py:1" in done.stderr
    # not a folder and no message: the host form, which needs one
    done = _cli("run", "no_such_app", cwd=agents)
    assert done.returncode == 2 and "give a MESSAGE" in done.stderr
    for output in (done.stdout, done.stderr):
        assert "Traceback" not in output


def test_a_failing_turn_is_told_and_the_repl_goes_on(agents: Path) -> None:
    (agents / "keyless").mkdir()
    (agents / "keyless" / "root_agent.yaml").write_text("name: keyless\nmodel: gemini-2.5-flash\n")
    done = _cli("run", "keyless", cwd=agents, stdin="hi\nagain\nexit\n")
    assert done.returncode == 1
    assert done.stdout.splitlines() == ["Running agent keyless, type exit to exit.", "[user]: [user]: [user]: "]
    assert done.stderr.count("needs GEMINI_API_KEY (or GOOGLE_API_KEY)") == 2 and "Traceback" not in done.stderr


def test_create_makes_a_folder_that_runs_offline_then_with_a_key(tmp_path: Path) -> None:
    done = _cli("create", "helper", "--model", "gemini-2.5-flash", cwd=tmp_path, stdin="\n")  # no key for now
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "helper"
    assert sorted(p.name for p in folder.iterdir()) == [".env", ".gitignore", "__init__.py", "agent.py"]
    assert "adk-actors run helper" in done.stdout and "adk-actors web ." in done.stdout
    assert "GEMINI_API_KEY or GOOGLE_API_KEY" in done.stdout
    assert ".env" in (folder / ".gitignore").read_text().splitlines()

    offline = _cli("run", "helper", cwd=tmp_path, stdin="what is 2+2?\nexit\n")
    assert offline.returncode == 0, offline.stderr
    assert offline.stdout.splitlines()[1] == (
        "[user]: [root_agent]: (offline: GEMINI_API_KEY or GOOGLE_API_KEY is not set, so the scripted model "
        "answers; set it in helper/.env for gemini-2.5-flash) You said: what is 2+2?")

    # the key in its .env: the named model answers (a real HTTP server speaking Gemini's API)
    with StubServer() as gemini:
        gemini.add(gemini_response("Four."))
        (folder / ".env").write_text(f"GOOGLE_API_KEY=test-key-not-a-secret\nGEMINI_BASE_URL={gemini.url}\n")
        online = _cli("run", "helper", cwd=tmp_path, stdin="what is 2+2?\nexit\n")
        assert online.stdout.splitlines()[1] == "[user]: [root_agent]: Four.", online.stderr
        assert gemini.requests[0].path.startswith("/v1beta/models/gemini-2.5-flash:")


def test_create_asks_what_is_not_given_and_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    done = _cli("create", "asked", cwd=tmp_path, stdin="9\n1\nmy-key\n")  # a wrong choice is asked again
    assert done.returncode == 0, done.stderr
    assert "MODEL = 'gemini-3.5-flash'" in (tmp_path / "asked" / "agent.py").read_text()
    assert (tmp_path / "asked" / ".env").read_text() == "GOOGLE_GENAI_USE_ENTERPRISE=0\nGOOGLE_API_KEY=my-key\n"
    assert (tmp_path / "asked" / ".env").stat().st_mode & 0o077 == 0
    done = _cli("create", "asked", "--model", "gemini-2.5-flash", cwd=tmp_path, stdin="n\n")  # not empty: no
    assert done.returncode == 2 and "nothing written" in done.stderr
    assert "gemini-3.5-flash" in (tmp_path / "asked" / "agent.py").read_text()
    done = _cli("create", "not-a-module", "--model", "gemini-2.5-flash", cwd=tmp_path)
    assert done.returncode == 2 and "Python identifier" in done.stderr and not (tmp_path / "not-a-module").exists()
    done = _cli("create", "quiet", cwd=tmp_path)  # standard input ended: the flag to give
    assert done.returncode == 2 and "give --model" in done.stderr and not (tmp_path / "quiet").exists()
    config = _cli("create", "yaml_one", "--model", "claude-sonnet-4-5", "--type", "config", cwd=tmp_path)
    assert config.returncode == 0, config.stderr
    assert (tmp_path / "yaml_one" / "root_agent.yaml").read_text().splitlines()[-1] == "model: claude-sonnet-4-5"
    assert "ANTHROPIC_API_KEY" in config.stdout and "# ANTHROPIC_API_KEY=" in (tmp_path / "yaml_one" / ".env").read_text()


def test_a_created_agent_is_served_by_web(tmp_path: Path) -> None:
    assert _cli("create", "helper", "--model", "gemini-2.5-flash", cwd=tmp_path, stdin="\n").returncode == 0
    port, admin = free_port(), free_port()
    out, err = tmp_path / "web.out", tmp_path / "web.err"
    with process_marker(tmp_path) as (marker, fd), open(out, "w") as stdout, open(err, "w") as stderr:
        process = subprocess.Popen([*CLI, "web", ".", "--port", str(port), "--admin_port", str(admin)],
                                   cwd=tmp_path, stdout=stdout, stderr=stderr, pass_fds=(fd,), env=_env())
    try:
        wait_until(lambda: "watching" in out.read_text() or process.poll() is not None, timeout=90)
        assert process.poll() is None, err.read_text()
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            assert http.get("/list-apps").json() == ["helper"]
            http.post("/apps/helper/users/user/sessions/s1", json={}).raise_for_status()
            events = http.post("/run", json={"appName": "helper", "userId": "user", "sessionId": "s1",
                                             "newMessage": {"role": "user", "parts": [{"text": "hi"}]}})
            events.raise_for_status()
            assert events.json()[-1]["content"]["parts"][0]["text"].endswith("You said: hi")
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
        kill_marked_processes(marker, grace=15)


def test_the_repl_through_a_pseudo_terminal(agents: Path) -> None:
    """As typed at a terminal: the prompt is shown before each line is read."""
    main, child = pty.openpty()
    process = subprocess.Popen([*CLI, "run", "memo"], cwd=agents, stdin=child, stdout=child, stderr=child,
                               env=_env(), close_fds=True)
    os.close(child)
    seen = b""

    def read_until(text: bytes) -> None:
        nonlocal seen
        deadline = time.monotonic() + 60
        while text not in seen:
            assert time.monotonic() < deadline, seen
            ready, _, _ = select.select([main], [], [], 1.0)
            if ready:
                try:
                    seen += os.read(main, 4096)
                except OSError:  # the child closed the terminal
                    break
        assert text in seen, seen

    try:
        read_until(b"[user]: ")
        os.write(main, b"typed\n")
        read_until(b"heard so far: typed")
        read_until(b"[user]: ")
        os.write(main, b"exit\n")
        assert process.wait(60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        os.close(main)


@pytest.mark.skipif(not ADK.exists(), reason="google-adk's adk script is not installed")
def test_the_transcript_and_saved_sessions_are_google_adks(tmp_path: Path) -> None:
    """The same folder (imports rewritten) on google-adk's ``adk run`` and ours, the same
    model answers: the same transcript; each one's saved session resumes on the other."""
    for side, source in (("google", WEATHER), ("ours", WEATHER.replace("google.adk", "adk_actors"))):
        (tmp_path / side / "weather").mkdir(parents=True)
        (tmp_path / side / "weather" / "__init__.py").write_text("from . import agent\n")
        (tmp_path / side / "weather" / "agent.py").write_text(source)
    commands = {"google": [str(ADK)], "ours": CLI}

    def run(side: str, *args: str, stdin: str, answers: list[Any], gemini: StubServer) -> list[str]:
        gemini.add(*answers)
        done = _cli("run", *args, cwd=tmp_path / side, stdin=stdin, command=commands[side],
                    env=_env(GOOGLE_API_KEY="test-key-not-a-secret", GOOGLE_GEMINI_BASE_URL=gemini.url))
        assert done.returncode == 0, done.stderr
        assert not gemini.responses  # every answer was asked for
        # google-adk's own log lines aside (it says where it logs)
        return [line for line in done.stdout.splitlines() if not line.startswith(("Log setup", "To access latest"))]

    transcripts, requests = {}, {}
    with StubServer() as gemini:
        for side in ("google", "ours"):
            transcripts[side] = run(side, "weather", "--save_session", "--session_id", "saved",
                                    stdin="weather in Paris?\nthanks\nexit\n", gemini=gemini,
                                    answers=[gemini_response(function_calls=[("get_weather", {"city": "Paris"})]),
                                             gemini_response("It is sunny in Paris."), gemini_response("Bye.")])
        for side in ("google", "ours"):
            assert transcripts[side] == [
                "Running agent weather, type exit to exit.",
                "[user]: [weather]: It is sunny in Paris.",
                "[user]: [weather]: Bye.",
                f"[user]: Session saved to {tmp_path / side / 'weather' / 'saved.session.json'}",
            ]

        other = {"google": "ours", "ours": "google"}
        for side in ("google", "ours"):  # each resumes the other's file
            gemini.requests.clear()
            transcripts[side] = run(side, "weather", "--resume",
                                    str(tmp_path / other[side] / "weather" / "saved.session.json"),
                                    stdin="more\nexit\n", gemini=gemini, answers=[gemini_response("Again.")])
            requests[side] = [(c["role"], [sorted(p) for p in c["parts"]]) for c in gemini.requests[-1].body["contents"]]
    assert transcripts["ours"] == transcripts["google"] == [
        "[user]: weather in Paris?", "[weather]: It is sunny in Paris.", "[user]: thanks", "[weather]: Bye.",
        "[user]: [weather]: Again.", "[user]: "]
    assert requests["ours"] == requests["google"]  # the model saw the same history, tool call and result included
    assert len(requests["ours"]) == 7


SLOW = '''import time

from adk_actors.agents import LlmAgent
from adk_actors.models import ScriptedModel, call
from adk_actors.tools import LongRunningFunctionTool


def wait(seconds: float) -> str:
    """Wait."""
    time.sleep(seconds)
    return "waited"


def ask_manager(amount: int) -> None:
    """Ask a manager to approve an amount; the answer comes later."""
    return None


def _model(request):
    said = [p.text for c in request.contents if c.role == "user" for p in c.parts if p.text]
    last = request.contents[-1]
    if last.function_responses:
        return "result: " + str(last.function_responses[0].response)
    if said[-1] == "slow":
        return call("wait", seconds=60)
    if said[-1] == "pay":
        return call("ask_manager", amount=100)
    return "said " + said[-1]


root_agent = LlmAgent(name="slow", model=ScriptedModel(fallback=_model),
                      tools=[wait, LongRunningFunctionTool(ask_manager)])
'''


def test_a_paused_turn_asks_for_the_answer_and_a_slow_one_times_out(agents: Path) -> None:
    (agents / "slow").mkdir()
    (agents / "slow" / "agent.py").write_text(SLOW)
    done = _cli("run", "slow", "--timeout", "1s", cwd=agents, stdin='pay\n{"approved": true}\nslow\nhi\nexit\n')
    assert done.stdout.splitlines() == [
        "Running agent slow, type exit to exit.",
        "[user]: [slow]: (Paused for input...)",
        '[HITL] Waiting for input for ask_manager({"amount": 100})',
        "[user]: [slow]: result: {'approved': True}",  # the typed JSON went back as the call's answer
        "[user]: [user]: [slow]: said hi",  # the slow turn ended at its deadline; the REPL went on
        "[user]: ",
    ]
    assert done.stderr == "error: the turn timed out after 1 s\n" and done.returncode == 1
    paused = _cli("run", "slow", "pay", "--session_id", "p1", cwd=agents)
    assert paused.returncode == 2 and "--session_id p1" in paused.stderr  # google-adk's exit code for a pause
    answered = _cli("run", "slow", '{"approved": false}', "--session_id", "p1", cwd=agents)
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout == "[slow]: result: {'approved': False}\n"  # the query answered the paused call
    assert "Auto-resuming interrupt" in answered.stderr


def test_folder_flags_are_refused_with_an_app_of_a_host(agents: Path) -> None:
    done = _cli("run", "weather_bot", "hi", "--replay", "x.json", cwd=agents)
    assert done.returncode == 2
    assert done.stderr == ("error: run weather_bot: --replay goes with an AGENT_DIR run in this process, not with "
                           "an app of a host\n")


def test_a_call_that_needs_approval_is_asked_at_the_terminal(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples" / "hitl", tmp_path / "hitl", ignore=shutil.ignore_patterns("__pycache__"))
    done = _cli("run", "hitl", cwd=tmp_path, stdin="pay 100 to bob\nyes\npay 5 to eve\nno\nexit\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Running agent payments, type exit to exit.",
        '[user]: [HITL confirm] a payment needs your approval: wire_money({"amount": 100, "to": "bob"})',
        '  Type "yes" to confirm, anything else to reject.',
        "[user]: [payments]: Sent 100 to bob (ref TX-100-BOB).",
        '[user]: [HITL confirm] a payment needs your approval: wire_money({"amount": 5, "to": "eve"})',
        '  Type "yes" to confirm, anything else to reject.',
        "[user]: [payments]: The payment did not go through: The call to wire_money was not approved, so it did "
        "not run: rejected at the terminal",
        "[user]: ",
    ]
