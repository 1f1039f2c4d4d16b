"""google-adk's import path of ``EnterpriseWebSearchTool`` and
``enterprise_web_search_tool`` (``adk_actors.tools.enterprise_web_search``)."""

from ._gemini_builtins import EnterpriseWebSearchTool, enterprise_web_search_tool

__all__ = ["EnterpriseWebSearchTool", "enterprise_web_search_tool"]
