"""HTTP benchmark: ``adk-actors serve`` and google-adk's ``adk api_server`` side by side.

(Issue 21 names it bench/http.py: a script of that name would hide the standard
library's ``http`` package from every script in bench/.)

Run (both sides; google-adk is a dev dependency)::

    python bench/http_api.py [--turns 200] [--sessions 100] [--per-session 10] [--rounds 3]

Both servers serve the same agent on equivalent scripted models (echo for text turns,
no network), on 127.0.0.1, with their default stores on disk (our SQLite session
store; google-adk's local SQLite storage). Measures (issue 21), each on new sessions:

1. ``POST /run`` latency: text turns, one after another, on short sessions.
2. ``POST /run_sse``: time to the first event and to the last (streaming off).
3. ``--sessions`` concurrent sessions x ``--per-session`` turns over ``/run_sse``
   (one keep-alive connection per session, a lean asyncio client: httpx's pool took
   most of a core under 100 streams): throughput (turns/s), p50 and p99 per turn.

Each measure runs ``--rounds`` times per side; the table gives medians over rounds and
the ratio ours / google-adk's (lower is better for times, higher for throughput).
The machine is shared and noisy: compare ratios from the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent

ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench._peer import (  # noqa: E402
    AGENT_FILE,
    describe,
    interpreter,
    peer_env,
    read_exit_report,
    standalone_text_turn,
)
from supervision.lowlevel import free_port  # noqa: E402

APP = "echo"  # the app's name on both sides (not "bench": google-adk imports it as a package)


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(len(ordered) * share) - 1)]


def wait_ready(url: str, process: subprocess.Popen[bytes], timeout: float = 60.0, poll: float = 0.1,
               ready_path: str = "/list-apps", log: Path | None = None) -> None:
    """Ask ``ready_path`` every ``poll`` seconds (one client: a new one would build a
    TLS context each time, CPU taken from the server starting beside it). If the
    server exits first, RuntimeError with the tail of its ``log`` (its stderr) if given."""
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=1.0) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                tail = log.read_text(errors="replace")[-1500:] if log is not None and log.exists() else ""
                raise RuntimeError(f"the server exited with {process.returncode}" + (f": {tail}" if tail else ""))
            try:
                if client.get(url + ready_path).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(poll)
    raise RuntimeError(f"{url} did not come up within {timeout} s")


@contextmanager
def running(process: subprocess.Popen[bytes], url: str, poll: float = 0.1,
            ready_path: str = "/list-apps", stop: int = signal.SIGTERM, log: Path | None = None) -> Iterator[str]:
    """``url`` once the server answers at ``ready_path`` (``log``: its stderr, quoted if
    it exits first); afterwards the ``stop`` signal, and SIGKILL to its whole session
    after 60 s."""
    try:
        wait_ready(url, process, poll=poll, ready_path=ready_path, log=log)
        yield url
    finally:
        process.send_signal(stop)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


@contextmanager
def ours(workdir: Path, python: str = sys.executable, poll: float = 0.1) -> Iterator[str]:
    """``adk-actors serve`` (run by ``python``) with the bench agent, its default host
    settings (in ``workdir/host.toml``); yields its HTTP URL."""
    port, http_port = free_port(), free_port()
    config = workdir / "host.toml"
    config.write_text(f'[host]\nport = {port}\ndata_dir = "{workdir / "data"}"\n'
                      f'[http]\nport = {http_port}\n[apps]\necho = "bench.bench_agent:agent"\n')
    process = subprocess.Popen([python, "-m", "adk_actors.cli", "serve", "--config", str(config)], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    with running(process, f"http://127.0.0.1:{http_port}", poll) as url:
        yield url


@contextmanager
def google_adk(workdir: Path, poll: float = 0.1, python: str = sys.executable,
               setups: list[dict[str, Any]] | None = None) -> Iterator[str]:
    """``adk api_server`` (``python``'s venv's ``adk``) over an agents dir holding the
    equivalent google-adk agent (bench/_google_adk_agent.py, copied), run as its users
    run it: in ``workdir``, no PYTHONPATH, nothing of this repository on its path. At
    its end the server reports its setup (appended to ``setups``) and the modules it
    loaded from the repository; :class:`bench._peer.PeerImportedRepo` if there is one
    or no report."""
    agents = workdir / "agents"
    (agents / APP).mkdir(parents=True)
    (agents / APP / "__init__.py").write_text("from . import agent\n")
    report = workdir / "peer-report.json"
    (agents / APP / "agent.py").write_text(AGENT_FILE.read_text() + f"\n\nreport_at_exit({str(ROOT)!r}, "
                                                                    f"{str(report)!r})\n")
    port = free_port()
    adk = Path(interpreter(python)).with_name("adk")
    log = workdir / "peer-stderr.log"
    with open(log, "wb") as stderr:
        process = subprocess.Popen([str(adk), "api_server", "--host", "127.0.0.1", "--port", str(port), str(agents)],
                                   cwd=workdir, stdout=subprocess.DEVNULL, stderr=stderr,
                                   env=peer_env(), start_new_session=True)
    # Stopped as its users stop it, with Ctrl-C: uvicorn ends on SIGTERM by raising
    # it again, which ends the process before its atexit report.
    with running(process, f"http://127.0.0.1:{port}", poll, stop=signal.SIGINT, log=log) as url:
        yield url
    setup = read_exit_report(report, "google-adk's api_server")["setup"]
    if setups is not None:
        setups.append(setup)


def run_body(user: str, session: str, text: str) -> dict[str, Any]:
    return {"appName": APP, "userId": user, "sessionId": session,
            "newMessage": {"role": "user", "parts": [{"text": text}]}}


def new_session(client: httpx.Client, user: str) -> str:
    response = client.post(f"/apps/{APP}/users/{user}/sessions", json={})
    response.raise_for_status()
    session_id: str = response.json()["id"]
    return session_id


def measure_run(url: str, turns: int) -> dict[str, float]:
    samples = []
    with httpx.Client(base_url=url, timeout=60) as client:
        for i in range(turns):
            if i % 10 == 0:
                session = new_session(client, "u")
                client.post("/run", json=run_body("u", session, "warm-up")).raise_for_status()
            began = time.perf_counter()
            client.post("/run", json=run_body("u", session, f"text {i}")).raise_for_status()
            samples.append(time.perf_counter() - began)
    return {"run_p50_ms": statistics.median(samples) * 1000, "run_p99_ms": percentile(samples, 0.99) * 1000}


def measure_sse(url: str, turns: int) -> dict[str, float]:
    first, last = [], []
    with httpx.Client(base_url=url, timeout=60) as client:
        for i in range(turns):
            if i % 10 == 0:
                session = new_session(client, "s")
            began = time.perf_counter()
            seen_first = None
            with client.stream("POST", "/run_sse", json=run_body("s", session, f"text {i}")) as response:
                for line in response.iter_lines():
                    if line.startswith("data:") and seen_first is None:
                        seen_first = time.perf_counter() - began
            first.append(seen_first or 0.0)
            last.append(time.perf_counter() - began)
    return {"sse_first_ms": statistics.median(first) * 1000, "sse_last_ms": statistics.median(last) * 1000}


class Connection:
    """One keep-alive HTTP/1.1 connection on asyncio streams: the burst's client, as
    lean as a client can be (httpx's pool took most of a core under 100 streams, so
    the burst measured the client), the same for both servers."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str) -> None:
        self.reader, self.writer, self.host = reader, writer, host

    @classmethod
    async def open(cls, url: str) -> Connection:
        host_port = url.split("://", 1)[1].rstrip("/")
        host, port = host_port.rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        return cls(reader, writer, host_port)

    async def post(self, path: str, body: dict[str, Any], headers: str = "") -> tuple[int, bytes]:
        """POST ``body`` as JSON (``headers``: more header lines, each ending CRLF); the
        status and the whole body (chunked or not)."""
        data = json.dumps(body).encode()
        self.writer.write(f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
                          f"{headers}Content-Length: {len(data)}\r\n\r\n".encode() + data)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        if headers.get("transfer-encoding") == "chunked":
            chunks = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                chunks.append(chunk[:-2])
            return status, b"".join(chunks)
        return status, await self.reader.readexactly(int(headers.get("content-length", "0")))

    def close(self) -> None:
        self.writer.close()


