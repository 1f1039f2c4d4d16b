"""google-adk's ``google.adk.a2a.agent.config``: the configuration of a
:class:`~adk_actors.a2a.agent.RemoteA2aAgent`, given as its ``config``. What each field
does, and what is refused, is told in :mod:`adk_actors.agents._a2a_config` (where the
classes live, beside the agent that applies them)."""

from __future__ import annotations

from ...agents._a2a_config import (
    A2aCardRequestConfig,
    A2aRemoteAgentConfig,
    CardRequestInterceptor,
    InterceptorError,
    ParametersConfig,
    RequestInterceptor,
)

__all__ = ["A2aCardRequestConfig", "A2aRemoteAgentConfig", "CardRequestInterceptor", "InterceptorError",
           "ParametersConfig", "RequestInterceptor"]
