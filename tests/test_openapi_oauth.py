"""OpenAPI tools under OAuth2 and OpenID Connect (issue 56): the client-credentials
grant, the authorization-code exchange and the refresh grant, against a real OAuth2
provider and API on 127.0.0.1 (``http.server`` in a thread, a free port).

The provider's token endpoint checks the client (HTTP Basic, or the id and secret in
the form) and each grant, and issues numbered tokens valid ``expires_in`` seconds;
the API answers a bearer token it issued and has not revoked, else 401. A tool's
token cache is given a clock the test moves (no sleeps). Shown:

* the token request is the one google-adk's OAuth2 exchanger sends (authlib) to the
  same endpoint: same path, client authentication, form (side by side);
* the token is fetched once and reused until it expires, then fetched again;
* a 401 from the API renews the token once and sends the request once more; a
  second 401 is the call's error;
* a token endpoint that refuses the client, answers without a token, or cannot be
  reached is an ``OAuth2TokenError`` (a ValueError) naming the host, status and OAuth
  error, and the API is not called;
* an authorization code is exchanged once, then the refresh token is used;
* OpenID Connect with its configuration takes client credentials when it lists them;
* in an agent run, neither the client secret nor any token is in an event or a log.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote

import pytest

from adk_actors import Content, LlmAgent, Part
from adk_actors.models import ScriptedModel, call
from adk_actors.runners import InMemoryRunner
from adk_actors.tools.openapi_tool import OAuth2TokenError, OpenApiAuthError, OpenAPIToolset
from adk_actors.tools.openapi_tool.auth import AuthCredential, AuthCredentialTypes, OAuth2Auth
from adk_actors.tools.openapi_tool.auth.credential_exchangers import OAuth2CredentialExchanger

CLIENT_ID = "agent-client"
CLIENT_SECRET = "client-secret-7f3a9c1e5b"


class Provider:
    """An OAuth2 provider and the API it guards (see the module)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.issued: list[str] = []
        self.revoked: set[str] = set()
        self.refresh_tokens: dict[str, str] = {}
        self.codes = {"code-abc123456789": "https://agent.example/callback"}
        self.expires_in = 3600
        self.token_answer: tuple[int, dict[str, Any]] | None = None  # a forced answer
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
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode()
                form = {k: v[0] for k, v in parse_qs(raw).items()}
                provider.requests.append({"method": "POST", "path": self.path, "form": form,
                                          "headers": {k.lower(): v for k, v in self.headers.items()}})
                if self.path != "/token":
                    self._reply(404, {})
                    return
                status, body = provider.token(self.headers.get("Authorization"), form)
                self._reply(status, body)

            def do_GET(self) -> None:
                provider.requests.append({"method": "GET", "path": self.path,
                                          "headers": {k.lower(): v for k, v in self.headers.items()}})
                token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                if token not in provider.issued or token in provider.revoked:
                    self._reply(401, {"error": "invalid_token"})
                    return
                self._reply(200, {"who": CLIENT_ID, "token_number": provider.issued.index(token) + 1})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def token(self, authorization: str | None, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if self.token_answer is not None:
            return self.token_answer
        client_id, secret = form.get("client_id"), form.get("client_secret")
        if authorization and authorization.startswith("Basic "):
            pair = base64.b64decode(authorization[6:]).decode()
            client_id, _, secret = (unquote(p) for p in pair.partition(":"))
        if client_id != CLIENT_ID or secret != CLIENT_SECRET:
            return 401, {"error": "invalid_client"}
        grant = form.get("grant_type")
        if grant == "authorization_code":
            if self.codes.pop(form.get("code", ""), None) != form.get("redirect_uri"):
                return 400, {"error": "invalid_grant"}
        elif grant == "refresh_token":
            if form.get("refresh_token") not in self.refresh_tokens:
                return 400, {"error": "invalid_grant"}
        elif grant != "client_credentials":
            return 400, {"error": "unsupported_grant_type"}
        token = f"access-token-{len(self.issued) + 1:04d}-xyzzy"
        self.issued.append(token)
        body: dict[str, Any] = {"access_token": token, "token_type": "Bearer", "expires_in": self.expires_in}
        if grant != "client_credentials":
            refresh = f"refresh-token-{len(self.issued):04d}-plugh"
            self.refresh_tokens[refresh] = token
            body["refresh_token"] = refresh
        return 200, body

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


def spec(provider: Provider, scheme: dict[str, Any]) -> dict[str, Any]:
    return {"openapi": "3.0.3", "info": {"title": "Who", "version": "1"}, "servers": [{"url": provider.url}],
            "security": [{"oauth": []}], "components": {"securitySchemes": {"oauth": scheme}},
            "paths": {"/whoami": {"get": {"operationId": "whoAmI", "summary": "Who is calling",
                                          "responses": {"200": {"description": "ok"}}}}}}


def client_credentials(provider: Provider) -> dict[str, Any]:
    return {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": provider.url + "/token",
                                                              "scopes": {"read": "read"}}}}


