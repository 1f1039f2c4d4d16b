"""``Example``, ``BaseExampleProvider`` and the text the model is shown."""

from __future__ import annotations

import abc
import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from .._types import Content

__all__ = ["BaseExampleProvider", "Example", "examples_for", "examples_text"]

_INTRO = ("<EXAMPLES>\nBegin few-shot\nThe following are examples of user queries and model responses using the "
          "available tools.\n\n")
_END = "End few-shot\n<EXAMPLES>"


class Example(BaseModel):
    """One user query (``input``) and the contents that answer it (``output``).
    google.genai's Content objects are accepted and taken as ours."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: Content
    output: list[Content]


class BaseExampleProvider(abc.ABC):
    """Picks the examples for a query (the text of the turn's user message)."""

    @abc.abstractmethod
    def get_examples(self, query: str) -> list[Example]:
        """The examples to show the model for ``query``."""


def examples_for(examples: list[Example] | BaseExampleProvider, query: str) -> list[Example]:
    """An agent's examples for ``query``: the list as is, or what its provider picks
    (validated: a provider that returns something else raises pydantic's error)."""
    if isinstance(examples, BaseExampleProvider):
        return [Example.model_validate(e) if not isinstance(e, Example) else e for e in examples.get_examples(query)]
    return list(examples)


def _call_text(name: str, args: dict[str, Any]) -> str:
    rendered = ", ".join(f"{key}='{value}'" if isinstance(value, str) else f"{key}={value}"
                         for key, value in args.items())
    return f"{name}({rendered})"


def examples_text(examples: list[Example], model: str) -> str:
    """The examples as google-adk shows them to the model, in order: an intro, then
    per example ``EXAMPLE n:`` with the ``[user]`` query and each ``[model]`` (or
    ``[user]``) answer, tool calls as ``name(arg=value)`` in a code fence
    (``tool_code`` for models other than Gemini), tool results as JSON in a fence
    (``tool_outputs`` likewise; google-adk prints a Python object dump there)."""
    gemini = not model or "gemini-" in model
    call_fence, result_fence = ("```\n", "```\n") if gemini else ("```tool_code\n", "```tool_outputs\n")
    text = ""
    for number, example in enumerate(examples, start=1):
        text += f"EXAMPLE {number}:\nBegin example\n[user]\n"
        if example.input.parts:
            text += "\n".join(p.text for p in example.input.parts if p.text) + "\n"
        previous = None
        for content in example.output:
            role = "[model]\n" if content.role == "model" else "[user]\n"
            if role != previous:
                text += role
            previous = role
            for part in content.parts:
                if part.function_call is not None:
                    text += f"{call_fence}{_call_text(part.function_call.name, part.function_call.args)}\n```\n"
                elif part.function_response is not None:
                    result = json.dumps({"name": part.function_response.name,
                                         "response": part.function_response.response}, default=str)
                    text += f"{result_fence}{result}\n```\n"
                elif part.text:
                    text += f"{part.text}\n"
        text += "End example\n\n"
    return f"{_INTRO}{text}{_END}"
