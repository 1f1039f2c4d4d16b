"""google-adk's import path of ``Event``, ``EventActions`` and ``RequestInput``."""

from .._types import Event, EventActions
from .request_input import RequestInput

__all__ = ["Event", "EventActions", "RequestInput"]
