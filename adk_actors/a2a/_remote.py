"""Where :class:`RemoteA2aAgent` was first: it lives at google-adk's path now,
:mod:`adk_actors.agents.remote_a2a_agent` (with the other agent definitions); named
here for the code that imports it from this module."""

from __future__ import annotations

from ..agents.remote_a2a_agent import A2A_METADATA_PREFIX, DEFAULT_TIMEOUT, RemoteA2aAgent

__all__ = ["A2A_METADATA_PREFIX", "DEFAULT_TIMEOUT", "RemoteA2aAgent"]
