"""google-adk's import path of ``LoadMemoryTool``, ``load_memory_tool`` and
``load_memory`` (here the same tool instance, ``adk_actors.tools.load_memory``)."""

from ._builtins import LoadMemoryTool, load_memory, load_memory_tool

__all__ = ["LoadMemoryTool", "load_memory", "load_memory_tool"]
