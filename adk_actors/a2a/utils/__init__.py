"""google-adk's ``a2a.utils``: :func:`~.agent_to_a2a.to_a2a` (an agent served over
A2A as an ASGI app) and :class:`~.agent_card_builder.AgentCardBuilder` (its card)."""

from .agent_card_builder import AgentCardBuilder
from .agent_to_a2a import to_a2a

__all__ = ["AgentCardBuilder", "to_a2a"]
