"""Human input in workflow graphs (issue 55) from the command line: a question a node
asks (``RequestInput``) is shown by ``adk-actors run`` with its message, payload,
schema and the command that answers it; ``adk-actors inputs list|answer`` lists the
questions a session waits for and answers one (the graph goes on, its events printed);
the in-process REPL (``adk-actors run AGENT_DIR``) asks it at its prompt.

Real processes throughout: one host started with ``adk-actors serve`` for the module
(the apps below, imported by the host from ``tests/``; each test on sessions of its own,
and the one over HTTP as a user of its own, since ``inputs list`` lists all of a user's
questions), the CLI as a subprocess, over the host's actor system and over its HTTP API
(``--url``). Each node records its run in a file outside
the host, so that "ran once" is counted where the host cannot fake it.

Durable: with ``App(resume_interrupted=2)``, the run worker is killed (kill -9) while
a branch still runs after the question was stored; the host resumes the run on its own,
the CLI's one ``run`` ends waiting for the question (asked once), and the answer given
with ``inputs answer`` finishes the graph: every node completed exactly once.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import ROOT, serving
from pid_files import write_pid
from pydantic import BaseModel

from adk_actors._repl import FolderRun, open_sessions
from adk_actors.engine import App
from adk_actors.events import RequestInput
from adk_actors.workflow import START, FunctionNode, JoinNode, Workflow
from supervision.testing import wait_until

APPS = ('forms = "test_workflow_input_cli:forms_app"\n'
        'packing = "test_workflow_input_cli:packing_app"\n')


def _mark(ctx: Any, name: str) -> None:
    with open(Path(ctx.state["work_dir"], "done.txt"), "a") as done:
        done.write(name + "\n")


class Verdict(BaseModel):
    ok: bool
    note: str = ""


def prepare(node_input: str, ctx: Any) -> str:
    _mark(ctx, "prepare")
    return node_input.upper()


def ask_verdict(node_input: str, ctx: Any) -> RequestInput:
    _mark(ctx, "ask")
    return RequestInput(interrupt_id="verdict", message=f"Ship {node_input}?", payload={"item": node_input},
                        response_schema=Verdict)


def ship(node_input: dict[str, Any], ctx: Any) -> str:
    _mark(ctx, "ship")
    ctx.state["verdict"] = node_input
    return f"shipped: {node_input['ok']} ({node_input['note']})"


forms_app = Workflow(name="forms", edges=[(START, prepare, ask_verdict, ship)])


def slow(node_input: str, ctx: Any) -> str:
    """Marks its start and writes its pid, then waits (30 s at most) for ``release``."""
    work = Path(ctx.state["work_dir"])
    _mark(ctx, "slow-started")
    write_pid(work / "slow.pid")
    deadline = time.monotonic() + 30
    while not (work / "release").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    _mark(ctx, "slow")
    return f"slow {node_input}"


def pack(node_input: dict[str, Any], ctx: Any) -> str:
    _mark(ctx, "pack")
    ctx.state["packed"] = node_input
    return f"{node_input['slow']} + {node_input['ask_verdict']['ok']}"


packing_app = App(root_agent=Workflow(name="packing", edges=[
    (START, prepare, (ask_verdict, FunctionNode(func=slow, rerun_on_resume=True)), JoinNode(name="meet"), pack)]),
    resume_interrupted=2)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One ``adk-actors serve`` of ``APPS`` for the module's tests (none stops or
    reconfigures it; the one that kills a run worker leaves the host to replace it)."""
    with serving(tmp_path_factory.mktemp("workflow-input"), apps=APPS) as running:
        yield running


def cli(served: dict[str, Any], *args: str, via_url: bool = False, stdin: str | None = None,
        ) -> subprocess.CompletedProcess[str]:
    """``adk-actors ARGS`` against the served host (its actor system, or ``--url``); 120 s at most."""
    where = ["--url", served["url"]] if via_url else ["--config", str(served["config"])]
    return subprocess.run([sys.executable, "-m", "adk_actors.cli", *args, *where], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, input=stdin, env={**os.environ, "PYTHONPATH": str(ROOT / "tests")})


