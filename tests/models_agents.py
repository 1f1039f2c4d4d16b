"""Agents given google-adk's model classes, for a host's run workers
(tests/test_google_adk_models.py): the worker imports this module by its path."""

from adk_actors import types
from adk_actors.agents import LlmAgent
from adk_actors.models import Gemini

#: a Gemini instance that tries once: each failure reaches the host's breaker at once
gemini_agent = LlmAgent(name="gemini_instance", instruction="Answer briefly.",
                        model=Gemini(model="gemini-2.5-flash", retry_options=types.HttpRetryOptions(attempts=1)))
