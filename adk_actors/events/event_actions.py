"""google-adk's import path of ``EventActions``."""

from .._types import EventActions

__all__ = ["EventActions"]
