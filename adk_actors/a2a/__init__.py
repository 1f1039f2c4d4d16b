"""A2A (protocol 1.0, on the official a2a-sdk): every app of a host served as an A2A
agent. ``pip install 'adk-actors[a2a]'``.

* :func:`agent_card`: an app's agent card, made from its agent tree;
* :class:`RunnerExecutor`: a2a-sdk's ``AgentExecutor`` that runs A2A tasks as the
  runs of an app's Runner (the HTTP front door serves it at ``/a2a/{app}``);
* :class:`RemoteA2aAgent`: any A2A agent as a sub-agent (or, in ``AgentTool``, a tool),
  made as google-adk's (``agent_card``: a card, its URL or its file) or from ``card_url``;
  :class:`AgentCardResolutionError` when its card cannot be had;
* at google-adk's paths, an agent served over A2A in its own process:
  ``adk_actors.a2a.utils`` (``to_a2a``, ``AgentCardBuilder``) and
  ``adk_actors.a2a.executor`` (``A2aAgentExecutor``, ``A2aAgentExecutorConfig``,
  ``ExecuteInterceptor``), on :class:`RunnerExecutor`.
"""

from ..agents.remote_a2a_agent import A2AClientError, AgentCardResolutionError, RemoteA2aAgent
from ._card import agent_card
from ._executor import RunnerExecutor
from ._parts import a2a_parts, content_of

__all__ = ["A2AClientError", "AgentCardResolutionError", "RemoteA2aAgent", "RunnerExecutor", "a2a_parts",
           "agent_card", "content_of"]
