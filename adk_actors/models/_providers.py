"""google-adk's provider model classes on our connectors: ``Gemini`` and
``AnthropicLlm`` / ``Claude``.

Each is a :class:`BaseLlm` with google-adk's fields and defaults. The engine calls
:meth:`connector`, which builds (once per instance, on the first call) our HTTP
connector from the fields and the environment, so the call runs behind our breaker,
retries and streaming rules. ``Gemini`` goes to Vertex AI when
``GOOGLE_GENAI_USE_VERTEXAI`` is set (``_vertex``). What is not built is refused
there with a clear error: a google.genai ``client`` or ``client_kwargs``, and the
interactions API.

``Claude`` is Claude on Vertex AI, as in google-adk, when ``GOOGLE_CLOUD_PROJECT``
and ``GOOGLE_CLOUD_LOCATION`` are set; where google-adk then refuses, ours calls
Anthropic's API (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``) as ``AnthropicLlm``
does.
``LiteLlm`` (on the ``litellm`` library) is in ``_lite_llm``.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncGenerator
from typing import Any

from pydantic import PrivateAttr, field_validator

from .._types import LlmRequest, LlmResponse
from ..types import HttpRetryOptions, ours
from ._base import ModelError
from ._errors import AuthenticationError
from ._gemini import GeminiModel
from ._http import HttpModel, RetryPolicy
from ._llm_registry import BaseLlm
from ._registry import anthropic_connector, gemini_connector
from ._vertex import uses_vertex_ai, vertex_claude, vertex_gemini

__all__ = ["AnthropicLlm", "Claude", "Gemini"]

#: a Vertex AI model path: its project, location and model
_VERTEX_NAME = re.compile(r"^projects/([^/]+)/locations/([^/]+)/(?:publishers/anthropic/models|endpoints)/([^/:]+)")


class _HttpLlm(BaseLlm):
    """A provider class: its calls go through its connector (see the module)."""

    _connector: HttpModel | None = PrivateAttr(default=None)

    def build_connector(self) -> HttpModel:
        raise NotImplementedError

    def connector(self) -> HttpModel:
        """The HTTP connector, built on the first call from the fields and the
        environment (a missing key or an unbuilt backend raises then)."""
        if self._connector is None:
            self._connector = self.build_connector()
        return self._connector

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        """The connector's responses (without the engine's breaker: it guards calls
        the engine makes)."""
        async for response in self.connector().generate(llm_request, stream=stream):
            yield response


class Gemini(_HttpLlm):
    """Gemini over its REST API (API key). ``retry_options`` set the attempts and
    backoff (google.genai's defaults fill unset fields); without them our retry
    policy applies. ``base_url`` is the endpoint (else ``GEMINI_BASE_URL``, then
    ``GOOGLE_GEMINI_BASE_URL``); ``api_version`` the path's version (``v1beta``)."""

    model: str = "gemini-2.5-flash"
    base_url: str | None = None
    api_version: str | None = None
    retry_options: HttpRetryOptions | None = None
    client: Any = None
    client_kwargs: dict[str, Any] | None = None
    speech_config: Any = None
    use_interactions_api: bool = False

    @field_validator("retry_options", mode="before")
    @classmethod
    def _retry_options(cls, value: Any) -> Any:
        return None if value is None else ours(value, HttpRetryOptions)

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"gemini-.*", r"gemma-4.*", r"model-optimizer-.*", r"projects\/.+\/locations\/.+\/endpoints\/.+",
                r"projects\/.+\/locations\/.+\/publishers\/google\/models\/gemini.+"]

    def connector_options(self) -> dict[str, Any]:
        """The connector's options from the fields: ``retry_options`` as our retry
        policy (google.genai's defaults for unset fields), none without them."""
        if self.retry_options is None:
            return {}
        given = self.retry_options
        return {"retry": RetryPolicy(max_attempts=given.attempts if given.attempts is not None else 5,
                                     base_delay=given.initial_delay if given.initial_delay is not None else 1.0,
                                     max_delay=given.max_delay if given.max_delay is not None else 60.0)}

    def build_connector(self) -> HttpModel:
        """In order: refuse what is not built (a google.genai client or its
        arguments, the interactions API) with a ModelError
        (``error_type="unsupported"``); then, with ``GOOGLE_GENAI_USE_VERTEXAI`` set
        (or a ``projects/...`` model), the Vertex AI connector (``_vertex``: its
        credentials are loaded at the first call); else Gemini's REST connector (a
        missing key: AuthenticationError naming the variables)."""
        if self.client is not None or self.client_kwargs:
            raise ModelError("Gemini(client=..., client_kwargs=...) configure google.genai's client, which is not "
                             "used here: set base_url, api_version and retry_options on Gemini instead",
                             error_type="unsupported")
        if self.use_interactions_api:
            raise ModelError("Gemini(use_interactions_api=True): the interactions API is not built yet",
                             error_type="unsupported")
        options = self.connector_options()
        if uses_vertex_ai(os.environ) or self.model.startswith("projects/"):
            connector: GeminiModel = vertex_gemini(self.model, os.environ, base_url=self.base_url, **options)
        else:
            connector = gemini_connector(self.model, os.environ, base_url=self.base_url, **options)
        if self.api_version:
            connector.api_version = self.api_version
        return connector


