"""google-adk's import path of ``RunConfig``, ``StreamingMode`` and
``ToolThreadPoolConfig``: per-run settings (``streaming_mode``, ``max_llm_calls``,
``custom_metadata``, ``tool_thread_pool_config``, ...)."""

from .._types import RunConfig, StreamingMode, ToolThreadPoolConfig

__all__ = ["RunConfig", "StreamingMode", "ToolThreadPoolConfig"]