async def burst(url: str, sessions: int, per_session: int) -> dict[str, float]:
    """``sessions`` new sessions, each on a connection of its own, ``per_session`` turns
    each over ``/run_sse``, all at once."""
    latencies: list[float] = []
    connections = [await Connection.open(url) for _ in range(sessions)]
    try:
        ids = []
        for n, connection in enumerate(connections):
            _, body = await connection.post(f"/apps/{APP}/users/b{n}/sessions", {})
            ids.append(json.loads(body)["id"])

        async def talk(n: int) -> None:
            for turn in range(per_session):
                began = time.perf_counter()
                status, body = await connections[n].post("/run_sse", run_body(f"b{n}", ids[n], f"text {turn}"))
                if status != 200 or b"data:" not in body:
                    raise RuntimeError(f"HTTP {status}")
                latencies.append(time.perf_counter() - began)

        began = time.perf_counter()
        await asyncio.gather(*(talk(n) for n in range(sessions)))
        elapsed = time.perf_counter() - began
    finally:
        for connection in connections:
            connection.close()
    return rate_and_spread("burst_turns", latencies, elapsed)


def rate_and_spread(name: str, latencies: list[float], elapsed: float) -> dict[str, float]:
    """``<name>_per_s`` over ``elapsed`` seconds, and the p50 and p99 of ``latencies``
    (``<prefix>_p50_ms``, ``<prefix>_p99_ms``; the prefix is the name's first word)."""
    prefix = name.split("_")[0]
    return {f"{name}_per_s": len(latencies) / elapsed, f"{prefix}_p50_ms": statistics.median(latencies) * 1000,
            f"{prefix}_p99_ms": percentile(latencies, 0.99) * 1000}


