"""The CLI through subprocesses: serve, run, chat, status, chaos kill, SIGTERM, bad config, busy port."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import serving

from supervision.testing import (
    find_marked_processes,
    wait_until,
)

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str, timeout: float = 60, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adk_actors.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, input=stdin)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[dict[str, Any]]:
    with serving(tmp_path) as running:
        yield {**running, "port": str(running["port"])}


@pytest.fixture(scope="module")
def shared_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One ``serve`` for the module's tests that neither kill, stop nor reconfigure it
    (``served`` is a test's own), each on sessions of its own: weather_bot, and the
    ``guarded`` app (an App with a plugin and a policy)."""
    apps = 'weather_bot = "examples.weather_bot.agent:root_agent"\nguarded = "runtime_agents:guarded_app"\n'
    with serving(tmp_path_factory.mktemp("cli-shared"), apps=apps) as running:
        yield {**running, "port": str(running["port"])}


@pytest.mark.timeout(240)  # eight chaos kills, each waiting for its restart: ~25 s idle, past 120 s at heavy load
def test_serve_run_status_chaos_and_clean_sigterm(served: dict[str, Any]) -> None:
    port = served["port"]
    turn = cli("run", "weather_bot", "What's the weather in Oslo?", "--port", port, "--session", "s1")
    assert turn.returncode == 0, turn.stderr
    assert "get_weather" in turn.stdout and "-3 °C and snow in Oslo" in turn.stdout
    transfer = cli("run", "weather_bot", "any storm alerts?", "--port", port, "--session", "s1")
    assert "transferred to alert_agent" in transfer.stdout and "No severe weather alerts" in transfer.stdout

    status = cli("status", "--port", port, "--json")
    rows = {row["path"]: row for row in json.loads(status.stdout)}
    assert {"registry", "run_pools", "run_pools/pool-0", "run_pools/pool-1", "sessions", "sessions/sessions-0",
            "sessions/sessions-1"} <= set(rows)
    assert sum(rows[f"sessions/sessions-{i}"]["sessions"] for i in (0, 1)) == 1  # s1, held in memory
    workers = [p for p in rows if p.startswith("run_pools/pool-") and "/worker-" in p]
    assert len(workers) == 4 and all(rows[p]["type"] == "worker" for p in workers)  # 2 run workers per pool

    chaos = cli("chaos", "kill", "registry", "--port", port)
    assert chaos.returncode == 0 and "is back as pid" in chaos.stdout, chaos.stderr
    after = {row["path"]: row for row in json.loads(cli("status", "--port", port, "--json").stdout)}
    assert after["registry"]["restarts"] == 1 and after["registry"]["pid"] != rows["registry"]["pid"]
    assert all(after[child]["restarts"] == 1 for child in ("run_pools", "sessions", "services"))  # rest_for_one

    for service in ("services/breakers", "services/artifacts", "services/memory", "services/approvals", "services/credentials", "sessions/sessions-0", "run_pools/pool-1"):
        killed = cli("chaos", "kill", service, "--port", port)
        assert killed.returncode == 0 and "is back as pid" in killed.stdout, (service, killed.stderr)
    final = {row["path"]: row for row in json.loads(cli("status", "--port", port, "--json").stdout)}
    assert all(final[s]["restarts"] >= 1 and final[s]["status"] == "running"
               for s in ("services/breakers", "services/artifacts", "services/memory", "services/approvals", "services/credentials", "sessions/sessions-0", "run_pools/pool-1"))
    worker = next(p for p in final if p.startswith("run_pools/pool-1/worker-"))
    killed = cli("chaos", "kill", worker, "--port", port)
    assert killed.returncode == 0 and "was replaced by its pool" in killed.stdout, killed.stderr
    history = cli("sessions", "show", "weather_bot", "s1", "--port", port, "--json")
    assert len(json.loads(history.stdout)["events"]) == 8  # the conversation survived the restarts
    chat = cli("chat", "weather_bot", "--port", port, "--session", "c1", stdin="weather in London?\nthanks\n")
    assert "15 °C and drizzle in London" in chat.stdout and "Ask me about the weather" in chat.stdout

    process = served["process"]
    assert find_marked_processes(served["marker"])
    began = time.monotonic()
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == 0
    assert time.monotonic() - began < 15
    assert "stopped in" in served["out"].read_text()
    wait_until(lambda: not find_marked_processes(served["marker"]), timeout=5, message="no process left behind")


THREADED_CLIENT = """
import json, sys, threading
from adk_actors.runtime import Host
host = Host.connect(int(sys.argv[1]))
runner = host.runner("weather_bot")
answers, errors = {}, []
def one(i):
    try:
        runner.create_session("threads", f"t{i}")
        events = list(runner.run("threads", f"t{i}", "What's the weather in Oslo?"))
        answers[i] = [e.content.text for e in events if e.content is not None and e.content.text]
        runner.get_state("threads", f"t{i}")
    except BaseException as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=one, args=(i,)) for i in range(20)]
for t in threads: t.start()
for t in threads: t.join(60)
print(json.dumps({"answers": answers, "errors": errors, "sessions": len(runner.list_sessions("threads"))}))
host.disconnect()
"""


