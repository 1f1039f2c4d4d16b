"""google-adk's import path of ``AnthropicLlm`` and ``Claude``."""

from ._providers import AnthropicLlm, Claude

__all__ = ["AnthropicLlm", "Claude"]
