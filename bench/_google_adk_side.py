"""google-adk's half of bench/turns.py and bench/cluster.py, as its users run it.

The bench copies this file and bench/_google_adk_agent.py into a working folder of
their own and runs ``PYTHON -s -E _google_adk_side.py REPO MODE ...`` there (no
PYTHONPATH, no bench/ nor the repository on ``sys.path``; issue 60). Modes:

- ``turns TURNS CONCURRENT PER_SESSION BURSTS``: bench/turns.py's measures with an
  ``InMemorySessionService``;
- ``store DB_URL TURNS CONCURRENT PER_SESSION``: bench/cluster.py's, on a
  ``DatabaseSessionService`` (``postgresql+psycopg://`` or ``sqlite+aiosqlite://``).

Same turn logic and scripted model as our half, no network. Prints one JSON object:
the measures, ``setup`` (google-adk's version, interpreter, venv) and ``repo_modules``
(modules loaded from REPO); exits 3 if that list is not empty.
"""

from __future__ import annotations

import asyncio
import json
import math
import statistics
import sys
import time
import tracemalloc
from typing import Any

from _google_adk_agent import MockLlm, bump, repo_modules, setup

# DatabaseSessionService needs google-adk[db]: looked up in store mode only, so that a
# plain `pip install google-adk` runs the turns mode.
from google.adk import sessions as adk_sessions
from google.adk.agents import LlmAgent
from google.adk.events import Event
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types


