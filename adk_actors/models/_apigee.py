"""``ApigeeLlm``: google-adk's class for models behind an Apigee proxy, on our Gemini,
Vertex AI and OpenAI connectors (their retries, streaming rules and the engine's
breaker).

The model string is ``apigee/[<provider>/][<version>/]<model_id>``, ``provider``
one of ``gemini``, ``vertex_ai`` or ``openai``, ``version`` starting with ``v``; any
other form is a ValueError when the class is made. What the string and the
arguments decide, in order (google-adk's rules):

1. the API type: ``api_type`` when given (``genai`` or ``chat_completions``), else
   ``chat_completions`` for an ``apigee/openai/...`` model, else ``genai``;
2. for ``genai``, the backend: Vertex AI for ``apigee/vertex_ai/...`` or, without a
   provider, when ``GOOGLE_GENAI_USE_ENTERPRISE`` (else the older
   ``GOOGLE_GENAI_USE_VERTEXAI``) is ``true`` or ``1``; the Gemini API otherwise.
   Vertex AI needs ``GOOGLE_CLOUD_PROJECT`` and ``GOOGLE_CLOUD_LOCATION`` (either
   unset is a ValueError when the class is made);
3. the proxy: ``proxy_url``, else ``APIGEE_PROXY_URL`` (neither is a ModelError,
   ``configuration``, at the first call, before anything is sent).

Where each call goes (the model id is the string's last component):

* Gemini API: ``{proxy}/{version or v1beta}/models/{id}:generateContent``
  (``:streamGenerateContent?alt=sse``), Gemini's body, the key of ``GOOGLE_API_KEY``
  (else ``GEMINI_API_KEY``; neither is an AuthenticationError) in ``x-goog-api-key``;
* Vertex AI: ``{proxy}/{version or v1beta1}/projects/{project}/locations/{location}/
  publishers/google/models/{id}:generateContent``, the bearer token of
  ``credentials`` (google-auth credentials) or of the application default ones;
* chat completions: ``{proxy}/chat/completions`` (the proxy URL as it is when it ends
  so), OpenAI's Chat Completions body with ``model`` the id and ``stream`` always
  present, no credentials of its own.

``custom_headers`` go with every request (the backend's credentials are set after
them), and their values are treated as secrets (blanked out of errors and events).
Not as google-adk: a google.genai ``client`` is refused (ModelError,
``unsupported``), and the ``x-goog-api-client`` / ``user-agent`` tracking headers are
not sent.
"""

from __future__ import annotations

import enum
import os
from typing import Any

from pydantic import Field, PrivateAttr

from .._secrets import register_secret
from .._types import LlmRequest
from ._base import ModelError
from ._errors import AuthenticationError
from ._gemini import GeminiModel
from ._http import HttpModel
from ._openai import OpenAIModel
from ._providers import Gemini
from ._vertex import VertexGeminiModel

__all__ = ["ApigeeLlm", "ApigeeOpenAIModel"]

PROXY_URL_VARIABLE = "APIGEE_PROXY_URL"
_PROVIDERS = ("vertex_ai", "gemini", "openai")


def _valid(model: str) -> bool:
    """Whether ``model`` is ``apigee/[<provider>/][<version>/]<model_id>``."""
    if not model.startswith("apigee/"):
        return False
    parts = model.removeprefix("apigee/").split("/")
    if len(parts) == 1:
        return True
    if len(parts) == 2:
        return parts[0] in _PROVIDERS or parts[0].startswith("v")
    if len(parts) == 3:
        return parts[0] in _PROVIDERS and parts[1].startswith("v")
    return False


def _version(model: str) -> str:
    """The string's API version, or '' when it names none."""
    parts = model.removeprefix("apigee/").split("/")
    if len(parts) == 3:
        return parts[1]
    if len(parts) == 2 and parts[0] not in ("vertex_ai", "gemini") and parts[0].startswith("v"):
        return parts[0]
    return ""


def model_id(model: str) -> str:
    """The model id: the string's last component."""
    return model.removeprefix("apigee/").split("/")[-1]


def _enterprise() -> bool:
    """google.genai's switch for Vertex AI: ``GOOGLE_GENAI_USE_ENTERPRISE`` if set, else
    ``GOOGLE_GENAI_USE_VERTEXAI`` (each ``true`` or ``1``)."""
    for name in ("GOOGLE_GENAI_USE_ENTERPRISE", "GOOGLE_GENAI_USE_VERTEXAI"):
        if name in os.environ:
            return os.environ[name].lower() in ("true", "1")
    return False


class _ProxyHeaders:
    """A connector's headers with the proxy's custom headers first."""

    custom_headers: dict[str, str]

    def headers(self) -> dict[str, str]:
        return {**self.custom_headers, **super().headers()}  # type: ignore[misc]


class _ApigeeGemini(_ProxyHeaders, GeminiModel):
    provider = "apigee"


class _ApigeeVertex(_ProxyHeaders, VertexGeminiModel):
    provider = "apigee"


