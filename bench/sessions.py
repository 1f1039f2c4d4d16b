"""Many sessions: the two rows issue 20 added, side by side with google-adk.

Run (google-adk is a dev dependency, so the same interpreter runs both sides)::

    python bench/sessions.py [--new 200] [--turns 5] [--open 200]

1. ``--new`` brand-new sessions x ``--turns`` turns at once, on the **default host**
   (2 partitions, 2 run workers each): throughput and p99 per turn (one thread per
   session, through the Runner), against google-adk's Runner with its in-memory
   session service in one process, the same turns (``GOOGLE_SIDE``, run as its users
   run a script: a folder of its own, ``python -s -E``, nothing of this repository on
   its path; it fails the bench if it loaded a file of the repository).
2. Memory with ``--open`` open sessions, each of which had a turn within the last
   minute: the PSS of every process of the host (actor system included), in total and
   per open session; google-adk: the growth of its process's PSS over the same
   sessions. Issue 20's target is for 1,000 open sessions (<= 4 GB); the per-session
   figure extrapolates, and ``--open 1000`` measures it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from adk_actors.runtime import Host, HostConfig  # noqa: E402
from bench._peer import (  # noqa: E402
    AGENT_FILE,
    ROOT,
    PeerFailed,
    check_report,
    describe,
    interpreter,
    peer_env,
    peer_folder,
)
from bench.turns import concurrent_phase, system_pss_kb, timed_turn  # noqa: E402
from supervision.testing import running_actor_system  # noqa: E402

GOOGLE_SIDE = """
import asyncio, json, math, sys, time
from _google_adk_agent import MockLlm, bump, repo_modules, setup
from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

def message(text):
    return types.Content(role="user", parts=[types.Part(text=text)])

def percentile(samples, share):
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(len(ordered) * share) - 1)]

def pss_kb():
    for line in open("/proc/self/smaps_rollup"):
        if line.startswith("Pss:"):
            return int(line.split()[1])
    return 0

async def main(new, turns, open_sessions):
    service = InMemorySessionService()
    runner = Runner(app_name="bench", agent=LlmAgent(name="bench", model=MockLlm(), tools=[bump]),
                    session_service=service)
    async def turn(user, sid, text):
        began = time.perf_counter()
        async for _ in runner.run_async(user_id=user, session_id=sid, new_message=message(text)):
            pass
        return time.perf_counter() - began
    for i in range(new):
        await service.create_session(app_name="bench", user_id="n", session_id=f"n{{i}}")
    async def session(i):
        return [await turn("n", f"n{{i}}", f"text {{j}}") for j in range(turns)]
    began = time.perf_counter()
    results = await asyncio.gather(*(session(i) for i in range(new)))
    wall = time.perf_counter() - began
    latencies = [x for r in results for x in r]
    before = pss_kb()
    for i in range(open_sessions):
        await service.create_session(app_name="bench", user_id="o", session_id=f"o{{i}}")
        await turn("o", f"o{{i}}", "text hello")
    grown = pss_kb() - before
    return {{"new_turns_per_s": len(latencies) / wall, "new_p99_ms": percentile(latencies, 0.99) * 1000,
             "open_pss_kb_per_session": grown / max(open_sessions, 1), "open_pss_kb_total": pss_kb()}}

out = asyncio.run(main(*[int(a) for a in sys.argv[2:5]]))
out["setup"], out["repo_modules"] = setup(), repo_modules(sys.argv[1])
print(json.dumps(out))
"""


def ours(new: int, turns: int, open_sessions: int) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="bench-sessions-"))
    Host.load_tree_code()  # before the system starts, as serve's Host does (its actors share it)
    with running_actor_system(work / "logs") as system:
        config = HostConfig(apps={"bench": "bench.bench_agent:agent"}, data_dir=str(work / "data"))
        with Host(config, system=system) as host:
            runner = host.runner("bench")
            burst = concurrent_phase(runner, "n", new, turns, "", sessions="n")
            before = system_pss_kb(system)
            for i in range(open_sessions):
                runner.create_session("o", f"o{i}")
                timed_turn(runner, "o", f"o{i}", "text hello")
            after = system_pss_kb(system)
    return {"new_turns_per_s": burst["concurrent_turns_per_s"], "new_p99_ms": burst["concurrent_p99_ms"],
            "open_pss_kb_per_session": (after - before) / max(open_sessions, 1), "open_pss_kb_total": after}


def google_adk(new: int, turns: int, open_sessions: int, python: str = sys.executable) -> dict[str, Any]:
    """google-adk's side (``GOOGLE_SIDE``) run by ``python -s -E`` in a folder of its
    own, beside a copy of bench/_google_adk_agent.py: its figures and ``setup``.
    :class:`bench._peer.PeerFailed` if it fails, :class:`bench._peer.PeerImportedRepo`
    if it loaded a file of this repository."""
    folder = peer_folder("sessions", AGENT_FILE)
    try:
        (folder / "sessions_side.py").write_text(GOOGLE_SIDE.format())
        result = subprocess.run([interpreter(python), "-s", "-E", "sessions_side.py", str(ROOT), str(new),
                                 str(turns), str(open_sessions)], cwd=folder, env=peer_env(),
                                capture_output=True, text=True, timeout=1800)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if result.returncode != 0 or not result.stdout.strip():
        raise PeerFailed(f"google-adk's side exited {result.returncode}: {result.stderr[-2000:]}")
    figures: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    check_report(figures, "google-adk's side")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--new", type=int, default=200)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--open", type=int, default=200)
    parser.add_argument("--google-adk-python", default=sys.executable,
                        help="an interpreter where google-adk is installed (default: this one)")
    args = parser.parse_args()
    us = ours(args.new, args.turns, args.open)
    them = google_adk(args.new, args.turns, args.open, args.google_adk_python)
    rows = [(f"{args.new} new sessions x {args.turns} turns, default host: turns/s", "new_turns_per_s"),
            ("  the same: p99 per turn (ms)", "new_p99_ms"),
            (f"PSS per open session ({args.open} open, KB)", "open_pss_kb_per_session"),
            ("  total PSS of the host / process (KB)", "open_pss_kb_total")]
    print("| measure | adk-actors | google-adk | ratio |\n|---|---|---|---|")
    for label, key in rows:
        print(f"| {label} | {us[key]:,.1f} | {them[key]:,.1f} | {us[key] / max(them[key], 1e-9):.2f}x |")
    per_1000 = us["open_pss_kb_per_session"] * 1000 / 1024
    print(f"\n1,000 open sessions at this rate: about {per_1000:,.0f} MB of PSS beyond the host's own "
          f"{us['open_pss_kb_total'] / 1024:,.0f} MB (target <= 4 GB in all)")
    print(f"\npeer: {describe(them['setup'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
