"""google-adk's ``google.adk.auth.auth_tool`` path: ``AuthConfig`` and
``AuthToolArguments`` (kept with the OpenAPI tools, whose ``RestApiTool`` asks with
them: see ``tools.openapi_tool._auth_config``)."""

from ..tools.openapi_tool._auth_config import (
    REQUEST_EUC_FUNCTION_CALL_NAME,
    AuthConfig,
    AuthToolArguments,
)

__all__ = ["REQUEST_EUC_FUNCTION_CALL_NAME", "AuthConfig", "AuthToolArguments"]
