"""google-adk's import path of ``LiteLlm`` (it needs the ``litellm`` extra), and of its
stream-piece classes (``TextChunk``, ``FunctionChunk``, ``ReasoningChunk``,
``UsageMetadataChunk``, ``ChatCompletionFileUrlObject``)."""

from ._lite_llm import LiteLlm, LiteLLMClient
from ._lite_llm_chunks import (
    ChatCompletionFileUrlObject,
    FunctionChunk,
    ReasoningChunk,
    TextChunk,
    UsageMetadataChunk,
)

__all__ = ["ChatCompletionFileUrlObject", "FunctionChunk", "LiteLLMClient", "LiteLlm", "ReasoningChunk", "TextChunk",
           "UsageMetadataChunk"]
