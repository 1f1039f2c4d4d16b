"""google-adk's import path of ``RestApiTool`` (and its helpers)."""

from .._network import HttpxClientFactory
from .._rest_api_tool import RestApiTool, snake_to_lower_camel

__all__ = ["HttpxClientFactory", "RestApiTool", "snake_to_lower_camel"]
