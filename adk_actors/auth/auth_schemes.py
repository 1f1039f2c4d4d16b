"""google-adk's ``google.adk.auth.auth_schemes`` path: a scheme is an OpenAPI security
scheme (fastapi's models), :class:`OpenIdConnectWithConfig`, a
:class:`CustomAuthScheme` (served by a registered ``BaseAuthProvider``) or an
:class:`ExtendedOAuth2` (an OAuth2 scheme whose missing endpoints are discovered from
its ``issuer_url``); :class:`OAuthGrantType` names an OAuth2 flow."""

from __future__ import annotations

import enum

from fastapi.openapi.models import OAuth2, OAuthFlows, SecurityBase
from fastapi.openapi.models import SecuritySchemeType as AuthSchemeType
from pydantic import ConfigDict, Field
from pydantic.alias_generators import to_camel

from ..tools.openapi_tool._auth import OpenIdConnectWithConfig

#: what an ``AuthConfig``'s ``auth_scheme`` holds
AuthScheme = SecurityBase

__all__ = ["AuthScheme", "AuthSchemeType", "CustomAuthScheme", "ExtendedOAuth2", "OAuthGrantType",
           "OpenIdConnectWithConfig"]


class CustomAuthScheme(SecurityBase):
    """google-adk's scheme for auth that no OpenAPI scheme describes: ``type_`` (wire
    name ``type``) is any string; the fields are camelCase on the wire and any extra
    field is kept. A subclass gives ``type_`` a default (its own type name) so that a
    generic ``CustomAuthScheme`` of that type can be turned back into it; a
    ``BaseAuthProvider`` registered with ``CredentialManager.register_auth_provider``
    for the subclass supplies its credentials. (Ours is a ``SecurityBase`` too, so that an
    ``AuthConfig`` takes it as it is.)"""

    model_config = ConfigDict(extra="allow", alias_generator=to_camel, populate_by_name=True)

    type_: str = Field(alias="type")  # type: ignore[assignment]


class OAuthGrantType(enum.StrEnum):
    """An OAuth2 flow, as google-adk names it."""

    CLIENT_CREDENTIALS = "client_credentials"
    AUTHORIZATION_CODE = "authorization_code"
    IMPLICIT = "implicit"
    PASSWORD = "password"

    @staticmethod
    def from_flow(flow: OAuthFlows) -> OAuthGrantType | None:
        """The first flow ``flow`` sets, in google-adk's order: client credentials,
        authorization code, implicit, password; None when it sets none."""
        if flow.clientCredentials:
            return OAuthGrantType.CLIENT_CREDENTIALS
        if flow.authorizationCode:
            return OAuthGrantType.AUTHORIZATION_CODE
        if flow.implicit:
            return OAuthGrantType.IMPLICIT
        if flow.password:
            return OAuthGrantType.PASSWORD
        return None


class ExtendedOAuth2(OAuth2):
    """google-adk's OAuth2 scheme with an ``issuer_url``: a flow URL left empty is filled
    from the issuer's metadata (RFC 8414, else OpenID Connect discovery) by
    ``CredentialManager`` before the credential is used (see ``oauth2_discovery``)."""

    issuer_url: str | None = None
