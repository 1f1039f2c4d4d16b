"""google-adk's ``google.adk.tools.openapi_tool``: an OpenAPI 3 spec's operations as
tools (:class:`OpenAPIToolset`, :class:`RestApiTool`), with google-adk's names,
declarations and call results; OAuth2 and OpenID Connect tokens in :mod:`._oauth2`.
See :mod:`._toolset` and :mod:`._rest_api_tool`."""

from ._errors import OpenApiAuthError, OpenApiSpecError
from ._oauth2 import OAuth2TokenError, OAuth2Tokens
from ._rest_api_tool import RestApiTool
from ._toolset import OpenAPIToolset

__all__ = ["OAuth2TokenError", "OAuth2Tokens", "OpenAPIToolset", "OpenApiAuthError", "OpenApiSpecError",
           "RestApiTool"]
