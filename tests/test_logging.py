"""Structured logs: secrets redacted, ids carried, JSON lines from actor processes."""

from __future__ import annotations

import json
from pathlib import Path

import structlog
from structlog.testing import capture_logs

from adk_actors.log import configure_logging, get_logger, redact_secrets


def test_secrets_are_redacted_by_key_and_by_value() -> None:
    cleaned = redact_secrets(None, "info", {
        "event": "calling provider", "api_key": "sk-abcdef123456", "headers": {"Authorization": "Bearer xyz.abc"},
        "note": "used key sk-live_1234567890 and Bearer abc.def", "city": "Oslo"})
    assert cleaned["api_key"] == "***" and cleaned["headers"] == {"Authorization": "***"}
    assert "sk-live" not in cleaned["note"] and "abc.def" not in cleaned["note"] and cleaned["city"] == "Oslo"


def test_bound_ids_travel_with_every_line() -> None:
    configure_logging(json=True)
    with capture_logs() as logs:
        get_logger("test", app="weather", user="ann", session="s1", run=None).info("run started", token="t0k")
    assert logs == [{"event": "run started", "app": "weather", "user": "ann", "session": "s1", "token": "t0k",
                     "log_level": "info"}]
    structlog.reset_defaults()


def test_serve_writes_json_lines_with_ids(tmp_path: Path) -> None:
    import subprocess
    import sys

    from supervision.lowlevel import free_port
    from supervision.testing import kill_marked_processes, process_marker, wait_until

    root = Path(__file__).resolve().parents[1]
    port = free_port()
    config = tmp_path / "host.toml"
    # Runs that end well are logged at debug level (the default INFO logs failed ones).
    config.write_text(f'[host]\nport = {port}\ndata_dir = "{tmp_path / "data"}"\n'
                      '[logging]\nlevel = "DEBUG"\n[http]\nport = 0\n'
                      '[apps]\nweather_bot = "examples.weather_bot.agent:root_agent"\n')
    out = tmp_path / "out"
    with process_marker(tmp_path) as (marker, fd), open(out, "w") as sink:
        serve = subprocess.Popen([sys.executable, "-m", "adk_actors.cli", "serve", "--config", str(config)], cwd=root,
                                 stdout=sink, stderr=subprocess.STDOUT, pass_fds=(fd,))
    try:
        wait_until(lambda: "listening" in out.read_text(), timeout=30)
        turn = subprocess.run([sys.executable, "-m", "adk_actors.cli", "run", "weather_bot", "weather in Oslo?",
                               "--port", str(port), "--session", "s9"], cwd=root, capture_output=True, text=True,
                              timeout=60)
        assert turn.returncode == 0, turn.stderr
        log = tmp_path / "data" / "host.log"
        lines = wait_until(lambda: [json.loads(line) for line in log.read_text().splitlines()
                                    if line.startswith("{") and '"run ended"' in line], timeout=10)
        ended = lines[-1]
        assert ended["app"] == "weather_bot" and ended["session"] == "s9" and ended["status"] == "done"
        assert ended["run"].startswith("run-") and ended["user"] == "user"  # the CLI's default user
    finally:
        serve.terminate()
        serve.wait(30)
        kill_marked_processes(marker, grace=2)


def test_every_line_of_host_log_is_json_also_supervision_and_tracebacks(tmp_path: Path) -> None:
    """Issue 19 item 6: a serve run with a turn and a kill -9 writes only JSON lines."""
    import subprocess
    import sys

    from conftest import ROOT, serving

    with serving(tmp_path) as served:
        config = str(served["config"])
        for args in (("run", "weather_bot", "weather in Paris?"), ("chaos", "kill", "registry")):
            result = subprocess.run([sys.executable, "-m", "adk_actors.cli", "--config", config, *args], cwd=ROOT,
                                    capture_output=True, text=True, timeout=60)
            assert result.returncode == 0, result.stderr
    lines = (tmp_path / "data" / "host.log").read_text().splitlines()
    records = [json.loads(line) for line in lines]  # raises on any line that is not JSON
    assert all(isinstance(r, dict) and r.get("event") for r in records)
    assert any(r.get("level") == "error" and "registry exited" in r["event"] for r in records)
