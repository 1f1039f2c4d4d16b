"""Models: the protocol, the provider connectors (Gemini, Anthropic, OpenAI-compatible),
resolution by name, typed errors, retries, and ScriptedModel for offline use; and
google-adk's model classes on those connectors (``Gemini``, ``AnthropicLlm``,
``Claude``, ``LiteLlm``, ``ApigeeLlm``, ``Gemma3Ollama``, ``OpenAIResponsesLlm`` /
``AzureOpenAIResponsesLlm`` (OpenAI's Responses API, ``_openai_responses_llm``; also at
``adk_actors.integrations.openai``), the ``BaseLlm`` base and ``LLMRegistry``; see
``_providers``, ``_lite_llm``, ``_apigee``, ``_gemma_ollama`` and ``_llm_registry``),
also at google-adk's module paths (``google_llm``, ``anthropic_llm``, ``lite_llm``,
``apigee_llm``, ``gemma_llm``, ``base_llm``, ``registry``).

The connectors and what resolves a name to one are loaded on first use (PEP 562):
they bring httpx and websockets, which a client of a running host (the Runner,
``adk-actors run``) never needs (bench/startup.py). A host imports them before it
forks its actors (see ``runtime._host``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .._types import LlmRequest, LlmResponse
from ._base import Model, ModelError, model_name
from ._breaker import (
    BreakerConfig,
    BreakerModel,
    CircuitBreaker,
    CircuitOpen,
    FallbackModel,
    Permit,
    Rejected,
    Transition,
    outcome_of,
)
from ._capabilities import LlmCapabilities
from ._errors import (
    AuthenticationError,
    BadRequestError,
    ConnectionFailed,
    ContentBlocked,
    MalformedResponse,
    ModelTimeout,
    Overloaded,
    RateLimited,
    ServerError,
    StreamInterrupted,
)
from ._live import LiveConnection, LiveModel, is_live_model
from ._llm_registry import BaseLlm, LLMRegistry
from ._scripted import Chunks, ScriptedLiveConnection, ScriptedModel, call
from ._service_tier import ServiceTier

if TYPE_CHECKING:
    from ._anthropic import AnthropicModel
    from ._anthropic_config import AnthropicGenerateContentConfig
    from ._apigee import ApigeeLlm
    from ._gemini import GeminiModel, gemini_schema
    from ._gemma import Gemma
    from ._gemma_ollama import Gemma3Ollama
    from ._http import HttpModel, RetryPolicy, close_pooled_clients
    from ._lite_llm import LiteLlm
    from ._openai import OpenAIModel
    from ._openai_llm import OpenAILlm
    from ._openai_responses import OpenAIResponsesModel
    from ._openai_responses_llm import AzureOpenAIResponsesLlm, OpenAIResponsesLlm
    from ._providers import AnthropicLlm, Claude, Gemini
    from ._registry import resolve_model

_CONNECTORS = {"AnthropicModel": "._anthropic", "AnthropicGenerateContentConfig": "._anthropic_config", "GeminiModel": "._gemini", "gemini_schema": "._gemini",
               "HttpModel": "._http", "RetryPolicy": "._http", "close_pooled_clients": "._http",
               "OpenAIModel": "._openai", "resolve_model": "._registry", "AnthropicLlm": "._providers",
               "Claude": "._providers", "Gemini": "._providers", "LiteLlm": "._lite_llm",
               "Gemma": "._gemma", "OpenAILlm": "._openai_llm",
               "ApigeeLlm": "._apigee", "Gemma3Ollama": "._gemma_ollama",
               "OpenAIResponsesModel": "._openai_responses", "OpenAIResponsesLlm": "._openai_responses_llm",
               "AzureOpenAIResponsesLlm": "._openai_responses_llm"}

__all__ = [
    "AnthropicGenerateContentConfig",
    "AnthropicLlm",
    "AnthropicModel",
    "ApigeeLlm",
    "AuthenticationError",
    "AzureOpenAIResponsesLlm",
    "BadRequestError",
    "BaseLlm",
    "BreakerConfig",
    "BreakerModel",
    "Chunks",
    "CircuitBreaker",
    "CircuitOpen",
    "Claude",
    "ConnectionFailed",
    "ContentBlocked",
    "FallbackModel",
    "Gemini",
    "GeminiModel",
    "Gemma",
    "Gemma3Ollama",
    "HttpModel",
    "LLMRegistry",
    "LiteLlm",
    "LiveConnection",
    "LiveModel",
    "LlmCapabilities",
    "LlmRequest",
    "LlmResponse",
    "MalformedResponse",
    "Model",
    "ModelError",
    "ModelTimeout",
    "OpenAILlm",
    "OpenAIModel",
    "OpenAIResponsesLlm",
    "OpenAIResponsesModel",
    "Overloaded",
    "Permit",
    "RateLimited",
    "Rejected",
    "RetryPolicy",
    "ScriptedLiveConnection",
    "ScriptedModel",
    "ServerError",
    "ServiceTier",
    "StreamInterrupted",
    "Transition",
    "call",
    "close_pooled_clients",
    "gemini_schema",
    "is_live_model",
    "model_name",
    "outcome_of",
    "resolve_model",
]


def __getattr__(name: str) -> Any:
    module = _CONNECTORS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)


def __dir__() -> list[str]:
    return sorted(__all__)
