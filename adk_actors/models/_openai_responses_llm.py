"""google-adk's ``OpenAIResponsesLlm``, ``AzureOpenAIResponsesLlm`` and
``OpenAIGenerateContentConfig`` (``google.adk.integrations.openai``) on our Responses
API connector (``_openai_responses``: its retries, typed errors, streaming rules, and
the engine's breaker), with google-adk's fields and defaults and without the openai SDK.

Where a call goes: ``base_url`` (else ``OPENAI_BASE_URL``, else OpenAI's), with
``api_key`` (a string, or a function, plain or async, called for each call) else
``OPENAI_API_KEY``; ``OPENAI_ORG_ID`` / ``OPENAI_PROJECT_ID`` are sent as the openai
SDK sends them. ``AzureOpenAIResponsesLlm``: ``azure_endpoint`` + ``/openai/v1``
(else as above), the key ``api_key`` else ``AZURE_OPENAI_API_KEY`` else
``OPENAI_API_KEY``; ``model`` is the deployment's name. With no key, the first call
fails with an AuthenticationError naming where a key is read; an openai SDK
``client`` is refused (a ModelError, ``unsupported``) naming what to set instead.

Reasoning effort: ``OpenAIGenerateContentConfig(effort=...)`` as the agent's
``generate_content_config``; it is sent as ``reasoning`` (over the class's
``reasoning``, only its ``effort`` replaced; alone, with a ``concise`` summary). On
OpenAI's own host the tier is checked against the model first (a ValueError before
anything is sent); on another endpoint it is passed on as given.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, model_validator

from .._types import LlmRequest
from ..types import GenerateContentConfig
from ._base import ModelError
from ._errors import AuthenticationError
from ._http import HttpModel
from ._open_calls import with_open_calls_answered
from ._openai_llm import is_reasoning_model
from ._openai_responses import (
    CallIds,
    OpenAIResponsesModel,
    input_items,
    lowercase_types,
    text_format,
    tool_choice,
)
from ._providers import _HttpLlm

__all__ = ["AzureOpenAIResponsesLlm", "OpenAIGenerateContentConfig", "OpenAIResponsesLlm", "supported_efforts"]

_log = logging.getLogger(__name__)

_OPENAI_API = "https://api.openai.com/v1"
#: ``extra_request_args`` the openai SDK takes as call options, not body fields: sent as
#: headers and URL query parameters; the timeout (seconds) is the connector's
_CLIENT_OPTIONS = ("extra_headers", "timeout", "extra_query")

OpenAIReasoningEffort = Literal["minimal", "low", "medium", "high", "xhigh", "max"]

# The tiers each family takes (google-adk 2.13's table): the newest flagships take
# ``max`` on the Responses API; plain gpt-5 takes ``minimal``; o1-mini / o1-preview none.
_FLAGSHIP = re.compile(r"(?:^|/)(?:gpt-6|gpt-5\.[56])(?:[.\-]|$)", re.IGNORECASE)
_GPT5 = re.compile(r"(?:^|/)gpt-5(?![.\d])", re.IGNORECASE)
_NO_EFFORT = re.compile(r"(?:^|/)o1-(?:mini|preview)(?:[.\-]|$)", re.IGNORECASE)


def supported_efforts(model: str | None, api: Literal["chat", "responses"] = "responses") -> frozenset[str]:
    """The reasoning-effort tiers ``model`` takes on ``api`` (none: it takes no effort)."""
    if api not in ("chat", "responses"):
        raise ValueError(f"Unknown API surface {api!r}.")
    if not model or not is_reasoning_model(model) or _NO_EFFORT.search(model):
        return frozenset()
    if _FLAGSHIP.search(model):
        return frozenset({"low", "medium", "high", "xhigh", *(("max",) if api == "responses" else ())})
    if _GPT5.search(model):
        return frozenset({"minimal", "low", "medium", "high"})
    return frozenset({"low", "medium", "high"})


class OpenAIGenerateContentConfig(GenerateContentConfig):
    """The agent's generation config with OpenAI's reasoning ``effort`` (google-adk's
    class, same field). A ``thinking_config`` with a thinking budget is refused at
    construction (a ValueError): set ``effort`` instead."""

    effort: OpenAIReasoningEffort | None = None

    @model_validator(mode="after")
    def _no_thinking_config(self) -> OpenAIGenerateContentConfig:
        thinking = self.thinking_config
        if thinking is not None and thinking.thinking_budget is not None:
            raise ValueError("thinking_config (thinking_level / thinking_budget) is not supported in "
                             "OpenAIGenerateContentConfig. Use the `effort` field directly to configure "
                             "reasoning effort.")
        return self


def _tool(declaration: Any) -> dict[str, Any]:
    schema = declaration.parameters_schema
    parameters = lowercase_types(schema) if isinstance(schema, dict) else {"type": "object", "properties": {}}
    return {"type": "function", "name": declaration.name, "description": declaration.description or "",
            "parameters": parameters, "strict": False}


class OpenAIResponsesLlm(_HttpLlm):
    """OpenAI's Responses API (google-adk's ``OpenAIResponsesLlm``: same fields and
    defaults; see the module for the endpoint, key and effort rules, and
    ``_openai_responses`` for the wire mapping). It serves no name by itself
    (``supported_models()`` is empty, as google-adk's): give the agent an instance.
    ``include_response_metadata`` is taken, and nothing more: our responses carry no
    ``custom_metadata``."""

    model: str = "gpt-5"
    api_key: Any = Field(default=None, exclude=True, repr=False)
    base_url: str | None = None
    client: Any = None
    store: bool | None = None
    include: list[str] | None = None
    reasoning: dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    truncation: str | None = None
    service_tier: str | None = None
    include_response_metadata: bool = True
    extra_request_args: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def supported_models(cls) -> list[str]:
        return []

    # -- where the call goes ----------------------------------------------------------------

    def _endpoint(self) -> tuple[str, bool]:
        """The base URL, and whether it is OpenAI's own host (effort tiers checked)."""
        base_url = self.base_url or os.environ.get("OPENAI_BASE_URL")
        return base_url or _OPENAI_API, base_url is None

    def _key(self) -> tuple[str | None, Callable[[], Any] | None, str]:
        """The key, or the function giving it, and where a key is read (for the error)."""
        if callable(self.api_key):
            return None, self.api_key, ""
        return self.api_key or os.environ.get("OPENAI_API_KEY"), None, "OPENAI_API_KEY"

    def build_connector(self) -> HttpModel:
        """In order: refuse a ``client``; the key (none: AuthenticationError naming where
        it is read), the endpoint, then the connector (see the module)."""
        if self.client is not None:
            raise ModelError(f"{type(self).__name__}(client=...) configures the openai SDK's client, which is not "
                             "used here: set api_key and base_url instead", error_type="unsupported")
        key, key_source, where = self._key()
        if key is None and key_source is None:
            raise AuthenticationError(f"model {self.model!r} needs {type(self).__name__}(api_key=...) or {where}")
        base_url, _ = self._endpoint()
        headers = {name: os.environ[var] for name, var in (("OpenAI-Organization", "OPENAI_ORG_ID"),
                                                           ("OpenAI-Project", "OPENAI_PROJECT_ID"))
                   if os.environ.get(var)}
        headers.update(self.extra_request_args.get("extra_headers") or {})
        options = {"timeout": float(self.extra_request_args["timeout"])} \
            if isinstance(self.extra_request_args.get("timeout"), int | float) else {}
        return OpenAIResponsesModel(self.model, base_url=base_url, api_key=key, key_source=key_source,
                                    extra_headers=headers, query=self.extra_request_args.get("extra_query"),
                                    body_of=self.request_body, **options)

    # -- the body ---------------------------------------------------------------------------

    def _reasoning(self, config: dict[str, Any], model: str) -> dict[str, Any] | None:
        """``reasoning`` from the config's ``effort`` over the class's (see the module);
        a plain ``thinking_config`` is ignored with a warning. A tier the model does not
        take, on OpenAI's host, is a ValueError."""
        effort = config.get("effort")
        if not effort:
            thinking = config.get("thinking_config") or {}
            budget = thinking.get("thinking_budget") if isinstance(thinking, dict) else \
                getattr(thinking, "thinking_budget", None)
            if budget is not None:
                _log.warning("Standard thinking_config is not supported for OpenAI models and will be ignored. "
                             "Use OpenAIGenerateContentConfig and set the `effort` field directly.")
            return self.reasoning
        if self._endpoint()[1]:
            allowed = supported_efforts(model, "responses")
            if not allowed:
                raise ValueError(f"Model {model!r} does not accept a reasoning effort parameter; remove `effort` "
                                 f"(got {effort!r}) from the config for this model.")
            if effort not in allowed:
                raise ValueError(f"Reasoning effort {effort!r} is not supported by model {model!r} on the "
                                 f"responses API. Supported tiers: {sorted(allowed)}.")
        return {**self.reasoning, "effort": effort} if self.reasoning else {"effort": effort, "summary": "concise"}

    def request_body(self, request: LlmRequest, stream: bool) -> dict[str, Any]:
        """The JSON body of one call, in google-adk's order of rules: model, input,
        stream, instructions; the config's sampling, output format, reasoning and tools;
        a reasoning model's non-default temperature/top_p dropped; the class's options;
        ``extra_request_args`` over all (its ``extra_body`` merged into the body; its
        ``extra_headers``, ``extra_query`` and ``timeout`` are the connector's); then
        ``tool_choice`` when there are tools; unset (None) values left out."""
        config = request.config
        model = request.model or self.model
        ids = CallIds()
        contents = with_open_calls_answered(request.contents)  # the Responses API refuses a call left open
        body: dict[str, Any] = {"model": model, "input": [i for c in contents for i in input_items(c, ids)],
                                "stream": stream}
        if request.system_instruction:
            body["instructions"] = request.system_instruction
        extra_body: dict[str, Any] = {}
        for name in ("temperature", "top_p", "max_output_tokens"):
            if config.get(name) is not None:
                body[name] = config[name]
        if config.get("stop"):
            extra_body["stop"] = config["stop"]
        text = text_format(config)
        if text:
            body["text"] = text
        reasoning = self._reasoning(config, model)
        if request.tools:
            body["tools"] = [_tool(t) for t in request.tools]
        if is_reasoning_model(model):
            for name in ("temperature", "top_p"):
                if body.get(name) is not None and body[name] != 1:
                    _log.warning("Ignoring %s=%r: reasoning model %r accepts only the default value (1)", name,
                                 body.pop(name), model)
        body.update(store=self.store, include=self.include, reasoning=reasoning,
                    parallel_tool_calls=self.parallel_tool_calls, truncation=self.truncation,
                    service_tier=self.service_tier)
        extra = {k: v for k, v in self.extra_request_args.items() if k not in _CLIENT_OPTIONS}
        extra_body.update(extra.pop("extra_body", None) or {})
        body.update(extra)
        if body.get("tools") and "tool_choice" not in body:
            body["tool_choice"] = tool_choice(config)
        body.update(extra_body)
        return {key: value for key, value in body.items() if value is not None}


class AzureOpenAIResponsesLlm(OpenAIResponsesLlm):
    """Azure OpenAI's Responses API (google-adk's ``AzureOpenAIResponsesLlm``):
    ``azure_endpoint`` (the resource's URL) + ``/openai/v1``, else ``base_url`` as
    given; ``model`` is the deployment's name; the key ``api_key``, else
    ``AZURE_OPENAI_API_KEY``, else ``OPENAI_API_KEY``, sent as a bearer token (as the
    openai SDK's client google-adk builds sends it). No ``api-version`` is sent: the
    v1 API takes none."""

    azure_endpoint: str | None = None

    def _endpoint(self) -> tuple[str, bool]:
        if self.azure_endpoint:
            return self.azure_endpoint.rstrip("/") + "/openai/v1", False
        return super()._endpoint()

    def _key(self) -> tuple[str | None, Callable[[], Any] | None, str]:
        if callable(self.api_key):
            return None, self.api_key, ""
        return (self.api_key or os.environ.get("AZURE_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY"), None,
                "AZURE_OPENAI_API_KEY (or OPENAI_API_KEY)")
