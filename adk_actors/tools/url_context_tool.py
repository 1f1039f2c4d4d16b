"""google-adk's import path of ``UrlContextTool`` and ``url_context``."""

from ._gemini_builtins import UrlContextTool, url_context

__all__ = ["UrlContextTool", "url_context"]
