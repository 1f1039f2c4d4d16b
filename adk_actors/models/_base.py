"""The model protocol: an LlmRequest in, LlmResponses out.

``generate(request, stream=False)`` is an async iterator. Without streaming it yields
one final response; with streaming it yields partial responses (``partial=True``,
text so far in pieces) and ends with one aggregated final response. A failure is an
exception (see :mod:`adk_actors.models` errors), never an empty reply.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from .._exceptions import AdkError
from .._types import LlmRequest, LlmResponse, model_name

__all__ = ["Model", "ModelError", "model_name"]


class ModelError(AdkError):
    """A model call failed; ``error_type`` classifies it (e.g. ``rate_limited``)."""

    def __init__(self, message: str, *, error_type: str = "model_error") -> None:
        super().__init__(message)
        self.error_type = error_type


@runtime_checkable
class Model(Protocol):
    name: str

    def generate(self, request: LlmRequest, *, stream: bool = False) -> AsyncIterator[LlmResponse]: ...
