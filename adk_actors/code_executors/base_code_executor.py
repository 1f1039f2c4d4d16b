"""google-adk's module path for :class:`BaseCodeExecutor`."""

from ._base import BaseCodeExecutor

__all__ = ["BaseCodeExecutor"]
