"""google-adk's module path for :class:`UnsafeLocalCodeExecutor`."""

from ._unsafe_local import UnsafeLocalCodeExecutor

__all__ = ["UnsafeLocalCodeExecutor"]
