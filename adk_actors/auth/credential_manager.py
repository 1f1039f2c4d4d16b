"""google-adk's ``CredentialManager``: what a custom tool calls to get a ready credential
for an ``AuthConfig`` (``await CredentialManager(auth_config).get_auth_credential(tool_context)``),
and to ask the client for one (``request_credential``).

:meth:`CredentialManager.get_auth_credential`, in order (google-adk's, one call at a time
per app, user and credential key on an event loop):

1. the config is checked: an OAuth2 or OpenID Connect scheme without a
   ``raw_auth_credential``, or an OAuth2 / OpenID Connect credential without its
   ``oauth2`` part, is google-adk's ``ValueError``;
2. an API key or HTTP credential is ready: a copy is returned;
3. the credential the run's credential service keeps for this user under the config's
   ``credential_key`` (none without a service, as google-adk's without one); one still
   holding an unredeemed authorization code is passed over;
4. else the client's answer (``tool_context.get_auth_response``: an authorization code
   is exchanged at the token endpoint with the config's own client);
5. else, under a client-credentials flow, the config's credential; else None (then
   call :meth:`request_credential` and end the call);
6. an OAuth2 credential without a token gets one (client credentials, or a code); one
   whose token expires within 60 s (authlib's leeway) is refreshed with its refresh
   token; a token endpoint that refuses is logged and the credential kept as it is;
7. a credential still holding only an unredeemed code is dropped (None, with
   google-adk's warning: the user is asked again);
8. a credential that came from the answer, or was exchanged or refreshed, is kept in
   the credential service (when the run has one), never in the session state.

Not here: google-adk's custom auth providers (``register_auth_provider``), the
exchanger and refresher registries, the service-account exchanger and OAuth2
server-metadata discovery (``ExtendedOAuth2``).
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from typing import Any

from fastapi.openapi.models import SecuritySchemeType

from ..tools.openapi_tool._auth import AuthCredential, AuthCredentialTypes
from ..tools.openapi_tool._auth_config import AuthConfig
from ..tools.openapi_tool._oauth2 import (
    CLIENT_CREDENTIALS,
    OAuth2TokenError,
    OAuth2Tokens,
    grant_of,
)
from ..tools.openapi_tool._tool_auth_handler import ToolContextCredentialStore

__all__ = ["CredentialManager"]

_log = logging.getLogger("adk_actors.auth")

_OAUTH_TYPES = (AuthCredentialTypes.OAUTH2, AuthCredentialTypes.OPEN_ID_CONNECT)
_EXPIRY_LEEWAY = 60
_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str, str | None], asyncio.Lock]] = \
    weakref.WeakKeyDictionary()


def _unredeemed(credential: AuthCredential) -> bool:
    oauth2 = credential.oauth2
    return (credential.auth_type in _OAUTH_TYPES and oauth2 is not None and not oauth2.access_token
            and bool(oauth2.auth_code or oauth2.auth_response_uri))


class CredentialManager:
    """google-adk's credential manager of one ``auth_config`` (see the module)."""

    def __init__(self, auth_config: AuthConfig) -> None:
        self._auth_config = auth_config

    async def request_credential(self, context: Any) -> None:
        """Ask the client for the config's credential (``context.request_credential``);
        google-adk's ``TypeError`` for a context that cannot ask."""
        if not hasattr(context, "request_credential"):
            raise TypeError("request_credential requires a ToolContext with request_credential method, not a plain "
                            "CallbackContext")
        context.request_credential(self._auth_config)

    def _store(self, context: Any) -> ToolContextCredentialStore:
        raw = self._auth_config.raw_auth_credential
        return ToolContextCredentialStore(context, self._auth_config.credential_key,
                                          auth_scheme=self._auth_config.auth_scheme,
                                          client=raw.oauth2 if raw is not None else None, memory=False)

    def _lock(self, context: Any) -> asyncio.Lock:
        session = context.invocation.session
        where = (session.app_name, session.user_id, self._auth_config.credential_key)
        per_loop = _locks.setdefault(asyncio.get_running_loop(), {})
        return per_loop.setdefault(where, asyncio.Lock())

    def _validate(self) -> None:
        config = self._auth_config
        raw = config.raw_auth_credential
        if raw is None and config.auth_scheme.type_ in (SecuritySchemeType.oauth2, SecuritySchemeType.openIdConnect):
            raise ValueError(f"raw_auth_credential is required for auth_scheme type {config.auth_scheme.type_}")
        if raw is not None and raw.auth_type in _OAUTH_TYPES and raw.oauth2 is None:
            raise ValueError(f"auth_config.raw_credential.oauth2 required for credential type {raw.auth_type}")

    async def get_auth_credential(self, context: Any) -> AuthCredential | None:
        """The ready credential, or None when the client must be asked (see the module)."""
        async with self._lock(context):
            self._validate()
            raw = self._auth_config.raw_auth_credential
            if raw is not None and raw.auth_type in (AuthCredentialTypes.API_KEY, AuthCredentialTypes.HTTP):
                return raw.model_copy(deep=True)
            store = self._store(context)
            key = self._auth_config.credential_key or ""
            credential = None
            if raw is None or raw.auth_type != AuthCredentialTypes.SERVICE_ACCOUNT:
                credential = store.get_credential(self._auth_config.auth_scheme, raw)
                if credential is not None and _unredeemed(credential):
                    credential = None
            answered = False
            if credential is None:
                credential = context.get_auth_response(self._auth_config)
                answered = True
            if credential is None:
                if raw is None or grant_of(self._auth_config.auth_scheme) != CLIENT_CREDENTIALS:
                    return None
                credential = raw.model_copy(deep=True)
            credential, exchanged = await self._exchange(credential)
            refreshed = False if exchanged else await self._refresh(credential)
            if _unredeemed(credential):
                _log.warning("Discarding the credential for auth scheme %s: its authorization code was never "
                             "exchanged for an access token. The user will be asked to authorize again.",
                             type(self._auth_config.auth_scheme).__name__)
                return None
            if answered or exchanged or refreshed:
                store.store_credential(key, credential)
            return credential

    def _with_client(self, credential: AuthCredential) -> AuthCredential:
        copy = credential.model_copy(deep=True)
        raw = self._auth_config.raw_auth_credential
        if copy.oauth2 is not None and raw is not None and raw.oauth2 is not None:
            copy.oauth2.client_id = copy.oauth2.client_id or raw.oauth2.client_id
            copy.oauth2.client_secret = copy.oauth2.client_secret or raw.oauth2.client_secret
        return copy

    async def _token(self, credential: AuthCredential) -> bool:
        """One token request for ``credential`` (in place); whether a token came back."""
        try:
            token = await OAuth2Tokens(leeway=0).token(self._auth_config.auth_scheme, credential,
                                                       allow_private_network_access=True)
        except OAuth2TokenError as exc:
            _log.warning("OAuth2 token request failed: %s", exc)
            return False
        return bool(token)

    async def _exchange(self, credential: AuthCredential) -> tuple[AuthCredential, bool]:
        """A token for an OAuth2 credential that has none (client credentials or a code)."""
        if credential.auth_type not in _OAUTH_TYPES or credential.oauth2 is None or credential.oauth2.access_token:
            return credential, False
        working = self._with_client(credential)
        if await self._token(working):
            return working, True
        return credential, False

    async def _refresh(self, credential: AuthCredential) -> bool:
        """Refresh ``credential`` in place when its token expires within the leeway."""
        oauth2 = credential.oauth2
        if (credential.auth_type not in _OAUTH_TYPES or oauth2 is None or not oauth2.refresh_token
                or not isinstance(oauth2.expires_at, int) or oauth2.expires_at - _EXPIRY_LEEWAY >= time.time()):
            return False
        working = self._with_client(credential)
        assert working.oauth2 is not None
        working.oauth2.access_token = working.oauth2.expires_at = None
        if not await self._token(working):
            return False
        oauth2.access_token, oauth2.expires_at = working.oauth2.access_token, working.oauth2.expires_at
        oauth2.expires_in = working.oauth2.expires_in
        oauth2.refresh_token = working.oauth2.refresh_token or oauth2.refresh_token
        return True
