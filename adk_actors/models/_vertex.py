"""Gemini on Vertex AI (``GOOGLE_GENAI_USE_VERTEXAI``), and Claude on Vertex AI
(``Claude`` with ``GOOGLE_CLOUD_PROJECT`` and ``GOOGLE_CLOUD_LOCATION``): each
provider's wire format at Vertex AI's endpoint, authorized by application default
credentials.

Where the call goes (google.genai's rules, read when the connector is made):
project ``GOOGLE_CLOUD_PROJECT`` (else the credentials' project), location
``GOOGLE_CLOUD_LOCATION`` (default ``global``); the endpoint is the model's
``base_url``, else ``GOOGLE_VERTEX_BASE_URL``, else
``https://aiplatform.googleapis.com`` (``global``),
``https://aiplatform.{us,eu}.rep.googleapis.com`` (the multi-regions) or
``https://{location}-aiplatform.googleapis.com``; the path
``/v1beta1/projects/{project}/locations/{location}/publishers/google/models/{model}``
(a ``projects/...`` model name is used as it is). Without a project or location
but with an API key (``GOOGLE_API_KEY`` / ``GEMINI_API_KEY``: Vertex AI's express
mode) the path is ``/v1beta1/publishers/google/models/{model}`` and the key goes in
``x-goog-api-key``.

Credentials: ``google.auth.default`` (cloud-platform scope) on the first call, in a
thread (it may read files or ask a metadata server); a token is refreshed, in a
thread too, whenever it is not valid, and sent as ``Authorization: Bearer``, with
``x-goog-user-project`` when the credentials name a quota project. No credentials,
or a refresh that fails, is an :class:`AuthenticationError` saying why; google-auth
missing is a ``ModuleNotFoundError`` naming the extra (``vertexai``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

from .._types import LlmRequest, LlmResponse
from ._anthropic import API_VERSION, AnthropicModel
from ._errors import AuthenticationError, ModelError
from ._gemini import GeminiModel

__all__ = ["VertexClaudeModel", "VertexGeminiModel", "uses_vertex_ai", "vertex_claude", "vertex_gemini"]

#: the ``anthropic_version`` Claude on Vertex AI takes in the body: what the anthropic
#: SDK's Vertex client sends (anthropic 2.14, the one google-adk 2.13 runs on here)
VERTEX_ANTHROPIC_VERSION = "2026-10-21"

_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]
_MULTI_REGIONS = {"us", "eu"}
_EXTRA = "pip install 'adk-actors[vertexai]'"


def uses_vertex_ai(env: Mapping[str, str]) -> bool:
    """Whether ``GOOGLE_GENAI_USE_VERTEXAI`` is true (``1``, ``true``, ``yes``, ``on``)."""
    return env.get("GOOGLE_GENAI_USE_VERTEXAI", "").strip().lower() in ("1", "true", "yes", "on")


def _google_auth() -> Any:
    try:
        import google.auth
        import google.auth.transport.requests
    except ImportError as exc:
        raise ModuleNotFoundError(f"Gemini on Vertex AI needs google-auth (the vertexai extra): {_EXTRA}",
                                  name="google.auth") from exc
    return google.auth


class _DefaultCredentials:
    """Application default credentials for a connector (see the module): loaded and
    refreshed in a thread before each call; an API key instead in express mode."""

    credentials: Any
    project: str | None
    location: str | None
    api_key: str | None

    def bearer_headers(self) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.credentials.token}"}
        quota = getattr(self.credentials, "quota_project_id", None)
        if quota:
            headers["x-goog-user-project"] = quota
        return headers

    def authorize(self) -> None:
        """Load the default credentials if this model has none and no key; refresh
        them if their token is not valid (blocking: run in a thread)."""
        if self.credentials is None and self.api_key and not (self.project and self.location):
            return
        auth = _google_auth()
        if self.credentials is None:
            try:
                self.credentials, found_project = auth.default(scopes=_SCOPES)
            except auth.exceptions.DefaultCredentialsError as exc:
                raise AuthenticationError(f"Vertex AI: no application default credentials found: {exc}") from None
            self.project = self.project or found_project
            if not self.project:
                raise AuthenticationError("Vertex AI needs a project: set GOOGLE_CLOUD_PROJECT")
        if not self.credentials.valid:
            try:
                self.credentials.refresh(auth.transport.requests.Request())
            except (auth.exceptions.RefreshError, auth.exceptions.TransportError) as exc:
                raise AuthenticationError(f"Vertex AI: the credentials could not be refreshed: {exc}") from None


class VertexGeminiModel(_DefaultCredentials, GeminiModel):
    provider = "vertex_ai"
    takes_vertex_only_tools = True  # enterprise_web_search, retrieval (Vertex AI Search, RAG)
    api_version = "v1beta1"

    def __init__(self, name: str, *, project: str | None, location: str | None, base_url: str,
                 api_key: str | None = None, credentials: Any = None, **options: Any) -> None:
        super().__init__(name, base_url=base_url, api_key=api_key, **options)
        self.project = project
        self.location = location
        self.credentials = credentials

    def __repr__(self) -> str:
        return f"VertexGeminiModel({self.name!r}, project={self.project!r}, location={self.location!r})"

    def endpoint(self, stream: bool) -> str:
        if self.name.startswith("projects/"):
            path = self.name
        elif self.project and self.location:
            path = f"projects/{self.project}/locations/{self.location}/publishers/google/models/{self.name}"
        else:
            path = f"publishers/google/models/{self.name}"
        verb = ":streamGenerateContent?alt=sse" if stream else ":generateContent"
        return f"{self.base_url}/{self.api_version}/{path}{verb}"

    def headers(self) -> dict[str, str]:
        if self.credentials is None:
            return super().headers()  # express mode: the API key
        return self.bearer_headers()

    def cache_scope(self) -> dict[str, Any]:
        return {"backend": "vertex", "project": self.project, "location": self.location, "base_url": self.base_url}

    def cache_urls(self) -> tuple[str, str, str]:
        """Vertex AI's cachedContents under the project and location (express mode: no
        project path); the model by its publisher path. Not yet run against google-adk."""
        model = self.endpoint(False).split(f"/{self.api_version}/", 1)[1].split(":", 1)[0]
        where = f"projects/{self.project}/locations/{self.location}/" if self.project and self.location else ""
        return f"{self.base_url}/{self.api_version}/{where}cachedContents", f"{self.base_url}/{self.api_version}", model

    def connect(self, request: LlmRequest) -> Any:
        """Live conversations on Vertex AI are not built: a ModelError (``unsupported``)."""
        raise ModelError(f"Gemini {self.name!r}: live conversations on Vertex AI are not built yet (issue 56)",
                         error_type="unsupported")

    async def generate(self, request: LlmRequest, *, stream: bool = False) -> AsyncIterator[LlmResponse]:
        """Authorize (in a thread), then Gemini's call loop at Vertex AI's endpoint."""
        await asyncio.to_thread(self.authorize)
        async for response in super().generate(request, stream=stream):
            yield response


class VertexClaudeModel(_DefaultCredentials, AnthropicModel):
    """Claude on Vertex AI: Anthropic's Messages body without ``model`` and with
    ``anthropic_version`` (:data:`VERTEX_ANTHROPIC_VERSION`), posted to
    ``{base}/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict``
    (``:streamRawPredict`` when streaming), with the default credentials' token."""

    provider = "vertex_ai"

    def __init__(self, name: str, *, project: str, location: str, base_url: str, credentials: Any = None,
                 **options: Any) -> None:
        super().__init__(name, base_url=base_url, api_key=None, **options)
        self.project = project
        self.location = location
        self.credentials = credentials

    def __repr__(self) -> str:
        return f"VertexClaudeModel({self.name!r}, project={self.project!r}, location={self.location!r})"

    def endpoint(self, stream: bool) -> str:
        verb = "streamRawPredict" if stream else "rawPredict"
        return (f"{self.base_url}/projects/{self.project}/locations/{self.location}/publishers/anthropic/models/"
                f"{self.name}:{verb}")

    def headers(self) -> dict[str, str]:
        return {"anthropic-version": API_VERSION, **self.bearer_headers()}

    def payload(self, request: LlmRequest, stream: bool) -> dict[str, Any]:
        body = super().payload(request, stream)
        body.pop("model", None)
        return {"anthropic_version": VERTEX_ANTHROPIC_VERSION, **body}

    async def generate(self, request: LlmRequest, *, stream: bool = False) -> AsyncIterator[LlmResponse]:
        """Authorize (in a thread), then Anthropic's call loop at Vertex AI's endpoint."""
        await asyncio.to_thread(self.authorize)
        async for response in super().generate(request, stream=stream):
            yield response


