"""``SkillRegistry``: where a ``SkillToolset`` finds skills it was not given
(google-adk's ``google.adk.skills.skill_registry``)."""

from __future__ import annotations

from abc import ABC, abstractmethod

from .models import Frontmatter, Skill

__all__ = ["SkillRegistry"]


class SkillRegistry(ABC):
    """A source of skills searched by the model (``search_skills``) and fetched by
    name (``load_skill`` and the other skill tools, for a skill not held locally)."""

    @abstractmethod
    async def get_skill(self, *, name: str) -> Skill:
        """The skill called ``name``; raises when it cannot be had (the tool that asked
        reports the error to the model)."""

    @abstractmethod
    async def search_skills(self, *, query: str) -> list[Frontmatter]:
        """The frontmatter of the skills that match ``query``, best first."""

    def search_tool_description(self) -> str | None:
        """A description of ``search_skills`` for the model that fits this registry's
        search, or None for the toolset's own."""
        return None
