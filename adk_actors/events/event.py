"""google-adk's import path of ``Event``."""

from .._types import Event

__all__ = ["Event"]
