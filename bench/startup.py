"""Start-up: ``adk-actors serve`` and google-adk's ``adk api_server``, side by side.

Run (both sides; google-adk is a dev dependency)::

    python bench/startup.py [--rounds 5] [--python PATH]

Each round, for each side, in alternation: the server is started on a new data
folder (the same agents as bench/http_api.py) and the time until ``/list-apps``
answers is "ready" (asked every 5 ms, by one client). google-adk's server runs as
its users run it (bench/http_api.py: no PYTHONPATH, its agent file copied, the bench
failing if it loaded a file of this repository); its setup is printed. Then a first turn on a new
session is asked by a new process, as a user's terminal would:

* on both sides, a plain ``python`` process that posts ``/run`` with httpx (the
  same client for both);
* on ours, ``adk-actors run APP TEXT --url`` (the HTTP front door), then
  ``adk-actors run APP TEXT`` (the README's tour: the actor system's port), each on
  a session of its own.

Issue 20's target: ``serve`` ready plus the first reply of ``adk-actors run`` in
under 1 s. ``--python`` runs our side (serve and the CLI) with another interpreter:
a venv made by the README's first command (``pip install -e .``, no dev tools)
imports less than this one (no ``rich`` behind httpx, fewer entry points for
pydantic to scan). Our bytecode is compiled first, as a user's Python writes it on
the first run (this machine sets ``PYTHONDONTWRITEBYTECODE``: without it every
process compiles the kit from source) and as pip compiled google-adk's. Medians over
rounds; ratio ours / google-adk's.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

from http_api import ROOT, google_adk, ours

from bench._peer import describe  # http_api put the repository on sys.path

POLL = 0.005

POST_RUN = """
import sys, httpx
url, app = sys.argv[1], sys.argv[2]
httpx.post(f"{url}/apps/{app}/users/u/sessions", json={"sessionId": "s"}).raise_for_status()
body = {"appName": app, "userId": "u", "sessionId": "s", "newMessage": {"role": "user", "parts": [{"text": "hi"}]}}
httpx.post(f"{url}/run", json=body, timeout=30).raise_for_status()
"""


def timed(command: list[str]) -> float:
    began = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0 or (command[-1] != "echo" and "echo:" not in done.stdout):
        raise RuntimeError(f"{command[:5]} failed: {done.stdout[-500:]} {done.stderr[-1500:]}")
    return time.monotonic() - began


def one_round(side: str, python: str, setups: list[dict[str, Any]]) -> dict[str, float]:
    """One start of ``side``'s server and its first turns; google-adk's setup, as its
    server reports it at its end, appended to ``setups``."""
    with tempfile.TemporaryDirectory() as folder:
        started = time.monotonic()
        server = (ours(Path(folder), python, POLL) if side == "adk-actors"
                  else google_adk(Path(folder), POLL, setups=setups))
        with server as url:
            ready = time.monotonic() - started
            post = timed([sys.executable, "-c", POST_RUN, url, "echo"])
            result = {"ready": ready, "post": post}
            if side == "adk-actors":
                port = tomllib.loads((Path(folder) / "host.toml").read_text())["host"]["port"]
                cli = [python, "-m", "adk_actors.cli", "run", "echo", "hello"]
                result["cli_url"] = timed([*cli, "--session", "c1", "--url", url])
                result["cli_port"] = timed([*cli, "--session", "c2", "--port", str(port)])
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--python", default=sys.executable, help="the interpreter of our side (serve and the CLI)")
    parser.add_argument("--no-compile", action="store_true",
                        help="do not compile our bytecode first (with no __pycache__, every process compiles the kit)")
    args = parser.parse_args()
    if not args.no_compile:
        subprocess.run([args.python, "-m", "compileall", "-q", "adk_actors", "supervision", "bench"], cwd=ROOT,
                       check=True, capture_output=True)
    results: dict[str, list[dict[str, float]]] = {"adk-actors": [], "google-adk": []}
    setups: list[dict[str, Any]] = []
    for _ in range(args.rounds):
        for side in results:  # in alternation: a noisy moment hits both
            results[side].append(one_round(side, args.python, setups))

    def median(side: str, key: str) -> float:
        return statistics.median(r[key] for r in results[side])

    print(f"{args.rounds} rounds, medians (s); our side run by {args.python}\n")
    print("| measure | adk-actors | google-adk | ratio |\n|---|---|---|---|")
    for key, label in (("ready", "server ready (/list-apps answers)"),
                       ("post", "first turn from a new python process (httpx)")):
        a, g = median("adk-actors", key), median("google-adk", key)
        print(f"| {label} | {a:.2f} | {g:.2f} | {a / g:.2f}x |")
    for key, label in (("cli_url", "first turn by `adk-actors run --url`"),
                       ("cli_port", "a turn by `adk-actors run` (the actor system's port)")):
        print(f"| {label} | {median('adk-actors', key):.2f} | | |")
    for key, how in (("cli_url", "`adk-actors run --url`"), ("cli_port", "`adk-actors run`")):
        totals = [r["ready"] + r[key] for r in results["adk-actors"]]
        print(f"\nready + {how}: median {statistics.median(totals):.2f} s, best {min(totals):.2f} s "
              "(issue 20's target: < 1 s)")
    print(f"\npeer: {describe(setups[0])}")


if __name__ == "__main__":
    main()
