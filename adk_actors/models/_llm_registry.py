"""google-adk's model base class and registry: ``BaseLlm`` and ``LLMRegistry``.

A ``BaseLlm`` is a pydantic model with a ``model`` name; a subclass answers in
``generate_content_async(llm_request, stream=False)``, an async generator of
LlmResponses (google-adk's contract: one final response, or partial ones and then
the final one), and lists the names it serves as regexes in ``supported_models()``.
The engine calls it through :meth:`BaseLlm.generate` (our model protocol) after
:meth:`BaseLlm.connector`: the provider classes (``Gemini``, ``Claude``) give their
HTTP connector there, so that they run behind our breaker and retries.

``LLMRegistry`` maps those regexes to classes, in the order they were registered;
registering a regex again replaces its class. The built-in classes are entered
by import path (their module is loaded when a name first resolves to one).
``resolve(name)`` is the class, ``new_llm(name)`` an instance; a
``"prefix:model"`` name picks the class whose name is the prefix (``"gemini:x"``,
``"claude:x"``, with or without its ``Llm`` ending). A name nothing matches is a
``ValueError`` saying which names resolve.
"""

from __future__ import annotations

import importlib
import logging
import re
from abc import abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from .._types import LlmRequest, LlmResponse, fields_of_foreign
from ._errors import MalformedResponse

__all__ = ["LITE_LLM_MODELS", "BaseLlm", "LLMRegistry", "instance_of", "registered_by_user"]

_log = logging.getLogger(__name__)

_PROVIDERS = "adk_actors.models._providers"

#: the names google-adk's ``LiteLlm`` serves (its provider prefixes), in its order
LITE_LLM_MODELS = (r"openai/.*", r"azure/.*", r"azure_ai/.*", r"groq/.*", r"anthropic/.*", r"bedrock/.*",
                   r"ollama/(?!gemma3).*", r"ollama_chat/.*", r"together_ai/.*", r"vertex_ai/.*", r"mistral/.*",
                   r"deepseek/.*", r"fireworks_ai/.*", r"cohere/.*", r"databricks/.*", r"ai21/.*")

#: regex -> the class, or (module, class name) for a built-in not loaded yet
_entries: dict[str, type[BaseLlm] | tuple[str, str]] = {}
#: the regexes a program registered itself (they come before the built-ins in resolve_model)
_registered_by_user: set[str] = set()


class BaseLlm(BaseModel):
    """A model by google-adk's contract (see the module). Unknown fields are refused."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    model: str

    @property
    def name(self) -> str:
        """The model's name (our model protocol's ``name``): ``model``."""
        return self.model

    @classmethod
    def supported_models(cls) -> list[str]:
        """The regexes of the model names this class serves (none by default)."""
        return []

    @abstractmethod
    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        """One model turn: a final response, or partial ones then the final one."""
        raise NotImplementedError(f"{type(self).__name__} does not generate content for {self.model!r}")
        yield  # an async generator

    def connector(self) -> Any:
        """What the engine calls: this model itself; the provider classes give their
        HTTP connector (so that the breaker guards it)."""
        return self

    async def generate(self, request: LlmRequest, *, stream: bool = False) -> AsyncIterator[LlmResponse]:
        """Our model protocol over :meth:`generate_content_async`: each response it
        yields, as ours (a google-adk or google.genai-shaped one is read field by
        field). One that does not read as an LlmResponse is a MalformedResponse."""
        async for response in self.generate_content_async(request, stream):
            if isinstance(response, LlmResponse):
                yield response
                continue
            try:
                yield LlmResponse.model_validate(fields_of_foreign(LlmResponse, response))
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(step) for step in first["loc"]) or "value"
                raise MalformedResponse(f"{type(self).__name__} yielded a {type(response).__name__} that is not an "
                                        f"LlmResponse: {where}: {first['msg']}") from None


def _matches_prefix(prefix: str, class_name: str) -> bool:
    prefix, lowered = prefix.lower(), class_name.lower()
    return prefix in (lowered, lowered.removesuffix("llm"))


def _class_name(entry: type[BaseLlm] | tuple[str, str]) -> str:
    return entry[1] if isinstance(entry, tuple) else entry.__name__


def _load(regex: str, entry: type[BaseLlm] | tuple[str, str]) -> type[BaseLlm] | None:
    """The class of an entry, loading a built-in's module (kept from then on); None
    when the class says it cannot serve here (``available()`` false: a missing extra)."""
    if isinstance(entry, tuple):
        loaded: type[BaseLlm] = getattr(importlib.import_module(entry[0]), entry[1])
        _entries[regex] = entry = loaded
    available = getattr(entry, "available", None)
    if callable(available) and not available():
        return None
    return entry


class LLMRegistry:
    """google-adk's registry of model classes by name regex (see the module)."""

    @staticmethod
    def register(llm_cls: type[BaseLlm]) -> None:
        """Enter ``llm_cls`` for each regex of its ``supported_models()``, replacing the
        class a regex had. A class that is not a BaseLlm subclass is a TypeError."""
        if not (isinstance(llm_cls, type) and issubclass(llm_cls, BaseLlm)):
            raise TypeError(f"LLMRegistry.register takes a BaseLlm subclass, not {llm_cls!r}")
        for regex in llm_cls.supported_models():
            re.compile(regex)  # a bad regex fails here, not at the first resolution
            if regex in _entries:
                _log.info("model regex %r: %s replaces %s", regex, llm_cls.__name__, _class_name(_entries[regex]))
            _entries[regex] = llm_cls
            _registered_by_user.add(regex)

    @staticmethod
    def resolve(model: str) -> type[BaseLlm]:
        """The class for ``model``: by its ``prefix:`` if it has one, else the first
        regex (in registration order) that matches the whole name. None matching is a
        ValueError naming what resolves."""
        prefix, _, _ = model.partition(":") if ":" in model else ("", "", model)
        if prefix:
            for regex, entry in list(_entries.items()):
                if _matches_prefix(prefix, _class_name(entry)):
                    found = _load(regex, entry)
                    if found is not None:
                        return found
        for regex, entry in list(_entries.items()):
            if re.fullmatch(regex, model):
                found = _load(regex, entry)
                if found is not None:
                    return found
        raise ValueError(_not_found(model))

    @staticmethod
    def new_llm(model: str) -> BaseLlm:
        """An instance of :meth:`resolve`'s class for ``model`` (without a ``prefix:``
        that named the class)."""
        return instance_of(LLMRegistry.resolve(model), model)


