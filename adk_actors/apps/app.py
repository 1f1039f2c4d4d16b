"""google-adk's import path of ``App`` (``from google.adk.apps.app import App``)."""

from ..engine._app import App

__all__ = ["App"]
