"""Secrets never reach the store, the stream or the log; data files are the host user's
alone; a corrupted store stops the start (issue 18 part 4)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import serving

from adk_actors._exceptions import HostError, RunFailedError
from adk_actors.models import RetryPolicy
from adk_actors.runtime import Host, HostConfig
from adk_actors.runtime._service_calls import Credential
from adk_actors.testing import StubResponse, StubServer
from supervision.testing import running_actor_system

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-test-0123456789abcdefSECRET"


@pytest.fixture
def keyed_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Host, StubServer]]:
    """A host whose processes have OPENAI_API_KEY in their environment (set before the
    actor system forks), with a provider stub on 127.0.0.1."""
    import runtime_agents

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with StubServer() as stub, running_actor_system(tmp_path / "logs") as system:
        config = HostConfig(apps={**runtime_agents.APPS, "provider": "runtime_agents:provider_agent"},
                            data_dir=str(tmp_path / "data"), models={"stubbed": stub.url + "/v1"},
                            model_options={"retry": RetryPolicy(max_attempts=1)})
        with Host(config, system=system) as host:
            yield host, stub


def test_an_api_key_echoed_by_a_provider_reaches_no_event_store_or_log(keyed_host: tuple[Host, StubServer],
                                                                          tmp_path: Path) -> None:
    host, stub = keyed_host
    stub.add(StubResponse(status=401, json={"error": {"message": f"Incorrect API key provided: {KEY}.",
                                                      "type": "invalid_request_error"}}))
    runner = host.runner("provider")
    session = runner.create_session(user_id="ann")
    events: list[Any] = []
    with pytest.raises(RunFailedError) as ended:  # the model's error: stored, then the run ends model_error
        for event in runner.run("ann", session.id, "hi"):
            events.append(event)
    assert ended.value.reason == "model_error" and KEY not in str(ended.value) and "***" in str(ended.value)
    assert stub.requests and stub.requests[0].headers.get("authorization") == f"Bearer {KEY}"  # the key was used
    failed = events[-1]
    assert failed.error_code and "***" in (failed.error_message or "")
    assert KEY not in failed.to_json()
    stored = runner.get_session("ann", session.id)
    assert all(KEY not in event.to_json() for event in stored.events)
    host.stop()
    for path in (tmp_path / "data").rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), f"the key is in {path}"
    for path in (tmp_path / "logs").rglob("*.log"):
        assert KEY not in path.read_text(errors="replace"), f"the key is in {path}"


def test_an_echoed_key_reaches_neither_the_cli_output_nor_the_host_files(tmp_path: Path) -> None:
    """``adk-actors serve`` with the key in its environment, a provider stub that echoes it
    in a 401, and ``adk-actors run``: the key is in no line the CLI prints, no data file
    and no log line of the host."""
    with StubServer() as stub:
        stub.add(StubResponse(status=401, json={"error": {"message": f"Incorrect API key provided: {KEY}."}}))
        with serving(tmp_path, apps='provider = "runtime_agents:provider_agent"\n',
                     more_toml=f'[models]\nstubbed = "{stub.url}/v1"\n[retry]\nmax_attempts = 1\n',
                     env={"OPENAI_API_KEY": KEY}) as served:
            turn = subprocess.run([sys.executable, "-m", "adk_actors.cli", "--config", str(served["config"]),
                                   "run", "provider", "hello", "--session", "s1"],
                                  cwd=ROOT, capture_output=True, text=True, timeout=60)
            shown = subprocess.run([sys.executable, "-m", "adk_actors.cli", "--config", str(served["config"]),
                                    "sessions", "show", "provider", "s1", "--json"],
                                   cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert stub.requests, "the provider was called"
    assert "401" in turn.stdout + turn.stderr and "***" in turn.stdout + turn.stderr
    for output in (turn.stdout, turn.stderr, shown.stdout, shown.stderr, served["out"].read_text(),
                   served["err"].read_text()):
        assert KEY not in output
    for path in (tmp_path / "data").rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), f"the key is in {path}"


def test_a_registered_secret_is_blanked_from_every_string_of_an_event() -> None:
    """What a run does with a credential it fetched for a tool (``_RemoteCredentials.get``)."""
    from adk_actors._secrets import redact_event, register_secret
    from adk_actors._types import Content, Event, FunctionResponse, Part

    secret = "tok-SECRET-credential-42"
    register_secret(secret)
    event = Event(author="tool", content=Content(role="user", parts=(Part(function_response=FunctionResponse(
        name="lookup", response={"token": secret, "nested": [f"Bearer {secret}"]})),)))
    cleaned = redact_event(event)
    assert secret not in cleaned.to_json() and "***" in cleaned.to_json()
    plain = Event(author="tool", content=Content.user("nothing secret here"))
    assert redact_event(plain) is plain  # the fast path: no copy


def test_every_data_file_is_the_host_users_alone(host: Host, tmp_path: Path) -> None:
    runner = host.runner("notes")
    session = runner.create_session(user_id="ann")
    list(runner.run("ann", session.id, "save a private note"))
    runner.add_session_to_memory("ann", session.id)
    runner.put_credential("ann", "svc", Credential(api_key="tok-SECRET-credential-42"))  # type: ignore[arg-type]
    runner.approvals("ann")
    data = tmp_path / "data"
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    names = set()
    for path in data.rglob("*"):
        mode = stat.S_IMODE(path.stat().st_mode)
        if path.is_file():
            names.add(path.name)
            assert mode & 0o077 == 0, f"{path} is readable by others ({oct(mode)})"
        elif path.parent == data:
            assert mode & 0o077 == 0, f"{path} is open to others ({oct(mode)})"
    assert {"sessions.db", "memory.db", "approvals.db", "credentials.db", "0.bin"} <= names


def test_a_corrupted_session_store_stops_the_start_with_a_clear_error(actor_system: Any, tmp_path: Path) -> None:
    import runtime_agents

    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"))
    with Host(config, system=actor_system) as host:
        runner = host.runner("echo")
        for i in range(60):
            runner.create_session(user_id="ann", session_id=f"s{i}", state={"pad": "x" * 400})
    store = Path(config.store_path)
    import sqlite3

    with sqlite3.connect(store) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with open(store, "r+b") as handle:
        handle.seek(4096 * 3)
        handle.write(os.urandom(4096))
    with pytest.raises(HostError, match="corrupted"):
        Host(config, system=actor_system).start()


def test_a_data_dir_that_is_a_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("not a directory")
    config = tmp_path / "host.toml"
    config.write_text(f'[host]\nport = 1\ndata_dir = "{tmp_path / "data"}"\n'
                      '[apps]\nweather_bot = "examples.weather_bot.agent:root_agent"\n')
    result = subprocess.run([sys.executable, "-m", "adk_actors.cli", "serve", "--config", str(config)], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "data_dir" in result.stderr and "directory" in result.stderr and "Traceback" not in result.stderr


def test_a_private_folder_and_every_parent_it_creates_are_the_users_alone(tmp_path: Path) -> None:
    """An agents_dir outside the data dir (``<agents_dir>/<app>/``, made by the agent
    builder's first save) is 0700 all the way down, whatever the umask."""
    from adk_actors.store import private_dir, write_private

    old = os.umask(0o022)
    try:
        write_private(tmp_path / "agents" / "helper" / "root_agent.yaml", b"name: helper\n")
        private_dir(tmp_path / "other" / "deeper" / "deepest")
    finally:
        os.umask(old)
    for folder in ("agents", "agents/helper", "other", "other/deeper", "other/deeper/deepest"):
        assert stat.S_IMODE((tmp_path / folder).stat().st_mode) == 0o700, folder
    assert stat.S_IMODE((tmp_path / "agents" / "helper" / "root_agent.yaml").stat().st_mode) == 0o600
