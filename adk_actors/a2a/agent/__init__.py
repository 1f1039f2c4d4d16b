"""google-adk's ``google.adk.a2a.agent`` names that are here (needs a2a-sdk,
``pip install 'adk-actors[a2a]'``): :class:`RemoteA2aAgent` and its errors
(:mod:`adk_actors.agents.remote_a2a_agent`), and its configuration
(``RemoteA2aAgent(..., config=A2aRemoteAgentConfig(...))``: :mod:`.config`). The steps
that apply a configuration are at :mod:`.utils`. google-adk's A2A converters are not
here: this agent converts A2A responses itself."""

from __future__ import annotations

from ...agents.remote_a2a_agent import A2AClientError, AgentCardResolutionError, RemoteA2aAgent
from .config import (
    A2aCardRequestConfig,
    A2aRemoteAgentConfig,
    CardRequestInterceptor,
    ParametersConfig,
    RequestInterceptor,
)

__all__ = ["A2AClientError", "A2aCardRequestConfig", "A2aRemoteAgentConfig", "AgentCardResolutionError",
           "CardRequestInterceptor", "ParametersConfig", "RemoteA2aAgent", "RequestInterceptor"]
