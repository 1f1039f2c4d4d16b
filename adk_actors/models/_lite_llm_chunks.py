"""google-adk's ``lite_llm`` stream-piece classes, for code that imports them.

In google-adk, ``LiteLlm`` splits each answer litellm gives into these pieces before
it builds its responses: a text piece (:class:`TextChunk`), a tool-call piece
(:class:`FunctionChunk`: the call's id, name, a piece of its JSON arguments, its index
among parallel calls and, when Gemini signed it, its thought signature), the
reasoning parts (:class:`ReasoningChunk`) and the token counts
(:class:`UsageMetadataChunk`). No callback is given them there; our ``LiteLlm`` reads
litellm's answers directly (``_lite_llm``), so here they are the data classes alone,
with google-adk's fields, defaults and validation (pydantic), ``ReasoningChunk``'s parts
being our :class:`Part`. :class:`ChatCompletionFileUrlObject` is the ``file`` entry of
a Chat Completions content block (``file_data``, ``file_id``, ``format``), as a
TypedDict.
"""

from __future__ import annotations

from typing import TypedDict

from pydantic import BaseModel

from .._types import Part

__all__ = ["ChatCompletionFileUrlObject", "FunctionChunk", "ReasoningChunk", "TextChunk", "UsageMetadataChunk"]


class ChatCompletionFileUrlObject(TypedDict, total=False):
    """A Chat Completions ``file`` block's body: inline data, a file id, its format."""

    file_data: str
    file_id: str
    format: str


class FunctionChunk(BaseModel):
    """A piece of a tool call: ``id``, ``name`` and ``args`` (a piece of the JSON
    arguments) must be given, each may be None; ``index`` places it among parallel
    calls (0 unless given); ``thought_signature`` is Gemini's, on the calls it signs."""

    id: str | None
    name: str | None
    args: str | None
    index: int | None = 0
    thought_signature: bytes | None = None


class TextChunk(BaseModel):
    """A piece of the answer's text."""

    text: str


class ReasoningChunk(BaseModel):
    """The model's reasoning, as thought parts."""

    parts: list[Part]


class UsageMetadataChunk(BaseModel):
    """The answer's token counts: prompt, completion and total must be given; the
    cached prompt and reasoning tokens are 0 unless given; the tokens written to a
    prompt cache are None unless the provider says."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cached_prompt_tokens: int = 0
    reasoning_tokens: int = 0
    cache_creation_tokens: int | None = None
