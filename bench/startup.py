"""Start-up: ``adk-actors serve`` and google-adk's ``adk api_server``, side by side.

Run (both sides; google-adk is a dev dependency)::

    python bench/startup.py [--rounds 5]

Each round, for each side: the server is started on a new data folder (the same
agents as bench/http_api.py) and the time until ``/list-apps`` answers is "ready";
then a first turn on a new session is asked by a new process, as a user's terminal
would: ``adk-actors run APP TEXT --url`` on our side (issue 20's target: ready plus
this under 1 s), and on both sides a plain ``python`` process that posts ``/run``
with httpx (the same client for both). Medians over rounds, ratio ours / google-adk's.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from http_api import ROOT, google_adk, ours

POST_RUN = """
import sys, httpx
url, app = sys.argv[1], sys.argv[2]
httpx.post(f"{url}/apps/{app}/users/u/sessions", json={"sessionId": "s"}).raise_for_status()
body = {"appName": app, "userId": "u", "sessionId": "s", "newMessage": {"role": "user", "parts": [{"text": "hi"}]}}
httpx.post(f"{url}/run", json=body, timeout=30).raise_for_status()
"""


def one_round(side: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        started = time.monotonic()
        server = ours if side == "adk-actors" else google_adk
        with server(Path(folder)) as url:
            ready = time.monotonic() - started
            began = time.monotonic()
            subprocess.run([sys.executable, "-c", POST_RUN, url, "echo"], check=True, cwd=ROOT)
            posted = time.monotonic() - began
            cli = float("nan")
            if side == "adk-actors":
                began = time.monotonic()
                subprocess.run([sys.executable, "-m", "adk_actors.cli", "run", "echo", "hello", "--session", "c",
                                "--url", url], check=True, cwd=ROOT, capture_output=True)
                cli = time.monotonic() - began
        return {"ready": ready, "post": posted, "cli": cli}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {"adk-actors": [], "google-adk": []}
    for _ in range(args.rounds):
        for side in results:  # in alternation: a noisy moment hits both
            results[side].append(one_round(side))

    def median(side: str, key: str) -> float:
        return statistics.median(r[key] for r in results[side])

    print(f"{args.rounds} rounds, medians (s)\n")
    print("| measure | adk-actors | google-adk | ratio |\n|---|---|---|---|")
    for key, label in (("ready", "server ready (/list-apps answers)"),
                       ("post", "first turn from a new python process (httpx)")):
        a, g = median("adk-actors", key), median("google-adk", key)
        print(f"| {label} | {a:.2f} | {g:.2f} | {a / g:.2f}x |")
    cli = median("adk-actors", "cli")
    print(f"| first turn by `adk-actors run --url` | {cli:.2f} | | |")
    total = median("adk-actors", "ready") + cli
    print(f"\nready + `adk-actors run`: {total:.2f} s (issue 20's target: < 1 s)")


if __name__ == "__main__":
    main()
