"""google-adk's import path of ``BaseExampleProvider``."""

from ._example import BaseExampleProvider

__all__ = ["BaseExampleProvider"]
