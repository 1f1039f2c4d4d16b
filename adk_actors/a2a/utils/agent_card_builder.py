"""google-adk's ``AgentCardBuilder``: the A2A card (protocol 1.0) of an agent, named
and described by google-adk's rules, so that a client reads the same card from our
``to_a2a`` as from google-adk's.

``await AgentCardBuilder(agent=..., rpc_url=...).build()``, in order:

1. the agent's own skills: an LlmAgent's is ``id`` its name, ``name`` ``model``,
   tags ``llm``, examples the inputs of its ``ExampleTool`` (if any); then one skill per
   tool (``<agent>-<tool>``, tags ``llm``, ``tools``; the tools of a toolset are asked
   for; an ``ExampleTool`` is none), then ``<agent>-planner`` with a planner and
   ``<agent>-code-executor`` with a code executor. Any other agent (sequential,
   parallel, loop, graph workflow, custom) has one skill named ``workflow`` (or
   ``custom``) whose description tells its steps, and, with children,
   ``<agent>-sub-agents`` (``Orchestrates: <child>: <description>; ...``);
2. each direct child's own skills (by rule 1), renamed ``<child>_<id>`` and
   ``<child>: <name>`` and tagged ``sub_agent:<child>`` first; a child whose skills
   cannot be made is left out (logged);
3. the card: the agent's name, its description (else ``An ADK Agent``), version
   ``agent_version`` (``0.0.1``), one JSON-RPC interface at ``rpc_url`` (default
   ``http://localhost:80/a2a``; a trailing ``/`` dropped), ``capabilities``
   (streaming by default), text in and out, ``provider``, ``security_schemes``,
   ``doc_url`` as given. A skill's security is ``default_skill_security``, or a tool's
   own ``custom_metadata["security"]``; one naming a scheme the card does not declare
   is logged.

Any failure while building is a ``RuntimeError`` naming the agent. The builder
refuses, when made, no agent (``ValueError``), what is not an agent (``TypeError``)
and a ``default_skill_security`` not of the shape ``[{scheme: [scope, ...]}]``.
"""

from __future__ import annotations

import logging
from typing import Any, TypeGuard

from a2a.types import AgentCapabilities, AgentCard, AgentProvider, AgentSkill, SecurityScheme

from ...agents import BaseAgent, LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from ...tools import BaseTool, ExampleTool
from ...workflow import START, Workflow
from .._card import card, named_tool

__all__ = ["AgentCardBuilder"]

logger = logging.getLogger("adk_actors.a2a")

SkillSecurity = list[dict[str, list[str]]]


class AgentCardBuilder:
    """See the module."""

    def __init__(self, *, agent: Any, rpc_url: str | None = None, capabilities: AgentCapabilities | None = None,
                 doc_url: str | None = None, provider: AgentProvider | None = None,
                 agent_version: str | None = None, security_schemes: dict[str, SecurityScheme] | None = None,
                 default_skill_security: SkillSecurity | None = None) -> None:
        if not agent:
            raise ValueError("Agent cannot be None or empty.")
        if not isinstance(agent, BaseAgent):
            raise TypeError(f"AgentCardBuilder requires a BaseAgent or Workflow, got {type(agent).__name__}.")
        if default_skill_security is not None and not _is_security(default_skill_security):
            raise ValueError("default_skill_security must be a list[dict[str, list[str]]], got "
                             f"{default_skill_security!r}")
        self._agent = agent
        self._rpc_url = rpc_url or "http://localhost:80/a2a"
        self._capabilities = capabilities or AgentCapabilities(streaming=True)
        self._doc_url = doc_url
        self._provider = provider
        self._agent_version = agent_version or "0.0.1"
        self._security_schemes = security_schemes
        self._default_security = default_skill_security

    async def build(self) -> AgentCard:
        """The card (see the module)."""
        try:
            skills = await _own_skills(self._agent, self._default_security)
            skills += await _children_skills(self._agent, self._default_security)
            _check_security(skills, self._security_schemes or {})
            more: dict[str, Any] = {}
            if self._provider is not None:
                more["provider"] = self._provider
            if self._security_schemes:
                more["security_schemes"] = self._security_schemes
            if self._doc_url:
                more["documentation_url"] = self._doc_url
            return card(name=self._agent.name, description=self._agent.description or "An ADK Agent",
                        version=self._agent_version, url=self._rpc_url.rstrip("/"),
                        capabilities=self._capabilities, modes=["text/plain"], skills=skills, **more)
        except Exception as error:
            raise RuntimeError(f"Failed to build agent card for {self._agent.name}: {error}") from error


