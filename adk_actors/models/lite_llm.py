"""google-adk's import path of ``LiteLlm`` (it needs the ``litellm`` extra)."""

from ._lite_llm import LiteLlm, LiteLLMClient

__all__ = ["LiteLLMClient", "LiteLlm"]
