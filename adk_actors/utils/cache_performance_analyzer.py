"""google-adk's ``google.adk.utils.cache_performance_analyzer``: how well an agent's
context cache served it, read from a session's events (their ``cache_metadata`` and
``usage_metadata``, which this project's model calls record as google-adk's do)."""

from __future__ import annotations

from typing import Any

from .feature_decorator import experimental

__all__ = ["CachePerformanceAnalyzer"]


@experimental
class CachePerformanceAnalyzer:
    """Reads sessions through ``session_service`` (any session service: its
    ``get_session``) and reports an agent's context-cache use."""

    def __init__(self, session_service: Any) -> None:
        self.session_service = session_service

    async def _session(self, session_id: str, user_id: str, app_name: str) -> Any:
        session = await self.session_service.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
        if session is None:
            raise ValueError(f"no session {session_id!r} for app {app_name!r}, user {user_id!r}")
        return session

    async def _get_agent_cache_history(self, session_id: str, user_id: str, app_name: str,
                                       agent_name: str | None = None) -> list[Any]:
        """The cache metadata of the session's events (of ``agent_name``'s only, when
        given), oldest first; a ValueError when there is no such session."""
        session = await self._session(session_id, user_id, app_name)
        return [event.cache_metadata for event in session.events
                if event.cache_metadata is not None and (agent_name is None or event.author == agent_name)]

    async def analyze_agent_cache_performance(self, session_id: str, user_id: str, app_name: str,
                                              agent_name: str) -> dict[str, Any]:
        """``{"status": "no_cache_data"}`` when none of ``agent_name``'s events names a
        cache (a ValueError when there is no such session). Otherwise ``status``
        ``active`` with: ``requests_with_cache`` (its events naming a cache),
        ``latest_cache`` (the last one's name), ``cache_refreshes`` (distinct cache
        names), ``total_invocations`` and ``avg_invocations_used`` (per cache, the
        highest ``invocations_used`` it reported, summed and averaged over caches);
        and over its events with usage (``total_requests``): ``total_prompt_tokens``,
        ``total_cached_tokens``, ``requests_with_cache_hits`` (cached tokens above
        zero), ``cache_hit_ratio_percent`` (cached of prompt tokens),
        ``cache_utilization_ratio_percent`` (requests with hits of all requests) and
        ``avg_cached_tokens_per_request``; a ratio of nothing is 0.0."""
        history = await self._get_agent_cache_history(session_id, user_id, app_name, agent_name)
        if not history:
            return {"status": "no_cache_data"}
        session = await self._session(session_id, user_id, app_name)
        prompt = cached = hits = requests = 0
        for event in session.events:
            usage = event.usage_metadata
            if event.author != agent_name or not usage:
                continue
            requests += 1
            prompt += usage.prompt_token_count or 0
            if usage.cached_content_token_count:
                cached += usage.cached_content_token_count
                hits += 1
        uses: dict[str, int] = {}  # each report is the cache's running count: its highest is its total
        for cache in history:
            if cache.cache_name is not None and cache.invocations_used is not None:
                uses[cache.cache_name] = max(uses.get(cache.cache_name, 0), cache.invocations_used)
        return {
            "status": "active",
            "requests_with_cache": len(history),
            "avg_invocations_used": sum(uses.values()) / len(uses) if uses else 0,
            "latest_cache": history[-1].cache_name,
            "cache_refreshes": len({cache.cache_name for cache in history if cache.cache_name is not None}),
            "total_invocations": sum(uses.values()),
            "total_prompt_tokens": prompt,
            "total_cached_tokens": cached,
            "cache_hit_ratio_percent": cached / prompt * 100 if prompt > 0 else 0.0,
            "cache_utilization_ratio_percent": hits / requests * 100 if requests > 0 else 0.0,
            "avg_cached_tokens_per_request": cached / requests if requests > 0 else 0.0,
            "total_requests": requests,
            "requests_with_cache_hits": hits,
        }
