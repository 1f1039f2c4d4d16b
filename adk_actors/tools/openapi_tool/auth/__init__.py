"""google-adk's ``openapi_tool.auth`` path: the auth helpers, and the credential types
they build (google-adk keeps those in ``google.adk.auth``)."""

from .._auth import AuthCredential, AuthCredentialTypes, HttpAuth, HttpCredentials, OAuth2Auth
from . import auth_helpers

__all__ = ["AuthCredential", "AuthCredentialTypes", "HttpAuth", "HttpCredentials", "OAuth2Auth", "auth_helpers"]
