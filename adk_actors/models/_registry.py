"""Model resolution by name: ``gemini-*``, ``claude-*``, ``openai/<model>``, or any name
given a base URL (an OpenAI-compatible server: LiteLLM, Ollama, vLLM, OpenRouter).

Keys and base URLs come from the environment (or the ``env`` mapping given):
``GEMINI_API_KEY`` / ``GOOGLE_API_KEY`` and ``GEMINI_BASE_URL``; ``ANTHROPIC_API_KEY``
and ``ANTHROPIC_BASE_URL``; ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL``. A missing key
is an :class:`AuthenticationError` that names the variable (an OpenAI-compatible
server on a custom base URL may need no key).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ._anthropic import AnthropicModel
from ._base import ModelError
from ._errors import AuthenticationError
from ._gemini import GeminiModel
from ._openai import OpenAIModel

__all__ = ["resolve_model"]


def resolve_model(name: str, *, env: Mapping[str, str] | None = None, base_urls: Mapping[str, str] | None = None,
                  **options: Any) -> Any:
    env = os.environ if env is None else env
    if base_urls and name in base_urls:
        return OpenAIModel(name, base_url=base_urls[name], api_key=env.get("OPENAI_API_KEY"), **options)
    if name.startswith(("gemini-", "models/gemini-")):
        key = env.get("GEMINI_API_KEY") or env.get("GOOGLE_API_KEY")
        if not key:
            raise AuthenticationError(f"model {name!r} needs GEMINI_API_KEY (or GOOGLE_API_KEY) in the environment")
        return GeminiModel(name, base_url=env.get("GEMINI_BASE_URL", "https://generativelanguage.googleapis.com"),
                           api_key=key, **options)
    if name.startswith("claude-"):
        key = env.get("ANTHROPIC_API_KEY")
        if not key:
            raise AuthenticationError(f"model {name!r} needs ANTHROPIC_API_KEY in the environment")
        return AnthropicModel(name, base_url=env.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com"), api_key=key,
                              **options)
    if name.startswith("openai/"):
        base_url = env.get("OPENAI_BASE_URL")
        key = env.get("OPENAI_API_KEY")
        if not key and not base_url:
            raise AuthenticationError(f"model {name!r} needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)")
        return OpenAIModel(name.removeprefix("openai/"), base_url=base_url or "https://api.openai.com/v1", api_key=key,
                           **options)
    raise ModelError(f"no provider for model {name!r}: use gemini-*, claude-*, openai/<model>, or configure a "
                     f"base URL for it", error_type="unknown_model")
