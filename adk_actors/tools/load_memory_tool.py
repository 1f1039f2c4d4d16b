"""google-adk's import path of ``load_memory``."""

from ._builtins import load_memory

__all__ = ["load_memory"]
