"""google-adk's import path of ``LoopAgent``."""

from ._workflow import LoopAgent

__all__ = ["LoopAgent"]
