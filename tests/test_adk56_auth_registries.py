"""google-adk's extension points of ``CredentialManager`` (issue 56): custom auth
providers (``BaseAuthProvider``, ``register_auth_provider``), the credential exchanger
and refresher registries (custom ones registered by credential type, google-adk's
OAuth2 ones by default) and OAuth2 metadata discovery (``ExtendedOAuth2``'s
``issuer_url`` filling an empty token URL from a served ``/.well-known`` document).

Each program below is a custom tool using ``CredentialManager``, run on google-adk as
written, then on ours with its imports rewritten (``google_adk_harness``), against a
real OAuth2 provider on 127.0.0.1 (tests/test_adk56_openapi_user_auth.py's, here also
serving metadata documents): the same events turn by turn and the same requests to the
provider; no secret in the session or the logs. The tools report what they saw as
booleans and counts, never a token.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from types import SimpleNamespace
from typing import Any

import google_adk_harness as harness
import httpx
import pytest
from google_adk_harness import calls
from test_adk56_openapi_auth import (
    Machines,
    _serve,
    assert_no_secret,
    assert_same,
    both,
    responses,
    say,
)

from adk_actors.testing import StubServer, gemini_response

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

#: a refresh token the provider always honours (a credential configured with one)
STANDING_REFRESH = "standing-refresh-token-5d1e"


class Discoverable(Machines):
    """The provider (client credentials and refresh grants, the API it guards), also
    serving ``documents`` (path -> status and JSON body, or a ``str`` body) on GET;
    any other ``/.well-known/`` path is a 404."""

    def __init__(self) -> None:
        super().__init__()
        self.documents: dict[str, tuple[int, Any]] = {}
        provider = self
        base: Any = self.server.RequestHandlerClass

        class Handler(base):  # type: ignore[misc]
            def do_GET(self) -> None:
                handler: BaseHTTPRequestHandler = self
                if handler.path in provider.documents or handler.path.startswith("/.well-known/"):
                    provider.requests.append({"method": "GET", "path": handler.path})
                    status, body = provider.documents.get(handler.path, (404, {"error": "not_found"}))
                    data = (body if isinstance(body, str) else json.dumps(body)).encode()
                    handler.send_response(status)
                    handler.send_header("Content-Type", "application/json")
                    handler.send_header("Content-Length", str(len(data)))
                    handler.end_headers()
                    handler.wfile.write(data)
                    return
                super().do_GET()

        self.server.RequestHandlerClass = Handler

    def token(self, authorization: str | None, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if form.get("grant_type") == "refresh_token" and form.get("refresh_token") == STANDING_REFRESH:
            self.refresh_tokens.add(STANDING_REFRESH)
        return super().token(authorization, form)


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[Discoverable]:
    yield from _serve(Discoverable(), monkeypatch)


def _metadata(url: str, issuer: str | None = None, **changes: Any) -> dict[str, Any]:
    document = {"issuer": issuer or url, "authorization_endpoint": url + "/authorize", "token_endpoint": url + "/token",
                "scopes_supported": ["read"]}
    document.update(changes)
    return {k: v for k, v in document.items() if v is not None}


HEAD = '''
import os

import httpx
from fastapi.openapi.models import OAuth2, OAuthFlowClientCredentials, OAuthFlows
from google.adk.agents import Agent
from google.adk.auth import AuthConfig, AuthCredential, AuthCredentialTypes, OAuth2Auth
from google.adk.auth.credential_manager import CredentialManager
from google.adk.runners import InMemoryRunner
from google.adk.tools.tool_context import ToolContext
from google.genai import types

URL = os.environ["ADK_TEST_OAUTH_PROVIDER_URL"]


def client(**tokens):
    return AuthCredential(auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(
        client_id="agent-client", client_secret="client-secret-7f3a9c1e5b", **tokens))


async def whoami(credential):
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.get(URL + "/whoami", headers={"Authorization": "Bearer " + credential.oauth2.access_token})
    return answer.json()
'''

MAIN = '''

async def main(steps):
    runner = InMemoryRunner(agent=root_agent, app_name="auth")
    session = await runner.session_service.create_session(app_name="auth", user_id="ann")
    turns = []
    for step in steps:
        _, text, _ = step([])
        events = []
        async for event in runner.run_async(user_id="ann", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            events.append(event)
        turns.append(events)
    stored = await runner.session_service.get_session(app_name="auth", user_id="ann", session_id=session.id)
    await runner.close()
    return {"turns": turns, "stored": stored.events, "state": dict(stored.state)}
'''


def _program(body: str, tools: str) -> str:
    return (HEAD + body + f'\n\nroot_agent = Agent(name="auth", model="gemini-2.5-flash", instruction="Use the tools.", '
            f'tools=[{tools}])\n' + MAIN)


def _script(*tools: str) -> list[Any]:
    script: list[Any] = []
    for tool in tools:
        script += [calls((tool, {})), gemini_response("done")]
    return script


def _steps(count: int) -> list[Any]:
    return [say(f"turn {n}") for n in range(count)]


# -- a custom auth provider ------------------------------------------------------------------

PROVIDER_BODY = '''
from pydantic import Field
from google.adk.auth.auth_schemes import CustomAuthScheme
from google.adk.auth.base_auth_provider import BaseAuthProvider


class VaultScheme(CustomAuthScheme):
    type_: str = Field(default="vault_key", alias="type")
    vault_path: str


class VaultProvider(BaseAuthProvider):
    def __init__(self):
        self.seen = []

    @property
    def supported_auth_schemes(self):
        return (VaultScheme,)

    async def get_auth_credential(self, auth_config, context):
        scheme = auth_config.auth_scheme
        self.seen.append((type(scheme).__name__, scheme.vault_path, context.state.get("who")))
        return AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key="vault-key-for-" + scheme.vault_path)


class NoScheme(CustomAuthScheme):
    type_: str = Field(default="nobody_serves_this", alias="type")


class ConsentScheme(CustomAuthScheme):
    type_: str = Field(default="needs_consent", alias="type")


class ConsentProvider(BaseAuthProvider):
    @property
    def supported_auth_schemes(self):
        return (ConsentScheme,)

    async def get_auth_credential(self, auth_config, context):
        return AuthCredential(auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(
            client_id="agent-client", auth_uri=URL + "/authorize?state=consent-1"))


VAULT = VaultProvider()
CredentialManager.register_auth_provider(ConsentProvider())
CredentialManager.register_auth_provider(VAULT)
CredentialManager.register_auth_provider(VaultProvider())  # a second one for the same scheme is ignored


async def vault_tool(tool_context: ToolContext) -> dict:
    """Gets keys from the vault."""
    tool_context.state["who"] = "ann"
    typed = await CredentialManager(AuthConfig(auth_scheme=VaultScheme(vault_path="payments"))).get_auth_credential(
        tool_context)
    # a generic scheme of the same type (as read back from JSON) is served by the same provider
    generic = CustomAuthScheme.model_validate({"type": "vault_key", "vaultPath": "billing"})
    again = await CredentialManager(AuthConfig(auth_scheme=generic)).get_auth_credential(tool_context)
    try:
        await CredentialManager(AuthConfig(auth_scheme=NoScheme())).get_auth_credential(tool_context)
        missing = "no error"
    except ValueError as error:
        missing = str(error)
    consent = AuthConfig(auth_scheme=ConsentScheme())
    pending = await CredentialManager(consent).get_auth_credential(tool_context)
    kept = consent.exchanged_auth_credential.oauth2.auth_uri == URL + "/authorize?state=consent-1"
    return {"consent_pending": pending is None, "consent_uri_kept": kept, "typed": typed.auth_type.value, "typed_is_payments": typed.api_key == "vault-key-for-payments",
            "generic_is_billing": again.api_key == "vault-key-for-billing", "seen": VAULT.seen, "missing": missing}
'''


def test_a_registered_auth_provider_supplies_the_credential(gemini: StubServer, provider: Discoverable,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    """A provider registered for a custom scheme class serves it (and a generic scheme of
    its type); its OAuth2 credential that still needs consent is kept on the config and
    None returned; a scheme no provider serves is google-adk's ValueError; a second
    provider for the same class is ignored with a warning."""
    theirs, ours = both(_script("vault_tool"), _steps(1), gemini, provider, caplog,
                        source=_program(PROVIDER_BODY, "vault_tool"))
    [answer] = responses(theirs["turns"][0])
    assert answer == {"consent_pending": True, "consent_uri_kept": True, "typed": "apiKey", "typed_is_payments": True, "generic_is_billing": True,
                      "seen": [["VaultScheme", "payments", "ann"], ["VaultScheme", "billing", "ann"]],
                      "missing": "No auth provider registered for custom auth scheme 'nobody_serves_this'. Register it "
                                 "using `CredentialManager.register_auth_provider(<YourAuthProviderInstance>)`."}
    assert "An auth provider is already registered for scheme" in theirs["logs"]
    assert "An auth provider is already registered for scheme" in ours["logs"]
    assert_same(theirs, ours)
    assert not provider.requests


# -- custom exchanger and refresher; google-adk's OAuth2 ones by default ------------------------

REGISTRIES_BODY = '''
import time

from google.adk.auth.exchanger.base_credential_exchanger import BaseCredentialExchanger, ExchangeResult
from google.adk.auth.refresher.base_credential_refresher import BaseCredentialRefresher

CLIENT_FLOW = OAuth2(flows=OAuthFlows(clientCredentials=OAuthFlowClientCredentials(tokenUrl=URL + "/token",
                                                                                   scopes={"read": "read"})))


class MintingExchanger(BaseCredentialExchanger):
    def __init__(self):
        self.calls = []

    async def exchange(self, auth_credential, auth_scheme=None):
        self.calls.append((auth_credential.auth_type.value, type(auth_scheme).__name__))
        auth_credential.oauth2.access_token = "minted-locally-0042"
        return ExchangeResult(auth_credential, True)


class RotatingRefresher(BaseCredentialRefresher):
    def __init__(self):
        self.asked = 0
        self.refreshed = 0

    async def is_refresh_needed(self, auth_credential, auth_scheme=None):
        self.asked += 1
        return True

    async def refresh(self, auth_credential, auth_scheme=None):
        self.refreshed += 1
        auth_credential.oauth2.access_token = "rotated-locally-0043"
        return auth_credential


async def custom_exchanger(tool_context: ToolContext) -> dict:
    """A client-credentials flow whose exchange is ours."""
    manager = CredentialManager(AuthConfig(auth_scheme=CLIENT_FLOW, raw_auth_credential=client()))
    exchanger = MintingExchanger()
    manager.register_credential_exchanger(AuthCredentialTypes.OAUTH2, exchanger)
    credential = await manager.get_auth_credential(tool_context)
    return {"minted": credential.oauth2.access_token == "minted-locally-0042", "calls": exchanger.calls}


async def custom_refresher(tool_context: ToolContext) -> dict:
    """A token that is already there, renewed by our refresher."""
    manager = CredentialManager(AuthConfig(auth_scheme=CLIENT_FLOW, raw_auth_credential=client(
        access_token="old-token-1111", refresh_token="refresh-never-sent", expires_at=int(time.time()) - 600)))
    refresher = RotatingRefresher()
    manager._refresher_registry.register(AuthCredentialTypes.OAUTH2, refresher)
    credential = await manager.get_auth_credential(tool_context)
    return {"rotated": credential.oauth2.access_token == "rotated-locally-0043", "asked": refresher.asked,
            "refreshed": refresher.refreshed}


async def default_exchange_and_refresh(tool_context: ToolContext) -> dict:
    """The default OAuth2 exchanger (client credentials) and refresher (an expired token)."""
    fresh = await CredentialManager(AuthConfig(auth_scheme=CLIENT_FLOW, raw_auth_credential=client())
                                    ).get_auth_credential(tool_context)
    expired = await CredentialManager(AuthConfig(auth_scheme=CLIENT_FLOW, raw_auth_credential=client(
        access_token="expired-token-2222", refresh_token="REFRESH", expires_at=int(time.time()) - 600))
                                      ).get_auth_credential(tool_context)
    return {"fresh": await whoami(fresh), "refreshed": await whoami(expired),
            "later": expired.oauth2.expires_at > time.time() + 600}
'''.replace('"REFRESH"', repr(STANDING_REFRESH))


def test_a_registered_exchanger_is_used_instead_of_the_token_endpoint(gemini: StubServer, provider: Discoverable,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    theirs, ours = both(_script("custom_exchanger"), _steps(1), gemini, provider, caplog,
                        source=_program(REGISTRIES_BODY, "custom_exchanger"))
    assert responses(theirs["turns"][0]) == [{"minted": True, "calls": [["oauth2", "OAuth2"]]}]
    assert theirs["provider"] == []  # google-adk's OAuth2 exchanger would have asked the token endpoint
    assert_same(theirs, ours)


def test_a_registered_refresher_renews_an_expired_token(gemini: StubServer, provider: Discoverable,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    theirs, ours = both(_script("custom_refresher"), _steps(1), gemini, provider, caplog,
                        source=_program(REGISTRIES_BODY, "custom_refresher"))
    assert responses(theirs["turns"][0]) == [{"rotated": True, "asked": 1, "refreshed": 1}]
    assert theirs["provider"] == []
    assert_same(theirs, ours)


def test_the_default_oauth2_exchanger_and_refresher_use_the_token_endpoint(
        gemini: StubServer, provider: Discoverable, caplog: pytest.LogCaptureFixture) -> None:
    theirs, ours = both(_script("default_exchange_and_refresh"), _steps(1), gemini, provider, caplog,
                        source=_program(REGISTRIES_BODY, "default_exchange_and_refresh"))
    assert responses(theirs["turns"][0]) == [{"fresh": {"token_number": 1}, "refreshed": {"token_number": 2},
                                             "later": True}]
    assert [p for p in theirs["provider"] if p[0] == "POST"] == [("POST", "/token", "client_credentials"),
                                                                  ("POST", "/token", "refresh_token")]
    assert_same(theirs, ours)
    assert_no_secret(ours, provider)


# -- OAuth2 discovery --------------------------------------------------------------------------

DISCOVERY_BODY = '''
from fastapi.openapi.models import OAuthFlowAuthorizationCode
from google.adk.auth.auth_schemes import ExtendedOAuth2


async def discovered(tool_context: ToolContext) -> dict:
    """A client-credentials flow with no token URL: found from the issuer."""
    scheme = ExtendedOAuth2(issuer_url=URL + "/tenant", flows=OAuthFlows(
        clientCredentials=OAuthFlowClientCredentials(tokenUrl="", scopes={"read": "read"})))
    credential = await CredentialManager(AuthConfig(auth_scheme=scheme, raw_auth_credential=client())
                                         ).get_auth_credential(tool_context)
    return {"who": await whoami(credential),
            "token_url_filled": scheme.flows.clientCredentials.tokenUrl == URL + "/token"}


async def badly_discovered(tool_context: ToolContext) -> dict:
    """The issuer's documents are of no use: a clear error."""
    scheme = ExtendedOAuth2(issuer_url=URL + "/broken", flows=OAuthFlows(authorizationCode=OAuthFlowAuthorizationCode(
        authorizationUrl="", tokenUrl="", scopes={"read": "read"})))
    try:
        await CredentialManager(AuthConfig(auth_scheme=scheme, raw_auth_credential=client())).get_auth_credential(
            tool_context)
    except ValueError as error:
        return {"error": str(error).split(" Issuer ")[0]}
    return {"error": None}
