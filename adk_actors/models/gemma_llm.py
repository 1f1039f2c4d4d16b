"""google-adk's import path of ``Gemma`` (Gemma 3 with its function-calling shim),
``Gemma3Ollama`` (the same shim on Ollama through litellm) and
``GemmaFunctionCallingMixin`` (the shim as two in-place steps for a user's own class)."""

from ._gemma import Gemma, GemmaFunctionCallModel
from ._gemma_mixin import GemmaFunctionCallingMixin
from ._gemma_ollama import Gemma3Ollama

__all__ = ["Gemma", "Gemma3Ollama", "GemmaFunctionCallModel", "GemmaFunctionCallingMixin"]
