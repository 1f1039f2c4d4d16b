"""google-adk's ``openapi_tool.common`` path: :mod:`.common`, the parameter model and
the type-hint and docstring helpers of an OpenAPI operation."""

from . import common

__all__ = ["common"]
