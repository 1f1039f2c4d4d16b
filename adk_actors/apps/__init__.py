"""google-adk's import path of ``App`` and ``ResumabilityConfig``
(``from google.adk.apps import App``)."""

from ._configs import ResumabilityConfig
from .app import App

__all__ = ["App", "ResumabilityConfig"]
