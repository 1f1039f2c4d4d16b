"""An app with context caching, for tests/test_context_cache.py's host test."""

from __future__ import annotations

from adk_actors.agents import LlmAgent
from adk_actors.agents.context_cache_config import ContextCacheConfig
from adk_actors.apps import App
from adk_actors.models import Gemini

cached_app = App(root_agent=LlmAgent(name="helper", instruction="You are a careful assistant. " * 400,
                                     model=Gemini(model="gemini-2.5-flash")),
                 context_cache_config=ContextCacheConfig(ttl_seconds=600))
