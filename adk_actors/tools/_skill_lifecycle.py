"""How long a ``SkillToolset``'s skills stay active, and what is kept of that in
session state (google-adk 2.13's keys, so a session moves between the two):

* ``_adk_activated_skill_<agent>``: the agent's active skill names, oldest first (a
  list, rewritten whole so the change is a state delta);
* ``_adk_skill_meta_<agent>``: per skill, a record of its ``lifecycle``
  (``ephemeral`` only), the invocation it was loaded in (``activated_in``) and the
  digest of its content when loaded (``version_hash``, when skills are revalidated).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from enum import Enum
from typing import Any

from .._types import Content, Part
from ..skills import models

__all__ = [
    "SkillDiscoveryMode",
    "SkillLifecycleConfig",
    "SkillLifecycleMode",
    "content_hash",
    "is_expired",
    "prune_unloaded",
    "read_activated",
    "read_records",
    "records_key",
    "write_activated",
]

_DEFAULT_MAX_ACTIVE_SKILLS = 5
_UNLOADED_STATUS = "unloaded"
_UNLOADED_NOTICE = ("This skill was unloaded: its instructions no longer apply and the tools it"
                    " added are gone. Load it again to use it.")


class SkillLifecycleMode(Enum):
    """How long a loaded skill stays active.

    ``PERSISTENT`` (the default): until unloaded; never counted against nor evicted by
    ``max_active_skills``. ``BOUNDED``: as persistent, but at most
    ``max_active_skills`` bounded skills are active per agent; loading one past that
    releases the bounded skill loaded least recently (a reload counts as a use).
    ``EPHEMERAL``: active for the rest of the invocation (the turn) that loaded it,
    released when another invocation asks; under ``run_live``, one invocation, it
    lasts as long as the stream.
    """

    PERSISTENT = "persistent"
    BOUNDED = "bounded"
    EPHEMERAL = "ephemeral"


@dataclasses.dataclass(frozen=True)
class SkillLifecycleConfig:
    """A toolset's lifecycle settings: ``enabled`` (False: every skill persistent),
    ``default_mode``, ``max_active_skills`` (bounded skills at once per agent, at least
    1: a smaller one raises ``ValueError``), ``skill_overrides`` (skill name -> mode)
    and ``revalidate_skills`` (each request, compare each active skill with what it was
    when loaded, and restate the instructions of one that changed)."""

    enabled: bool = True
    default_mode: SkillLifecycleMode = SkillLifecycleMode.PERSISTENT
    max_active_skills: int = _DEFAULT_MAX_ACTIVE_SKILLS
    skill_overrides: dict[str, SkillLifecycleMode] = dataclasses.field(default_factory=dict)
    revalidate_skills: bool = False

    def __post_init__(self) -> None:
        if self.max_active_skills < 1:
            raise ValueError(f"max_active_skills has to be 1 or more, not {self.max_active_skills}.")


class SkillDiscoveryMode(Enum):
    """How the model learns the local skills: ``LAZY`` (the default) by calling
    ``list_skills``; ``EAGER`` from the system instruction, where the catalog is
    written as XML and ``list_skills`` is not offered. Registry skills are found by
    ``search_skills`` either way."""

    LAZY = "lazy"
    EAGER = "eager"


def activated_key(agent_name: str) -> str:
    return f"_adk_activated_skill_{agent_name}"


def records_key(agent_name: str) -> str:
    return f"_adk_skill_meta_{agent_name}"


def read_activated(state: Any, agent_name: str) -> list[str]:
    """A copy of the agent's active skill names (stored order)."""
    return list(state.get(activated_key(agent_name)) or [])


def write_activated(state: Any, agent_name: str, names: list[str]) -> None:
    state[activated_key(agent_name)] = names


def read_records(state: Any, agent_name: str) -> dict[str, dict[str, Any]]:
    """A copy of the agent's lifecycle records (anything malformed left out)."""
    records = state.get(records_key(agent_name))
    if not isinstance(records, dict):
        return {}
    return {name: dict(record) for name, record in records.items() if isinstance(record, dict)}


def is_expired(record: dict[str, Any], invocation_id: str | None) -> bool:
    """Whether an ephemeral skill's record belongs to another invocation than
    ``invocation_id`` (a record with no invocation never expires)."""
    if record.get("lifecycle") != SkillLifecycleMode.EPHEMERAL.value:
        return False
    loaded_in = record.get("activated_in")
    return bool(loaded_in) and loaded_in != invocation_id


def content_hash(skill: models.Skill) -> str:
    """A SHA-256 digest of all a skill says: name, instructions, frontmatter and every
    reference, asset and script (by sorted path), each value length-prefixed."""
    digest = hashlib.sha256()

    def feed(*values: str | bytes) -> None:
        for value in values:
            data = value.encode("utf-8") if isinstance(value, str) else value
            digest.update(len(data).to_bytes(8, "big"))
            digest.update(data)

    feed(skill.name, skill.instructions,
         json.dumps(skill.frontmatter.model_dump(mode="json"), sort_keys=True, default=str))
    resources = skill.resources
    for kind, files in (("references", resources.references), ("assets", resources.assets)):
        for name in sorted(files):
            feed(kind, name, files[name])
    for name in sorted(resources.scripts):
        feed("scripts", name, resources.scripts[name].src)
    return digest.hexdigest()


def prune_unloaded(contents: list[Content] | None, load_tool_name: str, active: set[str]) -> list[str]:
    """Replace, in ``contents`` (whole contents swapped, never edited), each response of
    ``load_tool_name`` that carries the instructions of a skill not in ``active`` by a
    short notice (``skill_name``, ``status: unloaded``, ``detail``); the call keeps its
    response, so the history stays well formed. Returns the skills pruned, once per
    response, in order."""
    pruned: list[str] = []
    for index, content in enumerate(contents or []):
        parts: list[Part] | None = None
        for at, part in enumerate(content.parts or []):
            answer = part.function_response
            if answer is None or answer.name != load_tool_name:
                continue
            response = answer.response
            if not isinstance(response, dict) or "instructions" not in response:
                continue
            name = response.get("skill_name")
            if not isinstance(name, str) or name in active:
                continue
            parts = parts if parts is not None else list(content.parts or [])
            notice = {"skill_name": name, "status": _UNLOADED_STATUS, "detail": _UNLOADED_NOTICE}
            parts[at] = part.model_copy(update={"function_response": answer.model_copy(update={"response": notice})})
            pruned.append(name)
        if parts is not None and contents is not None:
            contents[index] = content.model_copy(update={"parts": parts})
    return pruned