class AnthropicLlm(_HttpLlm):
    """Claude over Anthropic's Messages API (``ANTHROPIC_API_KEY``, endpoint
    ``ANTHROPIC_BASE_URL``); ``max_tokens`` when the agent's config sets none."""

    model: str = "claude-sonnet-4-20250514"
    max_tokens: int = 8192
    client: Any = None

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"claude-.*"]

    def build_connector(self) -> HttpModel:
        """Refuse a ``client`` (an anthropic SDK client is not used here), then
        Anthropic's connector (a missing key: AuthenticationError naming it)."""
        if self.client is not None:
            raise ModelError(f"{type(self).__name__}(client=...): an anthropic SDK client is not used here; set "
                             "ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL instead", error_type="unsupported")
        connector = anthropic_connector(self.model, os.environ)
        connector.max_tokens = self.max_tokens
        return connector


class Claude(AnthropicLlm):
    """google-adk's ``Claude``: Claude on Vertex AI, in ``GOOGLE_CLOUD_PROJECT`` /
    ``GOOGLE_CLOUD_LOCATION`` (a ``projects/P/locations/L/...`` model name gives
    both); without them, Anthropic's API with ``ANTHROPIC_API_KEY`` (google-adk
    refuses instead)."""

    model: str = "claude-3-5-sonnet-v2@20241022"

    def build_connector(self) -> HttpModel:
        """In order: a ``client`` is refused; the project and location from the
        variables, or from a ``projects/...`` model name; with both, Claude on
        Vertex AI (``_vertex``; credentials loaded at the first call); else
        Anthropic's API (no ``ANTHROPIC_API_KEY`` either: AuthenticationError naming
        all three variables)."""
        if self.client is not None:
            return super().build_connector()  # refused there
        project = os.environ.get("GOOGLE_CLOUD_PROJECT")
        location = os.environ.get("GOOGLE_CLOUD_LOCATION")
        name = self.model
        found = _VERTEX_NAME.match(self.model)
        if found:
            project, location, name = found.group(1), found.group(2), found.group(3)
        if project and location:
            connector = vertex_claude(name, project, location, os.environ)
            connector.max_tokens = self.max_tokens
            return connector
        if not os.environ.get("ANTHROPIC_API_KEY"):
            raise AuthenticationError(f"Claude {self.model!r} needs GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION "
                                      "(Claude on Vertex AI) or ANTHROPIC_API_KEY (Anthropic's API)")
        return super().build_connector()