'''


def test_discovery_fills_the_missing_token_url_from_the_served_metadata(
        gemini: StubServer, provider: Discoverable, caplog: pytest.LogCaptureFixture) -> None:
    """RFC 8414's path-inserted document is missing; OpenID Connect's is served."""
    provider.documents["/.well-known/openid-configuration/tenant"] = (200, _metadata(provider.url + "/tenant",
                                                                                   token_endpoint=provider.url + "/token"))
    theirs, ours = both(_script("discovered"), _steps(1), gemini, provider, caplog,
                        source=_program(DISCOVERY_BODY, "discovered"))
    assert responses(theirs["turns"][0]) == [{"who": {"token_number": 1}, "token_url_filled": True}]
    assert theirs["provider"] == [("GET", "/.well-known/oauth-authorization-server/tenant", None),
                                  ("GET", "/.well-known/openid-configuration/tenant", None),
                                  ("POST", "/token", "client_credentials"), ("GET", "/whoami", None)]
    assert_same(theirs, ours)
    assert_no_secret(ours, provider)


def test_unusable_metadata_is_a_clear_error(gemini: StubServer, provider: Discoverable,
                                            caplog: pytest.LogCaptureFixture) -> None:
    """A document without ``token_endpoint``, one naming another issuer, one not JSON:
    google-adk's ``ValueError`` on both; ours is an ``OAuth2DiscoveryError`` naming each."""
    url = provider.url
    provider.documents.update({
        "/.well-known/oauth-authorization-server/broken": (200, _metadata(url + "/broken", token_endpoint=None)),
        "/.well-known/openid-configuration/broken": (200, _metadata("https://evil.example/broken")),
        "/broken/.well-known/openid-configuration": (200, "<html>not json</html>"),
    })
    theirs, ours = both(_script("badly_discovered"), _steps(1), gemini, provider, caplog,
                        source=_program(DISCOVERY_BODY, "badly_discovered"))
    assert responses(theirs["turns"][0]) == [
        {"error": "OAuth scheme info is missing, and auto-discovery has failed to fill them in."}]
    assert [p for p in theirs["provider"] if p[0] == "POST"] == []
    assert_same(theirs, ours)


def _serve_documents(documents: dict[str, tuple[int, Any]]) -> Iterator[str]:
    """A Starlette app on uvicorn (127.0.0.1, a free port) serving ``documents``."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, PlainTextResponse, Response
    from starlette.routing import Route

    from supervision.lowlevel import free_port
    from supervision.testing import wait_until

    async def serve(request: Request) -> Response:
        status, body = documents.get(request.url.path, (404, {"error": "not_found"}))
        return PlainTextResponse(body, status) if isinstance(body, str) else JSONResponse(body, status)

    app = Starlette(routes=[Route("/{path:path}", serve)])
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, name="discovery-documents", daemon=True)
    thread.start()
    try:
        wait_until(lambda: server.started or not thread.is_alive(), timeout=30)
        assert server.started
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


@pytest.fixture
def documents() -> Iterator[tuple[str, dict[str, tuple[int, Any]]]]:
    served: dict[str, tuple[int, Any]] = {}
    for url in _serve_documents(served):
        yield url, served


#: what the manager reads of a tool's context before it fails on discovery (its lock's key)
CONTEXT = SimpleNamespace(invocation=SimpleNamespace(session=SimpleNamespace(app_name="auth", user_id="ann")))


def test_our_discovery_error_names_what_each_document_did_wrong(
        documents: tuple[str, dict[str, tuple[int, Any]]], caplog: pytest.LogCaptureFixture) -> None:
    from fastapi.openapi.models import OAuthFlowClientCredentials, OAuthFlows

    from adk_actors.auth import AuthConfig, AuthCredential, AuthCredentialTypes, OAuth2Auth
    from adk_actors.auth.auth_schemes import ExtendedOAuth2
    from adk_actors.auth.credential_manager import CredentialManager
    from adk_actors.auth.oauth2_discovery import OAuth2DiscoveryError

    url, served = documents
    served.update({
        "/.well-known/oauth-authorization-server/x": (200, _metadata(url + "/x", token_endpoint=None)),
        "/.well-known/openid-configuration/x": (200, _metadata("https://evil.example/x")),
        "/x/.well-known/openid-configuration": (503, {"error": "down"}),
    })
    scheme = ExtendedOAuth2(issuer_url=url + "/x", flows=OAuthFlows(
        clientCredentials=OAuthFlowClientCredentials(tokenUrl="")))
    secret = "client-secret-never-logged-91c2"
    config = AuthConfig(auth_scheme=scheme, raw_auth_credential=AuthCredential(
        auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(client_id="c", client_secret=secret)))
    caplog.set_level(logging.DEBUG)
    with pytest.raises(OAuth2DiscoveryError) as raised:
        asyncio.run(CredentialManager(config).get_auth_credential(CONTEXT))
    error = raised.value
    assert isinstance(error, ValueError) and error.issuer_url == url + "/x"
    assert error.reasons == [
        f"{url}/.well-known/oauth-authorization-server/x: not authorization server metadata "
        "(token_endpoint: Field required)",
        f"{url}/.well-known/openid-configuration/x: its issuer 'https://evil.example/x' is not '{url}/x'",
        f"{url}/x/.well-known/openid-configuration: HTTP 503"]
    assert str(error).startswith("OAuth scheme info is missing, and auto-discovery has failed to fill them in. "
                                 f"Issuer '{url}/x': ")
    assert scheme.flows.clientCredentials is not None and scheme.flows.clientCredentials.tokenUrl == ""
    assert secret not in caplog.text and secret not in str(error)

    # without an issuer: the same error, saying so
    plain = config.model_copy(update={"auth_scheme": ExtendedOAuth2(flows=scheme.flows)})
    with pytest.raises(OAuth2DiscoveryError, match="the scheme has no issuer_url"):
        asyncio.run(CredentialManager(plain).get_auth_credential(CONTEXT))


def test_our_discovery_manager_reads_rfc_8414_and_rfc_9728(
        documents: tuple[str, dict[str, tuple[int, Any]]]) -> None:
    """At the root: RFC 8414's document first; a protected resource's metadata; each
    None when unusable, as google-adk's (its answers compared)."""
    from google.adk.auth.oauth2_discovery import OAuth2DiscoveryManager as Theirs

    from adk_actors.auth.oauth2_discovery import OAuth2DiscoveryManager as Ours

    url, served = documents
    served.update({
        "/.well-known/oauth-authorization-server": (200, _metadata(url, issuer=url + "/")),
        "/.well-known/oauth-protected-resource/api": (200, {"resource": url + "/api", "authorization_servers": [url]}),
        "/.well-known/oauth-protected-resource/other": (200, {"resource": "https://elsewhere.example/other"}),
    })

    async def check(manager: Any) -> None:
        found = await manager.discover_auth_server_metadata(url)
        assert found is not None and found.token_endpoint == url + "/token" and found.scopes_supported == ["read"]
        assert await manager.discover_auth_server_metadata(url + "/nowhere") is None
        resource = await manager.discover_resource_metadata(url + "/api")
        assert resource is not None and resource.authorization_servers == [url]
        assert await manager.discover_resource_metadata(url + "/other") is None
        assert await manager.discover_resource_metadata(url + "/missing") is None

    for manager in (Theirs(), Ours()):
        asyncio.run(check(manager))
    assert httpx.get(url + "/.well-known/oauth-authorization-server", timeout=10).json()["issuer"] == url + "/"