def vertex_claude(name: str, project: str, location: str, env: Mapping[str, str],
                  **options: Any) -> VertexClaudeModel:
    """Claude on Vertex AI in ``project`` / ``location``: the endpoint is
    ``ANTHROPIC_VERTEX_BASE_URL``, else Vertex AI's for the location (with ``/v1``)."""
    endpoint = env.get("ANTHROPIC_VERTEX_BASE_URL")
    if not endpoint:
        if location == "global":
            endpoint = "https://aiplatform.googleapis.com/v1"
        elif location in _MULTI_REGIONS:
            endpoint = f"https://aiplatform.{location}.rep.googleapis.com/v1"
        else:
            endpoint = f"https://{location}-aiplatform.googleapis.com/v1"
    return VertexClaudeModel(name, project=project, location=location, base_url=endpoint, **options)


def vertex_gemini(name: str, env: Mapping[str, str], *, base_url: str | None = None,
                  **options: Any) -> VertexGeminiModel:
    """The Vertex AI connector for ``name`` from the variables (see the module)."""
    project = env.get("GOOGLE_CLOUD_PROJECT") or None
    location = env.get("GOOGLE_CLOUD_LOCATION") or None
    key = env.get("GOOGLE_API_KEY") or env.get("GEMINI_API_KEY") or None
    if project or location or not key:
        key = None  # project and location come before an API key, as in google.genai
        location = location or "global"
    endpoint = base_url or env.get("GOOGLE_VERTEX_BASE_URL")
    if not endpoint:
        if location is None or location == "global":
            endpoint = "https://aiplatform.googleapis.com"
        elif location in _MULTI_REGIONS:
            endpoint = f"https://aiplatform.{location}.rep.googleapis.com"
        else:
            endpoint = f"https://{location}-aiplatform.googleapis.com"
    return VertexGeminiModel(name, project=project, location=location, base_url=endpoint, api_key=key, **options)
