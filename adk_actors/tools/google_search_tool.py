"""google-adk's import path of ``GoogleSearchTool`` and ``google_search``."""

from ._gemini_builtins import GoogleSearchTool, google_search

__all__ = ["GoogleSearchTool", "google_search"]