def instance_of(cls: type[BaseLlm], model: str) -> BaseLlm:
    """``cls`` for ``model``, without the ``prefix:`` that named ``cls``."""
    prefix, _, rest = model.partition(":")
    return cls(model=rest if rest and _matches_prefix(prefix, cls.__name__) else model)


def registered_by_user(model: str) -> type[BaseLlm] | None:
    """The class a program registered itself for ``model`` (by prefix or regex), or
    None: what :func:`~adk_actors.models.resolve_model` tries before its built-in rules."""
    prefix, _, rest = model.partition(":")
    for regex in list(_registered_by_user):
        entry = _entries.get(regex)
        if isinstance(entry, type) and ((rest and _matches_prefix(prefix, entry.__name__))
                                        or re.fullmatch(regex, model)):
            return entry
    return None


def _not_found(model: str) -> str:
    text = f"Model {model} not found."
    if "/" in model:
        return text + ("\n\nA provider/model name is google-adk's LiteLlm, which needs litellm: "
                       "pip install 'adk-actors[litellm]' (or register a BaseLlm subclass for it with "
                       "LLMRegistry.register).")
    return text + ("\n\nNames that resolve: gemini-* (Gemini), claude-* (Claude), the names a registered BaseLlm "
                   "subclass lists in supported_models(), or 'Class:model'.")


for _regexes, _name in (([r"gemini-.*", r"gemma-4.*", r"model-optimizer-.*",
                          r"projects\/.+\/locations\/.+\/endpoints\/.+",
                          r"projects\/.+\/locations\/.+\/publishers\/google\/models\/gemini.+"], "Gemini"),
                        ([r"claude-.*"], "Claude")):
    for _regex in _regexes:
        _entries[_regex] = (_PROVIDERS, _name)
for _regex in LITE_LLM_MODELS:
    _entries[_regex] = ("adk_actors.models._lite_llm", "LiteLlm")
_entries[r"gemma-.*"] = ("adk_actors.models._gemma", "Gemma")  # Gemma 3 (after Gemini's gemma-4.*, as google-adk)
_entries[r"apigee\/.*"] = ("adk_actors.models._apigee", "ApigeeLlm")
_entries[r"ollama/gemma3.*"] = ("adk_actors.models._gemma_ollama", "Gemma3Ollama")  # the litellm extra
for _regex in (r"gpt-.*", r"o\d+-.*"):
    _entries[_regex] = ("adk_actors.models._openai_llm", "OpenAILlm")
