"""google-adk's ``AuthHandler`` steps on an ``AuthConfig``, as functions (kept with the
OpenAPI tools, whose ``RestApiTool`` asks through them: see
``tools.openapi_tool._auth_requests``)."""

from ..tools.openapi_tool._auth_requests import (
    auth_response,
    authorization_uri,
    extra,
    generate_auth_request,
    store_answer,
    without_client_secret,
)

__all__ = ["auth_response", "authorization_uri", "extra", "generate_auth_request", "store_answer",
           "without_client_secret"]
