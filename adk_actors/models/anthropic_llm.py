"""google-adk's import path of ``AnthropicLlm``, ``Claude`` and ``AnthropicGenerateContentConfig``."""

from ._anthropic_config import AnthropicGenerateContentConfig
from ._providers import AnthropicLlm, Claude

__all__ = ["AnthropicGenerateContentConfig", "AnthropicLlm", "Claude"]
