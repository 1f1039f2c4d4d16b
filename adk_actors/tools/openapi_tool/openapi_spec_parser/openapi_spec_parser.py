"""google-adk's import path of ``OpenApiSpecParser`` and what it gives."""

from .._spec import OpenApiSpecParser, OperationEndpoint, ParsedOperation

__all__ = ["OpenApiSpecParser", "OperationEndpoint", "ParsedOperation"]
