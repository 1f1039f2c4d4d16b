"""``OpenAILlm``: google-adk's class for OpenAI's Chat Completions API (and hosts that
speak it), on our OpenAI connector (its retries, streaming and breaker rules).

A call's body is the connector's, then, as google-adk's ``OpenAILlm`` sends it:
``max_tokens`` is the class's (4096) unless the request sets one; with tools,
``tool_choice`` is ``"auto"`` unless the request chooses; for a reasoning model
(o-series, gpt-5.x, gpt-6.x but not ``-chat``) ``max_tokens`` travels as
``max_completion_tokens`` and ``temperature`` / ``top_p`` other than 1 are dropped.
The endpoint is ``base_url`` (else ``OPENAI_BASE_URL``, else OpenAI's) and the key
``api_key`` (a string, or a function called for each request) else ``OPENAI_API_KEY``;
with neither, the call fails with an AuthenticationError naming them.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Callable
from typing import Any

from pydantic import Field

from .._types import LlmRequest
from ._base import ModelError
from ._errors import AuthenticationError
from ._http import HttpModel
from ._openai import OpenAIModel
from ._providers import _HttpLlm

__all__ = ["OpenAILlm", "OpenAILlmModel", "is_reasoning_model"]

_OPENAI_API = "https://api.openai.com/v1"
_REASONING = re.compile(r"(?:^|/)(?:o\d+|gpt-[56](?!.*-chat))(?:\..*|-.*|$)", re.IGNORECASE)


def is_reasoning_model(model: str | None) -> bool:
    """Whether ``model`` is one of OpenAI's reasoning models (google-adk's rule)."""
    return bool(model and _REASONING.search(model))


class OpenAILlmModel(OpenAIModel):
    """The OpenAI connector with google-adk's ``OpenAILlm`` body rules (see the module)."""

    def __init__(self, name: str, *, max_tokens: int, key_source: Callable[[], Any] | None = None,
                 **options: Any) -> None:
        super().__init__(name, **options)
        self.max_tokens = max_tokens
        self.key_source = key_source

    def headers(self) -> dict[str, str]:
        if self.key_source is None:
            return super().headers()
        key = self.key_source()
        if inspect.isawaitable(key):
            if inspect.iscoroutine(key):
                key.close()
            raise ModelError("OpenAILlm(api_key=...) given an async function: only a string or a plain "
                             "function returning one is supported here", error_type="unsupported")
        return {"Authorization": f"Bearer {key}"}

    def payload(self, request: LlmRequest, stream: bool) -> dict[str, Any]:
        body = super().payload(request, stream)
        body.setdefault("max_tokens", self.max_tokens)
        if body.get("tools"):
            body.setdefault("tool_choice", "auto")
        if is_reasoning_model(self.name):
            body["max_completion_tokens"] = body.pop("max_tokens")
            for key in ("temperature", "top_p"):
                if key in body and body[key] != 1:
                    del body[key]
        return body


class OpenAILlm(_HttpLlm):
    """OpenAI's Chat Completions (google-adk's ``OpenAILlm``, same fields and defaults).
    ``client`` (an ``AsyncOpenAI``) is not used here: a call with one fails with a
    ModelError (``unsupported``) naming what to set instead."""

    model: str = "gpt-4o"
    max_tokens: int = 4096
    api_key: Any = Field(default=None, exclude=True, repr=False)
    base_url: str | None = None
    client: Any = None

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"gpt-.*", r"o\d+-.*"]

    def build_connector(self) -> HttpModel:
        """In order: refuse a ``client``; the key (``api_key``, else
        ``OPENAI_API_KEY``; none is an AuthenticationError) and the endpoint
        (``base_url``, else ``OPENAI_BASE_URL``, else OpenAI's)."""
        if self.client is not None:
            raise ModelError("OpenAILlm(client=...) configures the openai SDK's client, which is not used here: "
                             "set api_key and base_url instead", error_type="unsupported")
        key_source = self.api_key if callable(self.api_key) else None
        key = None if key_source is not None else (self.api_key or os.environ.get("OPENAI_API_KEY"))
        if key is None and key_source is None:
            raise AuthenticationError(f"model {self.model!r} needs OpenAILlm(api_key=...) or OPENAI_API_KEY")
        base_url = self.base_url or os.environ.get("OPENAI_BASE_URL") or _OPENAI_API
        return OpenAILlmModel(self.model, base_url=base_url, api_key=key, max_tokens=self.max_tokens,
                              key_source=key_source)
