"""``adk-actors chaos soak`` on the shipped config: random actors of every kind are killed
while sessions talk, and nothing acknowledged is lost, no caller hangs, the tree comes
back and every session's next turn is valid (issue 18 parts 1 and 5).

CI runs a short soak; ``ADK_SOAK_SECONDS=60 pytest tests/test_chaos_soak.py`` runs the
long one the README quotes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, serving

from adk_actors.chaos import TARGET_KINDS, soak
from adk_actors.runtime import Host, HostConfig
from supervision.lowlevel import HealthCheck, free_port

SECONDS = float(os.environ.get("ADK_SOAK_SECONDS", "4"))


def shipped_host_config(data_dir: Path) -> HostConfig:
    """The shipped config/host.toml's host settings (restart budgets included)."""
    from adk_actors.config import load_settings

    settings = load_settings(ROOT / "config" / "host.toml")
    host = settings.host
    return HostConfig(apps=dict(settings.apps), data_dir=str(data_dir), partitions=host.partitions,
                      run_workers=host.run_workers, root_intensity=host.restart_intensity,
                      root_period=host.restart_period,
                      health=HealthCheck(host.health_interval, host.health_timeout) if host.health_interval else None)


def test_a_soak_with_every_kind_of_actor_killed_loses_nothing(actor_system: Any, tmp_path: Path) -> None:
    with Host(shipped_host_config(tmp_path / "data"), system=actor_system) as host:
        report = soak(host, "weather_bot", sessions=4, duration=SECONDS, interval=0.2, targets=TARGET_KINDS,
                      seed=11, min_faults=int(SECONDS * 2), jobs=40)
    print(report.render())
    assert report.host_alive and report.tree_restored
    assert report.lost == 0 and report.hung == 0 and report.untyped_failures == {}
    assert report.next_turn_valid == 4 and report.orphans == 0
    assert report.acknowledged_events > 0 and sum(report.kills.values()) >= SECONDS * 2
    assert set(report.kills) >= {"root", "services", "partitions", "jobs"}  # the long-lived levels were hit
    # background jobs through it all: each ended, never two attempts of one at once
    assert report.jobs == 40 and report.jobs_completed + report.jobs_discarded == 40
    assert report.jobs_unfinished == 0 and report.jobs_overlaps == 0 and report.jobs_attempts >= 40
    assert report.passed


def test_a_soak_that_fails_says_why(host: Host) -> None:
    """A soak whose turns all fail (the app's model raises) fails, and its report names
    each session whose next turn failed, with the failure's own words."""
    report = soak(host, "broken", sessions=2, duration=0.3, interval=0.2, targets=("sessions",), seed=3)
    assert not report.passed and report.next_turn_valid == 0
    said = [p for p in report.problems if p.startswith("the next turn of session") and "broken on purpose" in p]
    assert len(said) == 2, report.problems
    assert f"  problem: {said[0]}" in report.render().splitlines()


def test_a_soak_that_resumes_every_killed_turn_completes_them_all(actor_system: Any, tmp_path: Path) -> None:
    """``chaos soak --resume``: turns that kills of partitions and run workers end are
    resumed from their last committed step until they complete; no tool result is
    committed twice."""
    with Host(shipped_host_config(tmp_path / "data"), system=actor_system) as host:
        report = soak(host, "weather_bot", sessions=4, duration=SECONDS, interval=0.2,
                      targets=("partitions", "workers"), seed=5, min_faults=int(SECONDS * 2), resume=True)
    print(report.render())
    assert report.resumed is not None and report.resumed >= 1
    assert report.resumed_completed == report.resumed and report.resume_attempts >= report.resumed
    assert report.results_twice == 0 and report.lost == 0 and report.hung == 0
    assert report.passed


def test_a_soak_on_the_postgresql_store_loses_nothing(actor_system: Any, tmp_path: Path, postgres: Any) -> None:
    """The same soak with sessions, memory, credentials and jobs in PostgreSQL (a real
    server): every partition, service and jobs actor killed mid-write holds no session
    lease against its restarted self, and nothing acknowledged is lost."""
    config = replace(shipped_host_config(tmp_path / "data"), store_url=postgres.new_database())
    with Host(config, system=actor_system) as host:
        report = soak(host, "weather_bot", sessions=4, duration=SECONDS, interval=0.2, targets=TARGET_KINDS,
                      seed=23, min_faults=int(SECONDS * 2), jobs=20)
    print(report.render())
    assert report.host_alive and report.tree_restored
    assert report.lost == 0 and report.hung == 0 and report.untyped_failures == {}
    assert report.next_turn_valid == 4 and report.acknowledged_events > 0
    assert set(report.kills) >= {"partitions"}
    assert report.jobs_unfinished == 0 and report.jobs_overlaps == 0
    assert report.passed
    assert not (tmp_path / "data" / "sessions.db").exists() and not (tmp_path / "data" / "jobs.db").exists()


def test_a_soak_with_actors_stopped_as_well_as_killed_loses_nothing(actor_system: Any, tmp_path: Path) -> None:
    """A third of the faults stop an actor (SIGSTOP) instead of killing it: each is found
    by its parent's health check, killed and restarted; nothing is lost, nobody hangs,
    and no actor is left stopped."""
    config = replace(shipped_host_config(tmp_path / "data"), health=HealthCheck(interval=0.5, timeout=2.0))
    with Host(config, system=actor_system) as host:
        report = soak(host, "weather_bot", sessions=4, duration=SECONDS, interval=0.3, targets=TARGET_KINDS,
                      seed=5, stops=0.35, turn_timeout=20.0)
    print(report.render())
    assert sum(report.stops.values()) >= 1 and sum(report.kills.values()) >= 1
    assert report.lost == 0 and report.hung == 0 and report.untyped_failures == {}
    assert report.stopped_left == 0 and report.tree_restored and report.next_turn_valid == 4
    assert report.passed


def test_the_cli_soak_reports_json_and_its_exit_code_says_it_passed(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        result = subprocess.run(
            [sys.executable, "-m", "adk_actors.cli", "--config", str(served["config"]), "chaos", "soak",
             "--sessions", "2", "--duration", "3", "--interval", "300", "--json", "--seed", "3"],
            cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["passed"] and report["lost"] == 0 and report["hung"] == 0 and report["turns"] > 0


@pytest.mark.parametrize("bad", [["--targets", "everything"], ["--sessions", "0"]])
def test_bad_soak_arguments_are_a_usage_error(tmp_path: Path, bad: list[str]) -> None:
    """Said before any host is looked for (none runs here)."""
    config = tmp_path / "host.toml"
    config.write_text(f'[host]\nport = {free_port()}\n[apps]\nweather_bot = "examples.weather_bot.agent:root_agent"\n')
    result = subprocess.run(
        [sys.executable, "-m", "adk_actors.cli", "--config", str(config), "chaos", "soak", *bad],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "bad soak arguments" in result.stderr and "Traceback" not in result.stderr