def _session(served: dict[str, Any], app: str, session: str, work: Path, user: str = "user") -> None:
    work.mkdir()
    made = httpx.post(f"{served['url']}/apps/{app}/users/{user}/sessions/{session}", json={"work_dir": str(work)},
                      timeout=30)
    assert made.status_code == 200, made.text


def _done(work: Path) -> Counter[str]:
    return Counter((work / "done.txt").read_text().split())


def _printed_answer(out: str, answer: str) -> list[str]:
    """The ``answer:`` command ``run`` printed, its ANSWER placeholder replaced by
    ``answer``, as arguments of this package's CLI (``adk-actors`` is its executable)."""
    found = re.search(r"^    answer:  adk-actors (inputs answer \S+ \S+) (.+?) (--session .*)$", out, re.MULTILINE)
    assert found, out
    return [*found.group(1).split(), answer, *shlex.split(found.group(3))]


def _check_shown(out: str, url: str | None = None, user: str | None = None) -> None:
    """``run``'s announcement of the ``verdict`` question, as a user reads it (``user``:
    the ``--user`` the printed command names, for a user other than the default one)."""
    assert '  => forms@1/prepare@1: "TEA"' in out, out
    assert "adk_request_input(" not in out, "the question is told once, not also as a raw call"
    assert "  waiting for input verdict (forms@1/ask_verdict@1): Ship TEA?" in out, out
    assert '    payload: {"item": "TEA"}' in out
    schema = json.loads(re.search(r"^    schema:  (.*)$", out, re.MULTILINE).group(1))  # type: ignore[union-attr]
    assert schema["required"] == ["ok"] and schema["properties"]["ok"]["type"] == "boolean"
    where = (f" --user {user}" if user else "") + (f" --url {url}" if url else "")
    assert ("    answer:  adk-actors inputs answer forms verdict '{\"ok\": <boolean>, \"note\": <string>}' "
            f"--session s1{where}") in out, out


