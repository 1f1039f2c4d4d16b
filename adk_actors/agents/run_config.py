"""google-adk's import path of ``RunConfig`` and ``StreamingMode``: per-run settings
(``streaming_mode``, ``max_llm_calls``, ``custom_metadata``, ...)."""

from .._types import RunConfig, StreamingMode

__all__ = ["RunConfig", "StreamingMode"]