def client(**fields: Any) -> AuthCredential:
    return AuthCredential(auth_type=AuthCredentialTypes.OAUTH2,
                          oauth2=OAuth2Auth(client_id=CLIENT_ID, client_secret=CLIENT_SECRET, **fields))


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def tool_of(provider: Provider, scheme: dict[str, Any], credential: AuthCredential, clock: Clock) -> Any:
    toolset = OpenAPIToolset(spec_dict=spec(provider, scheme), auth_credential=credential,
                             allow_private_network_access=True)
    tool = toolset.get_tool("who_am_i")
    tool.oauth2_tokens.clock = clock
    return tool


def run(tool: Any) -> Any:
    return asyncio.run(asyncio.wait_for(tool.call(args={}, tool_context=None), timeout=30))


def test_the_token_request_is_google_adks(provider: Provider) -> None:
    """google-adk's OAuth2 exchanger (authlib) and our tool each get a client-
    credentials token from the same endpoint: the same request."""
    from fastapi.openapi.models import OAuth2
    from google.adk.auth.auth_credential import AuthCredential as TheirCredential
    from google.adk.auth.auth_credential import AuthCredentialTypes as TheirTypes
    from google.adk.auth.auth_credential import OAuth2Auth as TheirOAuth2
    from google.adk.auth.exchanger.oauth2_credential_exchanger import (
        OAuth2CredentialExchanger as Theirs,
    )

    theirs = TheirCredential(auth_type=TheirTypes.OAUTH2,
                             oauth2=TheirOAuth2(client_id=CLIENT_ID, client_secret=CLIENT_SECRET))
    result = asyncio.run(Theirs().exchange(theirs, OAuth2.model_validate(client_credentials(provider))))
    assert result.was_exchanged and theirs.oauth2 is not None and theirs.oauth2.access_token == provider.issued[0]
    assert run(tool_of(provider, client_credentials(provider), client(), Clock())) == {"who": CLIENT_ID,
                                                                                        "token_number": 2}
    first, second = provider.of("POST")

    def shape(request: dict[str, Any]) -> dict[str, Any]:
        return {"path": request["path"], "form": request["form"], "authorization": request["headers"]["authorization"],
                "content_type": request["headers"]["content-type"].split(";")[0]}

    assert shape(first) == shape(second)
    assert second["form"] == {"grant_type": "client_credentials"}
    assert second["headers"]["authorization"].startswith("Basic ")


def test_the_token_is_fetched_once_and_reused_until_it_expires(provider: Provider) -> None:
    clock = Clock()
    tool = tool_of(provider, client_credentials(provider), client(), clock)
    assert [run(tool)["token_number"] for _ in range(3)] == [1, 1, 1]
    assert len(provider.of("POST")) == 1
    clock.now += 3600 - 60  # still valid, by more than the leeway
    assert run(tool)["token_number"] == 1 and len(provider.of("POST")) == 1
    clock.now += 45  # within the leeway of its end: renewed before the API sees it
    assert run(tool)["token_number"] == 2
    assert len(provider.of("POST")) == 2 and len(provider.of("GET")) == 5


def test_concurrent_calls_share_one_token_request(provider: Provider) -> None:
    tool = tool_of(provider, client_credentials(provider), client(), Clock())

    async def together() -> list[Any]:
        return list(await asyncio.gather(*(tool.call(args={}, tool_context=None) for _ in range(4))))

    results = asyncio.run(asyncio.wait_for(together(), timeout=30))
    assert [r["token_number"] for r in results] == [1] * 4
    assert len(provider.of("POST")) == 1 and len(provider.of("GET")) == 4