class ApigeeOpenAIModel(OpenAIModel):
    """OpenAI's Chat Completions connector at the proxy: the custom headers only (no
    key of its own), ``stream`` in every body, no ``stream_options``."""

    provider = "apigee"

    def __init__(self, name: str, *, custom_headers: dict[str, str], **options: Any) -> None:
        super().__init__(name, api_key=None, **options)
        self.custom_headers = custom_headers

    def endpoint(self, stream: bool) -> str:
        if self.base_url.endswith("/chat/completions"):
            return self.base_url
        return f"{self.base_url}/chat/completions"

    def headers(self) -> dict[str, str]:
        return dict(self.custom_headers)

    def payload(self, request: LlmRequest, stream: bool) -> dict[str, Any]:
        body = super().payload(request, stream)
        body.pop("stream_options", None)
        body["stream"] = stream
        return body


class ApigeeLlm(Gemini):
    """A model behind an Apigee proxy (google-adk's ``ApigeeLlm``; see the module)."""

    class ApiType(str, enum.Enum):  # noqa: UP042 - google-adk's base classes (str() as theirs)
        """The API the proxy speaks (an empty value is ``UNKNOWN``: decided by the model string)."""

        UNKNOWN = "unknown"
        CHAT_COMPLETIONS = "chat_completions"
        GENAI = "genai"

        @classmethod
        def _missing_(cls, value: object) -> Any:
            return cls.UNKNOWN if not value else super()._missing_(value)

    proxy_url: str | None = None
    custom_headers: dict[str, str] = Field(default_factory=dict, exclude=True, repr=False)
    api_type: ApiType = ApiType.UNKNOWN
    credentials: Any = Field(default=None, exclude=True, repr=False)

    _resolved_type: ApiType = PrivateAttr(default=ApiType.GENAI)
    _vertex: bool = PrivateAttr(default=False)
    _project: str | None = PrivateAttr(default=None)
    _location: str | None = PrivateAttr(default=None)

    def __init__(self, *, model: str, proxy_url: str | None = None, custom_headers: dict[str, str] | None = None,
                 retry_options: Any = None, api_type: ApiType | str = ApiType.UNKNOWN, credentials: Any = None,
                 client: Any = None) -> None:
        """In order: the model string checked (ValueError); the API type and the
        backend decided; for Vertex AI, the project and location read from the
        environment (ValueError when unset); the proxy URL from the argument or
        ``APIGEE_PROXY_URL``; the custom headers' values known as secrets."""
        if not _valid(model):
            raise ValueError(f"Invalid model string: {model}")
        chosen = ApigeeLlm.ApiType(api_type)
        fields: dict[str, Any] = {"model": model, "retry_options": retry_options, "client": client,
                                  "api_type": chosen, "proxy_url": proxy_url or os.environ.get(PROXY_URL_VARIABLE),
                                  "custom_headers": dict(custom_headers or {}), "credentials": credentials}
        super().__init__(**fields)
        if chosen != ApigeeLlm.ApiType.UNKNOWN:
            self._resolved_type = chosen
        elif model.startswith("apigee/openai/"):
            self._resolved_type = ApigeeLlm.ApiType.CHAT_COMPLETIONS
        if self._resolved_type == ApigeeLlm.ApiType.GENAI and not model.startswith(("apigee/gemini/",
                                                                                     "apigee/openai/")):
            self._vertex = model.startswith("apigee/vertex_ai/") or _enterprise()
        if self._vertex:
            for name in ("GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"):
                if not os.environ.get(name):
                    raise ValueError(f"The {name} environment variable must be set.")
            self._project = os.environ["GOOGLE_CLOUD_PROJECT"]
            self._location = os.environ["GOOGLE_CLOUD_LOCATION"]
        for value in self.custom_headers.values():
            register_secret(value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, proxy_url={self.proxy_url!r})"

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"apigee\/.*"]

    def build_connector(self) -> HttpModel:
        """In order: a google.genai ``client`` refused (ModelError, ``unsupported``); no
        proxy URL is a ModelError (``configuration``); then the connector of the API
        type and backend (see the module); a Gemini API call without a key is an
        AuthenticationError naming the variables."""
        if self.client is not None:
            raise ModelError("ApigeeLlm(client=...) configures google.genai's client, which is not used here: set "
                             "proxy_url and custom_headers instead", error_type="unsupported")
        if not self.proxy_url:
            raise ModelError(f"Apigee proxy URL is not set. Pass proxy_url or set {PROXY_URL_VARIABLE}.",
                             error_type="configuration")
        name, headers, options = model_id(self.model), dict(self.custom_headers), self.connector_options()
        version = _version(self.model)
        if self._resolved_type == ApigeeLlm.ApiType.CHAT_COMPLETIONS:
            return ApigeeOpenAIModel(name, base_url=self.proxy_url, custom_headers=headers, **options)
        connector: GeminiModel
        if self._vertex:
            connector = _ApigeeVertex(name, project=self._project, location=self._location, base_url=self.proxy_url,
                                      credentials=self.credentials, **options)
        else:
            key = os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")
            if not key:
                raise AuthenticationError(f"model {self.model!r} on the Gemini API needs GOOGLE_API_KEY (or "
                                          "GEMINI_API_KEY) in the environment")
            connector = _ApigeeGemini(name, base_url=self.proxy_url, api_key=key, **options)
        connector.custom_headers = headers
        if version:
            connector.api_version = version
        return connector
