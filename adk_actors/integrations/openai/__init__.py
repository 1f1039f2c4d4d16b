"""google-adk's ``google.adk.integrations.openai``: ``OpenAILlm`` (Chat Completions,
``adk_actors.models._openai_llm``), ``OpenAIResponsesLlm`` and
``AzureOpenAIResponsesLlm`` (the Responses API) and ``OpenAIGenerateContentConfig``
(reasoning effort), all on our HTTP connectors (no openai SDK). They are loaded on
first use (PEP 562), as google-adk loads them: importing this package loads no
connector.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...models._openai_llm import OpenAILlm
    from ...models._openai_responses_llm import (
        AzureOpenAIResponsesLlm,
        OpenAIGenerateContentConfig,
        OpenAIResponsesLlm,
    )

_LAZY = {"AzureOpenAIResponsesLlm": "adk_actors.models._openai_responses_llm",
         "OpenAIGenerateContentConfig": "adk_actors.models._openai_responses_llm",
         "OpenAILlm": "adk_actors.models._openai_llm",
         "OpenAIResponsesLlm": "adk_actors.models._openai_responses_llm"}

__all__ = ["AzureOpenAIResponsesLlm", "OpenAIGenerateContentConfig", "OpenAILlm", "OpenAIResponsesLlm"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)
