"""Models: the protocol, the provider connectors (Gemini, Anthropic, OpenAI-compatible),
resolution by name, typed errors, retries, and ScriptedModel for offline use."""

from ._anthropic import AnthropicModel
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
from ._gemini import GeminiModel, gemini_schema
from ._http import HttpModel, RetryPolicy, close_pooled_clients
from ._live import LiveConnection, LiveModel, is_live_model
from ._openai import OpenAIModel
from ._registry import resolve_model
from ._scripted import Chunks, ScriptedLiveConnection, ScriptedModel, call

__all__ = [
    "AnthropicModel",
    "AuthenticationError",
    "BadRequestError",
    "BreakerConfig",
    "BreakerModel",
    "Chunks",
    "CircuitBreaker",
    "CircuitOpen",
    "ConnectionFailed",
    "ContentBlocked",
    "FallbackModel",
    "GeminiModel",
    "HttpModel",
    "LiveConnection",
    "LiveModel",
    "MalformedResponse",
    "Model",
    "ModelError",
    "ModelTimeout",
    "OpenAIModel",
    "Overloaded",
    "Permit",
    "RateLimited",
    "Rejected",
    "RetryPolicy",
    "ScriptedLiveConnection",
    "ScriptedModel",
    "ServerError",
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
