"""google-adk's half of bench/workflows.py's 10-node graph, as its users run it.

The bench copies this file and bench/_google_adk_agent.py into a working folder of
their own and runs ``PYTHON -s -E _google_adk_workflow.py REPO ROUNDS RUNS`` there
(bench/_peer.py's ``run_side``: no PYTHONPATH, nothing of the repository on
``sys.path``; issue 60), with ``GOOGLE_GEMINI_BASE_URL`` naming the bench's Gemini
REST stand-in on 127.0.0.1 and ``GOOGLE_API_KEY`` a dummy key.

The graph is bench/_ten_node_graph.py's (copied beside this file; ours runs the same
file with its imports rewritten): START -> ``parse`` -> (``shout``, ``count``, ``first``) -> ``join`` -> ``summarize``
-> ``writer`` (an LlmAgent on Gemini: one request to the stand-in) -> ``record`` ->
``check`` -> ``finish``: ten nodes. Each run is one ``run_async`` turn of a new
session of an ``InMemoryRunner``; after ``warm`` runs, ``ROUNDS`` rounds of ``RUNS``
runs each, each round's median and every run's time in ms. Prints one JSON object:
``rounds_ms`` (a list of lists), the final output and state of the last run (the
bench checks they are ours), ``setup`` and ``repo_modules`` (modules loaded from
REPO, and any module of one of the repository's packages by its name, wherever it
was loaded from), checked at the end; exits 3 if that list is not empty.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from _google_adk_agent import repo_modules, setup
from _ten_node_graph import root
from google.adk.runners import InMemoryRunner
from google.genai import types

#: The repository's top-level packages: none may be loaded in this process.
OUR_PACKAGES = frozenset({"adk_actors", "supervision", "bench", "tests"})




async def one_run(runner: InMemoryRunner, index: int) -> tuple[float, Any, dict[str, Any]]:
    """Seconds of one graph run (a new session's first turn, from the request to its
    last event), its final output and the session's state."""
    session = await runner.session_service.create_session(app_name="ten", user_id="u", session_id=f"s{index}")
    message = types.Content(role="user", parts=[types.Part(text="the quick brown fox")])
    began = time.perf_counter()
    output = None
    async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        info = event.node_info
        if info is not None and info.path == "ten@1/finish@1" and event.output is not None:
            output = event.output
    took = time.perf_counter() - began
    session = await runner.session_service.get_session(app_name="ten", user_id="u", session_id=session.id)
    return took, output, dict(session.state)


async def main(rounds: int, runs: int, warm: int = 5) -> dict[str, Any]:
    runner = InMemoryRunner(agent=root, app_name="ten")
    index = 0
    for _ in range(warm):
        await one_run(runner, index)
        index += 1
    rounds_ms: list[list[float]] = []
    output: Any = None
    state: dict[str, Any] = {}
    for _ in range(rounds):
        times = []
        for _ in range(runs):
            took, output, state = await one_run(runner, index)
            index += 1
            times.append(took * 1000)
        rounds_ms.append(times)
    return {"rounds_ms": rounds_ms, "output": output, "state": state}


def run(argv: list[str]) -> int:
    """Measure, print the JSON object, 3 if a module of the repository was loaded."""
    repo, rounds, runs = argv[0], int(argv[1]), int(argv[2])
    out = asyncio.run(main(rounds, runs))
    # ours by file (anywhere in REPO), and by name (an installed copy of ours would count too)
    ours = sorted(name for name in sys.modules if name.split(".")[0] in OUR_PACKAGES)
    out["setup"], out["repo_modules"] = setup(), repo_modules(repo) + [f"{name} (by name)" for name in ours]
    print(json.dumps(out, default=str))
    if out["repo_modules"]:
        print(f"google-adk's half imported modules of the repository: {out['repo_modules']}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
