"""The OAuth2 authorization code flow for one user, with the credential service as the
place the user's token lives (google-adk's ``AuthConfig`` round trip, without the
client ever holding the tool's client secret).

A tool whose scheme is an authorization-code flow (OAuth2 ``authorizationCode``, or
OpenID Connect without client credentials) and whose own credential is only the
client (``client_id``, ``client_secret``; no code, no token) serves each user with that
user's token, in order:

1. the credential service's credential under the tool's key, for this user: its
   access token (the service refreshes one close to expiry with the refresh token,
   token URL and client stored with it) is sent, across turns and host restarts;
2. else the user's auth response in the session state, where google-adk's
   ``AuthHandler`` looks for it (``temp:<key>``, then ``<key>``): google-adk's
   ``AuthCredential`` (as a dict, or JSON) whose ``oauth2`` holds the
   ``auth_response_uri`` the authorization server redirected to (or the
   ``auth_code``). Its ``state`` must be the one the request carried; an ``error`` in
   the redirect, a state that does not match, or no code is an
   :class:`~._errors.OpenApiAuthError`. The code is exchanged at the token endpoint
   with the tool's own client (``_oauth2``), the tokens are stored in the credential
   service for this user (with the token URL and client, for refresh), and the state
   entry is cleared;
3. else the user is asked: :func:`auth_request` is google-adk's auth request, the
   scheme and ``exchanged_auth_credential.oauth2`` with the authorization URL
   (``auth_uri``: ``response_type=code``, ``client_id``, ``redirect_uri``, the flow's
   scopes, a random ``state``, and google-adk's ``access_type=offline`` and
   ``prompt=consent``), never the client secret. No PKCE (``code_challenge``): a public
   client without a secret is not served here.

Without a credential service (an in-process run given none), the exchanged token
serves that call only, and the next call asks the user again.

When the API answers 401 to a request made with the user's token and the answer
rejects the token (:func:`token_rejected`, google-adk's reading: a ``WWW-Authenticate``
challenge naming ``invalid_token``, or none), :func:`reauthorize` asks the user again
(google-adk's recovery): the stored credential is deleted, a new auth request ends the
turn, and the call answers google-adk's ``{"pending": True, "message": ...}``. Asking
is budgeted per credential key, once (``_adk_reauth_requests:<key>`` in the session
state, kept across turns, as google-adk's): a second rejection before any call with
the key succeeds is google-adk's error saying re-authorizing did not help, and the
stored credential is left in place. :func:`note_success` refills the budget after any
answer that is not a 401. Unlike google-adk, the token is not refreshed first (the
credential service refreshes a token only when it is about to expire).

A token never enters an event, a state entry or a log line: the exchange's tokens are
registered as secrets at once, and only the credential service keeps them.
"""

from __future__ import annotations

import json
import secrets
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from fastapi.openapi.models import OAuth2, SecurityBase

from ..._secrets import redact, register_secret
from ._auth import AuthCredential, AuthCredentialTypes, OAuth2Auth, OpenIdConnectWithConfig
from ._errors import OpenApiAuthError
from ._oauth2 import AUTHORIZATION_CODE, grant_of, token_url_of

__all__ = ["REAUTH_PENDING", "auth_request", "auth_response", "code_of", "note_success", "reauthorize",
           "stored_form", "token_rejected", "user_flow"]

#: google-adk's answer of a call whose token the API rejected: the user is asked again
REAUTH_PENDING = {"pending": True, "message": "Needs your authorization to access your data."}
#: how many times the user is asked again before a call with the key succeeds (google-adk's)
MAX_REAUTH_REQUESTS = 1


def user_flow(scheme: SecurityBase | None, credential: AuthCredential | None) -> bool:
    """Whether the tool serves each user with their own token (see the module): an
    authorization-code scheme, and a credential that is only the client."""
    if credential is None or credential.oauth2 is None or credential.http is not None:
        return False
    oauth2 = credential.oauth2
    return (grant_of(scheme) == AUTHORIZATION_CODE and bool(oauth2.client_id) and not oauth2.auth_code
            and not oauth2.auth_response_uri and not oauth2.access_token and not oauth2.refresh_token)


def _authorization_url(scheme: SecurityBase) -> tuple[str | None, list[str]]:
    if isinstance(scheme, OAuth2) and scheme.flows is not None and scheme.flows.authorizationCode is not None:
        flow = scheme.flows.authorizationCode
        return str(flow.authorizationUrl), list(flow.scopes or {})
    if isinstance(scheme, OpenIdConnectWithConfig):
        return scheme.authorization_endpoint, list(scheme.scopes or ["openid"])
    return None, []


