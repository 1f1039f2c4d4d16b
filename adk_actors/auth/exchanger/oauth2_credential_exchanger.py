"""google-adk's ``OAuth2CredentialExchanger`` (registered by ``CredentialManager`` for
OAuth2 and OpenID Connect credentials): an access token for a credential that has none.

:meth:`OAuth2CredentialExchanger.exchange`, in order: no scheme is a
:class:`CredentialExchangeError`; a credential that already has an access token is
returned unexchanged; the grant is the scheme's (:class:`OAuthGrantType`: an OAuth2
scheme's first flow, client credentials before authorization code; an OpenID Connect
scheme with its configuration: client credentials when it lists them, else the
authorization code); any other grant is logged and the credential returned
unexchanged. Then one token request (``_oauth2``: the client authenticated by its
``token_endpoint_auth_method``, PKCE's ``code_verifier`` sent when the credential has
one; a code only in ``auth_response_uri`` is taken from that URL's ``code``) fills the
credential in place. A credential without a client id, a scheme without a token URL,
or a token endpoint that refuses or cannot be reached: logged (no secret), the
credential returned unexchanged, as google-adk's.
"""

from __future__ import annotations

import logging
from urllib.parse import parse_qs, urlsplit

from fastapi.openapi.models import OAuth2

from ...tools.openapi_tool._auth import AuthCredential, OpenIdConnectWithConfig
from ...tools.openapi_tool._oauth2 import OAuth2TokenError, OAuth2Tokens
from ..auth_schemes import AuthScheme, OAuthGrantType
from .base_credential_exchanger import (
    BaseCredentialExchanger,
    CredentialExchangeError,
    ExchangeResult,
)

__all__ = ["OAuth2CredentialExchanger"]

_log = logging.getLogger("adk_actors.auth")


class OAuth2CredentialExchanger(BaseCredentialExchanger):
    """OAuth2 and OpenID Connect token exchange (see the module)."""

    async def exchange(self, auth_credential: AuthCredential,
                       auth_scheme: AuthScheme | None = None) -> ExchangeResult:
        """See the module."""
        if not auth_scheme:
            raise CredentialExchangeError("auth_scheme is required for OAuth2 credential exchange")
        oauth2 = auth_credential.oauth2
        if oauth2 is not None and oauth2.access_token:
            return ExchangeResult(auth_credential, False)
        grant = self._determine_grant_type(auth_scheme)
        if grant not in (OAuthGrantType.CLIENT_CREDENTIALS, OAuthGrantType.AUTHORIZATION_CODE):
            _log.warning("Unsupported OAuth2 grant type: %s", grant)
            return ExchangeResult(auth_credential, False)
        if oauth2 is None:
            _log.warning("Could not create OAuth2 session for %s exchange", grant.value)
            return ExchangeResult(auth_credential, False)
        if grant == OAuthGrantType.AUTHORIZATION_CODE and not oauth2.auth_code and oauth2.auth_response_uri:
            codes = parse_qs(urlsplit(oauth2.auth_response_uri).query).get("code")
            oauth2.auth_code = codes[0] if codes else None
        try:
            token = await OAuth2Tokens(leeway=0).token(auth_scheme, auth_credential,
                                                       allow_private_network_access=True)
        except OAuth2TokenError as exc:
            _log.error("Failed to exchange OAuth2 credential (%s): %s", grant.value, exc)
            return ExchangeResult(auth_credential, False)
        if not token:
            _log.warning("Could not create OAuth2 session for %s exchange", grant.value)
            return ExchangeResult(auth_credential, False)
        _log.debug("Successfully exchanged OAuth2 credential (%s) for an access token", grant.value)
        return ExchangeResult(auth_credential, True)

    def _determine_grant_type(self, auth_scheme: AuthScheme) -> OAuthGrantType | None:
        """The grant ``auth_scheme`` calls for (see the module), or None."""
        if isinstance(auth_scheme, OAuth2) and auth_scheme.flows:
            return OAuthGrantType.from_flow(auth_scheme.flows)
        if isinstance(auth_scheme, OpenIdConnectWithConfig):
            if "client_credentials" in (auth_scheme.grant_types_supported or []):
                return OAuthGrantType.CLIENT_CREDENTIALS
            return OAuthGrantType.AUTHORIZATION_CODE
        return None
