"""google-adk's import path of ``BaseToolset`` and ``ToolPredicate``."""

from ._classes import BaseToolset, ToolPredicate

__all__ = ["BaseToolset", "ToolPredicate"]
