"""google-adk's credential exchangers of the OpenAPI tools
(``openapi_tool.auth.credential_exchangers``): what turns a scheme and a credential
into the credential a request carries.

:class:`OAuth2CredentialExchanger`, for OAuth2 and OpenID Connect schemes, in order:
no credential, another scheme, or a credential with neither ``oauth2`` nor ``http``
is a ValueError (google-adk's words); an ``http`` credential is returned as it is; an
OAuth2 access token is returned as an HTTP bearer credential, refreshed first when it
has expired (by the exchanger's clock) and a refresh token is at hand (a refresh that
fails keeps the old token, as google-adk's); without an access token, None (the tool
then gets one itself, see ``_oauth2``, or asks the user).

:class:`~._service_account.ServiceAccountCredentialExchanger`, for service-account
credentials: a Google access token or ID token as an HTTP bearer credential (see
``_service_account``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections.abc import Callable

from fastapi.openapi.models import SecurityBase

from ._auth import AuthCredential, AuthCredentialTypes, HttpAuth, HttpCredentials, as_credential
from ._exchanger_base import AuthCredentialMissingError, BaseAuthCredentialExchanger
from ._oauth2 import OAuth2TokenError, OAuth2Tokens
from ._service_account import ServiceAccountCredentialExchanger

__all__ = ["AuthCredentialMissingError", "AutoAuthCredentialExchanger", "BaseAuthCredentialExchanger",
           "OAuth2CredentialExchanger", "ServiceAccountCredentialExchanger"]

_log = logging.getLogger("adk_actors.tools.openapi")


class OAuth2CredentialExchanger(BaseAuthCredentialExchanger):
    """OAuth2 and OpenID Connect (see the module); ``clock`` decides expiry."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock

    def _check(self, auth_scheme: SecurityBase, auth_credential: AuthCredential | None) -> AuthCredential:
        if not auth_credential:
            raise ValueError("auth_credential is empty. Please create AuthCredential using OAuth2Auth.")
        kind = str(getattr(auth_scheme.type_, "value", auth_scheme.type_))
        if kind not in ("openIdConnect", "oauth2"):
            raise ValueError("Invalid security scheme, expect AuthSchemeType.openIdConnect or AuthSchemeType.oauth2 "
                             f"auth scheme, but got {auth_scheme.type_}")
        if not auth_credential.oauth2 and not auth_credential.http:
            raise ValueError("auth_credential is not configured with oauth2. Please create AuthCredential and set "
                             "OAuth2Auth.")
        return auth_credential

    def exchange_credential(self, auth_scheme: SecurityBase,
                            auth_credential: AuthCredential | None = None) -> AuthCredential | None:
        credential = self._check(auth_scheme, as_credential(auth_credential))
        if credential.http is not None:
            return credential
        oauth2 = credential.oauth2
        if oauth2 is None or not oauth2.access_token:
            return None
        expired = oauth2.expires_at is not None and self.clock() >= oauth2.expires_at
        if expired and oauth2.refresh_token:
            self._refresh(auth_scheme, credential)
        token = oauth2.access_token
        return as_credential(AuthCredential(auth_type=AuthCredentialTypes.HTTP,
                                            http=HttpAuth(scheme="bearer", credentials=HttpCredentials(token=token))))

    def _refresh(self, auth_scheme: SecurityBase, credential: AuthCredential) -> None:
        """The refresh grant, on a thread of its own (this method is called from sync
        code, maybe inside a running loop); a failure keeps the old token."""
        assert credential.oauth2 is not None
        oauth2 = credential.oauth2
        stale = (oauth2.access_token, oauth2.expires_at)
        oauth2.access_token = None
        tokens = OAuth2Tokens(clock=self.clock, leeway=0)
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            try:
                pool.submit(asyncio.run, tokens.token(auth_scheme, credential)).result()
            except OAuth2TokenError as exc:
                _log.warning("OAuth2 refresh failed, the old token is kept: %s", exc)
        if not oauth2.access_token:
            oauth2.access_token, oauth2.expires_at = stale


class AutoAuthCredentialExchanger(BaseAuthCredentialExchanger):
    """google-adk's: the exchanger of the credential's type (``custom_exchangers``
    adds or replaces classes by type): OAuth2 and OpenID Connect credentials go to
    :class:`OAuth2CredentialExchanger`, service accounts to
    :class:`ServiceAccountCredentialExchanger`; any other credential (an API key,
    HTTP) is returned as it is; None as None. The exchanger's errors are raised."""

    def __init__(self, custom_exchangers: dict[str, type[BaseAuthCredentialExchanger]] | None = None) -> None:
        self.exchangers: dict[str, type[BaseAuthCredentialExchanger]] = {
            AuthCredentialTypes.OAUTH2: OAuth2CredentialExchanger,
            AuthCredentialTypes.OPEN_ID_CONNECT: OAuth2CredentialExchanger,
            AuthCredentialTypes.SERVICE_ACCOUNT: ServiceAccountCredentialExchanger,
        }
        self.exchangers.update(custom_exchangers or {})

    def exchange_credential(self, auth_scheme: SecurityBase,
                            auth_credential: AuthCredential | None = None) -> AuthCredential | None:
        if auth_credential is None:
            return None
        exchanger = self.exchangers.get(auth_credential.auth_type)
        if exchanger is None:
            return auth_credential
        return exchanger().exchange_credential(auth_scheme, auth_credential)
