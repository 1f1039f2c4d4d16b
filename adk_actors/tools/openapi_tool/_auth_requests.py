"""google-adk's ``AuthHandler`` steps on an ``AuthConfig``, as functions (the config's
class is never imported here, so that ``auth_tool`` can use them).

- :func:`generate_auth_request`: what a tool's ``request_credential`` sends to the
  client. Under an OAuth2 or OpenID Connect scheme, in order: an exchanged credential
  with an ``auth_uri`` is sent as it is; no tool credential, no ``oauth2`` in it, or
  no ``client_id`` is google-adk's ``ValueError``; a tool credential with an
  ``auth_uri`` is copied to the exchanged one; else the authorization URL is made
  (:func:`authorization_uri`). Other schemes are sent as they are. Either way every
  secret the agent configured (client secret, API key, HTTP password or token) is
  left out.
- :func:`store_answer`: the client's answer to an ``adk_request_credential`` call
  pinned to the request the run sent (its OAuth ``state`` must be the request's) and
  kept in the session state under ``temp:<credential key>`` (this invocation only),
  never with a client secret; None (and a warning) for an answer that cannot be used.
- :func:`auth_response`: what the tool reads back (``get_auth_response``): the
  credential under ``temp:<key>``, else ``<key>``; with the tool's own client
  (id and secret) put back, an authorization code (``auth_code``, or the code of the
  ``auth_response_uri``, whose state must be the request's) is exchanged at the token
  endpoint for a token, which is kept under ``temp:<key>`` only.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import hashlib
import logging
import secrets
import string
from typing import Any
from urllib.parse import urlencode

from fastapi.openapi.models import OAuthFlows, SecurityBase, SecuritySchemeType
from pydantic import ValidationError
from pydantic.alias_generators import to_camel

from ..._secrets import register_secret
from ._auth import (
    AuthCredential,
    AuthCredentialTypes,
    HttpAuth,
    HttpCredentials,
    OAuth2Auth,
    OpenIdConnectWithConfig,
)
from ._errors import OpenApiAuthError
from ._oauth2 import OAuth2Tokens
from ._user_auth import code_of

__all__ = ["auth_response", "authorization_uri", "extra", "generate_auth_request", "store_answer",
           "without_client_secret"]

_log = logging.getLogger("adk_actors.auth")
_OAUTH = (SecuritySchemeType.oauth2, SecuritySchemeType.openIdConnect)
_TOKEN_CHARS = string.ascii_letters + string.digits


def _kind(scheme: Any) -> Any:
    return getattr(scheme, "type_", None)


def extra(oauth2: OAuth2Auth, name: str) -> Any:
    """An OAuth2 field kept as an extra (``code_verifier``...), under its name or its
    camelCase wire name."""
    extras = oauth2.model_extra or {}
    return extras.get(name, extras.get(to_camel(name)))


def without_client_secret(credential: AuthCredential | None) -> AuthCredential | None:
    """A copy of ``credential`` without its OAuth2 client secret."""
    if credential is None:
        return None
    copy = credential.model_copy(deep=True)
    if copy.oauth2 is not None:
        copy.oauth2.client_secret = None
    return copy


def _without_configured_secrets(credential: AuthCredential | None) -> AuthCredential | None:
    copy = without_client_secret(credential)
    if copy is None:
        return None
    copy.api_key = None
    if copy.http is not None:
        copy.http.credentials.password = None
        copy.http.credentials.token = None
        copy.http.additional_headers = None
    return copy


def _with_configured_client(credential: AuthCredential | None, raw: AuthCredential | None) -> AuthCredential | None:
    """``credential`` with the tool's own client id and secret (a client's answer
    never picks the client its code is exchanged for)."""
    if credential is None or credential.oauth2 is None or raw is None or raw.oauth2 is None:
        return credential
    copy = credential.model_copy(deep=True)
    assert copy.oauth2 is not None
    copy.oauth2.client_secret = raw.oauth2.client_secret
    copy.oauth2.client_id = raw.oauth2.client_id
    return copy


def _endpoint_and_scopes(scheme: SecurityBase) -> tuple[str, list[str]]:
    """The authorization endpoint and scopes of ``scheme`` (google-adk's choice of
    flow: implicit, authorization code, client credentials, password)."""
    if isinstance(scheme, OpenIdConnectWithConfig):
        return scheme.authorization_endpoint, list(scheme.scopes or [])
    flows = getattr(scheme, "flows", None)
    if not isinstance(flows, OAuthFlows):
        raise ValueError(f"Cannot generate an auth uri for auth scheme {type(scheme).__name__}: it carries no "
                         "OAuth2 flows.")
    for flow, url in ((flows.implicit, "authorizationUrl"), (flows.authorizationCode, "authorizationUrl"),
                      (flows.clientCredentials, "tokenUrl"), (flows.password, "tokenUrl")):
        if flow is not None and getattr(flow, url, None):
            return str(getattr(flow, url)), list(flow.scopes or {})
    raise ValueError(f"Cannot generate an auth uri for auth scheme {type(scheme).__name__}: no flow declares an "
                     "authorization endpoint.")


def authorization_uri(scheme: SecurityBase, raw: AuthCredential) -> AuthCredential:
    """The tool's credential with the URL the user signs in at (``auth_uri``) and its
    random ``state``: ``response_type=code``, the client id, redirect URI and scopes,
    google-adk's ``access_type=offline`` and ``prompt`` (default ``consent``), and the
    credential's ``audience`` and ``nonce``. A public client (no secret) uses PKCE
    (S256): a ``code_verifier`` is made (or the credential's used) and its challenge
    sent; a method other than S256 is a ``ValueError``."""
    oauth2 = raw.oauth2
    assert oauth2 is not None
    endpoint, scopes = _endpoint_and_scopes(scheme)
    method = extra(oauth2, "code_challenge_method")
    if not oauth2.client_secret and not method:
        _log.warning("OAuth2 client_secret is not set for client_id %s; treating client as public.",
                     oauth2.client_id)
        method = "S256"
    state = "".join(secrets.choice(_TOKEN_CHARS) for _ in range(30))
    query: dict[str, str] = {"response_type": "code", "client_id": oauth2.client_id or ""}
    if oauth2.redirect_uri:
        query["redirect_uri"] = oauth2.redirect_uri
    if scopes:
        query["scope"] = " ".join(scopes)
    query["state"] = state
    query.update({"access_type": "offline", "prompt": extra(oauth2, "prompt") or "consent"})
    for name in ("audience", "nonce"):
        if extra(oauth2, name):
            query[name] = str(extra(oauth2, name))
    verifier = extra(oauth2, "code_verifier")
    if method:
        if method != "S256":
            raise ValueError(f"Unsupported code_challenge_method: {method}. Only 'S256' is supported.")
        verifier = verifier or "".join(secrets.choice(_TOKEN_CHARS) for _ in range(48))
        digest = hashlib.sha256(str(verifier).encode("ascii")).digest()
        query["code_challenge"] = base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")
        query["code_challenge_method"] = method
    asked = raw.model_copy(deep=True)
    assert asked.oauth2 is not None
    update: dict[str, Any] = {"auth_uri": f"{endpoint}{'&' if '?' in endpoint else '?'}{urlencode(query)}",
                              "state": state}
    if verifier:
        update.update(code_verifier=verifier, code_challenge_method=method)
    return asked.model_copy(update={"oauth2": asked.oauth2.model_copy(update=update)})


def generate_auth_request(config: Any) -> Any:
    """The request sent to the client for ``config`` (an ``AuthConfig``; see the module)."""
    scheme = config.auth_scheme
    exchanged, raw = config.exchanged_auth_credential, config.raw_auth_credential
    if _kind(scheme) not in _OAUTH or (exchanged is not None and exchanged.oauth2 is not None
                                       and exchanged.oauth2.auth_uri):
        request = config.model_copy(deep=True)
    elif raw is None:
        raise ValueError(f"Auth Scheme {_kind(scheme)} requires auth_credential.")
    elif raw.oauth2 is None:
        raise ValueError(f"Auth Scheme {_kind(scheme)} requires oauth2 in auth_credential.")
    elif raw.oauth2.auth_uri:
        request = config.model_copy(update={"exchanged_auth_credential": raw.model_copy(deep=True)}, deep=True)
    elif not raw.oauth2.client_id:
        raise ValueError(f"Auth Scheme {_kind(scheme)} requires client_id in auth_credential.oauth2.")
    else:
        request = config.model_copy(update={"exchanged_auth_credential": authorization_uri(scheme, raw)}, deep=True)
    return request.model_copy(update={
        "raw_auth_credential": _without_configured_secrets(request.raw_auth_credential),
        "exchanged_auth_credential": _without_configured_secrets(request.exchanged_auth_credential)})


def _exchangeable(config: Any, credential: AuthCredential | None, *, allow_public: bool) -> bool:
    if _kind(config.auth_scheme) not in _OAUTH or credential is None or credential.oauth2 is None:
        return False
    oauth2 = credential.oauth2
    if oauth2.access_token or not oauth2.client_id:
        return False
    return bool(oauth2.client_secret or allow_public)


def _from_string(config: Any, value: str) -> AuthCredential:
    kind = _kind(config.auth_scheme)
    if kind == SecuritySchemeType.apiKey:
        return AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key=value)
    if kind == SecuritySchemeType.http:
        return AuthCredential(auth_type=AuthCredentialTypes.HTTP, http=HttpAuth(
            scheme=getattr(config.auth_scheme, "scheme", "bearer"), credentials=HttpCredentials(token=value)))
    return AuthCredential(auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(access_token=value))


def _register(credential: AuthCredential) -> None:
    if credential.oauth2 is not None:
        for value in (credential.oauth2.auth_code, credential.oauth2.auth_response_uri,
                      credential.oauth2.access_token, credential.oauth2.refresh_token):
            register_secret(value)


def _exchange(scheme: SecurityBase, credential: AuthCredential) -> AuthCredential:
    """The code of ``credential`` exchanged at the scheme's token endpoint (on a thread
    of its own with its own loop: the caller may be on a running loop). Raises
    OpenApiAuthError for a redirect that cannot be used, OAuth2TokenError when the
    endpoint refuses."""
    assert credential.oauth2 is not None
    oauth2 = credential.oauth2.model_copy()
    if not oauth2.auth_code:
        oauth2.auth_code = code_of(oauth2)
    oauth2.auth_response_uri = None
    verifier = extra(oauth2, "code_verifier")
    if verifier:  # PKCE: sent with the code (under its Python name, as the token request reads it)
        oauth2 = oauth2.model_copy(update={"code_verifier": verifier})
    exchanged = credential.model_copy(update={"oauth2": oauth2})
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, OAuth2Tokens().token(scheme, exchanged, allow_private_network_access=True)).result()
    return exchanged


def auth_response(config: Any, state: Any) -> AuthCredential | None:
    """What the tool reads back for ``config`` from ``state`` (see the module): None
    when the client has not answered."""
    key = config.credential_key
    if not key:
        return None
    found: AuthCredential | None = None
    for name in (f"temp:{key}", key):
        value = state.get(name)
        if isinstance(value, AuthCredential):
            found = value
        elif isinstance(value, dict):
            found = AuthCredential.model_validate(value)
        elif isinstance(value, str) and value:
            found = _from_string(config, value)
        if found is not None:
            break
    if found is None:
        return None
    _register(found)
    credential = _with_configured_client(found, config.raw_auth_credential)
    if credential is None or not _exchangeable(config, credential, allow_public=True):
        return credential
    exchanged = _exchange(config.auth_scheme, credential)
    state[f"temp:{key}"] = without_client_secret(exchanged).model_dump(mode="json", exclude_none=True)  # type: ignore[union-attr]
    return exchanged


def _answered(requested: Any, response: Any) -> AuthCredential | None:
    """The credential of a client's answer: an ``AuthConfig``'s exchanged credential,
    else the answer as an ``AuthCredential`` (a bare value: an API key when the tool's
    credential is one). Raises ValidationError/TypeError/OpenApiAuthError when it is
    neither."""
    try:
        answer = type(requested).model_validate(response)
    except (ValidationError, TypeError, OpenApiAuthError):
        raw = requested.raw_auth_credential
        if (raw is not None and raw.auth_type == AuthCredentialTypes.API_KEY and isinstance(response, str | int | float)
                and not isinstance(response, bool)):
            return AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key=str(response))
        return AuthCredential.model_validate(response)
    credential: AuthCredential | None = answer.exchanged_auth_credential
    return credential


def _backfill(answer: AuthCredential, asked: AuthCredential | None) -> AuthCredential:
    """The answer's OAuth2 part with what the request had and the answer left unset."""
    if asked is None or asked.oauth2 is None:
        return answer
    if answer.oauth2 is None:
        return answer.model_copy(update={"oauth2": asked.oauth2.model_copy(deep=True)})
    oauth2 = answer.oauth2.model_copy()
    for name in ("client_id", "client_secret", "redirect_uri", "token_endpoint_auth_method"):
        if getattr(oauth2, name) is None:
            setattr(oauth2, name, getattr(asked.oauth2, name))
    for name in ("code_verifier", "code_challenge_method"):
        if extra(oauth2, name) is None and extra(asked.oauth2, name) is not None:
            oauth2 = oauth2.model_copy(update={name: extra(asked.oauth2, name)})
    return answer.model_copy(update={"oauth2": oauth2})


