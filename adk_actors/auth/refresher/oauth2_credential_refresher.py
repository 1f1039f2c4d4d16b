"""google-adk's ``OAuth2CredentialRefresher`` (registered by ``CredentialManager`` for
OAuth2 and OpenID Connect credentials).

Expiry is authlib's rule, as google-adk's: a credential's token is expired when its
``expires_at`` (else now + ``expires_in``) is less than 60 s away; a credential with
neither never expires; a credential without ``oauth2`` is never refreshed.

:meth:`OAuth2CredentialRefresher.refresh`, in order: without ``oauth2`` or a scheme,
or when the token has not expired, the credential is returned as it is; without a
refresh token, logged and returned as it is; else one refresh-grant request to the
scheme's token URL (``_oauth2``), its tokens put into the credential in place. A token
endpoint that refuses or cannot be reached is logged (no secret) and the credential
returned as it was (its stale token then draws a 401, which asks the user again).
"""

from __future__ import annotations

import logging
import time

from ...tools.openapi_tool._auth import AuthCredential
from ...tools.openapi_tool._oauth2 import OAuth2TokenError, OAuth2Tokens
from ..auth_schemes import AuthScheme
from .base_credential_refresher import BaseCredentialRefresher

__all__ = ["OAuth2CredentialRefresher"]

_log = logging.getLogger("adk_actors.auth")
_LEEWAY = 60  # authlib's


def _expired(auth_credential: AuthCredential) -> bool:
    oauth2 = auth_credential.oauth2
    if oauth2 is None:
        return False
    expires_at = oauth2.expires_at or (int(time.time()) + oauth2.expires_in if oauth2.expires_in else None)
    return bool(expires_at) and expires_at - _LEEWAY < time.time()  # type: ignore[operator]


class OAuth2CredentialRefresher(BaseCredentialRefresher):
    """OAuth2 and OpenID Connect token refresh (see the module)."""

    async def is_refresh_needed(self, auth_credential: AuthCredential,
                                auth_scheme: AuthScheme | None = None) -> bool:
        """Whether the credential's token has expired (see the module)."""
        return _expired(auth_credential)

    async def refresh(self, auth_credential: AuthCredential,
                      auth_scheme: AuthScheme | None = None) -> AuthCredential:
        """See the module."""
        oauth2 = auth_credential.oauth2
        if oauth2 is None or auth_scheme is None or not _expired(auth_credential):
            return auth_credential
        if not oauth2.refresh_token:
            _log.warning("Could not refresh OAuth2 tokens: the credential has no refresh token")
            return auth_credential
        working = auth_credential.model_copy(deep=True)
        assert working.oauth2 is not None
        working.oauth2.access_token = None
        working.oauth2.expires_at = working.oauth2.expires_in = None
        try:
            token = await OAuth2Tokens(leeway=0).token(auth_scheme, working, allow_private_network_access=True)
        except OAuth2TokenError as exc:
            _log.error("Failed to refresh OAuth2 tokens: %s", exc)
            return auth_credential
        if not token:
            _log.warning("Could not create OAuth2 session for token refresh")
            return auth_credential
        fresh = working.oauth2
        oauth2.access_token, oauth2.expires_at, oauth2.expires_in = fresh.access_token, fresh.expires_at, \
            fresh.expires_in
        oauth2.refresh_token = fresh.refresh_token or oauth2.refresh_token
        oauth2.id_token = fresh.id_token or oauth2.id_token
        _log.debug("Successfully refreshed OAuth2 tokens")
        return auth_credential
