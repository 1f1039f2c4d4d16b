"""The one registry of model names: how an agent's ``model="..."`` becomes a
connector, the same in a host's run workers and in the in-process ``Runner`` /
``InMemoryRunner`` (both call :func:`resolve_model`; nothing else resolves names).

Names, in the order they are tried:

* a name the host's config gives a base URL (its ``[models]`` table): an
  OpenAI-compatible server there (LiteLLM, Ollama, vLLM, OpenRouter), with
  ``OPENAI_API_KEY`` if set;
* a name a program's own ``BaseLlm`` subclass serves (``LLMRegistry.register``,
  its ``supported_models()`` regexes, or ``"Class:model"``): an instance of it;
* ``gemini-*`` (or ``models/gemini-*``): Gemini's REST API; on Vertex AI when
  ``GOOGLE_GENAI_USE_VERTEXAI`` is true (``_vertex``: project, location, application
  default credentials), as is a ``projects/...`` name;
* ``claude-*``: Anthropic's Messages API;
* ``openai/<model>``: OpenAI's Chat Completions API (``<model>`` sent);
* ``gpt-*`` / ``o<n>-*``: google-adk's ``OpenAILlm``; ``gemma-*`` (Gemma 3): ``Gemma``;
* another of google-adk's ``LiteLlm`` prefixes (``groq/``, ``anthropic/``,
  ``ollama_chat/``...): ``LiteLlm`` on litellm, which reads its own variables
  (``GROQ_API_KEY``...); without the ``litellm`` extra a ModelError naming it;
* anything else: a :class:`ModelError` (``error_type="unknown_model"``).

The environment variables (read at each resolution, from ``os.environ`` or the
``env`` mapping given):

=====================  ==========================================================
``GEMINI_API_KEY``     Gemini's key; ``GOOGLE_API_KEY`` when it is unset
``GEMINI_BASE_URL``    Gemini's endpoint; else google-genai's
                       ``GOOGLE_GEMINI_BASE_URL``; else
                       ``https://generativelanguage.googleapis.com``
``ANTHROPIC_API_KEY``  Anthropic's key
``ANTHROPIC_BASE_URL`` Anthropic's endpoint; default ``https://api.anthropic.com``
``OPENAI_API_KEY``     OpenAI's key (or a compatible server's)
``OPENAI_BASE_URL``    OpenAI's endpoint; default ``https://api.openai.com/v1``
=====================  ==========================================================

Gemini on Vertex AI reads google.genai's variables instead (``_vertex``:
``GOOGLE_GENAI_USE_VERTEXAI``, ``GOOGLE_CLOUD_PROJECT``, ``GOOGLE_CLOUD_LOCATION``,
``GOOGLE_VERTEX_BASE_URL``, application default credentials).

A missing key is an :class:`AuthenticationError` that names the variable, raised
when the name is resolved (an ``openai/`` model with ``OPENAI_BASE_URL`` set, a
local server, may have no key). Keys are never read from files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ._anthropic import AnthropicModel
from ._base import ModelError
from ._errors import AuthenticationError
from ._gemini import GeminiModel
from ._llm_registry import LITE_LLM_MODELS, LLMRegistry, instance_of, registered_by_user
from ._openai import OpenAIModel
from ._vertex import uses_vertex_ai, vertex_gemini

__all__ = ["anthropic_connector", "gemini_connector", "resolve_model"]

_GEMINI_API = "https://generativelanguage.googleapis.com"
_ANTHROPIC_API = "https://api.anthropic.com"


#: names served by a google-adk model class of ours on its own connector
_LLM_CLASSES = re.compile(r"gpt-.*|o\d+-.*|gemma-.*")

def gemini_connector(name: str, env: Mapping[str, str], *, base_url: str | None = None,
                     **options: Any) -> GeminiModel:
    """Gemini's REST connector for ``name``: its key from ``GEMINI_API_KEY`` (else
    ``GOOGLE_API_KEY``; neither is an AuthenticationError naming them), its endpoint
    ``base_url`` if given, else from the variables (see the module)."""
    key = env.get("GEMINI_API_KEY") or env.get("GOOGLE_API_KEY")
    if not key:
        raise AuthenticationError(f"model {name!r} needs GEMINI_API_KEY (or GOOGLE_API_KEY) in the environment")
    endpoint = base_url or env.get("GEMINI_BASE_URL") or env.get("GOOGLE_GEMINI_BASE_URL") or _GEMINI_API
    return GeminiModel(name, base_url=endpoint, api_key=key, **options)


def anthropic_connector(name: str, env: Mapping[str, str], **options: Any) -> AnthropicModel:
    """Anthropic's Messages connector for ``name``: its key from ``ANTHROPIC_API_KEY``
    (unset is an AuthenticationError naming it), its endpoint ``ANTHROPIC_BASE_URL``."""
    key = env.get("ANTHROPIC_API_KEY")
    if not key:
        raise AuthenticationError(f"model {name!r} needs ANTHROPIC_API_KEY in the environment")
    return AnthropicModel(name, base_url=env.get("ANTHROPIC_BASE_URL", _ANTHROPIC_API), api_key=key, **options)


def resolve_model(name: str, *, env: Mapping[str, str] | None = None, base_urls: Mapping[str, str] | None = None,
                  **options: Any) -> Any:
    """The connector for model ``name`` (see the module for the rules and variables);
    ``options`` (a timeout, a retry policy...) go to it."""
    env = os.environ if env is None else env
    if base_urls and name in base_urls:
        return OpenAIModel(name, base_url=base_urls[name], api_key=env.get("OPENAI_API_KEY"), **options)
    registered = registered_by_user(name)
    if registered is not None:
        return instance_of(registered, name)
    if name.startswith(("gemini-", "models/gemini-")) or name.startswith("projects/"):
        if uses_vertex_ai(env) or name.startswith("projects/"):
            return vertex_gemini(name, env, **options)
        return gemini_connector(name, env, **options)
    if name.startswith("claude-"):
        return anthropic_connector(name, env, **options)
    if name.startswith("openai/"):
        base_url = env.get("OPENAI_BASE_URL")
        key = env.get("OPENAI_API_KEY")
        if not key and not base_url:
            raise AuthenticationError(f"model {name!r} needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)")
        return OpenAIModel(name.removeprefix("openai/"), base_url=base_url or "https://api.openai.com/v1", api_key=key,
                           **options)
    if _LLM_CLASSES.fullmatch(name):  # google-adk's OpenAILlm (gpt-*, o1-*...) and Gemma (gemma-3...)
        return instance_of(LLMRegistry.resolve(name), name)
    if any(re.fullmatch(regex, name) for regex in LITE_LLM_MODELS):
        try:  # google-adk's LiteLlm (groq/..., anthropic/..., ollama_chat/...), with the litellm extra
            return instance_of(LLMRegistry.resolve(name), name)
        except ValueError as exc:
            raise ModelError(str(exc), error_type="unknown_model") from None
    raise ModelError(f"no provider for model {name!r}: use gemini-*, claude-*, openai/<model>, or configure a "
                     f"base URL for it", error_type="unknown_model")
