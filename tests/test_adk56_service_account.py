"""A Google service account as an OpenAPI tool's credential (issue 56), side by side
with google-adk 2.13.

The account is real: a JSON key file with an RSA key made for the test, whose
``token_uri`` names Google's OAuth2 token endpoint as a stand-in on 127.0.0.1 (the
JWT-bearer grant, Google's wire format: the signed assertion posted as a form, an
``access_token`` and ``expires_in`` back, or an ``id_token`` when the assertion asks
for a ``target_audience``). The stand-in checks each assertion's RS256 signature with
the key's public half, its issuer, audience and expiry, and refuses a bad one as
Google does (``invalid_grant``). The API (same server) takes only the tokens it
issued; an ID token only for its own URL as the audience.

Each agent program runs on google-adk as written, then on ours with its imports
rewritten (``google_adk_harness``), against one Gemini REST stand-in; compared: the
function responses the turn records, what the token endpoint and the API received.
Cases: an access token (``service_account_dict_to_scheme_credential``); an ID token
for an audience (``service_account_scheme_credential``); a token reused across calls
while it is more than 300 s from expiry, fetched again when closer; a key the
endpoint refuses. Then the exchangers themselves on the same key file (the same
bearer header), a clock deciding the early refresh, the application default
credentials, google-adk's ``CredentialManager`` in a custom tool, the helpers' scheme
and credential, and google-auth missing.

What differs on purpose: when the exchange fails, google-adk logs it and sends the
request without auth (the API's 401 is the answer); ours sends nothing and the call's
answer is the exchanger's ``AuthCredentialMissingError``, with no key material in it.
"""

from __future__ import annotations

import base64
import json
import logging
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import google_adk_harness as harness
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from google_adk_harness import calls, event_rows, rewritten, run_program

