"""Models: the protocol, the provider connectors (Gemini, Anthropic, OpenAI-compatible),
resolution by name, typed errors, retries, and ScriptedModel for offline use."""

from ._anthropic import AnthropicModel
from ._base import Model, ModelError, model_name
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
from ._http import HttpModel, RetryPolicy
from ._openai import OpenAIModel
from ._registry import resolve_model
from ._scripted import Chunks, ScriptedModel, call

__all__ = [
    "AnthropicModel",
    "AuthenticationError",
    "BadRequestError",
    "Chunks",
    "ConnectionFailed",
    "ContentBlocked",
    "GeminiModel",
    "HttpModel",
    "MalformedResponse",
    "Model",
    "ModelError",
    "ModelTimeout",
    "OpenAIModel",
    "Overloaded",
    "RateLimited",
    "RetryPolicy",
    "ScriptedModel",
    "ServerError",
    "StreamInterrupted",
    "call",
    "gemini_schema",
    "model_name",
    "resolve_model",
]
