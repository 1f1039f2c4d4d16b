"""Liveness that tells stuck from busy, shown at load (issue 53, item 2): ``adk-actors
serve`` on the example config's apps with the default health settings (a check every
1 s, 5 s to answer), CPU burners beside it (plain Python busy loops, each in a process
group of its own, all killed afterwards whatever happened). Under that load:

* ``adk-actors chaos soak`` (its defaults: sessions talk while random actors are killed)
  loses nothing, hangs nobody, and the tree comes back; the host's log has no health
  check kill at all (every actor that was late was late for being busy, and was left to
  work);
* a session partition stopped with ``kill -STOP`` is still found by its supervisor's
  health check, killed and restarted, and its sessions are served again.

CI runs a short form: ``ADK_SOAK_LOAD`` burners (default 4, twice this machine's 2
cores, so that every actor waits for CPU) and a soak of ``ADK_SOAK_SECONDS`` (default
4). The long form reaches load 40 on 2 cores: it waits (up to 3 minutes) for the
1-minute load average to reach 80 % of the burners before the soak begins::

    ADK_SOAK_LOAD=40 ADK_SOAK_SECONDS=120 pytest -n 0 -s tests/test_soak_at_load.py

The figures (load reached, kills, turns, LOST, HUNG, busy warnings) are printed: ``-s``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import ROOT, last_text, serving

from supervision.testing import pid_alive, wait_until

SECONDS = float(os.environ.get("ADK_SOAK_SECONDS", "4"))
BURNERS = int(os.environ.get("ADK_SOAK_LOAD", "4"))
#: From this many burners on, the soak waits for the load average to follow them.
WARM_FROM = 10

pytestmark = pytest.mark.timeout(int(SECONDS * 6 + 1200))  # the long form: minutes of warming and soaking


def example_apps() -> str:
    """The ``[apps]`` lines of the shipped config/host.toml."""
    apps = tomllib.loads((ROOT / "config" / "host.toml").read_text())["apps"]
    return "".join(f'{name} = "{target}"\n' for name, target in apps.items())


class Load:
    """``count`` CPU burners (``while True: pass``), each the leader of a process group of
    its own once started (:meth:`start`), and the highest 1-minute load average seen while they
    ran (sampled every second). :meth:`stop` kills every group and reaps it; it is safe
    to call twice, and before :meth:`start`."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.burners: list[subprocess.Popen[bytes]] = []
        self.highest = os.getloadavg()[0]
        self._done = threading.Event()
        self._sampler = threading.Thread(target=self._sample, name="loadavg", daemon=True)

    def start(self) -> None:
        """Start the burners and the sampler (the burners started so far are killed if one fails to)."""
        try:
            for _ in range(self.count):
                self.burners.append(subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                                     start_new_session=True, stdin=subprocess.DEVNULL))
        except BaseException:
            self.stop()
            raise
        self._sampler.start()

    def _sample(self) -> None:
        while not self._done.wait(1.0):
            self.highest = max(self.highest, os.getloadavg()[0])

    def now(self) -> float:
        return os.getloadavg()[0]

    def stop(self) -> None:
        self._done.set()
        for burner in self.burners:
            try:
                os.killpg(burner.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for burner in self.burners:
            burner.wait(30)
        if self._sampler.is_alive():
            self._sampler.join(5)


@pytest.fixture
def load() -> Iterator[Load]:
    burning = Load(BURNERS)
    try:
        yield burning
    finally:
        burning.stop()
    assert all(b.poll() is not None for b in burning.burners)


def cli(config: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adk_actors.cli", "--config", str(config), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def tree_rows(url: str) -> list[dict[str, Any]]:
    """The console's tree (the rows ``status --json`` prints); empty while it fails."""
    try:
        answer = httpx.get(f"{url}/console/api/tree", timeout=120)
    except httpx.HTTPError:
        return []
    rows: list[dict[str, Any]] = answer.json()["rows"] if answer.status_code == 200 else []
    return rows


def partition(url: str, other_than: int = 0) -> dict[str, Any] | None:
    """The running first session partition's row, if its pid is not ``other_than``."""
    return next((r for r in tree_rows(url) if r["path"] == "sessions/sessions-0" and r["status"] == "running"
                 and r.get("pid") and int(r["pid"]) != other_than), None)


def log_records(data: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (data / "host.log").read_text().splitlines() if line.startswith("{")]


def health_kills(records: list[dict[str, Any]]) -> list[str]:
    """The host log's health check kills: a supervisor's ("... is unresponsive: ...;
    killing it") and a pool's ("run worker killed: unresponsive: ...")."""
    return [r["event"] for r in records if "unresponsive" in r.get("event", "")
            and ("killing it" in r["event"] or "killed" in r["event"])]


def test_every_actor_survives_a_soak_at_load_and_a_stopped_partition_is_still_found(
        load: Load, tmp_path: Path) -> None:
    with serving(tmp_path, apps=example_apps()) as served:
        config, data = served["config"], tmp_path / "data"
        began = time.monotonic()
        load.start()  # the host is up (started as a user starts it); now the load comes
        if BURNERS >= WARM_FROM:  # the long form: the load average follows the burners (~1.5 min to 80 %)
            deadline = time.monotonic() + 180
            while load.now() < 0.8 * BURNERS and time.monotonic() < deadline:
                time.sleep(2)
        at_start = load.now()

        # The soak, as a user runs it: its defaults but its length, the host's default health checks.
        soaked = cli(config, "chaos", "soak", "--duration", str(SECONDS), "--json", "--seed", "53",
                     timeout=SECONDS * 4 + 600)
        assert soaked.stdout.strip(), soaked.stderr[-3000:]
        report = json.loads(soaked.stdout.strip().splitlines()[-1])
        at_soak_end = load.now()
        records = log_records(data)
        busy = [r["event"] for r in records if " is busy: " in r.get("event", "")]
        print(f"\nburners {BURNERS}; load average {at_start:.1f} at the soak's start, {at_soak_end:.1f} at its "
              f"end, {load.highest:.1f} at most; soak {report['duration']:.0f} s: kills {report['kills']}, "
              f"turns {report['turns']} ({report['turns_ok']} ended well), LOST {report['lost']}, "
              f"HUNG {report['hung']}, restored {report['tree_restored']} in {report['restore_seconds']} s, "
              f"next turn valid {report['next_turn_valid']}/{report['sessions']}; busy warnings {len(busy)}; "
              f"{time.monotonic() - began:.0f} s so far")
        assert report["lost"] == 0 and report["hung"] == 0, report["problems"]
        assert report["host_alive"] and report["tree_restored"], report["problems"]
        assert report["untyped_failures"] == {} and report["orphans"] == 0, report
        assert report["next_turn_valid"] == report["sessions"] and sum(report["kills"].values()) > 0, report
        assert report["passed"] and soaked.returncode == 0, report["problems"]
        assert health_kills(records) == []  # nothing was killed for being late while it worked

        # A partition stopped under the same load: found by the check, killed, restarted.
        url = served["url"]
        stopped = int(wait_until(lambda: partition(url), timeout=300)["pid"])
        os.kill(stopped, signal.SIGSTOP)
        try:
            again = wait_until(lambda: partition(url, other_than=stopped), timeout=300)
            wait_until(lambda: not pid_alive(stopped), timeout=60)
        finally:
            if pid_alive(stopped):
                os.kill(stopped, signal.SIGCONT)
        assert "unresponsive: stopped" in (again.get("last_exit") or ""), again
        kills = health_kills(log_records(data))
        assert len(kills) == 1 and f"(pid {stopped})" in kills[0] and "unresponsive: stopped" in kills[0], kills
        # Sessions are served again: a turn of each of three new ones (two partitions: one at least is on it).
        with httpx.Client(base_url=url, timeout=120) as client:
            for session in ("after-1", "after-2", "after-3"):
                made = client.post("/apps/weather_bot/users/ops/sessions", json={"sessionId": session})
                assert made.status_code == 200, made.text
                assert "Oslo" in last_text(url, "weather_bot", "weather in Oslo?", user="ops", session=session)
        print(f"stopped partition pid {stopped} restarted as {again['pid']}; load average {load.now():.1f}; "
              f"{time.monotonic() - began:.0f} s in all")
