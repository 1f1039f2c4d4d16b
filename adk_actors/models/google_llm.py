"""google-adk's import path of ``Gemini``."""

from ._providers import Gemini

__all__ = ["Gemini"]
