"""google-adk's ``google.adk.auth.auth_schemes`` path: a scheme is an OpenAPI security
scheme (fastapi's models) or :class:`OpenIdConnectWithConfig`."""

from fastapi.openapi.models import SecurityBase
from fastapi.openapi.models import SecuritySchemeType as AuthSchemeType

from ..tools.openapi_tool._auth import OpenIdConnectWithConfig

#: what an ``AuthConfig``'s ``auth_scheme`` holds
AuthScheme = SecurityBase

__all__ = ["AuthScheme", "AuthSchemeType", "OpenIdConnectWithConfig"]
