"""A storm of poisoned requests while other users talk: how long the bystanders wait.

Run (both sides; google-adk is a dev dependency)::

    python bench/poison_storm.py [--bystanders 4] [--attackers 80] [--rounds 3]

``tests/test_edge.py`` checks that the storm blocks nobody (every bystander is answered
while it lasts, every poisoned request gets a 4xx); this measures how long it makes
them wait, on ``adk-actors serve`` and on google-adk's ``adk api_server`` serving the
same scripted agent (``bench/http_api.py``'s servers; google-adk's run as its users
run it, its setup printed, the bench failing if it loaded a file of this repository). Per side and round: the
bystanders' ``POST /run`` p50 and p99 when quiet, then while ``--attackers`` threads
send poisoned requests (text that does not encode, JSON nested 900 deep, a path that
climbs out, a session id that does not encode) as fast as they are answered. The
table gives medians over rounds, the storm / quiet slowdown per side, and the ratio
ours / google-adk's. Compare figures from one run: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.http_api import APP, google_adk, ours, percentile, print_peer, run_body  # noqa: E402

SURROGATE = "\ud800"


def poisons(user: str) -> list[tuple[str, str, str]]:
    """(method, path, raw JSON body) of each poisoned request ``user`` sends in turn."""
    nested = "[" * 900 + "]" * 900
    return [("POST", "/run", json.dumps(run_body(user, "talk", f"x {SURROGATE}"), ensure_ascii=True)),
            ("POST", f"/apps/{APP}/users/{user}/sessions", f'{{"sessionId": "s{SURROGATE}"}}'),
            ("PATCH", f"/apps/{APP}/users/{user}/sessions/talk", f'{{"stateDelta": {{"x": {nested}}}}}'),
            ("POST", f"/apps/{APP}/users/{user}/sessions", '{"sessionId": "../../etc"}')]


def bystander_latencies(url: str, bystanders: int, seconds: float, attackers: int) -> list[float]:
    """Every bystander talks for ``seconds`` (``attackers`` threads poisoning meanwhile);
    the latency of each of their turns."""
    stop = threading.Event()
    latencies: list[float] = []
    lock = threading.Lock()

    def talk(user: str) -> None:
        with httpx.Client(base_url=url, timeout=60) as http:
            http.post(f"/apps/{APP}/users/{user}/sessions", json={"sessionId": "talk"})
            turn = 0
            while not stop.is_set():
                began = time.perf_counter()
                http.post("/run", json=run_body(user, "talk", f"text {turn}")).raise_for_status()
                with lock:
                    latencies.append(time.perf_counter() - began)
                turn += 1

    def poison(n: int) -> None:
        with httpx.Client(base_url=url, timeout=60) as http:
            requests, i = poisons(f"evil{n}"), 0
            while not stop.is_set():
                method, path, body = requests[i % len(requests)]
                http.request(method, path, content=body.encode("utf-8", "surrogatepass"),
                             headers={"content-type": "application/json"})
                i += 1

    threads = [threading.Thread(target=talk, args=(f"by{i}",)) for i in range(bystanders)]
    threads += [threading.Thread(target=poison, args=(n,)) for n in range(attackers)]
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join(120)
    return latencies


def side(server: Any, args: argparse.Namespace) -> list[dict[str, float]]:
    rounds = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp, server(Path(tmp)) as url:
            quiet = bystander_latencies(url, args.bystanders, args.seconds, 0)
            storm = bystander_latencies(url, args.bystanders, args.seconds, args.attackers)
        rounds.append({"quiet_p50_ms": statistics.median(quiet) * 1000, "quiet_p99_ms": percentile(quiet, 0.99) * 1000,
                       "storm_p50_ms": statistics.median(storm) * 1000, "storm_p99_ms": percentile(storm, 0.99) * 1000})
    return rounds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--bystanders", type=int, default=4)
    parser.add_argument("--attackers", type=int, default=80)
    parser.add_argument("--seconds", type=float, default=5.0, help="how long each phase lasts")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--google-adk-python", default=sys.executable,
                        help="an interpreter whose venv has google-adk (its adk command beside it; default: this one)")
    args = parser.parse_args()
    setups: list[dict[str, Any]] = []
    theirs = partial(google_adk, python=args.google_adk_python, setups=setups)
    results = {name: side(server, args) for name, server in (("adk-actors", ours), ("google-adk", theirs))}
    table = {name: {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
             for name, rounds in results.items()}
    if args.json:
        print(json.dumps(table))
        print_peer(args.google_adk_python, setups[0], as_json=True)
        return 0
    us, them = table["adk-actors"], table["google-adk"]
    print(f"{'bystander /run':<16}{'adk-actors':>12}{'google-adk':>12}{'ratio':>8}")
    for key in us:
        print(f"{key:<16}{us[key]:>12.1f}{them[key]:>12.1f}{us[key] / them[key]:>8.2f}")
    for name, row in table.items():
        print(f"{name}: storm/quiet p50 {row['storm_p50_ms'] / row['quiet_p50_ms']:.2f}x, "
              f"p99 {row['storm_p99_ms'] / row['quiet_p99_ms']:.2f}x")
    print_peer(args.google_adk_python, setups[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
