"""google-adk's import path of ``GoogleSearchAgentTool`` and ``create_google_search_agent``."""

from ._gemini_builtins import GoogleSearchAgentTool, create_google_search_agent

__all__ = ["GoogleSearchAgentTool", "create_google_search_agent"]
