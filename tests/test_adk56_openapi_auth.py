"""google-adk's OpenAPI tools on the ``adk_request_credential`` round trip (issue 56),
side by side with google-adk 2.13.

An ``OpenAPIToolset`` whose spec names an OAuth2 authorization-code scheme, given only
the client (id, secret, redirect URI): the agent (driven by one Gemini REST stand-in)
calls the operation, the first turn ends with google-adk's ``adk_request_credential``
call, the client answers with the ``AuthConfig`` carrying the redirect the user landed
on (as adk-web sends it), the call runs again, the code is exchanged at a real OAuth2
token endpoint on 127.0.0.1 and the API (same server) is called with the token. Then:
a token kept across turns, refreshed when expired, a 401 refreshed then re-asked, a
public client with PKCE, an OpenID Connect scheme from google-adk's helper, an API key
and a bearer token applied without asking, an API key the user is asked for, the
OpenID helpers, and google-adk's ``CredentialManager`` in a custom tool. Each program runs on google-adk as written, then on ours with its
imports rewritten (``google_adk_harness``); compared: every event of every turn
through google-adk's readers (call ids and OAuth states by order of appearance), the
requests the provider received, and the session state's keys.

What differs on purpose: google-adk keeps the user's exchanged credential (its access
and refresh tokens and the client secret) in the session state under
``<scheme>_<digest>_<type>_<digest>_existing_exchanged_credential``; ours keeps it out
of the session (the credential service, else this process's memory), so that key is
absent here and no token or secret is in our events, state or logs.

Last, on a real host (the credential service keeping the token; the client answers with
the ``adk_request_credential`` function response): the OpenAPI tool
(tests/adk56_oauth_agent.py) meets a 401 with a refresh, then (the refresh refused) asks
the user again once, then gives google-adk's error; a custom tool's
``CredentialManager`` (tests/adk56_manager_agent.py) gets the kept token on later turns
and from a new host.
"""

from __future__ import annotations

import copy
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, rewritten, run_program
from test_adk56_credential_request import PkceProvider, RevokingProvider, _rows
from test_adk56_openapi_user_auth import CLIENT_SECRET, Provider

from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini
REQUEST = "adk_request_credential"
PENDING = {"pending": True, "message": "Needs your authorization to access your data."}
STORED_BY_GOOGLE_ADK = "_existing_exchanged_credential"

PROGRAM = '''
import os

from google.adk.agents import Agent
from google.adk.auth import AuthCredential, AuthCredentialTypes, OAuth2Auth
from google.adk.runners import InMemoryRunner
from google.adk.tools.openapi_tool import OpenAPIToolset
from google.genai import types

URL = os.environ["ADK_TEST_OAUTH_PROVIDER_URL"]
SPEC = {"openapi": "3.0.3", "info": {"title": "Who", "version": "1"}, "servers": [{"url": URL}],
        "security": [{"oauth": ["read"]}],
        "components": {"securitySchemes": {"oauth": {"type": "oauth2", "flows": {"authorizationCode": {
            "authorizationUrl": URL + "/authorize", "tokenUrl": URL + "/token", "scopes": {"read": "read"}}}}}},
        "paths": {"/whoami": {"get": {"operationId": "whoAmI", "summary": "Who is calling",
                                      "responses": {"200": {"description": "ok"}}}}}}
CREDENTIAL = AuthCredential(auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(
    client_id="agent-client", client_secret="client-secret-7f3a9c1e5b", redirect_uri="https://agent.example/callback"))
TOOLSET = OpenAPIToolset(spec_dict=SPEC, auth_credential=CREDENTIAL, allow_private_network_access=True)
root_agent = Agent(name="who", model="gemini-2.5-flash", instruction="Say who the user is.", tools=[TOOLSET])


async def main(steps):
    runner = InMemoryRunner(agent=root_agent, app_name="auth")
    session = await runner.session_service.create_session(app_name="auth", user_id="ann")
    turns, previous = [], []
    for step in steps:
        kind, value, call_id = step(previous)
        if kind == "text":
            message = types.Content(role="user", parts=[types.Part(text=value)])
        else:
            message = types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
                name="adk_request_credential", id=call_id, response=value))])
        previous = []
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            previous.append(event)
        turns.append(previous)
    stored = await runner.session_service.get_session(app_name="auth", user_id="ann", session_id=session.id)
    await runner.close()
    return {"turns": turns, "stored": stored.events, "state": dict(stored.state)}
'''

Step = Callable[[list[Any]], tuple[str, Any, str | None]]