def _skill(id: str, name: str, description: str, tags: list[str], security: SkillSecurity | None,
           examples: list[str] | None = None, output_modes: list[str] | None = None) -> AgentSkill:
    skill = AgentSkill(id=id, name=name, description=description, tags=tags, examples=examples or [],
                       output_modes=output_modes or [])
    for requirement in security or []:
        schemes = skill.security_requirements.add().schemes
        for scheme, scopes in requirement.items():
            schemes[scheme].list.extend(scopes)
    return skill


def _security_of(skill: AgentSkill) -> SkillSecurity | None:
    found = [{name: list(scopes.list) for name, scopes in req.schemes.items()} for req in skill.security_requirements]
    return found or None


def _children(agent: Any) -> list[Any]:
    """The agent's direct children: its sub-agents, or a graph workflow's nodes."""
    if isinstance(agent, Workflow) and agent.graph is not None:
        return [node for node in agent.graph.nodes.values() if node is not START]
    return list(getattr(agent, "sub_agents", ()) or ())


async def _tools(agent: LlmAgent) -> list[Any]:
    """The agent's tools as it calls them: functions named, toolsets asked for theirs."""
    tools: list[Any] = []
    for tool in agent.tools or ():
        named = named_tool(tool)
        listing = getattr(named, "get_tools", None)
        if callable(listing) and not callable(getattr(named, "declaration", None)):
            tools.extend(await listing(None))
        else:
            tools.append(named)
    return tools


async def _own_skills(agent: Any, security: SkillSecurity | None) -> list[AgentSkill]:
    if not isinstance(agent, LlmAgent):
        kind = _kind(agent)
        skills = [_skill(agent.name, _skill_name(agent), _description(agent), [kind], security)]
        children = _children(agent)
        if children:
            steps = "; ".join(f"{child.name}: {child.description or 'No description'}" for child in children)
            skills.append(_skill(f"{agent.name}-sub-agents", "sub-agents", f"Orchestrates: {steps}",
                                 [kind, "orchestration"], security))
        return skills
    tools = await _tools(agent) if agent.tools else []
    config = agent.generate_content_config
    modes = [str(m) for m in getattr(config, "response_modalities", None) or []] if config else []
    skills = [_skill(agent.name, "model", _description(agent), ["llm"], security,
                     examples=_examples(agent), output_modes=modes)]
    for tool in tools:
        if isinstance(tool, ExampleTool):  # one made after the agent, put in its tools by hand
            continue
        name = getattr(tool, "name", None) or type(tool).__name__
        skills.append(_skill(f"{agent.name}-{name}", name, getattr(tool, "description", f"Tool: {name}"),
                             ["llm", "tools"], _tool_security(tool, security)))
    if agent.planner:
        skills.append(_skill(f"{agent.name}-planner", "planning", "Can think about the tasks to do and make plans",
                             ["llm", "planning"], security))
    if agent.code_executor:
        skills.append(_skill(f"{agent.name}-code-executor", "code-execution", "Can execute code",
                             ["llm", "code_execution"], security))
    return skills


async def _children_skills(agent: Any, security: SkillSecurity | None) -> list[AgentSkill]:
    skills: list[AgentSkill] = []
    for child in _children(agent):
        try:
            own = await _own_skills(child, security)
        except Exception as error:
            logger.warning("Failed to build skills for sub-agent %s: %s", child.name, error)
            continue
        skills += [_skill(f"{child.name}_{s.id}", f"{child.name}: {s.name}", s.description,
                          [f"sub_agent:{child.name}", *s.tags], _security_of(s), examples=list(s.examples),
                          output_modes=list(s.output_modes)) for s in own]
    return skills


