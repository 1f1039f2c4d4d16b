"""google-adk's half of bench/cluster.py: its DatabaseSessionService on a given database.

Run by the interpreter that has google-adk (and SQLAlchemy's async driver for the URL:
``postgresql+psycopg://`` or ``sqlite+aiosqlite://``). Prints one JSON object: the
serial text turn and a concurrent burst, with the same mock model as bench/turns.py.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from typing import Any

from _google_adk_side import MockLlm, bump, percentile, timed_turn
from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService


async def main(db_url: str, turns: int, concurrent: int, per_session: int) -> dict[str, Any]:
    service = DatabaseSessionService(db_url)
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
    for i in range(concurrent):
        await service.create_session(app_name="bench", user_id="c", session_id=f"c{i}")

    async def session_turns(i: int) -> list[float]:
        return [await turn("c", f"c{i}", f"text {j}") for j in range(per_session)]

    began = time.perf_counter()
    results = await asyncio.gather(*(session_turns(i) for i in range(concurrent)))
    wall = time.perf_counter() - began
    latencies = [x for r in results for x in r]
    out["concurrent_turns_per_s"] = len(latencies) / wall
    out["concurrent_p50_ms"] = percentile(latencies, 0.50) * 1000
    out["concurrent_p99_ms"] = percentile(latencies, 0.99) * 1000
    await service.close() if hasattr(service, "close") else None
    return out


if __name__ == "__main__":
    url, turns, concurrent, per_session = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    print(json.dumps(asyncio.run(main(url, turns, concurrent, per_session))))