def store_answer(requested: Any, response: Any, state: dict[str, Any], request_id: str) -> Any | None:
    """The client's ``response`` to the request ``requested`` (the ``AuthConfig`` the
    run sent, read from its ``adk_request_credential`` call), kept under
    ``temp:<credential key>`` in ``state`` (see the module); the pinned config, or
    None with google-adk's warning when the answer is malformed, carries no
    credential, or its OAuth state is not the request's."""
    try:
        credential = _answered(requested, response)
    except (ValidationError, TypeError, OpenApiAuthError):
        _log.warning("Ignoring malformed auth response for function call ID %r.", request_id)
        return None
    if credential is None:
        _log.warning("Ignoring auth response with no exchanged credential for function call ID %r.", request_id)
        return None
    _register(credential)
    asked = requested.exchanged_auth_credential
    asked_state = asked.oauth2.state if asked is not None and asked.oauth2 is not None else None
    if asked_state is not None and (credential.oauth2 is None or credential.oauth2.state != asked_state):
        _log.warning("Ignoring auth response with mismatched OAuth state for function call ID %r.", request_id)
        return None
    config = requested.model_copy(deep=True)
    config.exchanged_auth_credential = _backfill(credential, asked or requested.raw_auth_credential)
    if not config.credential_key:
        raise ValueError("credential_key is empty.")
    kept = without_client_secret(_with_configured_client(config.exchanged_auth_credential,
                                                         config.raw_auth_credential))
    assert kept is not None
    state[f"temp:{config.credential_key}"] = kept.model_dump(mode="json", exclude_none=True)
    return config