def say(text: str, before: Callable[[], None] | None = None) -> Step:
    """A user turn saying ``text`` (``before`` runs first: the provider changes)."""
    def step(_: list[Any]) -> tuple[str, Any, str | None]:
        if before is not None:
            before()
        return "text", text, None
    return step


#: every code a test signed in with (each new: a code ours saw is a secret from then on)
CODES: list[str] = []


def sign_in(provider: Provider, name: str) -> Step:
    """The client's answer to the last turn's ``adk_request_credential`` call: the user
    signs in at its ``authUri`` (with a new code named after ``name``) and the
    ``AuthConfig`` goes back with the redirect, as adk-web sends it."""
    def step(previous: list[Any]) -> tuple[str, Any, str | None]:
        [asked] = [c for e in previous for c in e.get_function_calls() if c.name == REQUEST]
        config = copy.deepcopy(dict(asked.args["authConfig"]))
        oauth2 = config["exchangedAuthCredential"]["oauth2"]
        code = f"{name}-{uuid.uuid4().hex[:12]}"
        CODES.append(code)
        oauth2["authResponseUri"] = provider.sign_in(oauth2["authUri"], code)
        return "answer", config, asked.id
    return step


def _serve(made: Provider, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    # serving with a short poll, so that shutdown() below returns at once (not after up to
    # serve_forever's default half second)
    made.thread = threading.Thread(target=made.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    made.thread.start()
    monkeypatch.setenv("ADK_TEST_OAUTH_PROVIDER_URL", made.url)
    try:
        yield made
    finally:
        made.server.shutdown()
        made.server.server_close()
        made.thread.join(timeout=10)


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[Provider]:
    """The OAuth2 provider and the API it guards (a confidential client)."""
    yield from _serve(Provider(), monkeypatch)


@pytest.fixture
def pkce(monkeypatch: pytest.MonkeyPatch) -> Iterator[PkceProvider]:
    """The provider serving a public client (PKCE, S256)."""
    yield from _serve(PkceProvider(), monkeypatch)


def _reset(provider: Provider) -> None:
    provider.requests.clear()
    provider.codes.clear()
    provider.issued.clear()
    provider.refresh_tokens.clear()


def _without_pkce(value: Any) -> Any:
    """``value`` with PKCE's random verifier and challenge named (random on each side)."""
    if isinstance(value, dict):
        return {k: ("the verifier" if k == "codeVerifier" else _without_pkce(v)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_without_pkce(v) for v in value)
    if isinstance(value, str) and "code_challenge=" in value:
        split = urlsplit(value)
        query = "&".join(p for p in split.query.split("&") if not p.startswith("code_challenge="))
        return split._replace(query=query).geturl()
    return value


def _run(source: str, script: list[Any], steps: list[Step], server: StubServer, provider: Provider,
         caplog: pytest.LogCaptureFixture) -> dict[str, Any]:
    _reset(provider)
    caplog.clear()
    _, result = run_program(source, script, server, steps)
    turns = [_without_pkce(_rows(events)) for events in result["turns"]]
    asked = [c.args for events in result["turns"] for e in events for c in e.get_function_calls() if c.name == REQUEST]
    return {"turns": turns, "stored": _rows(result["stored"]), "state": result["state"], "asked": asked,
            "raw": result, "unused_answers": len(server.responses), "logs": caplog.text,
            "provider": [(r["method"], r["path"], r.get("form", {}).get("grant_type")) for r in provider.requests]}


def both(script: list[Any], steps: list[Step], server: StubServer, provider: Provider,
         caplog: pytest.LogCaptureFixture, source: str = PROGRAM) -> tuple[dict[str, Any], dict[str, Any]]:
    """The program on google-adk, then on ours (the same script, steps and provider)."""
    caplog.set_level(logging.DEBUG)
    theirs = _run(source, script, steps, server, provider, caplog)
    assert theirs["unused_answers"] == 0, "the case must use its script on google-adk"
    ours = _run(rewritten(source), script, steps, server, provider, caplog)
    assert "google" not in rewritten(source)
    return theirs, ours


def stored_by_google_adk(key: str) -> bool:
    """The state key google-adk keeps the user's credential under (not its budgets')."""
    return key.endswith(STORED_BY_GOOGLE_ADK) and ":" not in key


def assert_same(theirs: dict[str, Any], ours: dict[str, Any]) -> None:
    """The same events turn by turn, the same provider requests, and the same state
    keys but google-adk's stored credential (see the module)."""
    assert ours["turns"] == theirs["turns"]
    assert ours["provider"] == theirs["provider"]
    assert ours["unused_answers"] == 0
    assert sorted(ours["state"]) == sorted(k for k in theirs["state"] if not stored_by_google_adk(k))


def assert_no_secret(run: dict[str, Any], provider: Provider, *codes: str) -> None:
    """No client secret or token in the stored events, the state or the logs; an
    authorization code only in the client's own answer (the user's event, stored as
    google-adk stores it; the code is spent by then)."""
    raw = run["raw"]

    def answer(event: Any) -> bool:
        return event.author == "user" and any(r.name == REQUEST for r in event.get_function_responses())

    everything = "".join(e.model_dump_json() for e in raw["stored"]) + json.dumps(raw["state"], default=str)
    but_answers = "".join(e.model_dump_json() for e in raw["stored"] if not answer(e))
    but_answers += json.dumps(raw["state"], default=str)
    for secret in (CLIENT_SECRET, *provider.issued, *provider.refresh_tokens):
        assert secret not in everything, "a secret in the session"
        assert secret not in run["logs"], "a secret in a log line"
    for code in (*codes, *CODES):
        assert code not in but_answers, "a code outside the client's answer"
        assert code not in run["logs"], "a code in a log line"


def responses(turn: list[dict[str, Any]]) -> list[Any]:
    return [r[2] for row in turn for r in row["responses"]]


def requests_for(turn: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c[2] for row in turn for c in row["calls"] if c[1] == REQUEST]


WHO = calls(("who_am_i", {}))


def test_an_interactive_login_is_google_adks(gemini: StubServer, provider: Provider,
                                             caplog: pytest.LogCaptureFixture) -> None:
    """The first turn ends asking; the answer runs the call with the exchanged token;
    the next turn reuses the kept token (no new token request)."""
    script = [WHO, gemini_response("You are user 1."), WHO, gemini_response("Still user 1.")]
    theirs, ours = both(script, [say("who am i"), sign_in(provider, "code"), say("and now?")], gemini, provider,
                        caplog)
    first, second, third = theirs["turns"]
    assert responses(first) == [PENDING]
    [asked] = requests_for(first)
    config = asked["authConfig"]
    assert asked["functionCallId"] == "the call's" and config["credentialKey"].startswith("adk_oauth2_")
    oauth2 = config["exchangedAuthCredential"]["oauth2"]
    query = {k: v[0] for k, v in parse_qs(urlsplit(oauth2["authUri"]).query).items()}
    assert query["client_id"] == "agent-client" and query["scope"] == "read" and "clientSecret" not in oauth2
    assert responses(second) == [{"token_number": 1}] and second[-1]["text"] == "You are user 1."
    assert responses(third) == [{"token_number": 1}]
    assert theirs["provider"] == [("POST", "/token", "authorization_code"), ("GET", "/whoami", None),
                                  ("GET", "/whoami", None)]
    # ours asks with the same AuthConfig (its random OAuth state aside)
    [ours_asked] = ours["asked"]
    [their_asked] = theirs["asked"]
    for side in (ours_asked, their_asked):
        side["authConfig"]["exchangedAuthCredential"]["oauth2"].pop("state")
        side["authConfig"]["exchangedAuthCredential"]["oauth2"]["authUri"] = "the URL"
        side.pop("functionCallId")
    assert ours_asked == their_asked
    assert_same(theirs, ours)
    # google-adk keeps the tokens and the client secret in the session state; ours does not
    [kept] = [v for k, v in theirs["state"].items() if stored_by_google_adk(k)]
    assert CLIENT_SECRET in json.dumps(kept, default=str)
    assert_no_secret(ours, provider)


OPENID = PROGRAM.replace(
    "TOOLSET = OpenAPIToolset(spec_dict=SPEC, auth_credential=CREDENTIAL, allow_private_network_access=True)",
    """from google.adk.tools.openapi_tool.auth.auth_helpers import openid_dict_to_scheme_credential

SCHEME, OPENID_CREDENTIAL = openid_dict_to_scheme_credential(
    {"authorization_endpoint": URL + "/authorize", "token_endpoint": URL + "/token",
     "grant_types_supported": ["authorization_code"]}, ["openid", "read"],
    {"client_id": "agent-client", "client_secret": "client-secret-7f3a9c1e5b",
     "redirect_uri": "https://agent.example/callback"})
TOOLSET = OpenAPIToolset(spec_dict=SPEC, auth_scheme=SCHEME, auth_credential=OPENID_CREDENTIAL,
                         allow_private_network_access=True)""")


def test_an_openid_connect_login_is_google_adks(gemini: StubServer, provider: Provider,
                                                caplog: pytest.LogCaptureFixture) -> None:
    """The toolset's scheme from ``openid_dict_to_scheme_credential`` (OpenID Connect
    with its provider's configuration): the same round trip, scopes from the helper."""
    assert OPENID != PROGRAM
    script = [WHO, gemini_response("You are user 1.")]
    theirs, ours = both(script, [say("who am i"), sign_in(provider, "code-oidc")], gemini, provider, caplog,
                        source=OPENID)
    [asked] = requests_for(theirs["turns"][0])
    assert asked["authConfig"]["authScheme"]["type"] == "openIdConnect"
    query = parse_qs(urlsplit(asked["authConfig"]["exchangedAuthCredential"]["oauth2"]["authUri"]).query)
    assert query["scope"] == ["openid read"]
    assert responses(theirs["turns"][1]) == [{"token_number": 1}]
    assert theirs["provider"] == [("POST", "/token", "authorization_code"), ("GET", "/whoami", None)]
    assert_same(theirs, ours)
    assert_no_secret(ours, provider)


def test_an_expired_token_is_refreshed_before_the_call(gemini: StubServer, provider: Provider,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    """A kept token that now expires within google-adk's 60 s leeway (issued for 63 s,
    and more than 3 s passed) is refreshed (refresh grant, the tool's client) before the
    next call, which goes out with the new token."""
    provider.expires_in = 63
    script = [WHO, gemini_response("You are user 1."), WHO, gemini_response("Still you.")]
    theirs, ours = both(script, [say("who am i"), sign_in(provider, "code-exp"),
                                 say("and now?", lambda: time.sleep(3.5))], gemini, provider, caplog)
    assert responses(theirs["turns"][1]) == [{"token_number": 1}]
    assert responses(theirs["turns"][2]) == [{"token_number": 2}]
    assert theirs["provider"] == [("POST", "/token", "authorization_code"), ("GET", "/whoami", None),
                                  ("POST", "/token", "refresh_token"), ("GET", "/whoami", None)]
    assert_same(theirs, ours)
    assert_no_secret(ours, provider)


class Refusing(RevokingProvider):
    """The provider, able to refuse every refresh grant."""

    def __init__(self) -> None:
        super().__init__()
        self.refuse_refresh = False

    def token(self, authorization: str | None, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if self.refuse_refresh and form.get("grant_type") == "refresh_token":
            return 400, {"error": "invalid_grant"}
        return super().token(authorization, form)


@pytest.fixture
def refusing(monkeypatch: pytest.MonkeyPatch) -> Iterator[Refusing]:
    yield from _serve(Refusing(), monkeypatch)


def test_a_401_refreshes_then_asks_again(gemini: StubServer, refusing: Refusing,
                                         caplog: pytest.LogCaptureFixture) -> None:
    """The API rejects the token: refreshed and called again; rejected again with the
    refresh refused: the kept credential is dropped and the user asked again (the
    call's answer is google-adk's pending one); the new sign-in works."""
    provider = refusing

    def revoke_and_refuse() -> None:
        provider.revoke(len(provider.issued))
        provider.refuse_refresh = True

    def setup() -> None:
        provider.refuse_refresh = False
        provider.revoke_new = False

    script = [WHO, gemini_response("You are user 1."), WHO, gemini_response("You are user 2."), WHO,
              gemini_response("You are user 3.")]
    steps = [say("who am i", setup), sign_in(provider, "code-401"),
             say("and now?", lambda: provider.revoke(1)), say("again?", revoke_and_refuse),
             sign_in(provider, "code-401")]
    theirs, ours = both(script, steps, gemini, provider, caplog)
    turns = theirs["turns"]
    assert responses(turns[1]) == [{"token_number": 1}]
    assert responses(turns[2]) == [{"token_number": 2}]  # refreshed after the 401, called again
    assert responses(turns[3]) == [PENDING] and len(requests_for(turns[3])) == 1  # asked again
    assert responses(turns[4]) == [{"token_number": 3}]
    assert [p for p in theirs["provider"] if p[0] == "POST"] == [
        ("POST", "/token", "authorization_code"), ("POST", "/token", "refresh_token"),
        ("POST", "/token", "refresh_token"), ("POST", "/token", "authorization_code")]
    assert_same(theirs, ours)
    budgets = {k: v for k, v in ours["state"].items() if k.startswith("_adk_")}
    assert budgets and set(budgets.values()) == {0}  # spent, then refilled by the working call
    assert_no_secret(ours, provider, *provider.revoked)


def test_a_public_client_uses_pkce(gemini: StubServer, pkce: PkceProvider, caplog: pytest.LogCaptureFixture) -> None:
    """No client secret: the authorization URL carries an S256 challenge and the code
    is exchanged with its verifier (the provider checks it)."""
    public = PROGRAM.replace('client_secret="client-secret-7f3a9c1e5b", ', "")
    assert public != PROGRAM
    script = [WHO, gemini_response("You are user 1.")]
    theirs, ours = both(script, [say("who am i"), sign_in(pkce, "code-pkce")], gemini, pkce, caplog,
                        source=public)
    for side in (theirs, ours):
        [asked] = side["asked"]
        query = {k: v[0] for k, v in parse_qs(urlsplit(
            asked["authConfig"]["exchangedAuthCredential"]["oauth2"]["authUri"]).query).items()}
        assert query["code_challenge_method"] == "S256" and query["code_challenge"]
        assert responses(side["turns"][1]) == [{"token_number": 1}]
    assert [p for p in theirs["provider"] if p[0] == "POST"] == [("POST", "/token", "authorization_code")]
    assert_same(theirs, ours)


# -- credentials applied without asking ------------------------------------------------


class KeyApi:
    """An API that wants ``X-Api-Key: <key>`` or ``Authorization: Bearer <token>``, and
    serves an OpenID Connect discovery document."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str | None]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path == "/.well-known/openid-configuration":
                    body: dict[str, Any] = {"issuer": api.url, "authorization_endpoint": api.url + "/authorize",
                                            "token_endpoint": api.url + "/token",
                                            "grant_types_supported": ["authorization_code"]}
                    status = 200
                else:
                    api.seen.append({"key": self.headers.get("X-Api-Key"),
                                     "authorization": self.headers.get("Authorization")})
                    ok = self.headers.get("X-Api-Key") == "sk-agent-key-123" or \
                        self.headers.get("Authorization") == "Bearer static-token-456"
                    status, body = (200, {"hello": "agent"}) if ok else (401, {"error": "no"})
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)  # (a short poll: shutdown() returns at once)


@pytest.fixture
def key_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[KeyApi]:
    api = KeyApi()
    api.thread.start()
    monkeypatch.setenv("ADK_TEST_KEY_API_URL", api.url)
    try:
        yield api
    finally:
        api.server.shutdown()
        api.server.server_close()
        api.thread.join(timeout=10)


KEY_PROGRAM = '''
import os

from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools.openapi_tool import OpenAPIToolset
from google.adk.tools.openapi_tool.auth.auth_helpers import token_to_scheme_credential
from google.genai import types

URL = os.environ["ADK_TEST_KEY_API_URL"]
SPEC = {"openapi": "3.0.3", "info": {"title": "Hello", "version": "1"}, "servers": [{"url": URL}],
        "paths": {"/hello": {"get": {"operationId": "sayHello", "responses": {"200": {"description": "ok"}}}}}}
SCHEME, CREDENTIAL = token_to_scheme_credential(*ARGS)
TOOLSET = OpenAPIToolset(spec_dict=SPEC, auth_scheme=SCHEME, auth_credential=CREDENTIAL,
                         allow_private_network_access=True)
root_agent = Agent(name="hello", model="gemini-2.5-flash", instruction="Say hello.", tools=[TOOLSET])
''' + PROGRAM[PROGRAM.index("\n\nasync def main"):]


@pytest.mark.parametrize(("args", "seen"), [
    ('"apikey", "header", "X-Api-Key", "sk-agent-key-123"', {"key": "sk-agent-key-123", "authorization": None}),
    ('"oauth2Token", None, None, "static-token-456"', {"key": None, "authorization": "Bearer static-token-456"}),
])
def test_a_key_or_bearer_token_is_applied_without_asking(gemini: StubServer, key_api: KeyApi, args: str,
                                                         seen: dict[str, Any]) -> None:
    source = KEY_PROGRAM.replace("*ARGS", args)
    runs = []
    for text in (source, rewritten(source)):
        key_api.seen.clear()
        _, result = run_program(text, [calls(("say_hello", {})), gemini_response("Hello!")], gemini,
                                [say("hello")])
        runs.append(([_rows(events) for events in result["turns"]], list(key_api.seen), len(gemini.responses)))
    theirs, ours = runs
    assert theirs[2] == 0 and responses(theirs[0][0]) == [{"hello": "agent"}]
    assert not any(requests_for(turn) for turn in theirs[0])  # nobody was asked
    assert theirs[1] == [seen]
    assert ours == theirs


def test_a_key_the_user_gives_is_asked_for_and_applied(gemini: StubServer, key_api: KeyApi,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    """An API-key scheme with no key: the run asks (``adk_request_credential`` with the
    scheme), the client answers with the key, the call runs again with it; the next
    turn uses the kept key without asking. The key is one this process already knows as
    a secret (another user gave the same key): the stored answer has it blanked out,
    and the call still gets it from the user's message."""
    from adk_actors._secrets import register_secret

    register_secret("sk-agent-key-123")
    source = KEY_PROGRAM.replace("*ARGS", '"apikey", "header", "X-Api-Key"')

    def give_key(previous: list[Any]) -> tuple[str, Any, str | None]:
        [asked] = [c for e in previous for c in e.get_function_calls() if c.name == REQUEST]
        config = copy.deepcopy(dict(asked.args["authConfig"]))
        config["exchangedAuthCredential"] = {"authType": "apiKey", "apiKey": "sk-agent-key-123"}
        return "answer", config, asked.id

    hello = calls(("say_hello", {}))
    script = [hello, gemini_response("Hello!"), hello, gemini_response("Hello again!")]
    runs = []
    for text in (source, rewritten(source)):
        key_api.seen.clear()
        caplog.clear()
        _, result = run_program(text, script, gemini, [say("hello"), give_key, say("again")])
        runs.append({"turns": [_rows(events) for events in result["turns"]], "seen": list(key_api.seen),
                     "unused": len(gemini.responses), "state": sorted(result["state"]), "logs": caplog.text,
                     "stored": "".join(e.model_dump_json() for e in result["stored"]
                                       if not any(r.name == REQUEST for r in e.get_function_responses()))})
    theirs, ours = runs
    first, second, third = theirs["turns"]
    [asked] = requests_for(first)
    assert asked["authConfig"]["authScheme"] == {"type": "apiKey", "in": "header", "name": "X-Api-Key"}
    assert responses(second) == responses(third) == [{"hello": "agent"}] and not requests_for(third)
    assert theirs["seen"] == [{"key": "sk-agent-key-123", "authorization": None}] * 2 and theirs["unused"] == 0
    for key in ("turns", "seen", "unused"):
        assert ours[key] == theirs[key], key
    assert ours["state"] == [k for k in theirs["state"] if not stored_by_google_adk(k)]
    assert any(stored_by_google_adk(k) for k in theirs["state"])
    # google-adk keeps the user's key in the session state; ours only in the user's own answer
    assert "sk-agent-key-123" not in ours["stored"] and "sk-agent-key-123" not in ours["logs"]


def test_the_openid_helpers_are_google_adks(key_api: KeyApi) -> None:
    """``openid_url_to_scheme_credential`` reads the provider's discovery document;
    both helpers give google-adk's scheme and credential; bad input is google-adk's
    ValueError."""
    from google.adk.tools.openapi_tool.auth import auth_helpers as theirs

    from adk_actors.tools.openapi_tool.auth import auth_helpers as ours

    url = key_api.url + "/.well-known/openid-configuration"
    client = {"web": {"client_id": "agent-client", "client_secret": CLIENT_SECRET, "redirect_uri": "https://x/cb"}}
    made = []
    for helpers in (theirs, ours):
        scheme, credential = helpers.openid_url_to_scheme_credential(url, ["openid", "email"], copy.deepcopy(client))
        made.append((scheme.model_dump(mode="json", by_alias=True, exclude_none=True),
                     credential.model_dump(mode="json", exclude_none=True)))
        with pytest.raises(ValueError, match="Missing required fields in credential_dict: client_secret"):
            helpers.openid_dict_to_scheme_credential({"authorization_endpoint": "a", "token_endpoint": "t"}, [],
                                                     {"client_id": "x"})
        with pytest.raises(ValueError, match="Invalid OpenID Connect configuration"):
            helpers.openid_dict_to_scheme_credential({"token_endpoint": "t"}, [], client)
        with pytest.raises(ValueError, match="Failed to fetch OpenID configuration"):
            helpers.openid_url_to_scheme_credential("http://127.0.0.1:9/nothing", [], client)
    assert made[0][0] == made[1][0]
    made[1][1]["oauth2"].setdefault("token_endpoint_auth_method", "client_secret_basic")  # google-adk's default
    assert made[1][1] == made[0][1]
    assert CLIENT_SECRET not in repr(ours.openid_dict_to_scheme_credential(
        {"authorization_endpoint": "a", "token_endpoint": "t"}, [], copy.deepcopy(client))[1])


# -- on a real host: the credential service keeps the token ------------------------------


def test_on_a_host_a_401_refreshes_then_asks_again_once(refusing: Refusing, request: pytest.FixtureRequest,
                                                        tmp_path: Path) -> None:
    from test_adk56_credential_request import _answer
    from test_adk56_openapi_user_auth import CALL

    from adk_actors.runtime import Host, HostConfig

    provider = refusing
    system = request.getfixturevalue("actor_system")

    def said(events: list[Any]) -> Any:
        return [r.response for e in events if e.content is not None for r in e.content.function_responses]

    with Host(HostConfig(apps={"who": "adk56_oauth_agent:who_agent"}, data_dir=str(tmp_path / "data")),
              system=system) as host:
        runner = host.runner("who")
        runner.create_session("ann", "s1")

        def sign_in_with(code: str) -> list[Any]:
            """A call that asks, then the client's answer (the redirect in the AuthConfig)."""
            [asked] = [c for e in runner.run("ann", "s1", CALL) for c in e.get_function_calls() if c.name == REQUEST]
            oauth2 = asked.args["authConfig"]["exchangedAuthCredential"]["oauth2"]
            return list(runner.run("ann", "s1", _answer(asked, provider.sign_in(oauth2["authUri"], code))))

        def budget() -> Any:
            state = runner.get_session("ann", "s1").state
            [value] = [v for k, v in state.items() if k.startswith("_adk_reauth_requests:")] or [None]
            return value

        assert said(sign_in_with("code-host-1"))[-1] == {"token_number": 1}
        provider.revoke(1)  # rejected: refreshed with the kept refresh token, called again
        assert said(list(runner.run("ann", "s1", CALL)))[-1] == {"token_number": 2}
        provider.revoke(2)
        provider.refuse_refresh = True  # rejected, and the refresh refused: the user is asked again
        again = list(runner.run("ann", "s1", CALL))
        assert said(again) == [PENDING] and any(c.name == REQUEST for e in again for c in e.get_function_calls())
        assert budget() == 1
        assert said(sign_in_with("code-host-2"))[-1] == {"token_number": 3}
        assert budget() == 0  # refilled by the working call
        # asked once; the new token is rejected too and cannot be refreshed: google-adk's error
        provider.revoke(3)
        assert said(list(runner.run("ann", "s1", CALL)))[-1] == PENDING
        provider.revoke_new = True
        failed = said(sign_in_with("code-host-3"))
        assert "The user already re-authorized this connection" in failed[-1]["error"]
        everything = "".join(e.to_json() for e in runner.get_session("ann", "s1").events)
        everything += json.dumps(runner.get_session("ann", "s1").state, default=str)
    logs = "".join(path.read_text(errors="replace") for path in tmp_path.rglob("*.log"))
    for secret in (CLIENT_SECRET, *provider.issued, *provider.revoked, *provider.refresh_tokens):
        assert secret not in everything and secret not in logs


# -- google-adk's CredentialManager in a custom tool ----------------------------------------

MANAGER_PROGRAM = '''
import os

import httpx
from fastapi.openapi.models import OAuth2, OAuthFlowAuthorizationCode, OAuthFlowClientCredentials, OAuthFlows
from google.adk.agents import Agent
from google.adk.auth import AuthConfig, AuthCredential, AuthCredentialTypes, OAuth2Auth
from google.adk.auth.credential_manager import CredentialManager
from google.adk.runners import InMemoryRunner
from google.adk.tools.tool_context import ToolContext
from google.genai import types

URL = os.environ["ADK_TEST_OAUTH_PROVIDER_URL"]
AUTH = AuthConfig(auth_scheme=OAuth2(flows=OAuthFlows(FLOW)), credential_key="who_api",
                  raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(
                      client_id="agent-client", client_secret="client-secret-7f3a9c1e5b",
                      redirect_uri="https://agent.example/callback")))


async def who_am_i(tool_context: ToolContext) -> dict:
    """Says who the user is."""
    manager = CredentialManager(AUTH)
    credential = await manager.get_auth_credential(tool_context)
    if credential is None:
        await manager.request_credential(tool_context)
        return {"pending": True}
    async with httpx.AsyncClient() as client:
        answer = await client.get(URL + "/whoami", headers={"Authorization": "Bearer " + credential.oauth2.access_token})
    return answer.json()


root_agent = Agent(name="who", model="gemini-2.5-flash", instruction="Say who the user is.", tools=[who_am_i])
''' + PROGRAM[PROGRAM.index("\n\nasync def main"):]

AUTH_CODE = ('authorizationCode=OAuthFlowAuthorizationCode(authorizationUrl=URL + "/authorize", '
             'tokenUrl=URL + "/token", scopes={"read": "read"})')
CLIENT = 'clientCredentials=OAuthFlowClientCredentials(tokenUrl=URL + "/token", scopes={"read": "read"})'


class Machines(Provider):
    """The provider, also granting client credentials."""

    def token(self, authorization: str | None, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if form.get("grant_type") == "client_credentials":
            form = {**form, "grant_type": "refresh_token", "refresh_token": "machine"}
            self.refresh_tokens.add("machine")
        return super().token(authorization, form)


@pytest.fixture
def machines(monkeypatch: pytest.MonkeyPatch) -> Iterator[Machines]:
    yield from _serve(Machines(), monkeypatch)


def test_the_credential_manager_in_a_custom_tool_is_google_adks(gemini: StubServer, provider: Provider,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    """Asked, answered (the code exchanged), used; without a credential service nothing
    is kept, so the next turn asks again, as google-adk's does."""
    source = MANAGER_PROGRAM.replace("FLOW", AUTH_CODE)
    script = [WHO, gemini_response("You are user 1."), WHO]
    theirs, ours = both(script, [say("who am i"), sign_in(provider, "code-mgr"), say("and now?")], gemini,
                        provider, caplog, source=source)
    first, second, third = theirs["turns"]
    assert responses(first) == [{"pending": True}] and len(requests_for(first)) == 1
    assert responses(second) == [{"token_number": 1}]
    assert responses(third) == [{"pending": True}] and len(requests_for(third)) == 1
    assert_same(theirs, ours)
    assert_no_secret(ours, provider)


def test_the_credential_manager_takes_client_credentials_without_asking(gemini: StubServer, machines: Machines,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    source = MANAGER_PROGRAM.replace("FLOW", CLIENT)
    script = [WHO, gemini_response("You are a machine.")]
    theirs, ours = both(script, [say("who am i")], gemini, machines, caplog, source=source)
    assert responses(theirs["turns"][0]) == [{"token_number": 1}] and not requests_for(theirs["turns"][0])
    assert [p for p in theirs["provider"] if p[0] == "POST"] == [("POST", "/token", "client_credentials")]
    assert_same(theirs, ours)


def test_on_a_host_the_credential_manager_keeps_the_token_in_the_credential_service(
        provider: Provider, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Asked, answered, used; the next turn's call gets the kept token (no token
    request, no asking), also from a new host on the same data; no secret in the
    session or the logs."""
    from test_adk56_credential_request import _answer

    from adk_actors.runtime import Host, HostConfig

    system = request.getfixturevalue("actor_system")
    config = HostConfig(apps={"who": "adk56_manager_agent:who_agent"}, data_dir=str(tmp_path / "data"))

    def said(events: list[Any]) -> Any:
        return [r.response for e in events if e.content is not None for r in e.content.function_responses]

    with Host(config, system=system) as host:
        runner = host.runner("who")
        runner.create_session("ann", "s1")
        first = list(runner.run("ann", "s1", "call who_am_i"))
        assert said(first) == [{"pending": True}]
        [asked] = [c for e in first for c in e.get_function_calls() if c.name == REQUEST]
        oauth2 = asked.args["authConfig"]["exchangedAuthCredential"]["oauth2"]
        code = f"code-host-mgr-{uuid.uuid4().hex[:8]}"
        assert said(list(runner.run("ann", "s1", _answer(asked, provider.sign_in(oauth2["authUri"], code)))))[
            -1] == {"token_number": 1}
        again = list(runner.run("ann", "s1", "call who_am_i"))
        assert said(again) == [{"token_number": 1}] and not any(c.name == REQUEST for e in again
                                                                 for c in e.get_function_calls())
        assert [r["form"]["grant_type"] for r in provider.of("POST")] == ["authorization_code"]
    with Host(config, system=system) as host:  # a new host: the token is still kept
        runner = host.runner("who")
        assert said(list(runner.run("ann", "s1", "call who_am_i"))) == [{"token_number": 1}]
        session = runner.get_session("ann", "s1")
        everything = "".join(e.to_json() for e in session.events) + json.dumps(session.state, default=str)
    logs = "".join(path.read_text(errors="replace") for path in tmp_path.rglob("*.log"))  # what the host wrote
    for secret in (CLIENT_SECRET, *provider.issued, *provider.refresh_tokens):
        assert secret not in everything and secret not in logs
