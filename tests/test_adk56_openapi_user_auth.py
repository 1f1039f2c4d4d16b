"""An OpenAPI tool under the OAuth2 authorization code flow, each user's token kept by
the host's credential service (issue 56), on a real host whose run workers import the
agent (tests/adk56_oauth_agent.py) and a real OAuth2 provider and API on 127.0.0.1.

The tool holds only the client (id, secret, redirect URI). Shown, in order:

1. a user's first call asks for authorization: the turn ends with google-adk's auth
   request (the scheme, the authorization URL with the client id, redirect URI, scope
   and a random state; never the client secret), and the API is not called;
2. the user signs in (the provider issues a code for the redirect URI) and the client
   answers with google-adk's auth response in the session state (``temp:<key>``: an
   ``AuthCredential`` whose ``oauth2.auth_response_uri`` is the redirect with the code
   and state); the tool exchanges the code at the token endpoint with its own client,
   the token goes to the credential store, the API is called with it;
3. the next turns reuse the stored token (no token request), also after the host is
   stopped and a new one started on the same data directory;
4. another user is asked for their own authorization; a redirect whose state is not
   the request's is refused; a provider that refuses the code is the call's error; a
   short-lived token is refreshed by the credential service (its refresh token, token
   URL and client stored with it) before the next call;
5. no token and no client secret is in an event, the session state or a log.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

import pytest

from adk_actors.runtime import Host, HostConfig

# tests/adk56_oauth_agent.py's client (never imported here: its run workers must build it)
CLIENT_ID = "agent-client"
CLIENT_SECRET = "client-secret-7f3a9c1e5b"
REDIRECT_URI = "https://agent.example/callback"
KEY = "who_api"


class Provider:
    """An OAuth2 provider (its token endpoint) and the API it guards."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.codes: dict[str, str] = {}
        self.issued: list[str] = []
        self.refresh_tokens: set[str] = set()
        self.expires_in = 3600
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(int(self.headers.get("Content-Length") or 0))
                                                     .decode()).items()}
                provider.requests.append({"method": "POST", "path": self.path, "form": form})
                self._reply(*provider.token(self.headers.get("Authorization"), form))

            def do_GET(self) -> None:
                token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                provider.requests.append({"method": "GET", "path": self.path, "token": token})
                if token not in provider.issued:
                    self._reply(401, {"error": "invalid_token"})
                    return
                self._reply(200, {"token_number": provider.issued.index(token) + 1})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def token(self, authorization: str | None, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        client_id, secret = form.get("client_id"), form.get("client_secret")
        if authorization and authorization.startswith("Basic "):
            client_id, _, secret = (unquote(p) for p in base64.b64decode(authorization[6:]).decode().partition(":"))
        if client_id != CLIENT_ID or secret != CLIENT_SECRET:
            return 401, {"error": "invalid_client"}
        if form.get("grant_type") == "authorization_code":
            if self.codes.pop(form.get("code", ""), None) != form.get("redirect_uri"):
                return 400, {"error": "invalid_grant"}
        elif form.get("grant_type") != "refresh_token" or form.get("refresh_token") not in self.refresh_tokens:
            return 400, {"error": "invalid_grant"}
        token = f"access-token-{len(self.issued) + 1:04d}-xyzzy"
        self.issued.append(token)
        refresh = f"refresh-token-{len(self.issued):04d}-plugh"
        self.refresh_tokens.add(refresh)
        return 200, {"access_token": token, "token_type": "Bearer", "expires_in": self.expires_in,
                     "refresh_token": refresh}

    def sign_in(self, auth_uri: str, code: str, state: str | None = None) -> str:
        """The user signs in at ``auth_uri``: a code for its redirect URI, and the
        redirect the browser lands on (with ``state``, default the request's)."""
        query = {k: v[0] for k, v in parse_qs(urlsplit(auth_uri).query).items()}
        self.codes[code] = query["redirect_uri"]
        return f"{query['redirect_uri']}?{urlencode({'code': code, 'state': state or query['state']})}"

    def of(self, method: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["method"] == method]


@pytest.fixture
def provider() -> Iterator[Provider]:
    provider = Provider()
    provider.thread.start()
    try:
        yield provider
    finally:
        provider.server.shutdown()
        provider.server.server_close()
        provider.thread.join(timeout=10)


@pytest.fixture
def system(provider: Provider, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Any:
    """The actor system, started after the provider's URL is in the environment its
    run workers inherit."""
    monkeypatch.setenv("ADK_TEST_OAUTH_PROVIDER_URL", provider.url)
    return request.getfixturevalue("actor_system")


def _host(system: Any, data: Path) -> Host:
    return Host(HostConfig(apps={"who": "adk56_oauth_agent:who_agent"}, data_dir=str(data)), system=system)


def _auth_response(auth_config: dict[str, Any], redirect: str) -> dict[str, Any]:
    """google-adk's auth response: the request's credential with the redirect added."""
    asked = auth_config["exchanged_auth_credential"]
    return {"auth_type": "oauth2", "oauth2": {**asked["oauth2"], "auth_response_uri": redirect}}


def _asked(events: list[Any]) -> dict[str, Any]:
    """The auth config of the turn's ``adk_request_credential`` call (google-adk's round
    trip), snake_case as google-adk's ``AuthConfig`` dumps it in Python."""
    from adk_actors.auth import AuthConfig

    [asked] = [c for e in events for c in e.get_function_calls() if c.name == "adk_request_credential"]
    assert not any(e.content is not None and e.content.text and e.author != "user" for e in events)  # it ends asking
    dumped: dict[str, Any] = AuthConfig.model_validate(asked.args["authConfig"]).model_dump(
        mode="json", exclude_none=True)
    return dumped


CALL = "call who_am_i"


def test_the_authorization_code_flow_with_the_credential_store(provider: Provider, system: Any,
                                                               tmp_path: Path) -> None:
    data = tmp_path / "data"
    with _host(system, data) as host:
        runner = host.runner("who")
        runner.create_session("ann", "s1")
        config = _asked(list(runner.run("ann", "s1", CALL)))
        assert config["credential_key"] == KEY and provider.requests == []
        assert config["auth_scheme"]["flows"]["authorizationCode"]["tokenUrl"] == provider.url + "/token"
        oauth2 = config["exchanged_auth_credential"]["oauth2"]
        sent = urlsplit(oauth2["auth_uri"])
        query = {k: v[0] for k, v in parse_qs(sent.query).items()}
        assert f"{sent.scheme}://{sent.netloc}{sent.path}" == provider.url + "/authorize"
        assert query == {"response_type": "code", "client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI,
                         "scope": "read", "state": oauth2["state"], "access_type": "offline",
                         "prompt": "consent"} and len(oauth2["state"]) >= 24
        assert CLIENT_SECRET not in json.dumps(config)

        redirect = provider.sign_in(oauth2["auth_uri"], "code-ann-0001")
        second = list(runner.run("ann", "s1", CALL, state_delta={f"temp:{KEY}": _auth_response(config, redirect)}))
        assert second[-1].content.text == 'who_am_i said: {"token_number": 1}'
        [exchange] = provider.of("POST")
        assert exchange["form"] == {"grant_type": "authorization_code", "code": "code-ann-0001",
                                    "redirect_uri": REDIRECT_URI}
        third = list(runner.run("ann", "s1", CALL))  # the stored token, no new token request
        assert third[-1].content.text == 'who_am_i said: {"token_number": 1}' and len(provider.of("POST")) == 1
        assert runner.get_session("ann", "s1").state.get(f"temp:{KEY}") is None

        # another user has no token yet: asked for their own authorization
        runner.create_session("bob", "s2")
        bob = _asked(list(runner.run("bob", "s2", CALL)))
        assert bob["exchanged_auth_credential"]["oauth2"]["state"] != oauth2["state"]
        # a redirect whose state is not the request's is refused, nothing is exchanged
        forged = provider.sign_in(bob["exchanged_auth_credential"]["oauth2"]["auth_uri"], "code-bob-0001",
                                  state="someone-elses-state")
        refused = list(runner.run("bob", "s2", CALL, state_delta={f"temp:{KEY}": _auth_response(bob, forged)}))
        assert "state is not the one the auth request carried" in json.dumps(
            [e.content.function_responses[0].response for e in refused
             if e.content is not None and e.content.function_responses])
        assert len(provider.of("POST")) == 1
        # a code the provider does not know: the token endpoint's refusal is the call's error
        unknown = _auth_response(bob, f"{REDIRECT_URI}?code=never-issued&state="
                                      f"{bob['exchanged_auth_credential']['oauth2']['state']}")
        failed = list(runner.run("bob", "s2", CALL, state_delta={f"temp:{KEY}": unknown}))
        said = json.dumps([e.content.function_responses[0].response for e in failed
                           if e.content is not None and e.content.function_responses])
        assert "invalid_grant" in said and "never-issued" not in said
        # bob signs in; his token is short-lived: the credential service refreshes it before the next call
        provider.expires_in = 30
        redirect = provider.sign_in(bob["exchanged_auth_credential"]["oauth2"]["auth_uri"], "code-bob-0002")
        signed = list(runner.run("bob", "s2", CALL, state_delta={f"temp:{KEY}": _auth_response(bob, redirect)}))
        assert signed[-1].content.text == 'who_am_i said: {"token_number": 2}'
        provider.expires_in = 3600
        later = list(runner.run("bob", "s2", CALL))
        assert later[-1].content.text == 'who_am_i said: {"token_number": 3}'
        assert [r["form"]["grant_type"] for r in provider.of("POST")] == [
            "authorization_code", "authorization_code", "authorization_code", "refresh_token"]
        assert provider.of("POST")[-1]["form"]["refresh_token"] == "refresh-token-0002-plugh"

    # a new host on the same data directory: ann's token is still there
    with _host(system, data) as host:
        runner = host.runner("who")
        again = list(runner.run("ann", "s1", CALL))
        assert again[-1].content.text == 'who_am_i said: {"token_number": 1}'
        assert len(provider.of("POST")) == 4  # nothing new: ann's token is the stored one
        assert [r["token"] for r in provider.of("GET")] == [provider.issued[0]] * 2 + provider.issued[1:3] + [
            provider.issued[0]]
        everything = "".join(event.to_json() for event in runner.get_session("ann", "s1").events)
        everything += "".join(event.to_json() for event in runner.get_session("bob", "s2").events)
        everything += json.dumps(runner.get_session("ann", "s1").state, default=str)
    logs = "".join(path.read_text(errors="replace") for path in tmp_path.rglob("*.log"))
    for secret in (CLIENT_SECRET, *provider.issued, *provider.refresh_tokens, "code-ann-0001", "code-bob-0002"):
        assert secret not in everything and secret not in logs


def test_the_auth_request_is_google_adks() -> None:
    """google-adk's ``AuthHandler.generate_auth_request`` and ours, for the same scheme
    and client: the same authorization URL but for the random state, and neither
    carries the client secret."""
    from fastapi.openapi.models import OAuth2
    from google.adk.auth.auth_credential import AuthCredential as TheirCredential
    from google.adk.auth.auth_credential import AuthCredentialTypes as TheirTypes
    from google.adk.auth.auth_credential import OAuth2Auth as TheirOAuth2
    from google.adk.auth.auth_handler import AuthHandler
    from google.adk.auth.auth_tool import AuthConfig

    from adk_actors.auth import AuthConfig as OurConfig
    from adk_actors.auth import AuthCredential, AuthCredentialTypes
    from adk_actors.auth import AuthHandler as OurHandler
    from adk_actors.tools.openapi_tool.auth import OAuth2Auth

    scheme = OAuth2.model_validate({"type": "oauth2", "flows": {"authorizationCode": {
        "authorizationUrl": "https://id.example/authorize", "tokenUrl": "https://id.example/token",
        "scopes": {"read": "read", "write": "write"}}}})
    theirs = AuthHandler(AuthConfig(auth_scheme=scheme, credential_key=KEY, raw_auth_credential=TheirCredential(
        auth_type=TheirTypes.OAUTH2, oauth2=TheirOAuth2(client_id=CLIENT_ID, client_secret=CLIENT_SECRET,
                                                        redirect_uri=REDIRECT_URI)))).generate_auth_request()
    ours = OurHandler(OurConfig(auth_scheme=scheme, credential_key=KEY, raw_auth_credential=AuthCredential(
        auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(client_id=CLIENT_ID, client_secret=CLIENT_SECRET,
                                                                redirect_uri=REDIRECT_URI)))).generate_auth_request()

    def url(auth_uri: str) -> tuple[str, dict[str, str]]:
        split = urlsplit(auth_uri)
        query = {k: v[0] for k, v in parse_qs(split.query).items()}
        query.pop("state")
        return f"{split.scheme}://{split.netloc}{split.path}", query

    assert theirs.exchanged_auth_credential is not None and theirs.exchanged_auth_credential.oauth2 is not None
    assert ours.exchanged_auth_credential is not None and ours.exchanged_auth_credential.oauth2 is not None
    assert url(ours.exchanged_auth_credential.oauth2.auth_uri or "") == url(
        theirs.exchanged_auth_credential.oauth2.auth_uri or "")
    assert ours.credential_key == theirs.credential_key == KEY
    assert CLIENT_SECRET not in ours.model_dump_json() and CLIENT_SECRET not in theirs.model_dump_json()


@pytest.mark.parametrize(("redirect", "words"), [
    (f"{REDIRECT_URI}?error=access_denied&state=s1", "refused: error 'access_denied'"),
    (f"{REDIRECT_URI}?state=s1", "carries no code"),
    (f"{REDIRECT_URI}?code=c1&state=s2", "state is not the one"),
])
def test_an_auth_response_that_cannot_be_used_is_a_typed_error(redirect: str, words: str) -> None:
    from adk_actors.tools.openapi_tool import OpenApiAuthError
    from adk_actors.tools.openapi_tool._user_auth import code_of
    from adk_actors.tools.openapi_tool.auth import AuthCredential

    found = AuthCredential.model_validate({"auth_type": "oauth2", "oauth2": {"state": "s1",
                                                                             "auth_response_uri": redirect}})
    assert found.oauth2 is not None
    with pytest.raises(OpenApiAuthError, match=words):
        code_of(found.oauth2)
    assert "c1" not in repr(found)  # the redirect holds the code: out of the repr
