"""Credentials: a 0600 store encrypted at rest, secrets never shown, OAuth2 refresh, auth as a return value."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from pydantic import SecretStr

from adk_actors.runtime import Host
from adk_actors.runtime._credentials import CredentialStore, fresh_token
from adk_actors.runtime._service_calls import AuthRequired, Credential
from adk_actors.testing import StubResponse, StubServer

SECRET = "ya29.super-secret-access-token"


def oauth(expires_in: float, token_url: str = "http://unused/token") -> Credential:
    return Credential(kind="oauth2", access_token=SecretStr(SECRET), refresh_token=SecretStr("refresh-me-secret"),
                      expires_at=time.time() + expires_in, token_url=token_url, client_id="my-app",
                      client_secret=SecretStr("client-secret-value"))


def test_store_is_0600_encrypted_at_rest_and_never_shows_secrets(tmp_path: Path) -> None:
    path = tmp_path / "credentials.db"
    store = CredentialStore(path, key=Fernet.generate_key().decode())
    store.put("app", "ann", "calendar", oauth(3600))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert SECRET.encode() not in raw and b"refresh-me-secret" not in raw  # encrypted at rest
    loaded = store.get("app", "ann", "calendar")
    assert loaded is not None and loaded.access_token is not None
    assert loaded.access_token.get_secret_value() == SECRET
    assert SECRET not in repr(loaded) and SECRET not in str(loaded) and "client-secret-value" not in repr(loaded)
    assert store.get("app", "bob", "calendar") is None and store.get("other", "ann", "calendar") is None
    assert store.delete("app", "ann", "calendar") and store.get("app", "ann", "calendar") is None


@pytest.fixture
def token_server() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


def test_refresh_near_expiry_only(token_server: StubServer) -> None:
    far = oauth(3600, token_server.url + "/token")
    assert fresh_token(far) is far and token_server.requests == []
    token_server.add(StubResponse(json={"access_token": "new-token", "expires_in": 1800, "token_type": "Bearer"}))
    refreshed = fresh_token(oauth(10, token_server.url + "/token"))
    assert refreshed.access_token is not None and refreshed.access_token.get_secret_value() == "new-token"
    assert refreshed.expires_at is not None and refreshed.expires_at > time.time() + 1700
    form = token_server.requests[0].body
    assert b"grant_type=refresh_token" in form and b"refresh_token=refresh-me-secret" in form
    token_server.add(StubResponse(status=400, json={"error": "invalid_grant"}))
    with pytest.raises(AuthRequired, match="HTTP 400"):
        fresh_token(oauth(10, token_server.url + "/token"))




def test_auth_required_then_success_on_the_next_turn(host: Host, token_server: StubServer, tmp_path: Path) -> None:
    runner = host.runner("calendar")
    runner.create_session("ann", "s1")
    first = list(runner.run("ann", "s1", "what's on today?"))
    auth_request = first[-1]
    assert auth_request.content is None and auth_request.turn_complete
    [config] = auth_request.actions.requested_auth_configs.values()
    assert config["credential_key"] == "calendar" and config["type"] == "oauth2"
    # the client completes the flow outside and stores the credential (close to expiry: it will be refreshed)
    token_server.add(StubResponse(json={"access_token": "fresh-" + SECRET, "expires_in": 3600}))
    runner.put_credential("ann", "calendar", oauth(5, token_server.url + "/token"))
    second = list(runner.run("ann", "s1", "and now?"))
    assert second[-1].content.text == "calendar: {'events': ['standup 9:00'], 'token_length': 36}"
    assert len(token_server.requests) == 1  # refreshed once, before use
    third = list(runner.run("ann", "s1", "again"))  # the refreshed token was stored: no second refresh
    assert third[-1].content.text.startswith("calendar:") and len(token_server.requests) == 1
    everything = "".join(e.to_json() for e in runner.get_session("ann", "s1").events)
    logs = "".join(p.read_text(errors="replace") for p in tmp_path.rglob("*.log"))
    for secret in (SECRET, "refresh-me-secret", "client-secret-value"):
        assert secret not in everything and secret not in logs


def test_a_stored_credential_survives_kill_9_of_the_credential_actor(host: Host) -> None:
    from supervision.testing import kill_child

    runner = host.runner("calendar")
    runner.put_credential("ann", "calendar", oauth(3600))
    assert host.root is not None
    kill_child(host.services(), "credentials")
    runner.create_session("ann", "s1")
    answer = list(runner.run("ann", "s1", "what's on?"))[-1]
    assert answer.content.text.startswith("calendar: {'events'")  # acknowledged, so not lost


def test_a_failed_refresh_becomes_a_new_auth_request(host: Host, token_server: StubServer) -> None:
    runner = host.runner("calendar")
    runner.create_session("ann", "s1")
    token_server.add(StubResponse(status=400, json={"error": "invalid_grant"}))
    runner.put_credential("ann", "calendar", oauth(5, token_server.url + "/token"))  # about to expire
    events = list(runner.run("ann", "s1", "what's on?"))
    assert len(token_server.requests) == 1  # the refresh was tried ...
    [config] = events[-1].actions.requested_auth_configs.values()  # ... and the user is asked again
    assert config["credential_key"] == "calendar" and events[-1].content is None
