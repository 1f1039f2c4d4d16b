"""google-adk's ``google.adk.auth``: what a tool asks the client to collect
(:class:`AuthConfig`), the credential kinds and schemes, :class:`AuthHandler` (the
steps of the ``adk_request_credential`` round trip; the flow's part is
``engine._credential_request``) and :class:`BaseAuthProvider` (a custom credential
source for ``CredentialManager``; the exchanger and refresher registries are in
``exchanger`` and ``refresher``, discovery in ``oauth2_discovery``)."""

from .auth_credential import AuthCredential, AuthCredentialTypes, OAuth2Auth
from .auth_handler import AuthHandler
from .auth_schemes import AuthScheme, AuthSchemeType, OpenIdConnectWithConfig
from .auth_tool import AuthConfig, AuthToolArguments
from .base_auth_provider import BaseAuthProvider

__all__ = ["AuthConfig", "AuthCredential", "AuthCredentialTypes", "AuthHandler", "AuthScheme", "AuthSchemeType",
           "AuthToolArguments", "BaseAuthProvider", "OAuth2Auth", "OpenIdConnectWithConfig"]
