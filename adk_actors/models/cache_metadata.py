"""google-adk's import path of ``CacheMetadata`` (``google.adk.models.cache_metadata``)."""

from .._cache_types import CacheMetadata

__all__ = ["CacheMetadata"]
