"""google-adk's import path of ``preload_memory`` and ``PreloadMemoryTool``."""

from ._builtins import PreloadMemoryTool, preload_memory

__all__ = ["PreloadMemoryTool", "preload_memory"]
