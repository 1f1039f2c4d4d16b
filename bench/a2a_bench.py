"""A2A benchmark: our host's ``/a2a/{app}`` and google-adk's ``to_a2a`` side by side.

Run (both sides; google-adk and a2a-sdk are dev dependencies)::

    python bench/a2a_bench.py [--tasks 200] [--streams 100] [--per-stream 5] [--rounds 3]

(Not bench/a2a.py: a script of that name hid a2a-sdk's ``a2a`` package from
google-adk, which looks it up on every turn; issue 60.)

Both serve the same agent on equivalent scripted models (echo; no network) on
127.0.0.1: ours is ``adk-actors serve`` with the bench agent (bench/bench_agent.py),
theirs google-adk's ``to_a2a`` of the same agent (bench/_google_adk_agent.py) on
uvicorn, with its in-memory services, run as its users run it: a script in a folder
of its own with the agent file beside it, ``python -s -E``, no PYTHONPATH; at its end
it reports the modules it loaded from this repository (the bench fails on any) and
its setup, which the bench prints. The client is the same lean asyncio HTTP/1.1 client for both (the one of
bench/http_api.py: a heavier client would measure itself). Measures:

1. ``SendMessage`` (protocol 1.0, blocking): one task after another, each in the
   context of the one before (ten per context): p50 and p99 per task.
2. ``--streams`` contexts at once, each on a connection of its own, sending
   ``--per-stream`` tasks one after another over ``SendStreamingMessage``: tasks/s,
   p50 and p99 per task (to its last SSE line).

Each side first runs ``--warm-up`` tasks, not timed (as bench/http_api.py's warm-up
turns: the first turn each partition serves costs 13-17 ms, bench/turns.py's first-turn
row). Each measure runs ``--rounds`` times per side; medians over rounds, and the ratio
ours / google-adk's (lower is better for times, higher for throughput). The machine
is shared and noisy: compare ratios from the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._peer import AGENT_FILE, interpreter, peer_env, peer_folder, read_exit_report
from bench.http_api import (
    ROOT,
    Connection,
    free_port,
    medians,
    ours,
    percentile,
    print_peer,
    rate_and_spread,
    report,
    running,
)

GOOGLE_SERVER = """\
import sys

import uvicorn
from _google_adk_agent import report_at_exit, root_agent
from google.adk.a2a.utils.agent_to_a2a import to_a2a

port = int(sys.argv[1])
report_at_exit(sys.argv[2], sys.argv[3])
uvicorn.run(to_a2a(root_agent, host="127.0.0.1", port=port), host="127.0.0.1", port=port, log_level="warning")
"""
HEADERS = "A2A-Version: 1.0\r\n"


@contextmanager
def ours_a2a(workdir: Path) -> Iterator[tuple[str, str]]:
    """(base URL, JSON-RPC path) of our host's bench app."""
    with ours(workdir) as url:
        yield url, "/a2a/echo"


