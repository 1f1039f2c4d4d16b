"""google-adk's import path of ``OpenAPIToolset``."""

from .._toolset import OpenAPIToolset

__all__ = ["OpenAPIToolset"]