def test_a_client_attached_to_a_running_host_may_use_one_runner_from_many_threads(shared_served: dict[str, Any]) -> None:
    done = subprocess.run([sys.executable, "-c", THREADED_CLIENT, shared_served["port"]], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["errors"] == [] and result["sessions"] == 20
    assert len(result["answers"]) == 20
    assert all(any("-3 °C and snow in Oslo" in text for text in said) for said in result["answers"].values())


def test_second_serve_on_a_busy_port_fails_at_once(shared_served: dict[str, Any], tmp_path: Path) -> None:
    # At once: as soon as a serve that fails on its config, run just before on this
    # machine as loaded as it is (both import the same); Thespian alone would wait ~14 s
    # more for the port.
    bad = tmp_path / "bad.toml"
    bad.write_text("[host]\nport = 70000\n")
    began = time.monotonic()
    assert cli("serve", "--config", str(bad), timeout=60).returncode == 2
    baseline = time.monotonic() - began
    began = time.monotonic()
    second = cli("serve", "--config", str(shared_served["config"]), timeout=60)
    assert second.returncode == 1 and "already in use" in second.stderr
    assert time.monotonic() - began < baseline + 8, baseline


def test_bad_config_fails_fast_naming_file_and_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[host]\nport = 70000\n[apps]\nx = "no_colon_here"\n')
    result = cli("serve", "--config", str(bad))
    assert result.returncode == 2
    assert str(bad) in result.stderr and "host.port" in result.stderr and "65535" in result.stderr
    assert "apps" in result.stderr and "import path" in result.stderr
    broken = tmp_path / "broken.toml"
    broken.write_text("[host\nport = ")
    assert cli("serve", "--config", str(broken)).returncode == 2


def test_clients_fail_clearly_without_a_host() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = cli("status", "--port", str(port))
    assert result.returncode == 1 and "no host is running" in result.stderr


def test_config_sections_are_validated(tmp_path: Path) -> None:
    from adk_actors.config import ConfigError, load_settings

    good = load_settings(ROOT / "config" / "host.toml")
    assert good.breaker.consecutive_failures == 5 and good.retry.max_attempts == 3
    assert good.artifacts.max_bytes == 52428800 and "hitl" in good.apps
    bad = tmp_path / "bad.toml"
    bad.write_text("[breaker]\nfailure_rate = 2\n[retry]\nmax_attempts = 0\n[unknown]\nx = 1\n")
    with pytest.raises(ConfigError) as failure:
        load_settings(bad)
    message = str(failure.value)
    assert "breaker.failure_rate" in message and "retry.max_attempts" in message and "unknown" in message
    bad.write_text('[host]\nhealth_interval = 2\nhealth_timeout = 1\n[limits]\nmax_json_depth = 101\n'
                   '[apps]\n"a/b" = "examples.weather_bot.agent:root_agent"\n')
    with pytest.raises(ConfigError) as failure:
        load_settings(bad)
    message = str(failure.value)
    assert "health_timeout must be at least health_interval" in message
    assert "limits.max_json_depth" in message and "app name may not contain path separators" in message


def test_a_users_mistakes_are_one_line_with_no_supervision_names(shared_served: dict[str, Any]) -> None:
    port = shared_served["port"]
    for args in (("approvals", "approve", "weather_bot", "no-such-id"), ("approvals", "deny", "weather_bot", "nope"),
                 ("sessions", "show", "weather_bot", "no-such-session"), ("run", "no_such_app", "hi")):
        result = cli(*args, "--port", port)
        assert result.returncode == 1, (args, result.stdout, result.stderr)
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
        assert "Traceback" not in result.stderr and "supervision" not in result.stderr, result.stderr


def test_an_apps_plugins_and_policies_work_through_serve(shared_served: dict[str, Any]) -> None:
    """Issue 19 item 3: an [apps] entry naming an App: its plugin keeps state per
    invocation (the count starts again every turn) and its policy denies a tool."""
    config = str(shared_served["config"])

    def say(text: str) -> str:
        result = subprocess.run([sys.executable, "-m", "adk_actors.cli", "--config", config, "run", "guarded",
                                 text, "--session", "s1"], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip().splitlines()[-1]

    assert say("hi") == "guarded: hello: hi [model calls: 1]"
    assert say("count please") == "guarded: tool said: {'count': 1} [model calls: 2]"
    assert say("count again") == "guarded: tool said: {'count': 2} [model calls: 2]"  # per turn, not summed
    wiped = say("wipe it all")
    assert "wiping is not allowed here" in wiped and "'wiped': True" not in wiped
