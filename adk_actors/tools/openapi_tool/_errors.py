"""The errors of the OpenAPI tools: both are ``ValueError`` (what google-adk raises
for the same faults) and :class:`~adk_actors._exceptions.AdkError`."""

from __future__ import annotations

from ..._exceptions import AdkError

__all__ = ["OpenApiAuthError", "OpenApiSpecError"]


class OpenApiSpecError(AdkError, ValueError):
    """An OpenAPI spec that cannot be made into tools: it does not parse, is not an
    object, is not OpenAPI 3, or one of its operations does not fit the OpenAPI model.
    The message names the place (``paths./pets/{id}.get: ...``); it is raised when the
    toolset (or tool) is built, never at a call."""


class OpenApiAuthError(AdkError, ValueError):
    """An auth scheme or credential that cannot be used (an unknown scheme type, a
    credential that does not fit its scheme). The message never carries the secret."""
