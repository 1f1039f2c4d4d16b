"""google-adk's ``google.adk.auth.auth_credential`` path: the credential types (kept
with the OpenAPI tools, whose auth they serve first)."""

from ..tools.openapi_tool._auth import (
    AuthCredential,
    AuthCredentialTypes,
    HttpAuth,
    HttpCredentials,
    OAuth2Auth,
    ServiceAccount,
    ServiceAccountCredential,
)

__all__ = ["AuthCredential", "AuthCredentialTypes", "HttpAuth", "HttpCredentials", "OAuth2Auth", "ServiceAccount",
           "ServiceAccountCredential"]
