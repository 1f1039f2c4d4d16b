"""OAuth2 and OpenID Connect tokens for the OpenAPI tools: the client-credentials
grant, the authorization-code exchange and the refresh grant (RFC 6749), as
google-adk's exchangers do them (their grant choice, their token request), with a
token cache and a typed error.

Which grant (google-adk's rule): an OAuth2 scheme's flows, ``clientCredentials`` first,
then ``authorizationCode``; an OpenID Connect scheme with its configuration
(:class:`~._auth.OpenIdConnectWithConfig`) takes client credentials when its
``grant_types_supported`` lists them, else the authorization code. The token URL is
the flow's ``tokenUrl`` (OpenID Connect: its ``token_endpoint``).

The token request: ``POST`` to the token URL, a form body (``grant_type`` and the
grant's fields), the client authenticated as the credential's
``token_endpoint_auth_method`` says: ``client_secret_basic`` (the default; HTTP Basic of
the form-encoded id and secret), ``client_secret_post`` (both in the body), or
``none`` (a public client: ``client_id`` in the body; also when no secret is given).
No scope is sent (as google-adk's). A code asked for with PKCE is exchanged with its
``code_verifier`` (an extra field of the credential's ``oauth2``). The answer's ``access_token`` (required),
``refresh_token``, ``id_token`` and ``expires_in`` go into the credential's ``oauth2``
(``expires_at`` = the clock's now + ``expires_in``), and every token is registered as a
secret at once.

:class:`OAuth2Tokens` is a tool's cache: :meth:`~OAuth2Tokens.token` gives the
credential's access token while it is valid (by the clock it was given, with a
leeway), else gets one (one request at a time: concurrent calls wait for it) (refresh grant when there is a refresh token, else the
scheme's grant) and keeps it; :meth:`~OAuth2Tokens.forget` drops it (a 401 from the
API). A token endpoint that cannot be reached, answers other than 2xx, or answers
without an access token is an :class:`OAuth2TokenError` naming the endpoint's host,
the status and the OAuth error code, never a secret. Logs say the same.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
import weakref
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
from fastapi.openapi.models import OAuth2, SecurityBase

from ..._secrets import redact, register_secret
from ._auth import AuthCredential, OAuth2Auth, OpenIdConnectWithConfig
from ._errors import OpenApiAuthError
from ._network import HttpxClientFactory, send

__all__ = [
    "AUTHORIZATION_CODE",
    "CLIENT_CREDENTIALS",
    "OAuth2TokenError",
    "OAuth2Tokens",
    "grant_of",
    "token_url_of",
]

CLIENT_CREDENTIALS = "client_credentials"
AUTHORIZATION_CODE = "authorization_code"
REFRESH_TOKEN = "refresh_token"

_log = logging.getLogger("adk_actors.tools.openapi")


class OAuth2TokenError(OpenApiAuthError):
    """The token endpoint did not give a token: unreachable, a non-2xx answer (its
    OAuth ``error`` code named), or an answer without ``access_token``. ``status`` is
    the HTTP status (None when nothing answered)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def grant_of(scheme: SecurityBase | None) -> str | None:
    """The grant a scheme calls for (see the module), or None (another flow or scheme)."""
    if isinstance(scheme, OAuth2) and scheme.flows is not None:
        if scheme.flows.clientCredentials is not None:
            return CLIENT_CREDENTIALS
        if scheme.flows.authorizationCode is not None:
            return AUTHORIZATION_CODE
        return None
    if isinstance(scheme, OpenIdConnectWithConfig):
        return CLIENT_CREDENTIALS if CLIENT_CREDENTIALS in (scheme.grant_types_supported or []) else AUTHORIZATION_CODE
    return None


def token_url_of(scheme: SecurityBase | None) -> str | None:
    """The scheme's token URL (the authorization code flow's first, as google-adk's
    session does), or None."""
    if isinstance(scheme, OAuth2) and scheme.flows is not None:
        for flow in (scheme.flows.authorizationCode, scheme.flows.clientCredentials):
            if flow is not None and flow.tokenUrl:
                return str(flow.tokenUrl)
        return None
    if isinstance(scheme, OpenIdConnectWithConfig):
        return scheme.token_endpoint
    return None


def _form(grant: str, oauth2: OAuth2Auth) -> tuple[dict[str, str], dict[str, str]]:
    """The token request's form fields and headers for ``grant``."""
    fields: dict[str, str] = {"grant_type": grant}
    if grant == AUTHORIZATION_CODE:
        fields["code"] = oauth2.auth_code or ""
        if oauth2.redirect_uri:
            fields["redirect_uri"] = oauth2.redirect_uri
        verifier = (oauth2.model_extra or {}).get("code_verifier")
        if isinstance(verifier, str) and verifier:  # PKCE (RFC 7636): the verifier of the request's challenge
            fields["code_verifier"] = verifier
    elif grant == REFRESH_TOKEN:
        fields["refresh_token"] = oauth2.refresh_token or ""
    method = oauth2.token_endpoint_auth_method or "client_secret_basic"
    headers = {"Accept": "application/json"}
    if not oauth2.client_secret or method == "none":
        fields["client_id"] = oauth2.client_id or ""
    elif method == "client_secret_post":
        fields["client_id"] = oauth2.client_id or ""
        fields["client_secret"] = oauth2.client_secret
    elif method == "client_secret_basic":
        pair = f"{quote(oauth2.client_id or '', safe='')}:{quote(oauth2.client_secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    else:
        raise OpenApiAuthError(f"token_endpoint_auth_method {method!r} is not supported here "
                               "(client_secret_basic, client_secret_post, none)")
    return fields, headers


