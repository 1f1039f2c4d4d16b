"""google-adk's half of bench/turns.py; run by the interpreter that has google-adk.

Prints one JSON object: the same measures as our half, same turn logic, same mock
model behaviour (echo for text turns, one tool call for tool turns), no network.
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

from google.adk.agents import LlmAgent
from google.adk.events import Event
from google.adk.models import BaseLlm, LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types


class MockLlm(BaseLlm):
    model: str = "mock"

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
        last = llm_request.contents[-1]
        parts = last.parts or []
        if any(p.function_response for p in parts):
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="counted")]))
            return
        text = next((p.text for p in parts if p.text), "")
        if text.startswith("tool"):
            call = types.FunctionCall(name="bump", args={})
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))
        else:
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=f"echo: {text}")]))


def bump(tool_context: Any) -> dict[str, Any]:
    """Count a tool turn."""
    count = int(tool_context.state.get("count", 0)) + 1
    tool_context.state["count"] = count
    return {"count": count}


def percentile(samples: list[float], share: float) -> float:
    """Nearest rank, as bench/turns.py computes it (this interpreter cannot import it)."""
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


async def main(turns: int, concurrent: int, per_session: int, bursts: int) -> dict[str, Any]:
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
            samples.append(await turn("u", sid, f"{kind} {i}"))
        out[f"{kind}_turn_ms"] = statistics.median(samples) * 1000
    out["first_turn_ms"] = statistics.median(first_turns) * 1000
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


if __name__ == "__main__":
    turns, concurrent, per_session, bursts = (int(a) for a in sys.argv[1:5])
    print(json.dumps(asyncio.run(main(turns, concurrent, per_session, bursts))))
