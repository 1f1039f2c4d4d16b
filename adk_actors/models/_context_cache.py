"""Context caching on the wire, as google-adk 2.13 does it.

Gemini (:class:`GeminiContextCache`): for a request with ``cache_config``, in order:
1. the cacheable prefix is the system instruction, the tools, the tool config and the
   contents before the last run of user turns;
2. an active cache from the last call (``cache_metadata``) is reused while it has not
   expired, has served at most ``cache_intervals`` invocations and its fingerprint
   still matches the prefix; the request then names it in ``cachedContent`` and drops
   what the cache holds (system instruction, tools, tool config and the cached
   contents, always keeping the last content);
3. otherwise a stale cache is deleted (``DELETE .../cachedContents/...``; a failure
   is logged) and, when the last call's fingerprint still matches, a new cache is made
   with ``POST .../cachedContents`` -- only once the previous request's prompt tokens
   are known, reach ``min_tokens`` and (estimated for the prefix) Gemini's minimum for
   the model (2048 tokens for gemini-2.5-*, 4096 for gemini-3*); a create that fails
   is logged and the call goes on uncached;
4. the call's responses carry the :class:`CacheMetadata` (active, or the fingerprint
   a later call compares with).

Claude (:func:`anthropic_breakpoints`): ``cache_control`` on the last tool, on the
system instruction (then a text block) and on the last cacheable block of the
messages; ``ttl: "1h"`` when the config's lifetime is an hour or more.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import logging
import time
from typing import Any

import httpx

from .._cache_types import CacheMetadata, ContextCacheConfig
from .._types import LlmRequest

__all__ = ["GeminiContextCache", "anthropic_breakpoints", "minimum_cache_tokens"]

_log = logging.getLogger("adk_actors.models.context_cache")
_UNCACHEABLE_BLOCKS = {"thinking", "redacted_thinking"}


def minimum_cache_tokens(model: str) -> int | None:
    """Gemini's floor for an explicit cache of this model (None when not known)."""
    name = model.rsplit("/", 1)[-1]
    if name.startswith("gemini-2.5-"):
        return 2048
    if name.startswith("gemini-3"):
        return 4096
    return None


def _prefix_count(contents: list[dict[str, Any]]) -> int:
    """How many contents come before the last unbroken run of user turns."""
    start = len(contents)
    for i in range(len(contents) - 1, -1, -1):
        if contents[i].get("role") != "user":
            break
        start = i
    return start


def _estimate(body: dict[str, Any], count: int | None = None) -> int:
    """A rough token count (characters / 4) of the system instruction, the tools and
    the texts of the first ``count`` contents (all when None)."""
    chars = sum(len(p.get("text") or "") for p in (body.get("systemInstruction") or {}).get("parts", []))
    chars += sum(len(json.dumps(t)) for t in body.get("tools") or [])
    contents = body.get("contents") or []
    for content in contents if count is None else contents[:count]:
        chars += sum(len(p.get("text") or "") for p in content.get("parts") or [])
    return chars // 4


def _expire_time(text: Any, fallback: float) -> float:
    """An RFC 3339 ``expireTime`` as a Unix time; ``fallback`` when absent or unreadable."""
    if not isinstance(text, str):
        return fallback
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return fallback


