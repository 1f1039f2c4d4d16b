"""google-adk's import path of ``Gemma`` (Gemma 3 with its function-calling shim)."""

from ._gemma import Gemma, GemmaFunctionCallModel

__all__ = ["Gemma", "GemmaFunctionCallModel"]