@contextmanager
def google_a2a(workdir: Path, python: str = sys.executable,
               setups: list[dict[str, Any]] | None = None) -> Iterator[tuple[str, str]]:
    """(base URL, JSON-RPC path) of google-adk's ``to_a2a`` server, run by ``python -s
    -E`` in a folder of its own; afterwards its setup appended to ``setups``, and
    :class:`bench._peer.PeerImportedRepo` if it loaded a file of this repository."""
    port = free_port()
    folder = peer_folder("a2a", AGENT_FILE)
    (folder / "serve_a2a.py").write_text(GOOGLE_SERVER)
    report_file = workdir / "peer-report.json"
    log = workdir / "peer-stderr.log"
    with open(log, "wb") as stderr:
        process = subprocess.Popen([interpreter(python), "-s", "-E", "serve_a2a.py", str(port), str(ROOT),
                                    str(report_file)], cwd=folder, env=peer_env({"ADK_DISABLE_TELEMETRY": "1"}),
                                   stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
    try:
        with running(process, f"http://127.0.0.1:{port}", ready_path="/.well-known/agent-card.json",
                     stop=signal.SIGINT, log=log) as url:  # Ctrl-C: on SIGTERM uvicorn ends before atexit
            yield url, "/"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    setup = read_exit_report(report_file, "google-adk's to_a2a server")["setup"]
    if setups is not None:
        setups.append(setup)


def rpc(method: str, text: str, context_id: str) -> dict[str, Any]:
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    if context_id:
        message["contextId"] = context_id
    return {"jsonrpc": "2.0", "id": uuid.uuid4().hex, "method": method,
            "params": {"message": message, "configuration": {"returnImmediately": False}}}


def context_of(method: str, body: bytes) -> str:
    """The task's context id, from a SendMessage answer or a stream's first line; a
    task that did not complete raises."""
    if method == "SendMessage":
        task = json.loads(body)["result"]["task"]
        if task["status"]["state"] != "TASK_STATE_COMPLETED":
            raise RuntimeError(f"task ended {task['status']['state']}")
        return str(task["contextId"])
    lines = [json.loads(line[5:]) for line in body.decode().splitlines() if line.startswith("data:")]
    if "COMPLETED" not in json.dumps(lines[-1]):
        raise RuntimeError(f"stream ended {lines[-1]}")
    first = lines[0]["result"]
    return str(next(iter(first.values()))["contextId"])


async def send_one_after_another(url: str, path: str, tasks: int) -> dict[str, float]:
    samples = []
    connection = await Connection.open(url)
    try:
        context = ""
        for n in range(tasks):
            if n % 10 == 0:
                context = ""
            began = time.perf_counter()
            status, body = await connection.post(path, rpc("SendMessage", f"text {n}", context), HEADERS)
            samples.append(time.perf_counter() - began)
            if status != 200:
                raise RuntimeError(f"HTTP {status}: {body[:200]!r}")
            context = context_of("SendMessage", body)
    finally:
        connection.close()
    return {"send_p50_ms": statistics.median(samples) * 1000, "send_p99_ms": percentile(samples, 0.99) * 1000}


async def streams(url: str, path: str, count: int, per_stream: int) -> dict[str, float]:
    latencies: list[float] = []
    connections = [await Connection.open(url) for _ in range(count)]

    async def talk(connection: Connection) -> None:
        context = ""
        for n in range(per_stream):
            began = time.perf_counter()
            status, body = await connection.post(path, rpc("SendStreamingMessage", f"text {n}", context), HEADERS)
            if status != 200:
                raise RuntimeError(f"HTTP {status}")
            context = context_of("SendStreamingMessage", body)
            latencies.append(time.perf_counter() - began)

    began = time.perf_counter()
    try:
        await asyncio.gather(*(talk(c) for c in connections))
    finally:
        for connection in connections:
            connection.close()
    return rate_and_spread("streams_tasks", latencies, time.perf_counter() - began)


def side(server: Any, args: argparse.Namespace) -> dict[str, float]:
    rounds: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp, server(Path(tmp)) as (url, path):
        asyncio.run(send_one_after_another(url, path, args.warm_up))  # each partition's first turns: not timed
        for _ in range(args.rounds):
            rounds.append({**asyncio.run(send_one_after_another(url, path, args.tasks)),
                           **asyncio.run(streams(url, path, args.streams, args.per_stream))})
    return medians(rounds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--per-stream", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warm-up", type=int, default=20, help="tasks sent first, not timed (each side)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--google-adk-python", default=sys.executable,
                        help="an interpreter where google-adk and a2a-sdk are installed (default: this one)")
    args = parser.parse_args()
    setups: list[dict[str, Any]] = []
    us, them = side(ours_a2a, args), side(partial(google_a2a, python=args.google_adk_python, setups=setups), args)
    labels = {"send_p50_ms": "SendMessage p50 (ms)", "send_p99_ms": "SendMessage p99 (ms)",
              "streams_tasks_per_s": f"{args.streams} streams x {args.per_stream} tasks: tasks/s",
              "streams_p50_ms": "  the same: p50 (ms)", "streams_p99_ms": "  the same: p99 (ms)"}
    report(us, them, labels, args.json)
    print_peer(args.google_adk_python, setups[0], as_json=args.json, store="",
               store_name="in memory, as to_a2a's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