def test_a_401_renews_the_token_once(provider: Provider) -> None:
    tool = tool_of(provider, client_credentials(provider), client(), Clock())
    assert run(tool)["token_number"] == 1
    provider.revoked.add(provider.issued[0])  # the provider revokes it early
    assert run(tool)["token_number"] == 2
    assert len(provider.of("POST")) == 2 and len(provider.of("GET")) == 3  # one refused, sent once more


def test_a_second_401_is_the_calls_error_without_a_loop(provider: Provider) -> None:
    tool = tool_of(provider, client_credentials(provider), client(), Clock())
    real_token = provider.token
    provider.token = lambda authorization, form: (  # type: ignore[method-assign]
        lambda answer: (provider.revoked.add(answer[1]["access_token"]), answer)[1])(real_token(authorization, form))
    result = run(tool)
    assert "Status Code: 401" in result["error"]
    assert len(provider.of("POST")) == 2 and len(provider.of("GET")) == 2


@pytest.mark.parametrize(("answer", "words"), [
    ((401, {"error": "invalid_client"}), "HTTP 401, error 'invalid_client'"),
    ((200, {"token_type": "Bearer"}), "HTTP 200, no access_token"),
    ((500, {}), "HTTP 500, no OAuth error"),
])
def test_a_token_endpoint_that_refuses_is_a_typed_error_and_the_api_is_not_called(
        provider: Provider, answer: tuple[int, dict[str, Any]], words: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    provider.token_answer = answer
    tool = tool_of(provider, client_credentials(provider), client(), Clock())
    with pytest.raises(OAuth2TokenError) as caught:
        run(tool)
    assert isinstance(caught.value, (OpenApiAuthError, ValueError)) and caught.value.status == answer[0]
    assert f"the token endpoint at 127.0.0.1 refused the client_credentials grant: {words}" == str(caught.value)
    assert provider.of("GET") == []
    assert CLIENT_SECRET not in str(caught.value) + caplog.text


def test_a_wrong_client_secret_is_refused_by_the_provider_and_named_so(provider: Provider) -> None:
    credential = AuthCredential(auth_type=AuthCredentialTypes.OAUTH2,
                                oauth2=OAuth2Auth(client_id=CLIENT_ID, client_secret="not-the-secret-at-all"))
    with pytest.raises(OAuth2TokenError, match="invalid_client"):
        run(tool_of(provider, client_credentials(provider), credential, Clock()))


def test_a_token_endpoint_that_cannot_be_reached_is_a_typed_error(provider: Provider) -> None:
    scheme = client_credentials(provider)
    provider.server.shutdown()
    provider.server.server_close()
    with pytest.raises(OAuth2TokenError, match=r"the token endpoint at 127\.0\.0\.1 could not be reached") as caught:
        run(tool_of(provider, scheme, client(), Clock()))
    assert caught.value.status is None


def test_client_secret_post_sends_the_client_in_the_form(provider: Provider) -> None:
    tool = tool_of(provider, client_credentials(provider), client(token_endpoint_auth_method="client_secret_post"),
                   Clock())
    assert run(tool)["token_number"] == 1
    (token_request,) = provider.of("POST")
    assert token_request["form"] == {"grant_type": "client_credentials", "client_id": CLIENT_ID,
                                     "client_secret": CLIENT_SECRET}
    assert "authorization" not in token_request["headers"]


def test_an_authorization_code_is_exchanged_once_then_the_refresh_token_is_used(provider: Provider) -> None:
    scheme = {"type": "oauth2", "flows": {"authorizationCode": {
        "authorizationUrl": provider.url + "/authorize", "tokenUrl": provider.url + "/token", "scopes": {}}}}
    clock = Clock()
    credential = client(auth_code="code-abc123456789", redirect_uri="https://agent.example/callback")
    tool = tool_of(provider, scheme, credential, clock)
    assert run(tool)["token_number"] == 1 and run(tool)["token_number"] == 1
    clock.now += 3600
    assert run(tool)["token_number"] == 2
    grants = [r["form"] for r in provider.of("POST")]
    assert grants[0] == {"grant_type": "authorization_code", "code": "code-abc123456789",
                         "redirect_uri": "https://agent.example/callback"}
    assert grants[1] == {"grant_type": "refresh_token", "refresh_token": "refresh-token-0001-plugh"}
    assert len(grants) == 2


def test_an_authorization_code_flow_without_a_code_asks_the_user(provider: Provider) -> None:
    scheme = {"type": "oauth2", "flows": {"authorizationCode": {
        "authorizationUrl": provider.url + "/authorize", "tokenUrl": provider.url + "/token", "scopes": {}}}}
    assert run(tool_of(provider, scheme, client(), Clock()))["pending"] is True
    assert provider.requests == []


def test_openid_connect_with_its_configuration_takes_client_credentials(provider: Provider) -> None:
    scheme = {"type": "openIdConnect", "authorization_endpoint": provider.url + "/authorize",
              "token_endpoint": provider.url + "/token", "grant_types_supported": ["client_credentials"]}
    assert run(tool_of(provider, scheme, client(), Clock()))["token_number"] == 1
    assert provider.of("POST")[0]["form"] == {"grant_type": "client_credentials"}


def test_google_adks_openapi_exchanger_turns_an_access_token_into_a_bearer_credential() -> None:
    """``OAuth2CredentialExchanger`` at google-adk's openapi path: the same results
    for the same inputs (a token -> an HTTP bearer credential; none -> None; a
    non-OAuth2 scheme -> ValueError)."""
    from fastapi.openapi.models import APIKey, OAuth2
    from google.adk.auth.auth_credential import AuthCredential as TheirCredential
    from google.adk.tools.openapi_tool.auth.credential_exchangers import (
        OAuth2CredentialExchanger as Theirs,
    )

    scheme = OAuth2.model_validate({"type": "oauth2", "flows": {}})
    for fields in ({"oauth2": {"access_token": "an-access-token-1234"}}, {"oauth2": {"client_id": "x"}}):
        raw = {"auth_type": "oauth2", **fields}
        theirs = Theirs().exchange_credential(scheme, TheirCredential.model_validate(raw))
        ours = OAuth2CredentialExchanger().exchange_credential(scheme, AuthCredential.model_validate(raw))
        assert (None if ours is None else ours.model_dump(mode="json", exclude_none=True)) == \
            (None if theirs is None else theirs.model_dump(mode="json", exclude_none=True))
    key = APIKey.model_validate({"type": "apiKey", "in": "header", "name": "k"})
    with pytest.raises(ValueError, match="Invalid security scheme"):
        OAuth2CredentialExchanger().exchange_credential(key, AuthCredential.model_validate(raw))


def test_no_secret_or_token_in_an_agent_runs_events_or_logs(provider: Provider,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    toolset = OpenAPIToolset(spec_dict=spec(provider, client_credentials(provider)), auth_credential=client(),
                             allow_private_network_access=True)
    model = ScriptedModel([call("who_am_i"), call("who_am_i")],
                          fallback=lambda request: json.dumps(request.contents[-1].function_responses[0].response))
    agent = LlmAgent(name="who", model=model, instruction="Find out.", tools=[toolset])

    async def go() -> list[Any]:
        runner = InMemoryRunner(agent=agent, app_name="who")
        try:
            session = await runner.session_service.create_session(app_name="who", user_id="ann")
            return [event async for event in runner.run_async(
                user_id="ann", session_id=session.id, new_message=Content(role="user", parts=[Part(text="Who?")]))]
        finally:
            await runner.close()

    events = asyncio.run(asyncio.wait_for(go(), timeout=60))
    responses = [p.function_response.response for e in events for p in (e.content.parts if e.content else [])
                 if p.function_response is not None]
    assert responses == [{"who": CLIENT_ID, "token_number": 1}] * 2  # one token for both calls
    everything = json.dumps([e.model_dump(mode="json") for e in events]) + caplog.text + repr(toolset) + \
        repr(toolset.get_tool("who_am_i").auth_credential)
    for secret in (CLIENT_SECRET, *provider.issued):
        assert secret not in everything
    assert "client_credentials token from 127.0.0.1" in caplog.text
