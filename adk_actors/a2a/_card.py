"""An app's A2A agent card (protocol 1.0), made from its agent tree.

The card names the app's root agent and says what it does; its skills are the
agents of the tree (root first, then each sub-agent) and the tools each one can
call, so an A2A client (or a router model choosing a remote agent) sees what the
app can do without asking. One interface: JSON-RPC at the app's A2A URL.

:func:`card` is the card's frame, shared with google-adk's ``AgentCardBuilder``
(:mod:`adk_actors.a2a.utils.agent_card_builder`, which names its skills by
google-adk's rules); :func:`named_tool` is how both see a tool given as a function.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

from .. import __version__
from ..tools import FunctionTool

__all__ = ["agent_card", "card", "named_tool"]

#: What a task takes and gives: text, and files inline (as raw bytes).
MODES = ["text/plain", "application/octet-stream"]


def agent_card(app: str, root_agent: Any, url: str) -> AgentCard:
    """The card of ``app`` (whose root agent is ``root_agent``) served at ``url``.
    A broken app (``root_agent`` None) still gets a card, with no skills: its runs
    say what is wrong."""
    name = getattr(root_agent, "name", app)
    description = getattr(root_agent, "description", "") or f"The {app} agent of an adk-actors host."
    return card(name=name, description=description, version=__version__, url=url,
                capabilities=AgentCapabilities(streaming=True), modes=MODES,
                skills=list(_skills(root_agent)) if root_agent is not None else [])


def card(*, name: str, description: str, version: str, url: str, capabilities: AgentCapabilities,
         modes: Sequence[str], skills: Sequence[AgentSkill], **more: Any) -> AgentCard:
    """A card of one interface, JSON-RPC (protocol 1.0) at ``url``, taking and giving
    ``modes``; ``more``: other fields of the card (provider, security schemes...)."""
    return AgentCard(
        name=name, description=description, version=version,
        supported_interfaces=[AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=capabilities, default_input_modes=list(modes), default_output_modes=list(modes),
        skills=list(skills), **more)


def named_tool(tool: Any) -> Any:
    """The tool as an agent calls it: a plain function as its FunctionTool (named and
    described by its signature and docstring), anything else as it is."""
    return FunctionTool(tool) if callable(tool) and not hasattr(tool, "name") else tool


def _skills(agent: Any) -> Iterator[AgentSkill]:
    """A skill per agent of the tree and per tool it can call, depth first."""
    yield AgentSkill(id=agent.name, name=agent.name, tags=["agent"],
                     description=getattr(agent, "description", "") or f"the {agent.name} agent")
    for tool in getattr(agent, "tools", ()) or ():
        named = named_tool(tool)
        tool_name = getattr(named, "name", None)
        if tool_name:
            yield AgentSkill(id=f"{agent.name}.{tool_name}", name=tool_name, tags=["tool"],
                             description=getattr(named, "description", "") or tool_name)
    for child in getattr(agent, "sub_agents", ()) or ():
        yield from _skills(child)
