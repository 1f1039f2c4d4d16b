"""``SkillToolset``: lets a model discover, read and run Agent Skills
(google-adk's ``google.adk.tools.skill_toolset``).

The toolset offers ``list_skills`` (not with ``SkillDiscoveryMode.EAGER``),
``load_skill``, ``load_skill_resource``, ``run_skill_script`` (only where a script can
run: a code executor on the toolset or the agent, and a skill with scripts or a
registry), ``search_skills`` (with a registry) and ``unload_skill`` (with
``ADK_ENABLE_SKILL_LIFECYCLE``), plus, while a skill that names them in
``metadata.adk_additional_tools`` is active, those of ``additional_tools``. Before each
model call it adds its guidance to the system instruction (our own words:
``adk_actors.skills._instruction``), the catalog for eager discovery, a line on
``search_skills``, restated instructions of changed skills (``revalidate_skills``), and
prunes the instructions of unloaded skills (lifecycle on). Scripts run through a code
executor (``_skill_script``). google-adk's execution environments
(``google.adk.environment``) do not exist here: ``environment=`` is refused.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import logging
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._types import LlmRequest
from ..code_executors import BaseCodeExecutor
from ..skills import _features, models, prompt
from ..skills import _instruction as names
from ..skills._instruction import DEFAULT_SKILL_SYSTEM_INSTRUCTION, build_skill_system_instruction
from ..skills.skill_registry import SkillRegistry
from . import _skill_lifecycle as life
from ._base import ToolContext
from ._classes import BaseTool, BaseToolset, ToolPredicate
from ._function import FunctionTool
from ._skill_lifecycle import SkillDiscoveryMode, SkillLifecycleConfig, SkillLifecycleMode
from ._skill_script import RunSkillScriptTool
from ._skill_tools import (
    ListSkillsTool,
    LoadSkillResourceTool,
    LoadSkillTool,
    SearchSkillsTool,
    UnloadSkillTool,
)

__all__ = [
    "DEFAULT_SKILL_SYSTEM_INSTRUCTION",
    "ListSkillsTool",
    "LoadSkillResourceTool",
    "LoadSkillTool",
    "RunSkillScriptTool",
    "SearchSkillsTool",
    "SkillDiscoveryMode",
    "SkillLifecycleConfig",
    "SkillLifecycleMode",
    "SkillToolset",
    "UnloadSkillTool",
]

_log = logging.getLogger("adk_actors.tools")

_DEFAULT_SCRIPT_TIMEOUT = 300
_MAX_CACHED_TURNS = 16


class SkillToolset(BaseToolset):
    """The skill tools over ``skills`` (and a ``registry``'s): see the module.

    Arguments, with google-adk's defaults: ``skills`` (names unique, else
    ``ValueError``); ``registry``; ``code_executor`` (else the agent's is used);
    ``environment`` (refused: ``NotImplementedError``); ``skills_folder`` (only with an
    environment, so ``ValueError``); ``script_timeout`` (seconds for a shell script,
    300); ``save_output_artifacts`` (save the files a script makes as artifacts);
    ``additional_tools`` (callables, tools or toolsets a skill can switch on);
    ``tool_name_prefix``; ``tool_filter``; ``discovery_mode`` (``LAZY``);
    ``lifecycle_config`` (every skill persistent by default).
    """

    def __init__(self, skills: list[models.Skill] | None = None, *, registry: SkillRegistry | None = None,
                 code_executor: BaseCodeExecutor | None = None, environment: Any = None,
                 skills_folder: Path | str | None = None, script_timeout: int = _DEFAULT_SCRIPT_TIMEOUT,
                 save_output_artifacts: bool = False, additional_tools: Sequence[Any] | None = None,
                 tool_name_prefix: str | None = None, tool_filter: ToolPredicate | list[str] | None = None,
                 discovery_mode: SkillDiscoveryMode = SkillDiscoveryMode.LAZY,
                 lifecycle_config: SkillLifecycleConfig | None = None) -> None:
        """In order: the environment and folder are refused; skill names are checked
        for duplicates; the lifecycle config is copied (its overrides too); the
        additional tools are sorted into tools by name and toolsets (a callable
        becomes a ``FunctionTool``); the core tools are made."""
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        # listed afresh at every model step, as google-adk's: a skill loaded in the middle
        # of a turn offers its tools from the next step on
        self._use_invocation_cache = False
        if environment is not None:
            raise NotImplementedError(
                "SkillToolset(environment=...) is not supported: adk_actors has no execution environments"
                " (google.adk.environment). Give a code_executor (SandboxedCodeExecutor runs scripts in a"
                " limited child process) instead.")
        if skills_folder is not None:
            raise ValueError("skills_folder is only for an environment, which is not given.")
        skills = list(skills or [])
        seen: set[str] = set()
        for skill in skills:
            if skill.name in seen:
                raise ValueError(f"Two skills are named '{skill.name}'.")
            seen.add(skill.name)
        config = lifecycle_config or SkillLifecycleConfig()
        self._lifecycle_config = dataclasses.replace(config, skill_overrides=dict(config.skill_overrides))
        modes = {config.default_mode, *config.skill_overrides.values()}
        self._tracks_ephemeral_skills = config.enabled and SkillLifecycleMode.EPHEMERAL in modes
        self._revalidate_skills = config.enabled and config.revalidate_skills
        self._skills = {skill.name: skill for skill in skills}
        self._registry = registry
        self._code_executor = code_executor
        self._env = None
        self._skills_folder: Path | None = None
        self._script_timeout = script_timeout
        self._save_output_artifacts = save_output_artifacts
        self._fetched_skill_cache: collections.OrderedDict[str, dict[str, Any]] = collections.OrderedDict()
        self._max_cache_turns = _MAX_CACHED_TURNS
        self._provided_tools_by_name: dict[str, Any] = {}
        self._provided_toolsets: list[BaseToolset] = []
        for item in additional_tools or []:
            if isinstance(item, BaseToolset):
                self._provided_toolsets.append(item)
            elif isinstance(item, BaseTool):
                self._provided_tools_by_name[item.name] = item
            elif callable(item):
                tool = FunctionTool(item)
                self._provided_tools_by_name[tool.name] = tool
        self._discovery_mode = discovery_mode
        self._warned_on_filtered_list_skills = False
        self._lifecycle_enabled = _features.enabled(_features.SKILL_LIFECYCLE)
        self._tools: list[BaseTool] = [ListSkillsTool(self)] if discovery_mode is SkillDiscoveryMode.LAZY else []
        self._tools += [LoadSkillTool(self), LoadSkillResourceTool(self), RunSkillScriptTool(self)]
        if registry is not None:
            self._tools.append(SearchSkillsTool(self))
        if self._lifecycle_enabled:
            self._tools.append(UnloadSkillTool(self))

    # -- what the model is offered -------------------------------------------------------

    @property
    def skills_folder(self) -> Path | None:
        """Where skills are put in an environment: None here (no environments)."""
        return self._skills_folder

    @property
    def skills(self) -> list[models.Skill]:
        """The local skills, in the order given."""
        return self._list_skills()

    def _list_skills(self) -> list[models.Skill]:
        return list(self._skills.values())

    def _get_skill(self, skill_name: str) -> models.Skill | None:
        return self._skills.get(skill_name)

    def _offers_script_tool(self, context: Any) -> bool:
        """Whether ``run_skill_script`` can work: a code executor on the toolset, or on
        the agent of ``context`` (no agent known counts as yes); then, with a known
        invocation and no registry, some local skill has to have a script."""
        invocation = getattr(context, "_invocation_context", None)
        agent = getattr(invocation, "agent", None)
        if self._code_executor is None and agent is not None and getattr(agent, "code_executor", None) is None:
            return False
        if invocation is None or self._registry is not None:
            return True
        return any(skill.resources.scripts for skill in self._skills.values())

    async def get_tools(self, readonly_context: Any = None) -> list[BaseTool]:
        """The core tools, then the additional tools the active skills name (see
        :meth:`_resolve_additional_tools_from_state`); ``run_skill_script`` left out
        when it cannot work; then ``tool_filter`` applied."""
        tools = self._tools + await self._resolve_additional_tools_from_state(readonly_context)
        if not self._offers_script_tool(readonly_context):
            tools = [t for t in tools if not isinstance(t, RunSkillScriptTool)]
        return [t for t in tools if self._is_tool_selected(t, readonly_context)]

    async def _resolve_additional_tools_from_state(self, readonly_context: Any) -> list[BaseTool]:
        """The tools named by the active skills' ``adk_additional_tools``, in the order
        the skills were activated and name them, found among ``additional_tools`` (a
        toolset that fails to list is logged and skipped); a name no tool has is
        skipped, one that a core tool has is logged as a collision and skipped."""
        if not readonly_context:
            return []
        active = self._active_skills(readonly_context.state, readonly_context.agent_name,
                                     readonly_context.invocation_id)
        wanted: dict[str, None] = {}
        for name in active:
            skill = await self._get_or_fetch_skill(name, readonly_context.invocation_id)
            if skill is not None:
                wanted.update(dict.fromkeys(skill.frontmatter.metadata.get("adk_additional_tools") or []))
        if not wanted:
            return []
        candidates = dict(self._provided_tools_by_name)
        listed = await asyncio.gather(*(ts.get_tools_with_prefix(readonly_context) for ts in self._provided_toolsets),
                                      return_exceptions=True)
        for toolset, tools in zip(self._provided_toolsets, listed, strict=True):
            if isinstance(tools, Exception):
                _log.warning("toolset %s skipped for skill tools: %s", type(toolset).__name__, tools)
                continue
            if isinstance(tools, BaseException):
                raise tools
            candidates.update((tool.name, tool) for tool in tools)
        taken = {tool.name for tool in self._tools}
        resolved = []
        for name in wanted:
            tool = candidates.get(name)
            if tool is None:
                continue
            if tool.name in taken:
                _log.error("skill tool %r left out: a tool of that name is already offered", tool.name)
                continue
            resolved.append(tool)
            taken.add(tool.name)
        return resolved

    # -- finding skills -----------------------------------------------------------------

    async def _get_or_fetch_skill(self, skill_name: str, invocation_id: str | None = None) -> models.Skill | None:
        """The local skill, else the registry's (None without a registry). Within one
        invocation a fetched skill is kept, and calls asking at once share one fetch (up
        to 16 invocations kept, the oldest dropped first); a failed fetch is not kept and
        raises to every caller waiting on it."""
        skill = self._get_skill(skill_name)
        if skill is not None or self._registry is None:
            return skill
        if not invocation_id:
            return await self._registry.get_skill(name=skill_name)
        if invocation_id not in self._fetched_skill_cache:
            if len(self._fetched_skill_cache) >= self._max_cache_turns:
                self._fetched_skill_cache.popitem(last=False)
            self._fetched_skill_cache[invocation_id] = {}
        turn = self._fetched_skill_cache[invocation_id]
        if skill_name in turn:
            cached = turn[skill_name]
            return await cached if isinstance(cached, asyncio.Future) else cached  # type: ignore[no-any-return]
        future: asyncio.Future[models.Skill | None] = asyncio.get_running_loop().create_future()
        turn[skill_name] = future
        try:
            fetched = await self._registry.get_skill(name=skill_name)
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # marked retrieved: no "never retrieved" warning
            turn.pop(skill_name, None)
            raise
        future.set_result(fetched)
        turn[skill_name] = fetched
        return fetched

    # -- activation ---------------------------------------------------------------------

    def list_active_skills(self, ctx: Any) -> list[str]:
        """The skills active for ``ctx``'s agent, least recently loaded first (an
        ephemeral skill of an earlier invocation is not listed)."""
        return self._active_skills(ctx.state, ctx.agent_name, ctx.invocation_id)

    async def load_skill(self, ctx: ToolContext, skill_name: str) -> bool:
        """Activate ``skill_name`` for ``ctx``'s agent without the model (its tools are
        offered; its instructions are not shown). True when it was activated, False when
        it already was (then only its use is recorded, the registry not asked). Raises
        ``ValueError`` when no such skill exists, or what the registry raises."""
        if skill_name in self.list_active_skills(ctx):
            self._record_activation(ctx.state, ctx.agent_name, skill_name, ctx.invocation_id)
            return False
        skill = await self._get_or_fetch_skill(skill_name, ctx.invocation_id)
        if skill is None:
            raise ValueError(f"There is no skill named '{skill_name}'.")
        was_active = skill_name in self.list_active_skills(ctx)  # another call may have won meanwhile
        self._record_activation(ctx.state, ctx.agent_name, skill_name, ctx.invocation_id, skill)
        return not was_active

    def unload_skill(self, ctx: ToolContext, skill_name: str) -> bool:
        """Deactivate ``skill_name`` for ``ctx``'s agent. True when it was active; False
        when it was not (an expired ephemeral skill is cleaned out of state all the same)."""
        stored = life.read_activated(ctx.state, ctx.agent_name)
        if skill_name not in stored:
            return False
        was_active = skill_name in self.list_active_skills(ctx)
        stored.remove(skill_name)
        life.write_activated(ctx.state, ctx.agent_name, stored)
        self._forget_lifecycle_records(ctx.state, ctx.agent_name, stored)
        return was_active

    def _lifecycle_for(self, skill_name: str) -> SkillLifecycleMode:
        config = self._lifecycle_config
        if not config.enabled:
            return SkillLifecycleMode.PERSISTENT
        return config.skill_overrides.get(skill_name, config.default_mode)

    def _is_ephemeral(self, skill_name: str) -> bool:
        return self._lifecycle_for(skill_name) is SkillLifecycleMode.EPHEMERAL

    def _active_skills(self, state: Any, agent_name: str, invocation_id: str | None) -> list[str]:
        """The stored active skills less the ephemeral ones of another invocation."""
        stored = life.read_activated(state, agent_name)
        if not stored or not self._tracks_ephemeral_skills:
            return stored
        records = life.read_records(state, agent_name)
        return [name for name in stored if not life.is_expired(records.get(name, {}), invocation_id)]

    def _record_activation(self, state: Any, agent_name: str, skill_name: str, invocation_id: str | None,
                           skill: models.Skill | None = None) -> list[str]:
        """Mark ``skill_name`` active (a reload of a non-persistent skill moves it last),
        evict bounded skills past the cap, write the list and the skill's record, drop
        the records of inactive skills. Returns the skills released: expired ephemeral
        ones, then evicted ones."""
        stored = life.read_activated(state, agent_name)
        active = self._active_skills(state, agent_name, invocation_id)
        expired = [name for name in stored if name not in active and name != skill_name]
        lifecycle = self._lifecycle_for(skill_name)
        if skill_name not in active:
            active.append(skill_name)
        elif lifecycle is SkillLifecycleMode.PERSISTENT:
            if not expired and not self._records_for(lifecycle, skill):
                return []
        else:
            active.remove(skill_name)
            active.append(skill_name)
        evicted = self._evict_over_cap(active)
        life.write_activated(state, agent_name, active)
        self._record_lifecycle(state, agent_name, skill_name, lifecycle, invocation_id, skill)
        self._forget_lifecycle_records(state, agent_name, active)
        return expired + evicted

    def _records_for(self, lifecycle: SkillLifecycleMode, skill: models.Skill | None) -> dict[str, Any]:
        record: dict[str, Any] = {}
        if lifecycle is SkillLifecycleMode.EPHEMERAL:
            record["lifecycle"] = lifecycle.value
        if self._revalidate_skills and skill is not None:
            record["version_hash"] = life.content_hash(skill)
        return record

    def _record_lifecycle(self, state: Any, agent_name: str, skill_name: str, lifecycle: SkillLifecycleMode,
                          invocation_id: str | None, skill: models.Skill | None = None) -> None:
        """Store the skill's record (when it needs one), keeping the digest it was
        loaded with when none is given now."""
        record = self._records_for(lifecycle, skill)
        if not record:
            return
        if "lifecycle" in record:
            record["activated_in"] = invocation_id
        records = life.read_records(state, agent_name)
        if "version_hash" not in record and records.get(skill_name, {}).get("version_hash"):
            record["version_hash"] = records[skill_name]["version_hash"]
        records[skill_name] = record
        state[life.records_key(agent_name)] = records

    def _forget_lifecycle_records(self, state: Any, agent_name: str, active: list[str]) -> None:
        records = life.read_records(state, agent_name)
        kept = {name: record for name, record in records.items() if name in active}
        if len(kept) != len(records):
            state[life.records_key(agent_name)] = kept

    def _evict_over_cap(self, active: list[str]) -> list[str]:
        """Drop (from ``active``, in place) the oldest bounded skills past the cap."""
        bounded = [name for name in active if self._lifecycle_for(name) is SkillLifecycleMode.BOUNDED]
        over = len(bounded) - self._lifecycle_config.max_active_skills
        if over <= 0:
            return []
        evicted = bounded[:over]
        active[:] = [name for name in active if name not in evicted]
        return evicted

    def clone_with_updated_skills(self, skills: list[models.Skill]) -> SkillToolset:
        """A toolset with this one's settings over ``skills``."""
        return SkillToolset(skills=skills, registry=self._registry, code_executor=self._code_executor,
                            script_timeout=self._script_timeout, save_output_artifacts=self._save_output_artifacts,
                            additional_tools=[*self._provided_tools_by_name.values(), *self._provided_toolsets],
                            tool_name_prefix=self.tool_name_prefix, tool_filter=self.tool_filter,
                            discovery_mode=self._discovery_mode, lifecycle_config=self._lifecycle_config)

    # -- the request --------------------------------------------------------------------

    def _inject_catalog(self, selected: set[str]) -> bool:
        """Whether the catalog goes into the system instruction: with ``EAGER``, or when
        a filter hid ``list_skills`` (google-adk's older way, kept, with a
        ``FutureWarning`` once per toolset)."""
        if self._discovery_mode is SkillDiscoveryMode.EAGER:
            return True
        if names.LIST_SKILLS in selected:
            return False
        if not self._warned_on_filtered_list_skills:
            self._warned_on_filtered_list_skills = True
            warnings.warn("Hiding list_skills with tool_filter to put the skill catalog into the system"
                          " instruction will stop doing so; pass discovery_mode=SkillDiscoveryMode.EAGER.",
                          FutureWarning, stacklevel=2)
        return True

    async def process_llm_request(self, *, tool_context: ToolContext, llm_request: LlmRequest) -> None:
        """In order: the guidance for the tools the filter keeps; the catalog (see
        :meth:`_inject_catalog`); with a registry and ``search_skills`` kept, a line on
        it; restated changed skills (``revalidate_skills``); all appended to the system
        instruction. Then, with the lifecycle switch on, unloaded skills' instructions
        are pruned from the contents."""
        selected = {t.name for t in self._tools if self._is_tool_selected(t, tool_context)}
        p = f"{self.tool_name_prefix}_" if self.tool_name_prefix else ""
        parts = [build_skill_system_instruction(
            prefix=self.tool_name_prefix, allowed_tools=selected, skills_folder=None,
            script_execution_enabled=self._offers_script_tool(tool_context), unload_enabled=self._lifecycle_enabled)]
        if self._inject_catalog(selected):
            parts.append(prompt.format_skills_as_xml(list(self._list_skills())))
        if self._registry is not None and names.SEARCH_SKILLS in selected:
            parts.append(f"\nWhen the skills you have do not cover the task, `{p}{names.SEARCH_SKILLS}` finds"
                         " more in the skill registry.")
        if self._revalidate_skills:
            parts += await self._restate_changed_skills(tool_context)
        llm_request.append_instructions(parts)
        if self._lifecycle_enabled:
            pruned = life.prune_unloaded(llm_request.contents, f"{p}{names.LOAD_SKILL}",
                                         set(self.list_active_skills(tool_context)))
            if pruned:
                _log.debug("instructions of unloaded skills pruned: %s", ", ".join(pruned))

    async def _restate_changed_skills(self, tool_context: ToolContext) -> list[str]:
        """For each active skill loaded with a digest that no longer matches its current
        content (all fetched at once; a fetch that fails is logged and skipped): a
        paragraph restating its instructions."""
        records = life.read_records(tool_context.state, tool_context.agent_name)
        checks = [(name, records[name]["version_hash"]) for name in self.list_active_skills(tool_context)
                  if records.get(name, {}).get("version_hash")]
        if not checks:
            return []
        fetched = await asyncio.gather(*(self._get_or_fetch_skill(name, tool_context.invocation_id)
                                         for name, _ in checks), return_exceptions=True)
        p = f"{self.tool_name_prefix}_" if self.tool_name_prefix else ""
        restated = []
        for (name, digest), skill in zip(checks, fetched, strict=True):
            if isinstance(skill, Exception):
                _log.warning("skill %r could not be revalidated: %s", name, skill)
                continue
            if isinstance(skill, BaseException):
                raise skill
            if skill is None or life.content_hash(skill) == digest:
                continue
            restated.append(f"\nThe skill `{name}` was changed after you loaded it. Follow these instructions"
                            f" instead of those the earlier `{p}{names.LOAD_SKILL}` answer gave:"
                            f"\n\n{skill.instructions}")
        return restated

    async def close(self) -> None:
        """Cancel fetches still pending and forget the fetched skills."""
        for turn in self._fetched_skill_cache.values():
            for cached in turn.values():
                if isinstance(cached, asyncio.Future) and not cached.done():
                    cached.cancel()
        self._fetched_skill_cache.clear()
        await super().close()
