"""google-adk's credential request round trip (issue 56), side by side with google-adk
2.13: a custom tool asks with ``tool_context.request_credential(auth_config)`` (an
OAuth2 authorization code flow, its client id and secret in the tool's ``AuthConfig``),
the run emits the long-running ``adk_request_credential`` call and ends, the client
answers with a function response of that name carrying the ``AuthConfig`` with the
redirect the user landed on (``auth_response_uri``), and the next run runs the ORIGINAL
call again, whose ``tool_context.get_auth_response(auth_config)`` now exchanges the code
at the provider's token endpoint and calls the API with the token.

Each case is one google-adk program run twice (as written on google-adk, then with its
imports rewritten on ours) against one Gemini REST stand-in and a real OAuth2 provider
and API on 127.0.0.1 (tests/test_adk56_openapi_user_auth.py's), reset between the two
runs. Compared: every event of both turns through google-adk's readers (call ids by
order of appearance; the request's random OAuth state and the call id it names made
comparable), the request's arguments, what the tool saw, the stored events, the final
state, the model requests, and the provider's requests.

Then on a real host (tests/adk56_credential_agent.py imported by the run workers): the
same round trip over the Runner, and no client secret, code or token in any event, the
session state, or a log.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, event_rows, request_rows, rewritten, run_program
from test_adk56_openapi_user_auth import CLIENT_ID, CLIENT_SECRET, REDIRECT_URI, Provider

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini
REQUEST = "adk_request_credential"

PROGRAM = '''
import os

import httpx
from fastapi.openapi.models import OAuth2, OAuthFlowAuthorizationCode, OAuthFlows
from google.adk.agents import Agent
from google.adk.auth import AuthConfig, AuthCredential, AuthCredentialTypes, OAuth2Auth
from google.adk.runners import InMemoryRunner
from google.adk.tools.tool_context import ToolContext
from google.genai import types

PROVIDER = os.environ["ADK_TEST_OAUTH_PROVIDER_URL"]
SEEN = []
AUTH = AuthConfig(
    auth_scheme=OAuth2(flows=OAuthFlows(authorizationCode=OAuthFlowAuthorizationCode(
        authorizationUrl=PROVIDER + "/authorize", tokenUrl=PROVIDER + "/token", scopes={"read": "read"}))),
    raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(
        client_id="agent-client", client_secret="client-secret-7f3a9c1e5b",
        redirect_uri="https://agent.example/callback")),
    credential_key=KEY)


def who_am_i(tool_context: ToolContext) -> dict:
    """Says who the user is."""
    credential = tool_context.get_auth_response(AUTH)
    SEEN.append(None if credential is None else bool(credential.oauth2 and credential.oauth2.access_token))
    if credential is None or credential.oauth2 is None or not credential.oauth2.access_token:
        tool_context.request_credential(AUTH)
        return {"pending": True, "message": "Sign in first."}
    answer = httpx.get(PROVIDER + "/whoami", headers={"Authorization": "Bearer " + credential.oauth2.access_token})
    return answer.json()


ANSWER_ID = None
root_agent = Agent(name="who", model="gemini-2.5-flash", instruction="Say who the user is.", tools=[who_am_i])


async def main(answer):
    runner = InMemoryRunner(agent=root_agent, app_name="auth")
    session = await runner.session_service.create_session(app_name="auth", user_id="ann")
    first, second, asked = [], [], None
    message = types.Content(role="user", parts=[types.Part(text="who am i")])
    async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
        first.append(event)
        asked = next((c for c in event.get_function_calls() if c.name == "adk_request_credential"), asked)
    if asked is not None and answer is not None:
        reply = types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
            name="adk_request_credential", id=ANSWER_ID or asked.id, response=answer(dict(asked.args))))])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=reply):
            second.append(event)
    stored = await runner.session_service.get_session(app_name="auth", user_id="ann", session_id=session.id)
    await runner.close()
    return {"first": first, "second": second, "asked": None if asked is None else dict(asked.args),
            "seen": list(SEEN), "stored": stored.events, "state": dict(stored.state)}
'''


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[Provider]:
    provider = Provider()
    provider.thread.start()
    monkeypatch.setenv("ADK_TEST_OAUTH_PROVIDER_URL", provider.url)
    try:
        yield provider
    finally:
        provider.server.shutdown()
        provider.server.server_close()
        provider.thread.join(timeout=10)


def _reset(provider: Provider) -> None:
    provider.requests.clear()
    provider.codes.clear()
    provider.issued.clear()
    provider.refresh_tokens.clear()


def _comparable(value: Any, states: dict[str, str]) -> Any:
    """``value`` with each random OAuth state (the ``state`` of a credential, and in an
    ``auth_uri`` or a redirect) named by order of appearance."""
    if isinstance(value, dict):
        oauth_state = value.get("state")
        if isinstance(oauth_state, str):
            states.setdefault(oauth_state, f"state-{len(states)}")
        return {k: _comparable(v, states) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_comparable(v, states) for v in value)
    if isinstance(value, str):
        for found, name in states.items():
            value = value.replace(found, name)
    return value


def _rows(events: list[Any]) -> list[dict[str, Any]]:
    """``event_rows``, with a credential request's ``functionCallId`` (random on both
    sides) given as whether it is the id of the call before it, and OAuth states named."""
    call_ids = [c.id for e in events for c in e.get_function_calls() if c.name != REQUEST]
    rows = event_rows(events)
    states: dict[str, str] = {}
    for row in rows:
        for _, name, args in row["calls"]:
            if name == REQUEST:
                args["functionCallId"] = "the call's" if args.get("functionCallId") in call_ids else "another"
    return _comparable(rows, states)  # type: ignore[no-any-return]


def _answer_with(provider: Provider, how: str, code: str) -> Any:
    """The client's answer to the request's arguments: the user signs in at its
    ``authUri`` and the ``AuthConfig`` comes back with the redirect (``how``:
    ``config``; ``credential``, the exchanged credential alone; ``forged``, a redirect
    and state that are not the request's; ``malformed``, nothing google-adk can read)."""
    def answer(asked: dict[str, Any]) -> Any:
        config = copy.deepcopy(asked["authConfig"])
        oauth2 = config["exchangedAuthCredential"]["oauth2"]
        if how == "malformed":
            return {"hello": "world"}
        if how == "forged":
            oauth2["authResponseUri"] = provider.sign_in(oauth2["authUri"], code, state="forged-state")
            oauth2["state"] = "forged-state"
        else:
            oauth2["authResponseUri"] = provider.sign_in(oauth2["authUri"], code)
        return config["exchangedAuthCredential"] if how == "credential" else config
    return answer


def _run(source: str, answers: list[StubResponse], how: str | None, server: StubServer,
         provider: Provider, code: str) -> dict[str, Any]:
    _reset(provider)
    _, result = run_program(source, answers, server, None if how is None else _answer_with(provider, how, code))
    states: dict[str, str] = {}
    asked = _comparable(result["asked"], states)
    if asked is not None:
        asked["functionCallId"] = "the call's"
    return {"first": _rows(result["first"]), "second": _rows(result["second"]), "asked": asked,
            "seen": result["seen"], "stored": _rows(result["stored"]), "state": result["state"],
            "requests": request_rows(server), "unused_answers": len(server.responses),
            "provider": [(r["method"], r["path"], r.get("form", {}).get("grant_type")) for r in provider.requests]}


def both(answers: list[StubResponse], how: str | None, server: StubServer, provider: Provider, *,
         key: str = '"who_api"') -> tuple[dict[str, Any], dict[str, Any]]:
    source = PROGRAM.replace("credential_key=KEY", f"credential_key={key}")
    # the user signs in with the same code on both sides, a new one in each case (a code
    # seen by ours is a secret from then on: blanked out of what is stored after it)
    code = f"code-{uuid.uuid4().hex[:12]}"
    theirs = _run(source, answers, how, server, provider, code)
    assert theirs["unused_answers"] == 0, "the case must use its script on google-adk"
    ours = _run(rewritten(source), answers, how, server, provider, code)
    assert "google" not in rewritten(source)
    return theirs, ours


def assert_same(theirs: dict[str, Any], ours: dict[str, Any]) -> None:
    for key in ("first", "second", "asked", "seen", "stored", "state", "requests", "unused_answers", "provider"):
        assert ours[key] == theirs[key], key


SCRIPT = [calls(("who_am_i", {})), gemini_response("You are user 1.")]


def test_the_oauth2_round_trip_is_google_adks(gemini: StubServer, provider: Provider) -> None:
    theirs, ours = both(SCRIPT, "config", gemini, provider)
    asked = theirs["asked"]
    oauth2 = asked["authConfig"]["exchangedAuthCredential"]["oauth2"]
    query = {k: v[0] for k, v in parse_qs(urlsplit(oauth2["authUri"]).query).items()}
    assert query == {"response_type": "code", "client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI, "scope": "read",
                     "state": "state-0", "access_type": "offline", "prompt": "consent"}
    assert asked["authConfig"]["credentialKey"] == "who_api" and CLIENT_SECRET not in json.dumps(asked)
    # first turn: the call, the long-running request, the call's pending answer; the turn ends
    assert [(r["calls"] and r["calls"][0][1], r["long_running"]) for r in theirs["first"]] == [
        ("who_am_i", []), (REQUEST, ["call-1"]), ([], [])]
    # second turn: the ORIGINAL call run again with the token, then the model's answer
    assert [r["responses"] for r in theirs["second"]] == [[("call-0", "who_am_i", {"token_number": 1})], []]
    assert theirs["seen"] == [None, True]
    assert theirs["provider"] == [("POST", "/token", "authorization_code"), ("GET", "/whoami", None)]
    assert_same(theirs, ours)


def test_the_answer_may_be_the_credential_alone(gemini: StubServer, provider: Provider) -> None:
    theirs, ours = both(SCRIPT, "credential", gemini, provider)
    assert theirs["seen"] == [None, True]
    assert_same(theirs, ours)


def test_the_default_credential_key_is_google_adks(gemini: StubServer, provider: Provider) -> None:
    theirs, ours = both(SCRIPT, "config", gemini, provider, key="None")
    assert theirs["asked"]["authConfig"]["credentialKey"].startswith("adk_oauth2_")
    assert_same(theirs, ours)


def test_a_malformed_answer_runs_the_call_again_and_it_asks_again(gemini: StubServer, provider: Provider) -> None:
    theirs, ours = both([*SCRIPT[:1], gemini_response("Please sign in.")], "malformed", gemini, provider)
    assert theirs["seen"] == [None, None] and theirs["provider"] == []
    assert_same(theirs, ours)


def test_a_forged_redirect_is_never_exchanged_here(gemini: StubServer, provider: Provider) -> None:
    """Ours refuses an answer whose OAuth state is not the one the request carried
    (google-adk's warning, as its workflows do); the call runs again, finds no
    credential and asks again; the provider is never asked for a token."""
    _reset(provider)
    _, result = run_program(rewritten(PROGRAM.replace("credential_key=KEY", 'credential_key="who_api"')),
                            [*SCRIPT[:1], gemini_response("Please sign in.")], gemini,
                            _answer_with(provider, "forged", "code-forged-1"))
    assert result["seen"] == [None, None] and provider.requests == []
    assert any(c.name == "who_am_i" for e in result["second"] for c in e.get_function_responses())


def test_an_answer_to_no_request_is_google_adks_value_error(gemini: StubServer, provider: Provider) -> None:
    source = PROGRAM.replace("credential_key=KEY", 'credential_key="who_api"').replace(
        "ANSWER_ID = None", 'ANSWER_ID = "adk-no-such-request"')
    raised = []
    for text in (source, rewritten(source)):
        _reset(provider)
        with pytest.raises(ValueError) as error:
            run_program(text, SCRIPT, gemini, _answer_with(provider, "config", "code-never-asked"))
        raised.append(str(error.value))
    assert raised[0] == raised[1] and "Function call not found for function response ids" in raised[0]


def test_request_credential_outside_a_call_and_with_no_auth_config() -> None:
    from types import SimpleNamespace

    from google.adk.agents.context import Context as TheirContext

    from adk_actors.tools import ToolContext

    context = ToolContext(SimpleNamespace(session=SimpleNamespace(state={})), None)
    with pytest.raises(ValueError) as ours:
        context.request_credential(object())
    theirs = TheirContext.__new__(TheirContext)
    theirs.function_call_id = None
    with pytest.raises(ValueError) as google:
        TheirContext.request_credential(theirs, None)  # type: ignore[arg-type]
    assert str(ours.value) == str(google.value)
    with pytest.raises(TypeError, match="AuthConfig"):
        ToolContext(SimpleNamespace(session=SimpleNamespace(state={})), "call-1").request_credential({"x": 1})


# -- on a real host ----------------------------------------------------------------------


@pytest.fixture
def system(provider: Provider, request: pytest.FixtureRequest) -> Any:
    """The actor system, started after the provider's URL is in the environment its
    run workers inherit (the ``provider`` fixture sets it)."""
    return request.getfixturevalue("actor_system")


def _answer(asked: Any, redirect: str) -> Any:
    """The client's function response to the request ``asked``: its ``AuthConfig``
    with the redirect the user landed on."""
    from adk_actors.types import Content, FunctionResponse, Part

    config = copy.deepcopy(dict(asked.args["authConfig"]))
    config["exchangedAuthCredential"]["oauth2"]["authResponseUri"] = redirect
    return Content(role="user", parts=[Part(function_response=FunctionResponse(name=REQUEST, id=asked.id,
                                                                               response=config))])


def test_the_round_trip_on_a_host_keeps_every_secret_out(provider: Provider, system: Any, tmp_path: Path) -> None:
    from adk_actors.runtime import Host, HostConfig

    with Host(HostConfig(apps={"who": "adk56_credential_agent:who_agent"}, data_dir=str(tmp_path / "data")),
              system=system) as host:
        runner = host.runner("who")
        runner.create_session("ann", "s1")
        first = list(runner.run("ann", "s1", "call who_am_i"))
        [asked] = [c for e in first for c in e.get_function_calls() if c.name == REQUEST]
        [original] = [c for e in first for c in e.get_function_calls() if c.name == "who_am_i"]
        assert asked.args["functionCallId"] == original.id and provider.requests == []
        assert any(asked.id in (e.long_running_tool_ids or ()) for e in first)
        assert first[-1].content.function_responses[0].response == {"pending": True, "message": "Sign in first."}
        oauth2 = asked.args["authConfig"]["exchangedAuthCredential"]["oauth2"]
        assert CLIENT_SECRET not in json.dumps(asked.args)

        code = f"code-{uuid.uuid4().hex[:12]}"
        second = list(runner.run("ann", "s1", _answer(asked, provider.sign_in(oauth2["authUri"], code))))
        # the ORIGINAL call ran again (same id), with the token the code was exchanged for
        rerun = [r for e in second if e.author == "who" for r in e.get_function_responses()]
        assert [(r.id, r.response) for r in rerun] == [(original.id, {"token_number": 1})]
        assert second[-1].content.text == 'who_am_i said: {"token_number": 1}'
        assert [(r["method"], r["path"]) for r in provider.requests] == [("POST", "/token"), ("GET", "/whoami")]
        assert provider.requests[0]["form"]["code"] == code

        # an answer naming no request is google-adk's error; the session is not harmed
        from adk_actors.types import Content, FunctionResponse, Part
        bogus = Content(role="user", parts=[Part(function_response=FunctionResponse(
            name=REQUEST, id="adk-no-such-request", response={"authScheme": {"type": "oauth2"}}))])
        with pytest.raises(Exception, match="Function call not found for function response ids"):
            list(runner.run("ann", "s1", bogus))
        after = list(runner.run("ann", "s1", "call who_am_i"))  # the token lived for that invocation only
        assert any(c.name == REQUEST for e in after for c in e.get_function_calls())

        session = runner.get_session("ann", "s1")
        everything = "".join(e.to_json() for e in (*first, *second, *after))
        everything += "".join(e.to_json() for e in session.events) + json.dumps(session.state, default=str)
    logs = "".join(path.read_text(errors="replace") for path in tmp_path.rglob("*.log"))
    assert logs  # the host wrote its logs
    for secret in (CLIENT_SECRET, *provider.issued, *provider.refresh_tokens):
        assert secret not in everything and secret not in logs
    assert not any(key.startswith("temp:") for key in session.state)


# -- a provider that revokes tokens (the OpenAPI tool's 401) ------------------------------


class RevokingProvider(Provider):
    """The provider, able to revoke its tokens (the API answers 401 ``invalid_token``
    to them) and to issue tokens already revoked."""

    def __init__(self) -> None:
        super().__init__()
        self.revoked: list[str] = []
        self.revoke_new = False

    def revoke(self, number: int) -> None:
        self.revoked.append(self.issued[number - 1])
        self.issued[number - 1] = f"revoked-{number}"

    def token(self, authorization: str | None, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        status, body = super().token(authorization, form)
        if status == 200 and self.revoke_new:
            self.revoke(len(self.issued))
        return status, body


# The OpenAPI tool's recovery from a 401 (refresh, then the user asked again once) is
# tested side by side with google-adk in tests/test_adk56_openapi_auth.py, which uses
# this provider.


# -- PKCE for a public client (no client secret) ---------------------------------------


class PkceProvider(Provider):
    """The provider, serving a public client: a code signed in with a PKCE challenge
    is exchanged only with the verifier of that challenge (RFC 7636, S256)."""

    def __init__(self) -> None:
        super().__init__()
        self.challenges: dict[str, str] = {}

    def sign_in(self, auth_uri: str, code: str, state: str | None = None) -> str:
        query = {k: v[0] for k, v in parse_qs(urlsplit(auth_uri).query).items()}
        if query.get("code_challenge_method") == "S256":
            self.challenges[code] = query["code_challenge"]
        return super().sign_in(auth_uri, code, state)

    def token(self, authorization: str | None, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        import base64
        import hashlib

        secret = form.get("client_secret")
        if authorization and authorization.startswith("Basic "):
            secret = base64.b64decode(authorization[6:]).decode().partition(":")[2]
        code = form.get("code", "")
        if secret or form.get("grant_type") != "authorization_code" or code not in self.challenges:
            return 401, {"error": "invalid_client"}
        verifier = form.get("code_verifier", "")
        made = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
        if made != self.challenges.pop(code):
            return 400, {"error": "invalid_grant"}
        return super().token(f"Basic {base64.b64encode(f'{CLIENT_ID}:{CLIENT_SECRET}'.encode()).decode()}", form)


@pytest.fixture
def pkce(monkeypatch: pytest.MonkeyPatch) -> Iterator[PkceProvider]:
    provider = PkceProvider()
    provider.thread.start()
    monkeypatch.setenv("ADK_TEST_OAUTH_PROVIDER_URL", provider.url)
    try:
        yield provider
    finally:
        provider.server.shutdown()
        provider.server.server_close()
        provider.thread.join(timeout=10)


def test_a_public_client_uses_pkce_as_google_adk_does(gemini: StubServer, pkce: PkceProvider) -> None:
    public = PROGRAM.replace('client_id="agent-client", client_secret="client-secret-7f3a9c1e5b",',
                             'client_id="agent-client",').replace("credential_key=KEY", 'credential_key="who_api"')
    assert public != PROGRAM
    code = f"code-{uuid.uuid4().hex[:12]}"
    runs = []
    for source in (public, rewritten(public)):
        pkce.challenges.clear()
        runs.append(_run(source, SCRIPT, "config", gemini, pkce, code))
    theirs, ours = runs
    oauth2 = theirs["asked"]["authConfig"]["exchangedAuthCredential"]["oauth2"]
    query = {k: v[0] for k, v in parse_qs(urlsplit(oauth2["authUri"]).query).items()}
    assert query["code_challenge_method"] == "S256" and oauth2["codeChallengeMethod"] == "S256"
    assert theirs["seen"] == [None, True] and theirs["second"][0]["responses"][0][2] == {"token_number": 1}
    ours_oauth2 = ours["asked"]["authConfig"]["exchangedAuthCredential"]["oauth2"]
    # the verifier and its challenge are random on each side; the rest is the same
    for side in (oauth2, ours_oauth2):
        side["codeVerifier"] = "verifier"
        side["authUri"] = side["authUri"].split("&code_challenge=")[0]
    assert ours_oauth2 == oauth2
    for key in ("seen", "state", "requests", "unused_answers", "provider"):
        assert ours[key] == theirs[key], key
    assert [r["responses"] for r in ours["second"]] == [r["responses"] for r in theirs["second"]]


# -- an API key the user gives ------------------------------------------------------------

KEY_PROGRAM = '''
from fastapi.openapi.models import APIKey
from google.adk.agents import Agent
from google.adk.auth import AuthConfig, AuthCredential, AuthCredentialTypes
from google.adk.runners import InMemoryRunner
from google.adk.tools.tool_context import ToolContext
from google.genai import types

SEEN = []
AUTH = AuthConfig(auth_scheme=APIKey(**{"in": "header", "name": "X-Key"}),
                  raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.API_KEY), credential_key="wx")


def who_am_i(tool_context: ToolContext) -> dict:
    """Says who the user is."""
    credential = tool_context.get_auth_response(AUTH)
    SEEN.append(None if credential is None else credential.auth_type.value)
    if credential is None or not credential.api_key:
        tool_context.request_credential(AUTH)
        return {"pending": True}
    return {"key_ends_with": credential.api_key[-3:]}

''' + PROGRAM[PROGRAM.index("ANSWER_ID = None"):]


def test_an_api_key_the_user_gives_is_google_adks(gemini: StubServer) -> None:
    def answer(asked: dict[str, Any]) -> Any:
        config = copy.deepcopy(asked["authConfig"])
        config["exchangedAuthCredential"] = {"authType": "apiKey", "apiKey": "sk-user-key-xyz"}
        return config

    runs = []
    for source in (KEY_PROGRAM, rewritten(KEY_PROGRAM)):
        _, result = run_program(source, SCRIPT, gemini, answer)
        runs.append({"first": _rows(result["first"]), "second": _rows(result["second"]),
                     "stored": _rows(result["stored"]), "seen": result["seen"], "state": result["state"],
                     "requests": request_rows(gemini), "unused": len(gemini.responses)})
    theirs, ours = runs
    assert theirs["seen"] == [None, "apiKey"] and theirs["unused"] == 0
    assert theirs["second"][0]["responses"][0][2] == {"key_ends_with": "xyz"}
    [asked] = [c for r in theirs["first"] for c in r["calls"] if c[1] == REQUEST]
    assert asked[2]["authConfig"] == {"authScheme": {"type": "apiKey", "in": "header", "name": "X-Key"},
                                      "rawAuthCredential": {"authType": "apiKey"}, "credentialKey": "wx"}
    for key in theirs:
        assert ours[key] == theirs[key], key
