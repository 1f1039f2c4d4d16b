"""google-adk's old path of ``LangchainTool`` and ``LangchainToolConfig``, kept for
programs that still import them from here; importing it warns
``DeprecationWarning``: they live in :mod:`adk_actors.integrations.langchain`."""

from __future__ import annotations

import warnings

from ..integrations.langchain import LangchainTool, LangchainToolConfig

warnings.warn("adk_actors.tools.langchain_tool is deprecated: import LangchainTool and LangchainToolConfig from "
              "adk_actors.integrations.langchain", DeprecationWarning, stacklevel=2)

__all__ = ["LangchainTool", "LangchainToolConfig"]
