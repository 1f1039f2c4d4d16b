"""google-adk's ``openapi_tool.openapi_spec_parser`` path: the parser, the operation
parser, the toolset, its tool and its auth handler."""

from .._rest_api_tool import RestApiTool, snake_to_lower_camel
from .._spec import OpenApiSpecParser, OperationEndpoint, ParsedOperation
from .._tool_auth_handler import AuthPreparationState, ToolAuthHandler, UnauthorizedRecoveryState
from .._toolset import OpenAPIToolset
from .operation_parser import OperationParser

__all__ = ["AuthPreparationState", "OpenAPIToolset", "OpenApiSpecParser", "OperationEndpoint", "OperationParser",
           "ParsedOperation", "RestApiTool", "ToolAuthHandler", "UnauthorizedRecoveryState", "snake_to_lower_camel"]
