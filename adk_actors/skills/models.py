"""The models of an Agent Skill (google-adk's ``google.adk.skills.models``).

A skill is three levels of content, read by the model as it needs them:
:class:`Frontmatter` (L1: name and description, enough to pick a skill), the SKILL.md
body (L2: the instructions, read when the skill is loaded) and :class:`Resources` (L3:
``references/``, ``assets/`` and ``scripts/`` files, read or run one at a time).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from . import _features

__all__ = ["Frontmatter", "Resources", "Script", "Skill"]

_KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_KEBAB_OR_SNAKE = re.compile(r"^([a-z0-9]+(-[a-z0-9]+)*|[a-z0-9]+(_[a-z0-9]+)*)$")
_MAX_NAME = 64
_MAX_DESCRIPTION = 1024
_MAX_COMPATIBILITY = 500


class Frontmatter(BaseModel):
    """The YAML header of a SKILL.md (L1), what a model reads to choose a skill.

    ``name`` (required) is lowercase kebab-case, at most 64 characters after NFKC
    normalisation (snake_case too when ``ADK_ENABLE_SNAKE_CASE_SKILL_NAME`` is on);
    ``description`` (required, 1 to 1024 characters) says what the skill does and when
    to use it; ``license`` and ``compatibility`` (at most 500 characters) are free text;
    ``allowed_tools`` is read from ``allowed-tools`` or ``allowed_tools`` and written
    back as ``allowed-tools``; ``metadata`` holds client settings, of which two are read
    here: ``adk_additional_tools`` (a list of tool names the skill makes available once
    loaded) and ``adk_inject_state`` (a bool: fill ``{var}`` placeholders of the body
    from session state when ``load_skill`` returns it). Other keys are kept as given.
    A value that breaks one of these rules raises pydantic's ``ValidationError``.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    name: str
    description: str
    license: str | None = None
    compatibility: str | None = None
    allowed_tools: str | None = Field(default=None, alias="allowed-tools",
                                      serialization_alias="allowed-tools")
    metadata: dict[str, Any] = {}

    @field_validator("metadata")
    @classmethod
    def _check_metadata(cls, value: dict[str, Any]) -> dict[str, Any]:
        if "adk_additional_tools" in value and not isinstance(value["adk_additional_tools"], list):
            raise ValueError("metadata.adk_additional_tools has to be a list of tool names")
        if "adk_inject_state" in value and not isinstance(value["adk_inject_state"], bool):
            raise ValueError("metadata.adk_inject_state has to be true or false")
        return value

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        value = unicodedata.normalize("NFKC", value)
        if len(value) > _MAX_NAME:
            raise ValueError(f"a skill name has at most {_MAX_NAME} characters")
        if _features.enabled(_features.SNAKE_CASE_SKILL_NAME):
            if not _KEBAB_OR_SNAKE.match(value):
                raise ValueError(
                    "a skill name is lowercase letters and digits in words joined by single"
                    " hyphens (kebab-case) or by single underscores (snake_case), not both,"
                    " with no delimiter at either end")
        elif not _KEBAB.match(value):
            raise ValueError(
                "a skill name is lowercase letters and digits in words joined by single"
                " hyphens (kebab-case), with no hyphen at either end")
        return value

    @field_validator("description")
    @classmethod
    def _check_description(cls, value: str) -> str:
        if not value:
            raise ValueError("a skill's description cannot be empty")
        if len(value) > _MAX_DESCRIPTION:
            raise ValueError(f"a skill's description has at most {_MAX_DESCRIPTION} characters;"
                             f" this one has {len(value)}")
        return value

    @field_validator("compatibility")
    @classmethod
    def _check_compatibility(cls, value: str | None) -> str | None:
        if value is not None and len(value) > _MAX_COMPATIBILITY:
            raise ValueError(f"compatibility has at most {_MAX_COMPATIBILITY} characters")
        return value


class Script(BaseModel):
    """The source of one of a skill's scripts; ``str()`` gives the source."""

    src: str

    def __str__(self) -> str:
        return self.src


class Resources(BaseModel):
    """A skill's files (L3), each keyed by its path under its folder (POSIX, as
    ``data/schema.json``): ``references`` (further instructions), ``assets`` (templates,
    data, examples) and ``scripts`` (runnable code). A text file's content is a
    ``str``, a file that is not UTF-8 is ``bytes``."""

    references: dict[str, str | bytes] = {}
    assets: dict[str, str | bytes] = {}
    scripts: dict[str, Script] = {}

    def get_reference(self, reference_id: str) -> str | bytes | None:
        """The reference at ``reference_id``, or None when there is none."""
        return self.references.get(reference_id)

    def get_asset(self, asset_id: str) -> str | bytes | None:
        """The asset at ``asset_id``, or None when there is none."""
        return self.assets.get(asset_id)

    def get_script(self, script_id: str) -> Script | None:
        """The script at ``script_id``, or None when there is none."""
        return self.scripts.get(script_id)

    def list_references(self) -> list[str]:
        """The references' paths, in the order they were added."""
        return list(self.references)

    def list_assets(self) -> list[str]:
        """The assets' paths, in the order they were added."""
        return list(self.assets)

    def list_scripts(self) -> list[str]:
        """The scripts' paths, in the order they were added."""
        return list(self.scripts)


class Skill(BaseModel):
    """A whole skill: its ``frontmatter`` (L1), the ``instructions`` of its SKILL.md
    body (L2) and its ``resources`` (L3). ``name`` and ``description`` read the
    frontmatter's. ``_uri`` (private) is where it was loaded from, when known."""

    frontmatter: Frontmatter
    instructions: str
    resources: Resources = Resources()

    _uri: str | None = None

    @property
    def name(self) -> str:
        return self.frontmatter.name

    @property
    def description(self) -> str:
        return self.frontmatter.description
