"""google-adk's ``google.adk.a2a.agent`` names that are here: :class:`RemoteA2aAgent`
and its errors (google-adk's ``A2aRemoteAgentConfig``, interceptors and converters are
not: see :mod:`adk_actors.agents.remote_a2a_agent`)."""

from __future__ import annotations

from ..agents.remote_a2a_agent import A2AClientError, AgentCardResolutionError, RemoteA2aAgent

__all__ = ["A2AClientError", "AgentCardResolutionError", "RemoteA2aAgent"]
