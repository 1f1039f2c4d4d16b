"""google-adk's import path of ``Gemma`` (Gemma 3 with its function-calling shim) and
``Gemma3Ollama`` (the same shim on Ollama through litellm)."""

from ._gemma import Gemma, GemmaFunctionCallModel
from ._gemma_ollama import Gemma3Ollama

__all__ = ["Gemma", "Gemma3Ollama", "GemmaFunctionCallModel"]