def auth_request(scheme: SecurityBase, client: OAuth2Auth, key: str) -> dict[str, Any]:
    """google-adk's auth request for ``key`` (step 3): the scheme, the client without
    its secret, and the authorization URL with a fresh ``state``."""
    url, scopes = _authorization_url(scheme)
    state = secrets.token_urlsafe(24)
    query = {"response_type": "code", "client_id": client.client_id or "", "state": state}
    if client.redirect_uri:
        query["redirect_uri"] = client.redirect_uri
    if scopes:
        query["scope"] = " ".join(scopes)
    query.update({"access_type": "offline", "prompt": "consent"})  # google-adk's: a refresh token is asked for
    public = {"client_id": client.client_id, "redirect_uri": client.redirect_uri}
    asked = {**public, "auth_uri": f"{url}{'&' if url and '?' in url else '?'}{urlencode(query)}", "state": state}
    return {
        "auth_scheme": scheme.model_dump(mode="json", by_alias=True, exclude_none=True),
        "raw_auth_credential": {"auth_type": "oauth2", "oauth2": {k: v for k, v in public.items() if v}},
        "exchanged_auth_credential": {"auth_type": "oauth2", "oauth2": {k: v for k, v in asked.items() if v}},
        "credential_key": key,
    }


def auth_response(state: Any, key: str) -> tuple[str, AuthCredential] | None:
    """The user's auth response in the session ``state`` (step 2): the state key it is
    under and the credential, or None. A value that is not google-adk's credential is
    an OpenApiAuthError."""
    for name in (f"temp:{key}", key):
        value = state.get(name) if hasattr(state, "get") else None
        if value is None or value == "":
            continue
        try:
            if isinstance(value, str):
                value = json.loads(value) if value.lstrip().startswith("{") else {
                    "auth_type": "oauth2", "oauth2": {"access_token": value}}
            credential = AuthCredential.model_validate(value)
        except ValueError:
            raise OpenApiAuthError(f"the auth response under {name!r} is not an AuthCredential") from None
        if credential.auth_type != AuthCredentialTypes.OAUTH2 or credential.oauth2 is None:
            raise OpenApiAuthError(f"the auth response under {name!r} has no oauth2 part")
        register_secret(credential.oauth2.access_token)
        register_secret(credential.oauth2.auth_code)
        register_secret(credential.oauth2.auth_response_uri)
        return name, credential
    return None


def code_of(answer: OAuth2Auth) -> str:
    """The authorization code of an auth response: ``auth_code``, else the ``code`` of
    its ``auth_response_uri``, whose ``state`` must be the answer's (the request's).
    OpenApiAuthError for an ``error`` redirect, a state that does not match, no code."""
    if answer.auth_code:
        return answer.auth_code
    if not answer.auth_response_uri:
        raise OpenApiAuthError("the auth response has neither auth_code nor auth_response_uri")
    query = parse_qs(urlsplit(answer.auth_response_uri).query)
    if "error" in query:
        raise OpenApiAuthError(f"the authorization server refused: error {query['error'][0]!r}")
    given = query["state"][0] if query.get("state") else None
    if answer.state is not None and given != answer.state:
        raise OpenApiAuthError("the auth response's state is not the one the auth request carried")
    code = query["code"][0] if query.get("code") else None
    if not code:
        raise OpenApiAuthError("the auth response's redirect carries no code")
    register_secret(code)
    return code


def stored_form(scheme: SecurityBase, tokens: OAuth2Auth) -> dict[str, Any]:
    """What the credential service keeps for the user (step 2): the tokens, their
    expiry, the token URL and the client (for the service's refresh)."""
    return {"kind": "oauth2", "access_token": tokens.access_token, "refresh_token": tokens.refresh_token,
            "expires_at": float(tokens.expires_at) if tokens.expires_at is not None else None,
            "token_url": token_url_of(scheme), "client_id": tokens.client_id, "client_secret": tokens.client_secret}


def token_rejected(status: int, challenge: str | None) -> bool:
    """Did the API reject the token (google-adk's reading of a 401)? A 401 whose
    ``WWW-Authenticate`` challenge names ``invalid_token``, or has none (a 401 for
    ``insufficient_scope`` is not: asking again would ask for the same scopes)."""
    text = (challenge or "").lower()
    return status == 401 and ("invalid_token" in text or not text)


def budget_key(key: str) -> str:
    """The session state key of the re-authorization budget of credential ``key``."""
    return f"_adk_reauth_requests:{key}"


def reauthorize(tool_context: Any, tool_name: str, key: str, request: dict[str, Any], status: int,
                details: str) -> dict[str, Any]:
    """After the API rejected the user's token under ``key`` (see the module): within
    the budget, the stored credential is deleted, ``request`` (the auth request) is
    asked and google-adk's pending answer returned; past it, google-adk's error."""
    budget = budget_key(key)
    asked = tool_context.state.get(budget) or 0
    if asked >= MAX_REAUTH_REQUESTS:
        return {"error": redact(
            f"Tool {tool_name} execution failed. The user already re-authorized this connection and the API still "
            "rejected the credential, so retrying will not help. Report this to the user and suggest checking the "
            f"application's access or permission settings. Status Code: {status}, {details}")}
    tool_context.request_credential(key, request)
    tool_context.state[budget] = asked + 1
    service = tool_context.invocation.credentials
    delete = getattr(service, "delete", None)
    if callable(delete):
        session = tool_context.invocation.session
        delete(session.app_name, session.user_id, key)
    return dict(REAUTH_PENDING)


def note_success(tool_context: Any, key: str) -> None:
    """A call with credential ``key`` got past the API's authentication: its
    re-authorization budget is refilled."""
    if tool_context.state.get(budget_key(key)):
        tool_context.state[budget_key(key)] = 0
