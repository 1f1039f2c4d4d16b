"""google-adk's import path of ``SequentialAgent``."""

from ._workflow import SequentialAgent

__all__ = ["SequentialAgent"]