def test_run_shows_the_question_and_the_printed_command_answers_it_bad_answers_refused(
        served: dict[str, Any], tmp_path: Path) -> None:
    """``run forms tea --session s1`` ends waiting and shows the question (its message,
    payload, schema, and the ``inputs answer`` command); ``inputs list`` lists it; an
    answer its schema refuses fails (exit 1, the schema named) and leaves it waiting;
    the printed command with a good answer continues the graph at that node (``ship``
    gets the checked answer, ``prepare`` and ``ask`` are not run again); then nothing
    waits, and answering again is refused with nothing run."""
    work = tmp_path / "s1"
    _session(served, "forms", "s1", work)
    run = cli(served, "run", "forms", "tea", "--session", "s1")
    assert run.returncode == 0, run.stderr
    _check_shown(run.stdout)
    assert _done(work) == Counter(prepare=1, ask=1)

    listed = cli(served, "inputs", "list", "forms", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [(r["sessionId"], r["interruptId"], r["message"], r["payload"]) for r in rows] == [
        ("s1", "verdict", "Ship TEA?", {"item": "TEA"})]
    shown = cli(served, "inputs", "list", "forms", "--session", "s1")
    assert shown.stdout.startswith("verdict  s1  forms@1/ask_verdict@1: Ship TEA?  payload {\"item\": \"TEA\"}")

    bad = cli(served, *_printed_answer(run.stdout, '{"ok": "perhaps"}'))
    assert bad.returncode == 1 and "response_schema" in bad.stdout + bad.stderr, (bad.stdout, bad.stderr)
    assert [r["interruptId"] for r in json.loads(cli(served, "inputs", "list", "forms", "--json").stdout)] \
        == ["verdict"], "a refused answer leaves the question waiting"

    answered = cli(served, *_printed_answer(run.stdout, '{"ok": "true", "note": "today"}'))
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout.splitlines() == ['  => forms@1/ship@1: "shipped: True (today)"']
    assert _done(work) == Counter(prepare=1, ask=1, ship=1)
    state = httpx.get(f"{served['url']}/apps/forms/users/user/sessions/s1", timeout=30).json()["state"]
    assert state["verdict"] == {"ok": True, "note": "today"}
    assert json.loads(cli(served, "inputs", "list", "forms", "--json").stdout) == []

    again = cli(served, *_printed_answer(run.stdout, '{"ok": true}'))
    assert again.returncode == 1 and "waits for no input 'verdict'" in again.stderr, again.stderr
    assert _done(work)["ship"] == 1


def test_over_http_run_shows_the_question_and_inputs_answer_continues_the_graph(
        served: dict[str, Any], tmp_path: Path) -> None:
    """The same with ``--url`` (the host's HTTP API), as user ``web`` (not the default
    one: the printed command names ``--user``): the announcement names ``--url``,
    ``--json`` puts it on standard error as a JSON line (standard output stays the
    events), and the printed command answers over HTTP."""
    work = tmp_path / "s1"
    _session(served, "forms", "s1", work, user="web")
    run = cli(served, "run", "forms", "tea", "--session", "s1", "--user", "web", via_url=True)
    assert run.returncode == 0, run.stderr
    _check_shown(run.stdout, served["url"], user="web")

    _session(served, "forms", "s2", tmp_path / "s2", user="web")
    quiet = cli(served, "run", "forms", "tea", "--session", "s2", "--user", "web", "--json", via_url=True)
    told = [json.loads(line) for line in quiet.stderr.splitlines() if line.startswith("{")]
    assert [t["input"]["interruptId"] for t in told] == ["verdict"], quiet.stderr
    assert told[0]["answer"].endswith(f"--session s2 --user web --url {served['url']}")
    assert all("id" in json.loads(line) for line in quiet.stdout.splitlines())

    command = _printed_answer(run.stdout, "'{\"ok\": false}'")
    command[command.index("--url"):] = []  # cli() adds the --url
    answered = cli(served, *command[:4], '{"ok": false}', "--session", "s1", "--user", "web", via_url=True)
    assert answered.returncode == 0, answered.stderr
    assert _done(work) == Counter(prepare=1, ask=1, ship=1)
    state = httpx.get(f"{served['url']}/apps/forms/users/web/sessions/s1", timeout=30).json()["state"]
    assert state["verdict"] == {"ok": False, "note": None}
    listed = json.loads(cli(served, "inputs", "list", "forms", "--json", "--user", "web", via_url=True).stdout)
    assert [(r["sessionId"], r["interruptId"]) for r in listed] == [("s2", "verdict")]


def test_an_app_that_resumes_on_its_own_ends_waiting_after_a_kill_and_the_answer_completes_it(
        served: dict[str, Any], tmp_path: Path) -> None:
    """``App(resume_interrupted=2)``: the question is stored while the other branch
    (``slow``) still runs; its run worker is killed (kill -9). The host resumes the run
    on its own: ``slow`` runs again (it is safe to), the question is not asked again,
    and the CLI's one ``run`` ends well, waiting for it. ``inputs answer`` then runs the
    join and ``pack`` with both outputs: each node completed exactly once."""
    work = tmp_path / "p1"
    _session(served, "packing", "p1", work)
    run = subprocess.Popen([sys.executable, "-m", "adk_actors.cli", "run", "packing", "tea", "--session", "p1",
                            "--config", str(served["config"])], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT / "tests")})
    try:
        pid = int(wait_until(lambda: (work / "slow.pid").exists() and (work / "slow.pid").read_text(),
                             timeout=60, message="slow never started"))
        stored = f"{served['url']}/apps/packing/users/user/sessions/p1"
        wait_until(lambda: any(e.get("longRunningToolIds") == ["verdict"]
                               for e in httpx.get(stored, timeout=30).json()["events"]), timeout=30,
                   interval=0.05, message="the question was never stored")  # (each a read of the session)
        os.kill(pid, signal.SIGKILL)
        (work / "release").write_text("go")
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, err
    assert out.count("waiting for input verdict (packing@1/ask_verdict@1): Ship TEA?") == 1, out
    assert _done(work) == Counter(prepare=1, ask=1, slow=1, **{"slow-started": 2})

    answered = cli(served, "inputs", "answer", "packing", "verdict", '{"ok": true}', "--session", "p1")
    assert answered.returncode == 0, answered.stderr
    assert [line.split(":")[0] for line in answered.stdout.splitlines()] == [
        "  => packing@1/meet@1", "  => packing@1/pack@1"], answered.stdout
    assert _done(work) == Counter(prepare=1, ask=1, slow=1, pack=1, **{"slow-started": 2})
    state = httpx.get(stored, timeout=30).json()["state"]
    assert state["packed"] == {"ask_verdict": {"ok": True, "note": None}, "slow": "slow TEA"}


