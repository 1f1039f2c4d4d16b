"""google-adk's ``openapi_tool.auth`` path: the auth helpers, and the credential types
they build (google-adk keeps those in ``google.adk.auth``), and the credential
exchangers."""

from .._auth import (
    AuthCredential,
    AuthCredentialTypes,
    HttpAuth,
    HttpCredentials,
    OAuth2Auth,
    OpenIdConnectWithConfig,
    ServiceAccount,
    ServiceAccountCredential,
)
from . import auth_helpers, credential_exchangers

__all__ = ["AuthCredential", "AuthCredentialTypes", "HttpAuth", "HttpCredentials", "OAuth2Auth",
           "OpenIdConnectWithConfig", "ServiceAccount", "ServiceAccountCredential", "auth_helpers",
           "credential_exchangers"]
