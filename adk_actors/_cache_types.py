"""Context caching's settings and state (google-adk's ``ContextCacheConfig`` and
``CacheMetadata``, same fields, defaults and bounds).

``ContextCacheConfig`` on an App turns caching on for its agents' model calls:
Gemini caches the request's prefix (system instruction, tools, early contents) as a
``cachedContents`` resource and names it in later requests; Claude gets
``cache_control`` breakpoints. ``CacheMetadata`` is what a Gemini call says of the
cache it used (or, with no ``cache_name``, of the prefix it would cache), carried on
the response so the next call can reuse it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["CacheMetadata", "ContextCacheConfig", "cache_state"]


class ContextCacheConfig(BaseModel):
    """Caching for every LLM agent of an App (None: no caching).

    ``cache_intervals``: invocations one cache serves before it is made anew (1-100);
    ``ttl_seconds``: the cache's lifetime; ``min_tokens``: the previous request's prompt
    tokens needed before a cache is made; ``create_http_options``: google-genai's HTTP
    options for the create call (its ``timeout``, in ms, bounds it)."""

    model_config = ConfigDict(extra="forbid")

    cache_intervals: int = Field(default=10, ge=1, le=100)
    ttl_seconds: int = Field(default=1800, gt=0)
    min_tokens: int = Field(default=0, ge=0)
    create_http_options: Any = None

    @property
    def ttl_string(self) -> str:
        """The lifetime as Gemini takes it (``"1800s"``)."""
        return f"{self.ttl_seconds}s"


class CacheMetadata(BaseModel):
    """One cache's state: active (``cache_name``, ``expire_time`` and
    ``invocations_used`` set) or a fingerprint only (the prefix a later call may cache).
    ``fingerprint`` hashes the model, the system instruction, the tools and the first
    ``contents_count`` contents."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cache_name: str | None = None
    expire_time: float | None = None
    fingerprint: str
    invocations_used: int | None = Field(default=None, ge=0)
    contents_count: int = Field(ge=0)
    created_at: float | None = None

    @model_validator(mode="after")
    def _active_or_fingerprint(self) -> CacheMetadata:
        active = (self.cache_name, self.expire_time, self.invocations_used)
        if any(v is not None for v in active) and any(v is None for v in active):
            raise ValueError("an active cache needs cache_name, expire_time and invocations_used together")
        return self


def cache_state(events: Any, agent_name: str, invocation_id: str) -> tuple[CacheMetadata | None, int | None]:
    """What an agent's next model call starts from, read from the session's events
    newest first (google-adk's context-cache request processor): the latest cache
    metadata of that agent's events -- an active cache from an earlier invocation
    counts one more use -- and the latest prompt token count it was billed."""
    metadata: CacheMetadata | None = None
    tokens: int | None = None
    for event in reversed(list(events or ())):
        if getattr(event, "author", None) != agent_name:
            continue
        found = getattr(event, "cache_metadata", None)
        if metadata is None and found is not None:
            if event.invocation_id and event.invocation_id != invocation_id and found.cache_name is not None:
                metadata = found.model_copy(update={"invocations_used": (found.invocations_used or 0) + 1})
            else:
                metadata = found
        usage = getattr(event, "usage_metadata", None)
        if tokens is None and usage is not None and usage.prompt_token_count is not None:
            tokens = usage.prompt_token_count
        if metadata is not None and tokens is not None:
            break
    return metadata, tokens