AGENT = '''
from pydantic import BaseModel

from adk_actors.events import RequestInput
from adk_actors.workflow import START, Workflow


class Verdict(BaseModel):
    ok: bool
    note: str = ""


def prepare(node_input: str, ctx):
    return node_input.upper()


def ask(node_input: str, ctx):
    return RequestInput(interrupt_id="verdict", message=f"Ship {node_input}?", payload={"item": node_input},
                        response_schema=Verdict)


def ship(node_input: dict, ctx):
    ctx.state["verdict"] = node_input
    return "shipped"


root_agent = Workflow(name="shipper", edges=[(START, prepare, ask, ship)])
'''


def test_the_repl_asks_the_question_at_its_prompt_and_the_typed_answer_continues_the_graph(tmp_path: Path) -> None:
    """``adk-actors run AGENT_DIR``: the question is told as google-adk's ``adk run``
    tells it (``[HITL input] MESSAGE``, ``Schema:``) with its payload and how to answer;
    the JSON typed at the next ``[user]:`` prompt is the answer, checked against the
    schema, and the graph finishes (the saved session's state has it)."""
    folder = tmp_path / "agents" / "shipper"
    folder.mkdir(parents=True)
    (folder / "agent.py").write_text(AGENT)
    done = subprocess.run([sys.executable, "-m", "adk_actors.cli", "run", str(folder), "--in_memory", "--save_session",
                           "--session_id", "saved"], input='tea\n{"ok": "yes", "note": "fine"}\nexit\n',
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "[HITL input]" in line)
    assert lines[at].endswith("[HITL input] Ship TEA?"), done.stdout
    assert lines[at + 1] == '  Payload: {"item": "TEA"}'
    assert json.loads(lines[at + 2].removeprefix("  Schema: "))["required"] == ["ok"]
    assert lines[at + 3] == "  Type the answer: JSON (a value or an object), else text."
    saved = json.loads((folder / "saved.session.json").read_text())
    assert saved["state"]["verdict"] == {"ok": True, "note": "fine"}


def test_one_query_at_a_time_the_question_is_told_and_the_next_query_answers_it(tmp_path: Path) -> None:
    """google-adk's single-query mode (``run AGENT_DIR QUERY --session_id S``): the turn
    that asks tells the question and exits 2 (paused); the next QUERY on that session
    is its answer (``Auto-resuming interrupt verdict``) and the graph finishes (exit 0);
    the sessions live in the agents folder's SQLite file between the two processes."""
    folder = tmp_path / "agents" / "shipper"
    folder.mkdir(parents=True)
    (folder / "agent.py").write_text(AGENT)

    def once(query: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "adk_actors.cli", "run", str(folder), query, "--session_id", "q1"],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})

    asked = once("tea")
    assert asked.returncode == 2, asked.stderr
    assert "[HITL input] Ship TEA?" in asked.stdout and '  Payload: {"item": "TEA"}' in asked.stdout
    assert "to answer, run again with --session_id q1" in asked.stderr
    answered = once('{"ok": false, "note": "later"}')
    assert answered.returncode == 0, answered.stderr
    assert "Auto-resuming interrupt verdict" in answered.stderr
    saved = open_sessions(FolderRun(agent_dir=str(folder)), folder).store.get_session("shipper", "user", "q1")
    assert saved.state["verdict"] == {"ok": False, "note": "later"}