def side(server: Any, args: argparse.Namespace) -> dict[str, float]:
    rounds: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp, server(Path(tmp)) as url:
        for _ in range(args.rounds):
            figures = {**measure_run(url, args.turns), **measure_sse(url, args.turns // 2),
                       **asyncio.run(burst(url, args.sessions, args.per_session))}
            rounds.append(figures)
    return medians(rounds)


def medians(rounds: list[dict[str, float]]) -> dict[str, float]:
    """Each measure's median over the rounds."""
    return {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}


def report(us: dict[str, float], them: dict[str, float], labels: dict[str, str], as_json: bool = False) -> None:
    """Both sides' figures: as one JSON object (``as_json``), else the markdown table
    with their ratios, a row per label."""
    if as_json:
        print(json.dumps({"adk_actors": us, "google_adk": them}))
        return
    print("| measure | adk-actors | google-adk | ratio |\n|---|---|---|---|")
    for key, label in labels.items():
        print(f"| {label} | {us[key]:.1f} | {them[key]:.1f} | {us[key] / them[key]:.2f}x |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--per-session", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--ours-only", action="store_true", help="skip google-adk (to try a change quickly)")
    parser.add_argument("--google-adk-python", default=sys.executable,
                        help="an interpreter whose venv has google-adk (its adk command beside it; default: this one)")
    args = parser.parse_args()
    us = side(ours, args)
    if args.ours_only:
        print(json.dumps(us, indent=1))
        return 0
    setups: list[dict[str, Any]] = []
    them = side(partial(google_adk, python=args.google_adk_python, setups=setups), args)
    labels = {"run_p50_ms": "/run latency p50 (ms)", "run_p99_ms": "/run latency p99 (ms)",
              "sse_first_ms": "/run_sse first event (ms)", "sse_last_ms": "/run_sse last event (ms)",
              "burst_turns_per_s": f"{args.sessions} sessions x {args.per_session} turns: turns/s",
              "burst_p50_ms": "  the same: p50 (ms)", "burst_p99_ms": "  the same: p99 (ms)"}
    report(us, them, labels, args.json)
    print_peer(args.google_adk_python, setups[0], them["run_p50_ms"], args.json)
    return 0


def print_peer(python: str, setup: dict[str, Any], in_bench_ms: float | None = None, as_json: bool = False,
               turns: int = 30, store: str = "sqlite-file:{folder}/session.db",
               store_name: str = "its SQLite store, as adk api_server's") -> None:
    """The peer's setup as its server ran, and google-adk's text turn from a standalone
    script on ``store`` (bench/_google_adk_standalone.py's STORE) beside
    ``in_bench_ms`` (its ``/run`` p50) if given: a reference, not a check (the server
    adds HTTP and its own work to the turn; bench/turns.py and bench/cluster.py check
    a turn of the Runner alone). On stderr with ``as_json``."""
    out = sys.stderr if as_json else sys.stdout
    print(f"\npeer: {describe(setup)}", file=out)
    standalone_ms = standalone_text_turn(python, turns, store)["text_turn_ms"]
    beside = "" if in_bench_ms is None else (f"; its /run p50 in the bench {in_bench_ms:.2f} ms "
                                             f"({in_bench_ms / standalone_ms:.2f}x, HTTP and the server's own work "
                                             "included)")
    print(f"reference: google-adk's text turn from a standalone script ({store_name}) {standalone_ms:.2f} ms"
          f"{beside}", file=out)


if __name__ == "__main__":
    sys.exit(main())