from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")
pytest.importorskip("google.auth")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
SCOPE = "https://www.googleapis.com/auth/cloud-platform"
#: the audience google-auth gives every assertion (Google's token endpoint, whatever the key's token URI)
ASSERTION_AUDIENCE = "https://oauth2.googleapis.com/token"
EMAIL = "agent-tools@adk-actors-test.iam.gserviceaccount.com"
PROJECT = "adk-actors-test"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(claims: dict[str, Any], key: rsa.RSAPrivateKey, kid: str) -> str:
    head = _b64(json.dumps({"alg": "RS256", "typ": "JWT", "kid": kid}).encode())
    body = _b64(json.dumps(claims).encode())
    signature = key.sign(f"{head}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{head}.{body}.{_b64(signature)}"


def _verified(token: str, public: rsa.RSAPublicKey) -> dict[str, Any] | None:
    """The claims of ``token`` when ``public`` verifies its RS256 signature, else None."""
    try:
        head, body, signature = token.split(".")
        public.verify(_unb64(signature), f"{head}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
    except (ValueError, InvalidSignature):
        return None
    claims: dict[str, Any] = json.loads(_unb64(body))
    return claims


class Google:
    """Google's token endpoint (``/token``, the JWT-bearer grant) and an API
    (``/whoami``) that takes the tokens it issued (see the module)."""

    def __init__(self) -> None:
        self.accounts: dict[str, tuple[str, rsa.RSAPublicKey | None]] = {}  # key id -> (e-mail, public key)
        self.requests: list[tuple[str, str, str | None]] = []
        self.assertions: list[dict[str, Any]] = []
        self.access_tokens: list[str] = []
        self.id_tokens: list[str] = []
        self.expires_in = 3600
        self._signer = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        google = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 401:
                    self.send_header("WWW-Authenticate", 'Bearer error="invalid_token"')
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                form = {k: v[0] for k, v in parse_qs(raw).items()}
                self._reply(*google.token(self.path, form))

            def do_GET(self) -> None:
                self._reply(*google.api(self.path, self.headers.get("Authorization")))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def reset(self) -> None:
        self.requests.clear()
        self.assertions.clear()
        self.access_tokens.clear()
        self.id_tokens.clear()

    def token(self, path: str, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        """Google's answer to a token request (its error shape for a bad assertion)."""
        assertion = form.get("assertion", "")
        try:
            head, body, _ = assertion.split(".")
            kid, unverified = json.loads(_unb64(head)).get("kid", ""), json.loads(_unb64(body))
        except ValueError:
            self.requests.append(("POST", path, None))
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT."}
        kind = "id" if "target_audience" in unverified else "access"
        self.requests.append(("POST", path, kind))
        if path != "/token" or form.get("grant_type") != JWT_BEARER:
            return 400, {"error": "unsupported_grant_type"}
        email, public = self.accounts.get(kid) or ("", None)
        claims = _verified(assertion, public) if public is not None else None
        if claims is None:
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
        now = time.time()
        if claims.get("iss") != email or claims.get("aud") != ASSERTION_AUDIENCE or claims.get("exp", 0) < now:
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT: claims."}
        self.assertions.append(claims)
        if kind == "id":
            token = _sign({"iss": "https://accounts.google.com", "aud": claims["target_audience"], "sub": "1234",
                           "email": email, "iat": int(now), "exp": int(now) + self.expires_in}, self._signer, "g")
            self.id_tokens.append(token)
            return 200, {"id_token": token}
        if not claims.get("scope"):
            return 400, {"error": "invalid_scope"}
        token = f"ya29.stand-in-{len(self.access_tokens) + 1}-{secrets.token_hex(16)}"
        self.access_tokens.append(token)
        return 200, {"access_token": token, "expires_in": self.expires_in, "token_type": "Bearer"}

    def api(self, path: str, authorization: str | None) -> tuple[int, dict[str, Any]]:
        """The API: which token called (its number among those issued), else 401."""
        token = (authorization or "").removeprefix("Bearer ")
        self.requests.append(("GET", path, "bearer" if authorization else None))
        if authorization and token in self.access_tokens:
            return 200, {"kind": "access", "token_number": self.access_tokens.index(token) + 1}
        claims = _verified(token, self._signer.public_key()) if token.count(".") == 2 else None
        if authorization and token in self.id_tokens and claims and claims["aud"] == self.url:
            return 200, {"kind": "id", "token_number": self.id_tokens.index(token) + 1, "audience": claims["aud"]}
        return 401, {"error": "unauthenticated"}


def _pem(key: rsa.RSAPrivateKey) -> str:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


class Account:
    """A service account's key file (a new RSA key), known to ``google`` unless
    ``known`` is False (then the endpoint refuses its assertions)."""

    def __init__(self, google: Google, folder: Path, *, known: bool = True) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = secrets.token_hex(20)
        if known:
            google.accounts[self.kid] = (EMAIL, self.key.public_key())
        else:  # the endpoint knows this key id with another key: the signature does not verify
            google.accounts[self.kid] = (EMAIL, rsa.generate_private_key(public_exponent=65537,
                                                                          key_size=2048).public_key())
        self.pem = _pem(self.key)
        self.info = {
            "type": "service_account", "project_id": PROJECT, "private_key_id": self.kid, "private_key": self.pem,
            "client_email": EMAIL, "client_id": "109876543210987654321",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": google.url + "/token",
            "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
            "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/agent-tools",
            "universe_domain": "googleapis.com"}
        self.path = folder / f"key-{self.kid[:8]}.json"
        self.path.write_text(json.dumps(self.info))

    def material(self) -> list[str]:
        """What of the key must never show: the PEM, each line of its body, and its id."""
        body = [line for line in self.pem.splitlines() if line and not line.startswith("-----")]
        return [self.pem, *body, self.kid]


def _forget_tokens() -> None:
    """Both sides' process-wide token caches emptied (each case starts cold)."""
    from google.adk.tools.openapi_tool.auth.credential_exchangers import service_account_exchanger

    from adk_actors.tools.openapi_tool import _service_account

    service_account_exchanger._reset_cache()  # type: ignore[no-untyped-call]
    _service_account._reset_cache()


@pytest.fixture
def google(monkeypatch: pytest.MonkeyPatch) -> Iterator[Google]:
    made = Google()
    made.thread.start()
    monkeypatch.setenv("ADK_TEST_GOOGLE_URL", made.url)
    monkeypatch.setenv("ADK_TEST_SA_SCOPE", SCOPE)
    _forget_tokens()
    try:
        yield made
    finally:
        _forget_tokens()
        made.server.shutdown()
        made.server.server_close()
        made.thread.join(timeout=10)


@pytest.fixture
def account(google: Google, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Account:
    made = Account(google, tmp_path)
    monkeypatch.setenv("ADK_TEST_SA_KEY_FILE", str(made.path))
    return made


PROGRAM = '''
import json
import os

from google.adk.agents import Agent
from google.adk.auth.auth_credential import ServiceAccount, ServiceAccountCredential
from google.adk.runners import InMemoryRunner
from google.adk.tools.openapi_tool import OpenAPIToolset
from google.adk.tools.openapi_tool.auth.auth_helpers import (
    service_account_dict_to_scheme_credential,
    service_account_scheme_credential,
)
from google.genai import types

URL = os.environ["ADK_TEST_GOOGLE_URL"]
with open(os.environ["ADK_TEST_SA_KEY_FILE"]) as key_file:
    KEY = json.load(key_file)
SPEC = {"openapi": "3.0.3", "info": {"title": "Who", "version": "1"}, "servers": [{"url": URL}],
        "paths": {"/whoami": {"get": {"operationId": "whoAmI", "summary": "Who is calling",
                                      "responses": {"200": {"description": "ok"}}}}}}
SCHEME, CREDENTIAL = HELPER
TOOLSET = OpenAPIToolset(spec_dict=SPEC, auth_scheme=SCHEME, auth_credential=CREDENTIAL,
                         allow_private_network_access=True)
root_agent = Agent(name="who", model="gemini-2.5-flash", instruction="Say who calls.", tools=[TOOLSET])


async def main(texts):
    runner = InMemoryRunner(agent=root_agent, app_name="sa")
    session = await runner.session_service.create_session(app_name="sa", user_id="ann")
    turns = []
    for text in texts:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        turns.append([event async for event in runner.run_async(user_id="ann", session_id=session.id,
                                                                new_message=message)])
    stored = await runner.session_service.get_session(app_name="sa", user_id="ann", session_id=session.id)
    await runner.close()
    return {"turns": turns, "stored": stored.events, "state": dict(stored.state)}
'''

ACCESS = PROGRAM.replace("HELPER", 'service_account_dict_to_scheme_credential(KEY, [os.environ["ADK_TEST_SA_SCOPE"]])')
ID_TOKEN = PROGRAM.replace("HELPER", "service_account_scheme_credential(ServiceAccount(\n"
                           "    service_account_credential=ServiceAccountCredential.model_validate(KEY),\n"
                           "    use_id_token=True, audience=URL))")
WHO = calls(("who_am_i", {}))


def _responses(events: list[Any]) -> list[Any]:
    return [r[2] for row in event_rows(events) for r in row["responses"]]


def _run(source: str, texts: list[str], script: list[Any], server: StubServer, google: Google,
         caplog: pytest.LogCaptureFixture) -> dict[str, Any]:
    google.reset()
    caplog.clear()
    _, result = run_program(source, script, server, texts)
    return {"responses": [_responses(turn) for turn in result["turns"]], "google": list(google.requests),
            "assertions": [{k: v for k, v in a.items() if k not in ("iat", "exp")} for a in google.assertions],
            "unused": len(server.responses), "raw": result, "logs": caplog.text}


def both(source: str, texts: list[str], script: list[Any], server: StubServer, google: Google,
         caplog: pytest.LogCaptureFixture) -> tuple[dict[str, Any], dict[str, Any]]:
    """The program on google-adk, then on ours (each with its token cache cold)."""
    caplog.set_level(logging.DEBUG)
    _forget_tokens()
    theirs = _run(source, texts, script, server, google, caplog)
    assert theirs["unused"] == 0, "the case must use its script on google-adk"
    _forget_tokens()
    ours = _run(rewritten(source), texts, script, server, google, caplog)
    assert "google" not in rewritten(source)
    return theirs, ours


def assert_nothing_secret(run: dict[str, Any], account: Account, google: Google) -> None:
    """No key material and no token in the stored events, the state, the logs."""
    raw = run["raw"]
    seen = "".join(e.model_dump_json() for e in raw["stored"]) + json.dumps(raw["state"], default=str)
    seen += "".join(e.model_dump_json() for turn in raw["turns"] for e in turn)
    for secret in (*account.material(), *google.access_tokens, *google.id_tokens):
        assert secret not in seen, "a secret in the session"
        assert secret not in run["logs"], "a secret in a log line"


#: the credential under an HTTP bearer scheme instead of the helper's OAuth2 one
BEARER = ACCESS.replace("auth_scheme=SCHEME,", "auth_scheme=HTTPBearer(bearerFormat='JWT'),").replace(
    "import json\n", "import json\n\nfrom fastapi.openapi.models import HTTPBearer\n", 1)


@pytest.mark.parametrize("source", [ACCESS, BEARER], ids=["oauth2 scheme", "http bearer scheme"])
def test_an_access_token_is_google_adks(gemini: StubServer, google: Google, account: Account,
                                        caplog: pytest.LogCaptureFixture, source: str) -> None:
    """The key file through ``service_account_dict_to_scheme_credential`` with a scope
    (under the helper's scheme, or an HTTP bearer one): the tool signs an assertion
    with the key, gets an access token from the key's token URI and calls the API with
    ``Authorization: Bearer <it>``; the same on both."""
    assert BEARER.count("HTTPBearer") == 2
    script = [WHO, gemini_response("You are the service account.")]
    theirs, ours = both(source, ["who calls?"], script, gemini, google, caplog)
    assert theirs["responses"] == [[{"kind": "access", "token_number": 1}]]
    assert theirs["google"] == [("POST", "/token", "access"), ("GET", "/whoami", "bearer")]
    [claims] = theirs["assertions"]
    assert claims == {"iss": EMAIL, "aud": ASSERTION_AUDIENCE, "scope": SCOPE}
    for key in ("responses", "google", "assertions", "unused"):
        assert ours[key] == theirs[key], key
    assert_nothing_secret(ours, account, google)


def test_an_id_token_for_an_audience_is_google_adks(gemini: StubServer, google: Google, account: Account,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    """``use_id_token`` with the API's URL as the audience: the assertion asks for an
    ID token for it (``target_audience``), and the API gets that token."""
    script = [WHO, gemini_response("You are the service account.")]
    theirs, ours = both(ID_TOKEN, ["who calls?"], script, gemini, google, caplog)
    assert theirs["responses"] == [[{"kind": "id", "token_number": 1, "audience": google.url}]]
    assert theirs["google"] == [("POST", "/token", "id"), ("GET", "/whoami", "bearer")]
    [claims] = theirs["assertions"]
    assert claims == {"iss": EMAIL, "aud": ASSERTION_AUDIENCE, "target_audience": google.url}
    for key in ("responses", "google", "assertions", "unused"):
        assert ours[key] == theirs[key], key
    assert_nothing_secret(ours, account, google)


@pytest.mark.parametrize(("expires_in", "tokens"), [(3600, [1, 1]), (200, [1, 2])])
def test_a_token_is_reused_until_it_nears_expiry(gemini: StubServer, google: Google, account: Account,
                                                 caplog: pytest.LogCaptureFixture, expires_in: int,
                                                 tokens: list[int]) -> None:
    """Two turns, one call each: a token valid for an hour serves both (one token
    request); one that expires within google-adk's 300 s margin is fetched again for the
    second call, which goes out with the new token."""
    google.expires_in = expires_in
    script = [WHO, gemini_response("One."), WHO, gemini_response("Two.")]
    theirs, ours = both(ACCESS, ["who?", "and now?"], script, gemini, google, caplog)
    assert theirs["responses"] == [[{"kind": "access", "token_number": n}] for n in tokens]
    posts = [r for r in theirs["google"] if r[0] == "POST"]
    assert len(posts) == max(tokens)
    for key in ("responses", "google", "unused"):
        assert ours[key] == theirs[key], key
    assert_nothing_secret(ours, account, google)


def test_a_key_the_endpoint_refuses_is_the_calls_typed_error(gemini: StubServer, google: Google, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    """The endpoint cannot verify the key's signature (``invalid_grant``): ours sends
    nothing to the API and the call's answer is ``AuthCredentialMissingError`` with
    google-auth's reason; no key material in it, the events or the logs. google-adk
    logs the failure and calls the API without auth (its 401 is the answer)."""
    bad = Account(google, tmp_path, known=False)
    monkeypatch.setenv("ADK_TEST_SA_KEY_FILE", str(bad.path))
    script = [WHO, gemini_response("I could not authenticate.")]
    theirs, ours = both(ACCESS, ["who calls?"], script, gemini, google, caplog)
    assert theirs["google"] == [("POST", "/token", "access"), ("GET", "/whoami", None)]
    [[their_answer]] = theirs["responses"]
    assert "Status Code: 401" in their_answer["error"]
    assert ours["google"] == [("POST", "/token", "access")]  # the API is not called
    [[answer]] = ours["responses"]
    assert answer["error"].startswith("AuthCredentialMissingError: Could not exchange the service account for an "
                                      "access token: RefreshError: ")
    assert "invalid_grant" in answer["error"] and "Invalid JWT Signature" in answer["error"]
    assert ours["unused"] == 0
    assert_nothing_secret(ours, bad, google)


# -- the exchangers on the same key file --------------------------------------------------


def _exchangers() -> tuple[Any, Any]:
    from google.adk.tools.openapi_tool.auth.credential_exchangers import (
        ServiceAccountCredentialExchanger as Theirs,
    )

    from adk_actors.tools.openapi_tool.auth.credential_exchangers import (
        ServiceAccountCredentialExchanger as Ours,
    )
    return Theirs, Ours


def _credentials(info: dict[str, Any], **options: Any) -> tuple[Any, Any]:
    """The same service-account credential as google-adk's and as ours."""
    from google.adk.auth import auth_credential as theirs

    from adk_actors.auth import auth_credential as ours

    made = []
    for side in (theirs, ours):
        key = side.ServiceAccountCredential.model_validate(info) if info else None
        made.append(side.AuthCredential(auth_type=side.AuthCredentialTypes.SERVICE_ACCOUNT,
                                        service_account=side.ServiceAccount(service_account_credential=key,
                                                                            **options)))
    return made[0], made[1]


def _header(credential: Any) -> str:
    return f"{credential.http.scheme.capitalize()} {credential.http.credentials.token}"


@pytest.mark.parametrize("options", [{"scopes": [SCOPE]}, {"use_id_token": True, "audience": "https://api.example"}],
                         ids=["access", "id"])
def test_both_exchangers_make_the_same_bearer_from_the_key_file(google: Google, account: Account,
                                                              options: dict[str, Any]) -> None:
    """google-adk's exchanger and ours, on the same key file: each one token request,
    a bearer credential with the token the endpoint issued (the same header shape),
    and the same assertion claims."""
    from adk_actors.tools.openapi_tool.auth.auth_helpers import credential_to_param
    from adk_actors.tools.openapi_tool.auth.credential_exchangers import AutoAuthCredentialExchanger

    Theirs, _ = _exchangers()
    their_credential, our_credential = _credentials(account.info, **options)
    scheme, _ = _scheme_of()
    their = Theirs().exchange_credential(scheme, their_credential)
    our = AutoAuthCredentialExchanger().exchange_credential(scheme, our_credential)  # registered for the type
    assert our is not None and our.http is not None
    issued = google.id_tokens if options.get("use_id_token") else google.access_tokens
    assert _header(their) == f"Bearer {issued[0]}" and _header(our) == f"Bearer {issued[1]}"
    assert their.http.additional_headers is None and our.http.additional_headers is None
    first, second = ({k: v for k, v in a.items() if k not in ("iat", "exp")} for a in google.assertions)
    assert first == second
    param, values = credential_to_param(scheme, our)
    assert param is not None and values == {param.py_name: f"Bearer {issued[1]}"}


def _scheme_of() -> tuple[Any, Any]:
    """google-adk's scheme for a service account (an OAuth2 client-credentials one), ours."""
    from adk_actors.auth.auth_credential import ServiceAccount
    from adk_actors.tools.openapi_tool.auth.auth_helpers import service_account_scheme_credential

    return service_account_scheme_credential(ServiceAccount(use_default_credential=True))


def test_a_token_is_fetched_again_when_the_clock_nears_its_expiry(google: Google, account: Account) -> None:
    """Our exchanger with a clock: the token (an hour) is given again while the clock
    is more than 300 s before its expiry, and fetched anew from then on; each exchange
    gives its own copy of the credential."""
    from adk_actors.tools.openapi_tool._service_account import ServiceAccountCredentialExchanger

    before = time.time()
    now = [before]
    exchanger = ServiceAccountCredentialExchanger(clock=lambda: now[0])
    _, credential = _credentials(account.info, scopes=[SCOPE])
    scheme, _ = _scheme_of()
    first = exchanger.exchange_credential(scheme, credential)
    after = time.time()
    # google-auth dates the hour's token by the real clock (to the second) when it came,
    # somewhere between ``before`` and ``after`` (seconds apart on a loaded machine):
    now[0] = int(before) + 3600 - 301  # more than 300 s before its expiry, whenever it came
    again = exchanger.exchange_credential(scheme, credential)
    assert _header(again) == _header(first) == f"Bearer {google.access_tokens[0]}" and again is not first
    assert len(google.access_tokens) == 1
    now[0] = after + 3600 - 300  # within 300 s of its expiry, whenever it came
    renewed = exchanger.exchange_credential(scheme, credential)
    assert len(google.access_tokens) == 2 and _header(renewed) == f"Bearer {google.access_tokens[1]}"
    assert [r[0] for r in google.requests] == ["POST", "POST"]


def test_a_key_google_auth_cannot_read_is_a_typed_error_without_it(google: Google, account: Account) -> None:
    """A key that is no key: google-adk's error type from both exchangers, no request
    made, and ours says why without any of the key's text; a key without scopes, or
    no service account at all, is the same error type on both."""
    from google.adk.tools.openapi_tool.auth.credential_exchangers.base_credential_exchanger import (
        AuthCredentialMissingError as TheirError,
    )

    from adk_actors.tools.openapi_tool.auth.credential_exchangers.base_credential_exchanger import (
        AuthCredentialMissingError as OurError,
    )

    Theirs, Ours = _exchangers()
    scheme, _ = _scheme_of()
    garbage = f"-----BEGIN PRIVATE KEY-----\nnot-a-key-{secrets.token_hex(16)}\n-----END PRIVATE KEY-----\n"
    their_credential, our_credential = _credentials({**account.info, "private_key": garbage}, scopes=[SCOPE])
    with pytest.raises(TheirError):
        Theirs().exchange_credential(scheme, their_credential)
    with pytest.raises(OurError) as raised:
        Ours().exchange_credential(scheme, our_credential)
    text = str(raised.value)
    assert text.startswith("Could not exchange the service account for an access token: ValueError: ")
    assert garbage.splitlines()[1] not in text and account.kid not in text
    assert raised.value.__cause__ is None and raised.value.__context__ is None
    assert google.requests == []
    assert "not-a-key" not in repr(our_credential) and account.kid not in repr(our_credential)
    their_unscoped, our_unscoped = _credentials(account.info)
    with pytest.raises(TheirError, match="scopes are required"):
        Theirs().exchange_credential(scheme, their_unscoped)
    with pytest.raises(OurError, match="needs scopes"):
        Ours().exchange_credential(scheme, our_unscoped)
    from adk_actors.auth.auth_credential import AuthCredential, AuthCredentialTypes

    with pytest.raises(OurError, match="needs its service_account"):
        Ours().exchange_credential(scheme, AuthCredential(auth_type=AuthCredentialTypes.SERVICE_ACCOUNT))
    assert google.requests == []


@pytest.mark.parametrize("options", [{"scopes": [SCOPE]}, {"use_id_token": True, "audience": "https://api.example"}],
                         ids=["access", "id"])
def test_the_default_credentials_are_google_adks(google: Google, account: Account, monkeypatch: pytest.MonkeyPatch,
                                                 options: dict[str, Any]) -> None:
    """``use_default_credential``: the application default credentials
    (``GOOGLE_APPLICATION_CREDENTIALS`` naming the key file) get the token; an access
    token carries the key's project as ``x-goog-user-project``; the same on both."""
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(account.path))
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    Theirs, Ours = _exchangers()
    their_credential, our_credential = _credentials({}, use_default_credential=True, **options)
    scheme, _ = _scheme_of()
    their = Theirs().exchange_credential(scheme, their_credential)
    our = Ours().exchange_credential(scheme, our_credential)
    issued = google.id_tokens if options.get("use_id_token") else google.access_tokens
    assert [_header(their), _header(our)] == [f"Bearer {token}" for token in issued]
    expected = None if options.get("use_id_token") else {"x-goog-user-project": PROJECT}
    assert their.http.additional_headers == our.http.additional_headers == expected


MANAGER_PROGRAM = '''
import json
import os

import httpx
from google.adk.agents import Agent
from google.adk.auth import AuthConfig
from google.adk.auth.auth_credential import ServiceAccount, ServiceAccountCredential
from google.adk.auth.credential_manager import CredentialManager
from google.adk.runners import InMemoryRunner
from google.adk.tools.openapi_tool.auth.auth_helpers import service_account_scheme_credential
from google.adk.tools.tool_context import ToolContext
from google.genai import types

URL = os.environ["ADK_TEST_GOOGLE_URL"]
with open(os.environ["ADK_TEST_SA_KEY_FILE"]) as key_file:
    KEY = json.load(key_file)
SCHEME, CREDENTIAL = service_account_scheme_credential(ServiceAccount(
    service_account_credential=ServiceAccountCredential.model_validate(KEY), scopes=[os.environ["ADK_TEST_SA_SCOPE"]]))


async def who_am_i(tool_context: ToolContext) -> dict:
    """Says who calls."""
    credential = await CredentialManager(AuthConfig(auth_scheme=SCHEME, raw_auth_credential=CREDENTIAL)
                                         ).get_auth_credential(tool_context)
    async with httpx.AsyncClient() as client:
        answer = await client.get(URL + "/whoami", headers={
            "Authorization": "Bearer " + credential.http.credentials.token})
    return answer.json()


root_agent = Agent(name="who", model="gemini-2.5-flash", instruction="Say who calls.", tools=[who_am_i])
''' + PROGRAM[PROGRAM.index("\n\nasync def main"):]


def test_credential_manager_exchanges_a_service_account_as_google_adks(gemini: StubServer, google: Google,
                                                                       account: Account,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    """A custom tool's ``CredentialManager`` with the service account's ``AuthConfig``
    (the helper's client-credentials scheme): no asking, an HTTP bearer credential with
    the endpoint's token, reused on the next turn; nothing kept in the session."""
    script = [WHO, gemini_response("One."), WHO, gemini_response("Two.")]
    theirs, ours = both(MANAGER_PROGRAM, ["who?", "again?"], script, gemini, google, caplog)
    assert theirs["responses"] == [[{"kind": "access", "token_number": 1}]] * 2
    assert theirs["google"] == [("POST", "/token", "access"), ("GET", "/whoami", "bearer"),
                                ("GET", "/whoami", "bearer")]
    for key in ("responses", "google", "assertions", "unused"):
        assert ours[key] == theirs[key], key
    assert ours["raw"]["state"] == theirs["raw"]["state"] == {}
    assert_nothing_secret(ours, account, google)


def test_the_helpers_make_google_adks_scheme_and_credential(account: Account) -> None:
    """Both helpers give google-adk's OAuth2 client-credentials scheme and
    ``serviceAccount`` credential; the key's secrets stay out of ``repr``; google-adk's
    checks of a ``ServiceAccount`` (a key or the default credentials; an audience for an
    ID token) are ValueErrors on both, without the input in their text."""
    from google.adk.auth import auth_credential as their_types
    from google.adk.tools.openapi_tool.auth import auth_helpers as theirs

    from adk_actors.auth import auth_credential as our_types
    from adk_actors.tools.openapi_tool.auth import auth_helpers as ours

    made = []
    for helpers, types in ((theirs, their_types), (ours, our_types)):
        by_dict = helpers.service_account_dict_to_scheme_credential(dict(account.info), [SCOPE])
        by_model = helpers.service_account_scheme_credential(types.ServiceAccount(
            service_account_credential=types.ServiceAccountCredential.model_validate(account.info),
            use_id_token=True, audience="https://api.example"))
        made.append([(scheme.model_dump(mode="json", by_alias=True, exclude_none=True),
                      credential.model_dump(mode="json", by_alias=True, exclude_none=True))
                     for scheme, credential in (by_dict, by_model)])
        for bad in ({}, {"service_account_credential": account.info, "use_id_token": True}):
            with pytest.raises(ValueError) as raised:
                types.ServiceAccount.model_validate(bad)
            assert account.pem not in str(raised.value)
        assert account.kid not in repr(by_model[1]) and "PRIVATE KEY" not in repr(by_model[1])
    assert made[1] == made[0]
    assert made[1][0][0]["flows"]["clientCredentials"]["tokenUrl"] == "https://oauth2.mtls.googleapis.com/token"


def test_without_google_auth_the_error_names_the_extra(account: Account) -> None:
    """google-auth not installed: the OpenAPI tools still import, and the exchange is a
    ModuleNotFoundError saying which extra to install."""
    script = f'''
import sys
for name in list(sys.modules):
    if name == "google.auth" or name.startswith(("google.auth.", "google.oauth2")):
        del sys.modules[name]
sys.modules["google.auth"] = None
sys.modules["google.oauth2"] = None
import json
from adk_actors.tools.openapi_tool import OpenAPIToolset
from adk_actors.tools.openapi_tool.auth.auth_helpers import service_account_dict_to_scheme_credential
from adk_actors.tools.openapi_tool.auth.credential_exchangers import AutoAuthCredentialExchanger
scheme, credential = service_account_dict_to_scheme_credential(json.load(open({str(account.path)!r})), ["s"])
try:
    AutoAuthCredentialExchanger().exchange_credential(scheme, credential)
except ModuleNotFoundError as exc:
    print(type(exc).__name__, exc.name, exc)
'''
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("ModuleNotFoundError google.auth A service-account credential needs google-auth "
                                   "(the vertexai extra): pip install 'adk-actors[vertexai]'")