class GeminiContextCache:
    """One Gemini call's caching (see the module's text). ``client`` is the model's
    pooled HTTP client; ``scope`` names the backend that owns the caches (it enters
    the fingerprint, so a cache is never reused across backends)."""

    def __init__(self, client: httpx.AsyncClient, *, collection_url: str, resource_base: str, model: str,
                 headers: dict[str, str], scope: dict[str, Any]) -> None:
        self.client = client
        self.collection_url = collection_url  # POST here to create
        self.resource_base = resource_base  # + "/" + cache name to delete
        self.model = model
        self.headers = headers
        self.scope = scope

    def fingerprint(self, body: dict[str, Any], count: int) -> str:
        data: dict[str, Any] = {"model": self.model, "cache_scope": self.scope}
        for key in ("systemInstruction", "tools", "toolConfig"):
            if body.get(key):
                data[key] = body[key]
        if count > 0:
            data["cached_contents"] = (body.get("contents") or [])[:count]
        text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    async def apply(self, request: LlmRequest, body: dict[str, Any]) -> tuple[dict[str, Any], CacheMetadata]:
        """The body to send and the metadata the call's responses carry."""
        config = request.cache_config
        assert config is not None
        contents = body.get("contents") or []
        old = request.cache_metadata
        if old is not None:
            if self._valid(old, config, body):
                assert old.cache_name is not None
                return self._use(body, old.cache_name, old.contents_count), old
            if old.cache_name is not None:
                await self._delete(old.cache_name)
            if self.fingerprint(body, old.contents_count) == old.fingerprint:
                count = max(old.contents_count, _prefix_count(contents))
                made = await self._create(request, body, count, config)
                if made is not None:
                    assert made.cache_name is not None
                    return self._use(body, made.cache_name, count), made
                return body, CacheMetadata(fingerprint=self.fingerprint(body, count), contents_count=count)
        count = _prefix_count(contents)
        return body, CacheMetadata(fingerprint=self.fingerprint(body, count), contents_count=count)

    def _valid(self, old: CacheMetadata, config: ContextCacheConfig, body: dict[str, Any]) -> bool:
        if old.cache_name is None or old.expire_time is None or old.invocations_used is None:
            return False
        if time.time() >= old.expire_time or old.invocations_used > config.cache_intervals:
            return False
        return self.fingerprint(body, old.contents_count) == old.fingerprint

    @staticmethod
    def _use(body: dict[str, Any], name: str, count: int) -> dict[str, Any]:
        contents = body.get("contents") or []
        out = {k: v for k, v in body.items() if k not in ("systemInstruction", "tools", "toolConfig")}
        out["cachedContent"] = name
        out["contents"] = contents[min(count, max(len(contents) - 1, 0)):]
        return out

    async def _create(self, request: LlmRequest, body: dict[str, Any], count: int,
                      config: ContextCacheConfig) -> CacheMetadata | None:
        previous = request.cacheable_contents_token_count
        if previous is None or previous < config.min_tokens:
            return None
        floor = minimum_cache_tokens(self.model)
        if floor is not None:
            whole = _estimate(body)
            prefix = int(previous * min(1.0, _estimate(body, count) / whole)) if whole > 0 else previous
            if prefix < floor:
                return None
        payload: dict[str, Any] = {"model": self.model}
        if count:
            payload["contents"] = (body.get("contents") or [])[:count]
        for key in ("systemInstruction", "tools", "toolConfig"):
            if body.get(key):
                payload[key] = body[key]
        payload["ttl"] = config.ttl_string
        payload["displayName"] = f"adk-cache-{int(time.time())}-{count}contents"
        timeout = getattr(config.create_http_options, "timeout", None)
        try:
            response = await self.client.post(self.collection_url, json=payload, headers=self.headers,
                                              timeout=timeout / 1000 if timeout else httpx.USE_CLIENT_DEFAULT)
            response.raise_for_status()
            made = response.json()
            name = made["name"]
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            _log.warning("Gemini cache creation failed, the call goes on uncached: %s", exc)
            return None
        created = time.time()
        return CacheMetadata(cache_name=str(name), fingerprint=self.fingerprint(body, count), contents_count=count,
                             expire_time=_expire_time(made.get("expireTime"), created + config.ttl_seconds),
                             invocations_used=1, created_at=created)

    async def _delete(self, name: str) -> None:
        try:
            response = await self.client.delete(f"{self.resource_base}/{name}", headers=self.headers)
            response.raise_for_status()
        except httpx.HTTPError as exc:
            _log.warning("deleting Gemini cache %s failed: %s", name, exc)


def anthropic_breakpoints(body: dict[str, Any], request: LlmRequest) -> None:
    """Put Claude's ``cache_control`` breakpoints into a Messages body, in place, when
    the request has a cache config and the last prompt reached ``min_tokens``."""
    config = request.cache_config
    if config is None:
        return
    previous = request.cacheable_contents_token_count
    if previous is not None and previous < config.min_tokens:
        return
    mark: dict[str, Any] = {"type": "ephemeral", **({"ttl": "1h"} if config.ttl_seconds >= 3600 else {})}
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        tools[-1]["cache_control"] = dict(mark)
    for message in reversed(body.get("messages") or []):
        blocks = message.get("content")
        if not isinstance(blocks, list):
            continue
        marked = False
        for block in reversed(blocks):
            if isinstance(block, dict) and block.get("type") not in _UNCACHEABLE_BLOCKS:
                block["cache_control"] = dict(mark)
                marked = True
                break
        if marked:
            break
    system = body.get("system")
    if isinstance(system, str):
        body["system"] = [{"type": "text", "text": system, "cache_control": dict(mark)}]
