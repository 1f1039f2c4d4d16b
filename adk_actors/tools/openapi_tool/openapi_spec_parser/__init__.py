"""google-adk's ``openapi_tool.openapi_spec_parser`` path: the parser, the toolset and
its tool."""

from .._rest_api_tool import RestApiTool, snake_to_lower_camel
from .._spec import OpenApiSpecParser, OperationEndpoint, ParsedOperation
from .._toolset import OpenAPIToolset

__all__ = ["OpenAPIToolset", "OpenApiSpecParser", "OperationEndpoint", "ParsedOperation", "RestApiTool",
           "snake_to_lower_camel"]
