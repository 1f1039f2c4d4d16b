"""google-adk's import path of ``BaseTool``."""

from ._classes import BaseTool

__all__ = ["BaseTool"]
