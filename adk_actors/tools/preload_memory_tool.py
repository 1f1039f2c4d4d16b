"""google-adk's import path of ``PreloadMemoryTool``, ``preload_memory_tool`` and
``preload_memory`` (the same instance)."""

from ._builtins import PreloadMemoryTool, preload_memory

preload_memory_tool = preload_memory

__all__ = ["PreloadMemoryTool", "preload_memory", "preload_memory_tool"]