class OAuth2Tokens:
    """A tool's OAuth2 token cache (see the module). ``clock`` gives the time in
    seconds (``time.time`` by default); a token is renewed ``leeway`` seconds before it
    expires."""

    def __init__(self, *, clock: Callable[[], float] = time.time, leeway: float = 30.0) -> None:
        self.clock = clock
        self.leeway = leeway
        #: how many token requests were made, by grant (for logs and tests)
        self.requests: dict[str, int] = {}
        #: one token request at a time per event loop: concurrent calls wait for it
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = \
            weakref.WeakKeyDictionary()

    def valid(self, oauth2: OAuth2Auth) -> bool:
        """Whether the credential's access token may still be used."""
        if not oauth2.access_token:
            return False
        return oauth2.expires_at is None or self.clock() < oauth2.expires_at - self.leeway

    def forget(self, credential: AuthCredential) -> None:
        """Drop the access token (the API refused it); a refresh token is kept."""
        if credential.oauth2 is not None:
            credential.oauth2.access_token = None
            credential.oauth2.expires_at = None

    async def token(self, scheme: SecurityBase, credential: AuthCredential, *,
                    verify: Any = None, client_factory: HttpxClientFactory | None = None,
                    allow_private_network_access: bool = False) -> str | None:
        """The credential's valid access token, else a new one from the token
        endpoint (kept in the credential); None when the scheme and credential call
        for no grant here (no client id, no token URL, or an authorization code flow
        without a code or refresh token: the user must authorize first). Raises
        :class:`OAuth2TokenError` (see the module)."""
        oauth2 = credential.oauth2
        if oauth2 is None:
            return None
        if self.valid(oauth2):
            return oauth2.access_token
        lock = self._locks.setdefault(asyncio.get_running_loop(), asyncio.Lock())
        async with lock:
            if self.valid(oauth2):  # a concurrent call got it meanwhile
                return oauth2.access_token
            return await self._fetch(scheme, oauth2, verify=verify, client_factory=client_factory,
                                     allow_private_network_access=allow_private_network_access)

    async def _fetch(self, scheme: SecurityBase, oauth2: OAuth2Auth, *, verify: Any,
                     client_factory: HttpxClientFactory | None, allow_private_network_access: bool) -> str | None:
        """One token request for the grant the credential and scheme call for."""
        grant = grant_of(scheme)
        url = token_url_of(scheme)
        if oauth2.refresh_token:
            grant = REFRESH_TOKEN
        elif grant == AUTHORIZATION_CODE and not oauth2.auth_code:
            return None
        if grant is None or url is None or not oauth2.client_id:
            return None
        fields, headers = _form(grant, oauth2)
        host = urlsplit(url).hostname or "?"
        self.requests[grant] = self.requests.get(grant, 0) + 1
        try:
            response = await send({"method": "POST", "url": url, "data": fields, "headers": headers},
                                  verify=verify, client_factory=client_factory,
                                  allow_private_network_access=allow_private_network_access)
        except (httpx.HTTPError, ValueError) as exc:
            _log.warning("OAuth2 %s token request to %s failed: %s", grant, host, type(exc).__name__)
            raise OAuth2TokenError(redact(f"the token endpoint at {host} could not be reached for the {grant} "
                                          f"grant: {type(exc).__name__}: {exc}")) from None
        answer = self._answer(response)
        if not response.is_success or not isinstance(answer.get("access_token"), str):
            code = answer.get("error") if isinstance(answer.get("error"), str) else None
            _log.warning("OAuth2 %s token request to %s answered %d (%s)", grant, host, response.status_code, code)
            if grant == REFRESH_TOKEN and response.status_code in (400, 401) and code == "invalid_grant":
                oauth2.refresh_token = None  # spent or revoked: the scheme's own grant next time
            what = f"error {code!r}" if code else ("no access_token" if response.is_success else "no OAuth error")
            raise OAuth2TokenError(redact(f"the token endpoint at {host} refused the {grant} grant: HTTP "
                                          f"{response.status_code}, {what}"), status=response.status_code)
        self._keep(oauth2, answer, grant)
        _log.info("OAuth2 %s token from %s, valid %s s", grant, host, answer.get("expires_in"))
        return oauth2.access_token

    @staticmethod
    def _answer(response: httpx.Response) -> dict[str, Any]:
        try:
            data = response.json()
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}

    def _keep(self, oauth2: OAuth2Auth, answer: dict[str, Any], grant: str) -> None:
        """The answer's tokens into the credential, each registered as a secret."""
        for name in ("access_token", "refresh_token", "id_token"):
            value = answer.get(name)
            if isinstance(value, str):
                register_secret(value)
        oauth2.access_token = answer["access_token"]
        if isinstance(answer.get("refresh_token"), str):
            oauth2.refresh_token = answer["refresh_token"]
        if isinstance(answer.get("id_token"), str):
            oauth2.id_token = answer["id_token"]
        if grant == AUTHORIZATION_CODE:
            oauth2.auth_code = None  # a code is good for one exchange
        expires_in = answer.get("expires_in")
        if isinstance(expires_in, (int, float)) or (isinstance(expires_in, str) and expires_in.isdigit()):
            oauth2.expires_in = int(expires_in)
            oauth2.expires_at = int(self.clock() + int(expires_in))
        else:
            oauth2.expires_in = oauth2.expires_at = None
