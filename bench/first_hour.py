"""The developer's first hour (issue 54): ``adk-actors web DIR`` ready, and an edited
agent's next turn.

Run::

    python bench/first_hour.py [--edits 10] [--starts 1] [--peer]

A temporary agents folder holds one agent, README's "Your first agent" shape
(``DIR/hello/agent.py``, the offline ``ScriptedModel`` answering a fixed text). Then,
with ``.venv/bin/adk-actors web DIR --port P --admin_port Q`` as a real subprocess
(its data in ``DIR/.adk-actors``, inside the temporary folder):

* **ready**: from the command's start to ``/list-apps`` naming the app (asked every
  10 ms), and to the first ``/run`` answered on a new session: cold (the first start,
  a new data folder) and warm (a second start, after SIGTERM, on the same folder).
  ``--starts`` repeats both on a new folder each time. With the first ``/run``, the CPU
  time all the server's processes have used by then (its process group, read from
  ``/proc``): a figure the machine's other load does not stretch as it does the
  wall-clock ones (the load average is printed with them).
* **edit -> turn**: ``--edits`` times, ``agent.py`` is rewritten with a new answer
  text; from the moment the write ends, ``/run`` is asked on a new session each time
  (every 10 ms) until its answer is the new text.

Our bytecode is compiled first (this machine sets ``PYTHONDONTWRITEBYTECODE``; a
user's Python writes it on its first run). Medians and p90 (nearest rank) are
printed, and whether issue 54's targets are met: edit -> turn < 1 s, ready < 1 s warm.

``--peer`` times google-adk's ``adk web --reload_agents --no-reload DIR`` the same
way (its agent-file watcher; uvicorn's ``--reload`` restarts the whole server and is
not used), with an agent of its own (a ``BaseLlm`` answering the fixed text, only
google-adk imported).
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = ROOT / ".venv" / "bin"
POLL = 0.01
DEADLINE = 90.0  # no wait of this bench is longer
APP = "hello"

OURS_AGENT = '''from adk_actors.agents import LlmAgent
from adk_actors.models import ScriptedModel

root_agent = LlmAgent(name="hello", model=ScriptedModel(fallback={answer!r}), instruction="Answer.")
'''

PEER_AGENT = '''from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.genai import types


class FixedLlm(BaseLlm):
    model: str = "fixed"

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text={answer!r})]))


root_agent = LlmAgent(name="hello", model=FixedLlm(), instruction="Answer.")
'''


@dataclass(frozen=True)
class Side:
    name: str
    agent: str  # agent.py's text, {answer} to fill
    command: Callable[[Path, int, int], list[str]]  # (agents folder, HTTP port, admin port) -> argv


OURS = Side("adk-actors", OURS_AGENT, lambda folder, port, admin: [
    str(VENV_BIN / "adk-actors"), "web", str(folder), "--port", str(port), "--admin_port", str(admin)])
PEER = Side("google-adk", PEER_AGENT, lambda folder, port, _admin: [
    str(VENV_BIN / "adk"), "web", "--reload_agents", "--no-reload", "--port", str(port), str(folder)])


@dataclass(frozen=True)
class Served:
    ready: float  # command start -> /list-apps names the app
    first: float  # command start -> a first turn answered
    first_cpu: float | None  # CPU seconds of the server's process group by then (None: no /proc)
    edits: list[float]  # each edit: agent.py written -> a turn with its text
    answer: str  # the agent's answer at the end


def free_ports() -> tuple[int, int]:
    """Two distinct free loopback ports (both held open while picked)."""
    with socket.socket() as a, socket.socket() as b:
        a.bind(("127.0.0.1", 0))
        b.bind(("127.0.0.1", 0))
        return int(a.getsockname()[1]), int(b.getsockname()[1])


def write_agent(folder: Path, side: Side, answer: str) -> None:
    """Write ``folder/hello/agent.py`` answering ``answer`` (the folder and its
    ``__init__.py`` made first if missing)."""
    app = folder / APP
    app.mkdir(parents=True, exist_ok=True)
    if not (app / "__init__.py").exists():
        (app / "__init__.py").write_text("from . import agent\n")
    (app / "agent.py").write_text(side.agent.format(answer=answer))


def turn(http: httpx.Client) -> str | None:
    """One turn on a new session; the last event's text, or None if the server does
    not answer (yet) or answers an error."""
    session = uuid.uuid4().hex[:12]
    try:
        made = http.post(f"/apps/{APP}/users/u/sessions", json={"sessionId": session})
        if made.status_code != 200:
            return None
        reply = http.post("/run", json={"appName": APP, "userId": "u", "sessionId": session,
                                        "newMessage": {"role": "user", "parts": [{"text": "hi"}]}})
        if reply.status_code != 200 or not reply.json():
            return None
        parts = reply.json()[-1].get("content", {}).get("parts") or [{}]
        return str(parts[0].get("text"))
    except httpx.HTTPError:
        return None


def until(condition: Callable[[], object], what: str, process: subprocess.Popen[bytes], log: Path) -> float:
    """Ask ``condition`` every POLL s until truthy; the monotonic time it was. RuntimeError
    if the server ends or DEADLINE passes (with its log's end)."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if condition():
            return time.monotonic()
        if process.poll() is not None:
            raise RuntimeError(f"the server ended ({process.returncode}) waiting for {what}: "
                               f"{log.read_text()[-2000:]}")
        time.sleep(POLL)
    raise RuntimeError(f"no {what} in {DEADLINE} s: {log.read_text()[-2000:]}")


def listed(http: httpx.Client) -> bool:
    try:
        reply = http.get("/list-apps")
        return reply.status_code == 200 and APP in reply.text
    except httpx.HTTPError:
        return False


def group_cpu(group: int) -> float | None:
    """CPU seconds (user + system, with their reaped children's) of the live processes
    of process group ``group``; None where there is no ``/proc``."""
    if not os.path.isdir("/proc"):
        return None
    ticks = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        if int(fields[2]) == group:  # pgrp; then utime, stime, cutime, cstime at 11-14
            ticks += sum(int(value) for value in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's process group, then SIGKILL after 30 s."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    try:  # the host's own children (actor system) in the same group
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def serve(side: Side, folder: Path, log: Path, edits: int, answer: str) -> Served:
    """Start the server on ``folder``; time ready and first turn; then ``edits`` edits.
    The server is stopped at the end, whatever happens."""
    port, admin = free_ports()
    began = time.monotonic()
    with open(log, "ab") as out:
        process = subprocess.Popen(side.command(folder, port, admin), cwd=folder.parent, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            ready = until(lambda: listed(http), "/list-apps", process, log) - began
            first = until(lambda: turn(http) == answer, "a first turn", process, log) - began
            first_cpu = group_cpu(process.pid)  # (its own group: start_new_session)
            times = []
            for n in range(edits):
                new = f"{side.name} answer {n} {uuid.uuid4().hex[:6]}"
                write_agent(folder, side, new)
                written = time.monotonic()
                times.append(until(lambda: turn(http) == new, f"the answer {new!r}", process, log) - written)
                answer = new
            return Served(ready, first, first_cpu, times, answer)
    finally:
        stop(process)


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def measure(side: Side, starts: int, edits: int) -> dict[str, list[float]]:
    """``starts`` times, on a new temporary folder: a cold start with ``edits`` edits,
    then a warm start (same folder, the last edit's answer) with none."""
    result: dict[str, list[float]] = {"cold_ready": [], "cold_first": [], "warm_ready": [], "warm_first": [],
                                      "cold_first_cpu": [], "warm_first_cpu": [], "edits": []}
    for _ in range(starts):
        with tempfile.TemporaryDirectory(prefix="first-hour-") as tmp:
            folder, log = Path(tmp) / "agents", Path(tmp) / "server.log"
            write_agent(folder, side, "first answer")
            cold = serve(side, folder, log, edits, "first answer")
            warm = serve(side, folder, log, 0, cold.answer)
            for key, run in (("cold", cold), ("warm", warm)):
                result[f"{key}_ready"].append(run.ready)
                result[f"{key}_first"].append(run.first)
                if run.first_cpu is not None:
                    result[f"{key}_first_cpu"].append(run.first_cpu)
            result["edits"].extend(cold.edits)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edits", type=int, default=10, help="edits of agent.py timed (default: 10)")
    parser.add_argument("--starts", type=int, default=1, help="cold + warm start pairs (default: 1)")
    parser.add_argument("--peer", action="store_true", help="time google-adk's adk web --reload_agents too")
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", "adk_actors", "supervision"], cwd=ROOT,
                   check=True, capture_output=True)
    sides = [OURS, PEER] if args.peer else [OURS]
    results = {side.name: measure(side, args.starts, args.edits) for side in sides}

    print(f"{args.starts} cold + warm start(s), {args.edits} edit(s) per side; seconds; load average "
          f"{os.getloadavg()[0]:.1f} at the end (wall-clock figures stretch with it, CPU ones much less)\n")
    print("| measure | " + " | ".join(f"{s.name} median | p90" for s in sides) + " |")
    print("|---|" + "---|---|" * len(sides))
    for key, label in (("cold_ready", "cold start -> /list-apps"), ("cold_first", "cold start -> first /run"),
                       ("cold_first_cpu", "cold start -> first /run: CPU of the server's processes"),
                       ("warm_ready", "warm start -> /list-apps"), ("warm_first", "warm start -> first /run"),
                       ("warm_first_cpu", "warm start -> first /run: CPU of the server's processes"),
                       ("edits", "agent.py written -> a turn with the new text")):
        cells = []
        for side in sides:
            values = results[side.name][key]
            cells.append(f"{statistics.median(values):.3f} | {p90(values):.3f}" if values else "- | -")
        print(f"| {label} | " + " | ".join(cells) + " |")
    ours = results[OURS.name]
    if ours["edits"]:
        edit = statistics.median(ours["edits"])
        print(f"\nedit -> next turn: median {edit:.3f} s, p90 {p90(ours['edits']):.3f} s "
              f"(target < 1 s: {'met' if p90(ours['edits']) < 1 else 'median met' if edit < 1 else 'NOT met'})")
    warm = statistics.median(ours["warm_ready"])
    warm_first = statistics.median(ours["warm_first"])
    print(f"web DIR ready, warm: median {warm:.3f} s to /list-apps, {warm_first:.3f} s to a first turn "
          f"(target < 1 s: {'met' if warm < 1 else 'NOT met'} for /list-apps, "
          f"{'met' if warm_first < 1 else 'NOT met'} for a first turn)")


if __name__ == "__main__":
    main()