def _examples(agent: LlmAgent) -> list[str]:
    """The inputs (their text parts, a line each) of the agent's examples: an
    ExampleTool's, which our LlmAgent takes out of its tools into ``examples``. A
    provider of examples gives none here (it picks them per query)."""
    examples = agent.examples
    if not isinstance(examples, list):
        return []
    inputs = ["\n".join(p.text for p in (e.input.parts or []) if isinstance(p.text, str)) for e in examples]
    return [text for text in inputs if text]


def _tool_security(tool: Any, default: SkillSecurity | None) -> SkillSecurity | None:
    metadata = getattr(tool, "custom_metadata", None) if isinstance(tool, BaseTool) else None
    if metadata and "security" in metadata:
        if _is_security(metadata["security"]):
            found: SkillSecurity = metadata["security"]
            return found
        logger.warning("Tool %r custom_metadata['security'] is not a list[dict[str, list[str]]]; "
                       "default_skill_security is used", getattr(tool, "name", type(tool).__name__))
    return default


def _is_security(value: object) -> TypeGuard[SkillSecurity]:
    return isinstance(value, list) and all(
        isinstance(req, dict) and all(
            isinstance(name, str) and isinstance(scopes, list) and all(isinstance(s, str) for s in scopes)
            for name, scopes in req.items()) for req in value)


def _check_security(skills: list[AgentSkill], schemes: dict[str, SecurityScheme]) -> None:
    for skill in skills:
        for requirement in _security_of(skill) or []:
            for name in requirement:
                if name not in schemes:
                    logger.warning("Skill %r names security scheme %r, which the card does not declare "
                                   "(it declares %s)", skill.id, name, sorted(schemes))


def _kind(agent: Any) -> str:
    for cls, kind in ((LlmAgent, "llm"), (SequentialAgent, "sequential_workflow"),
                      (ParallelAgent, "parallel_workflow"), (LoopAgent, "loop_workflow"),
                      (Workflow, "graph_workflow")):
        if isinstance(agent, cls):
            return kind
    return "custom_agent"


def _skill_name(agent: Any) -> str:
    if isinstance(agent, LlmAgent):
        return "model"
    return "workflow" if isinstance(agent, (SequentialAgent, ParallelAgent, LoopAgent, Workflow)) else "custom"


def _description(agent: Any) -> str:
    """The agent's description, and for a workflow the steps it takes; else a default
    by its kind."""
    parts = [agent.description] if agent.description else []
    if not isinstance(agent, LlmAgent):
        steps = _steps(agent)
        if steps:
            parts.append(steps)
    if parts:
        return " ".join(parts)
    defaults = {"llm": "An LLM-based agent", "sequential_workflow": "A sequential workflow agent",
                "parallel_workflow": "A parallel workflow agent", "loop_workflow": "A loop workflow agent",
                "graph_workflow": "A graph-based workflow agent"}
    return defaults.get(_kind(agent), "A custom agent")


def _steps(agent: Any) -> str | None:
    """A workflow's steps in words (google-adk's sentences), None without children."""
    children = _children(agent)
    if not children:
        return None
    said = [c.description or f"execute the {c.name} agent" for c in children]
    if isinstance(agent, SequentialAgent):
        words = [("First, this agent will " if i == 0 else "Finally, this agent will " if i == len(said) - 1
                  else "Then, this agent will ") + s for i, s in enumerate(said)]
        return " ".join(words) + "."
    if isinstance(agent, (ParallelAgent, LoopAgent)):
        words = [("This agent will " if i == 0 else "and " if i == len(said) - 1 else ", ") + s
                 for i, s in enumerate(said)]
        if isinstance(agent, ParallelAgent):
            return " ".join(words) + " simultaneously."
        return f"{' '.join(words)} in a loop (max {'unlimited' if agent.max_iterations is None else agent.max_iterations} iterations)."
    if isinstance(agent, Workflow):
        nodes = "; ".join(f"{c.name}: " + (c.description.rstrip(".") if c.description
                                            else f"execute the {c.name} node") for c in children)
        return f"This workflow orchestrates the following nodes: {nodes}."
    return None