def percentile(samples: list[float], share: float) -> float:
    """Nearest rank, as bench/turns.py computes it (this process imports nothing of the repository)."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(len(ordered) * share) - 1)]


def message(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def timed_turn(runner: Runner, user: str, sid: str, text: str) -> float:
    """Seconds for one turn, from the request to its last event."""
    began = time.perf_counter()
    async for _ in runner.run_async(user_id=user, session_id=sid, new_message=message(text)):
        pass
    return time.perf_counter() - began


async def turns_main(turns: int, concurrent: int, per_session: int, bursts: int) -> dict[str, Any]:
    service = InMemorySessionService()
    runner = Runner(app_name="bench", agent=LlmAgent(name="bench", model=MockLlm(), tools=[bump]),
                    session_service=service)

    async def turn(user: str, sid: str, text: str) -> float:
        return await timed_turn(runner, user, sid, text)

    out: dict[str, Any] = {}
    first_turns = []
    for kind in ("text", "tool"):
        samples = []
        for i in range(turns):
            if i % 10 == 0:
                sid = f"{kind}-{i}"
                await service.create_session(app_name="bench", user_id="u", session_id=sid)
                first_turns.append(await turn("u", sid, f"{kind} warm-up"))
                out.setdefault(f"first_{kind}_turns", []).append(first_turns[-1])
            samples.append(await turn("u", sid, f"{kind} {i}"))
        out[f"{kind}_turn_ms"] = statistics.median(samples) * 1000
        out[f"{kind}_turn_min_ms"] = min(samples) * 1000  # for the sanity row (bench/_peer.py)
    out["first_turn_ms"] = statistics.median(first_turns) * 1000
    for kind in ("text", "tool"):  # apart, as ours
        out[f"first_{kind}_turn_ms"] = statistics.median(out.pop(f"first_{kind}_turns")) * 1000
    session = await service.create_session(app_name="bench", user_id="u", session_id="long")
    for i in range(1000):
        author = "user" if i % 2 == 0 else "bench"
        await service.append_event(session, Event(author=author, invocation_id=f"e-{i // 2}",
                                                  content=types.Content(role="user" if author == "user" else "model",
                                                                        parts=[types.Part(text=f"old message {i}")])))
    samples = [await turn("u", "long", f"text {i}") for i in range(max(10, turns // 2))]
    out["text_turn_1000_events_ms"] = statistics.median(samples) * 1000

    async def session_turns(sessions: str, i: int) -> list[float]:
        return [await turn("c", f"{sessions}{i}", f"text {j}") for j in range(per_session)]

    # ``bursts`` times: the burst on sessions just created, then again on the same
    # sessions. Each figure is the median over the bursts; every burst's value is
    # kept under "<key>_runs" (as bench/turns.py does).
    runs: list[dict[str, float]] = []
    for r in range(bursts):
        sessions = f"b{r}-c"
        for i in range(concurrent):
            await service.create_session(app_name="bench", user_id="c", session_id=f"{sessions}{i}")
        run: dict[str, float] = {}
        for prefix in ("", "again_"):
            began = time.perf_counter()
            results = await asyncio.gather(*(session_turns(sessions, i) for i in range(concurrent)))
            wall = time.perf_counter() - began
            latencies = [x for r in results for x in r]
            first_turns = [r[0] for r in results]
            run[f"{prefix}concurrent_turns_per_s"] = len(latencies) / wall
            run[f"{prefix}concurrent_p50_ms"] = percentile(latencies, 0.50) * 1000
            run[f"{prefix}concurrent_p99_ms"] = percentile(latencies, 0.99) * 1000
            run[f"{prefix}concurrent_first_p50_ms"] = percentile(first_turns, 0.50) * 1000
            run[f"{prefix}concurrent_first_p99_ms"] = percentile(first_turns, 0.99) * 1000
        runs.append(run)
    for key in runs[0]:
        out[key] = statistics.median(run[key] for run in runs)
        out[f"{key}_runs"] = [run[key] for run in runs]

    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(200):
        sid = f"m{i}"
        await service.create_session(app_name="bench", user_id="m", session_id=sid)
        await turn("m", sid, "text hello")
        await turn("m", sid, "tool please")
    out["bytes_per_session_6_events"] = (tracemalloc.get_traced_memory()[0] - before) / 200
    tracemalloc.stop()
    return out


async def store_main(db_url: str, turns: int, concurrent: int, per_session: int) -> dict[str, Any]:
    service = adk_sessions.DatabaseSessionService(db_url)
    runner = Runner(app_name="bench", agent=LlmAgent(name="bench", model=MockLlm(), tools=[bump]),
                    session_service=service)

    async def turn(user: str, sid: str, text: str) -> float:
        return await timed_turn(runner, user, sid, text)

    out: dict[str, Any] = {}
    samples = []
    for i in range(turns):
        if i % 10 == 0:
            sid = f"text-{i}"
            await service.create_session(app_name="bench", user_id="u", session_id=sid)
            await turn("u", sid, "text warm-up")
        samples.append(await turn("u", sid, f"text {i}"))
    out["text_turn_ms"] = statistics.median(samples) * 1000
    out["text_turn_min_ms"] = min(samples) * 1000  # for the sanity row (bench/_peer.py)
    for i in range(concurrent):
        await service.create_session(app_name="bench", user_id="c", session_id=f"c{i}")

    failed: list[str] = []

    async def session_turns(i: int) -> list[float]:
        # google-adk's DatabaseSessionService on SQLite meets "database is locked" in a
        # burst: such a turn is counted as failed (its users see it fail), not timed
        done = []
        for j in range(per_session):
            try:
                done.append(await turn("c", f"c{i}", f"text {j}"))
            except Exception as exc:  # the peer's failure is a result here
                failed.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
        return done

    began = time.perf_counter()
    results = await asyncio.gather(*(session_turns(i) for i in range(concurrent)))
    wall = time.perf_counter() - began
    latencies = [x for r in results for x in r] or [float("nan")]
    out["concurrent_failed_turns"] = len(failed)
    out["concurrent_failures"] = sorted(set(failed))[:3]
    out["concurrent_turns_per_s"] = len([x for r in results for x in r]) / wall
    out["concurrent_p50_ms"] = percentile(latencies, 0.50) * 1000
    out["concurrent_p99_ms"] = percentile(latencies, 0.99) * 1000
    await service.close() if hasattr(service, "close") else None
    return out


def run(argv: list[str]) -> int:
    """Run the mode ``argv`` names; print the measures, the setup and the repository's
    modules loaded here as one JSON object; 3 if any was loaded, 2 on a bad mode."""
    repo, mode, *rest = argv
    if mode == "turns":
        turns, concurrent, per_session, bursts = (int(a) for a in rest)
        out = asyncio.run(turns_main(turns, concurrent, per_session, bursts))
    elif mode == "store":
        out = asyncio.run(store_main(rest[0], *(int(a) for a in rest[1:4])))
    else:
        print(f"unknown mode {mode!r}: turns or store", file=sys.stderr)
        return 2
    out["setup"], out["repo_modules"] = setup(), repo_modules(repo)
    print(json.dumps(out))
    if out["repo_modules"]:
        print(f"google-adk's half imported files of the repository: {out['repo_modules']}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
