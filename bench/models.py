"""Model-stack benchmark: what our layers add to a streamed answer, and a breaker call's cost.

Run: ``python bench/models.py``. A real HTTP stub (127.0.0.1) streams an OpenAI-style
answer of N chunks, one every ``--gap`` ms, so the stub's own first token is at ~0
and its last at ~(N-1)*gap. We measure first-token and last-token latency at three
depths: the connector alone, the engine (events), and the whole actor runtime
(Runner -> partition -> session actor -> run actor -> provider, and back), and
print the overhead over the stub's timing (medians).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adk_actors import Content, LlmAgent, LlmRequest, RunConfig, StreamingMode
from adk_actors.engine import SessionView, run_invocation
from adk_actors.models import BreakerConfig, CircuitBreaker, OpenAIModel, Permit
from adk_actors.runtime import Host, HostConfig
from adk_actors.runtime._service_calls import Acquire, Record
from adk_actors.testing import StubServer, openai_stream
from supervision import call
from supervision.protocol import Cast
from supervision.testing import running_actor_system


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--gap", type=float, default=10.0, help="ms between chunks")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    pieces = [f"tok{i} " for i in range(args.chunks)]
    rows: list[tuple[str, float, float]] = []
    request = LlmRequest(contents=(Content.user("go"),))
    stream_config = RunConfig(streaming_mode=StreamingMode.SSE)

    with StubServer() as stub:
        def script() -> None:
            stub.add(openai_stream(pieces, chunk_delay=args.gap / 1000))

        model = OpenAIModel("stubbed", base_url=stub.url + "/v1", api_key=None)

        async def raw() -> tuple[float, float]:
            """The stub's own timing, read by a bare client (the baseline)."""
            import httpx

            from adk_actors.models._http import shared_ssl_context

            began = time.perf_counter()
            first = None
            async with httpx.AsyncClient(verify=shared_ssl_context()) as client, client.stream(
                    "POST", stub.url + "/v1/chat/completions", json={}) as response:
                async for line in response.aiter_lines():
                    if line.startswith("data") and first is None:
                        first = time.perf_counter() - began
            return first or 0.0, time.perf_counter() - began

        async def connector() -> tuple[float, float]:
            began = time.perf_counter()
            first = None
            async for response in model.generate(request, stream=True):
                if response.partial and first is None:
                    first = time.perf_counter() - began
            return first or 0.0, time.perf_counter() - began

        async def engine() -> tuple[float, float]:
            agent = LlmAgent(name="streamer", model=model)
            began = time.perf_counter()
            first = None
            async for event in run_invocation(agent, SessionView(), Content.user("go"), run_config=stream_config):
                if event.partial and first is None:
                    first = time.perf_counter() - began
            return first or 0.0, time.perf_counter() - began

        for label, fn in (("bare HTTP client (the stub's own timing)", raw),
                          ("connector (httpx + SSE parse)", connector), ("engine (events)", engine)):
            firsts, lasts = [], []
            for _ in range(args.runs):
                script()
                first, last = asyncio.run(fn())
                firsts.append(first)
                lasts.append(last)
            rows.append((label, statistics.median(firsts) * 1000, statistics.median(lasts) * 1000))

        work = Path(tempfile.mkdtemp(prefix="bench-models-"))
        with running_actor_system(work / "logs") as system:
            config = HostConfig(apps={"streamer": "bench.provider_agent:agent"}, data_dir=str(work),
                                models={"stubbed": stub.url + "/v1"})
            with Host(config, system=system) as host:
                runner = host.runner("streamer")
                runner.create_session("u", "s")
                firsts, lasts = [], []
                for i in range(args.runs + 1):
                    script()
                    began = time.perf_counter()
                    first = None
                    for event in runner.run("u", "s", f"go {i}", run_config=stream_config):
                        if event.partial and first is None:
                            first = time.perf_counter() - began
                    if i:  # the first turn activates the session
                        firsts.append(first or 0.0)
                        lasts.append(time.perf_counter() - began)
                rows.append(("actor runtime (Runner -> host -> provider)", statistics.median(firsts) * 1000,
                             statistics.median(lasts) * 1000))

                breakers = host.services().child("breakers").address
                began = time.perf_counter()
                n = 300
                for _ in range(n):
                    permit = call(system, breakers, Acquire("bench-model"))
                    system.tell(breakers, Cast(Record("bench-model", permit.id, "success")))
                actor_cost = (time.perf_counter() - began) / n * 1000

    breaker = CircuitBreaker("m", BreakerConfig())
    began = time.perf_counter()
    n = 100_000
    for i in range(n):
        permit = breaker.acquire(i * 0.001)
        assert isinstance(permit, Permit)
        breaker.record(permit, "success", i * 0.001)
    local_cost = (time.perf_counter() - began) / n * 1e6

    base_first, base_last = rows[0][1], rows[0][2]
    print(f"\nmodel-stack benchmark: {args.chunks} chunks, {args.gap:.0f} ms apart; medians of {args.runs}; "
          f"overheads against the bare client's reading of the same stub\n")
    print(f"| {'depth':<44} | {'first token':>12} | {'last token':>11} | {'+first':>9} | {'+last':>9} |")
    print(f"|{'-' * 46}|{'-' * 14}|{'-' * 13}|{'-' * 11}|{'-' * 11}|")
    for label, first, last in rows:
        print(f"| {label:<44} | {first:>9.1f} ms | {last:>8.1f} ms | {first - base_first:>6.1f} ms |"
              f" {last - base_last:>6.1f} ms |")
    print(f"\nbreaker per call: {local_cost:.2f} us in process (acquire + record); "
          f"{actor_cost:.2f} ms through the breaker actor (a call and a cast, from outside the host)")


if __name__ == "__main__":
    main()
