"""google-adk's text turn outside any bench: a tiny script, run as its users run one.

The benches copy it with bench/_google_adk_agent.py into a folder of their own and run
``PYTHON _google_adk_standalone.py TURNS [STORE]`` there, with no flags and no
PYTHONPATH. TURNS text turns (a new session every ten, its first turn not timed), on
the session service STORE names: none, an ``InMemorySessionService``; ``sqlite-file:PATH``,
the ``SqliteSessionService`` ``adk api_server`` keeps in an agent's ``.adk/session.db``;
any other, ``DatabaseSessionService(STORE)``. Prints one JSON object: ``text_turn_ms``,
the median, and ``text_turn_min_ms``, the fastest.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import statistics
import sys
import time

from _google_adk_agent import root_agent
from google.adk import sessions
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService, InMemorySessionService
from google.genai import types


def session_service(store: str) -> BaseSessionService:
    if not store:
        return InMemorySessionService()
    if store.startswith("sqlite-file:"):
        sqlite = importlib.import_module("google.adk.sessions.sqlite_session_service")  # needs aiosqlite
        service: BaseSessionService = sqlite.SqliteSessionService(db_path=store.removeprefix("sqlite-file:"))
        return service
    return sessions.DatabaseSessionService(store)  # needs google-adk[db]: looked up only here


async def main(turns: int, store: str) -> dict[str, float]:
    service = session_service(store)
    runner = Runner(app_name="bench", agent=root_agent, session_service=service)

    async def turn(sid: str, text: str) -> float:
        began = time.perf_counter()
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(user_id="u", session_id=sid, new_message=message):
            pass
        return time.perf_counter() - began

    samples = []
    sid = ""
    for i in range(turns):
        if i % 10 == 0:
            sid = f"text-{i}"
            await service.create_session(app_name="bench", user_id="u", session_id=sid)
            await turn(sid, "text warm-up")
        samples.append(await turn(sid, f"text {i}"))
    return {"text_turn_ms": statistics.median(samples) * 1000, "text_turn_min_ms": min(samples) * 1000}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else ""))))
