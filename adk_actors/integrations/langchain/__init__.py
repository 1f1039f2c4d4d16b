"""google-adk's ``google.adk.integrations.langchain``: :class:`LangchainTool` (a
LangChain tool as an agent's tool) and :class:`LangchainToolConfig` (its ``args`` in
an agent file). Importing this package needs no LangChain; making a
``LangchainTool`` needs ``langchain-core`` (``pip install 'adk-actors[langchain]'``)
and says so when it is missing."""

from .langchain_tool import LangchainTool, LangchainToolConfig

__all__ = ["LangchainTool", "LangchainToolConfig"]
