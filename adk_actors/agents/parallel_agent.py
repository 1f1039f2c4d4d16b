"""google-adk's import path of ``ParallelAgent``."""

from ._workflow import ParallelAgent

__all__ = ["ParallelAgent"]
