"""google-adk's import path of ``ContextCacheConfig``
(``from google.adk.agents.context_cache_config import ContextCacheConfig``)."""

from .._cache_types import ContextCacheConfig

__all__ = ["ContextCacheConfig"]
