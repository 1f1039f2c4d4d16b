"""google-adk's ``GCPSkillRegistry`` path. Its skills live in Google Cloud's Agent
Registry, which this project does not reach: making one raises
:class:`~adk_actors.errors.ServiceUnavailableError` (a ``NotImplementedError``)."""

from __future__ import annotations

from typing import Any

from ...errors._unavailable import ServiceUnavailableError, unavailable
from ...skills.skill_registry import SkillRegistry

__all__ = ["GCPSkillRegistry"]


class GCPSkillRegistry(SkillRegistry):
    """Refused when made (see the module); its arguments are google-adk's."""

    def __init__(self, *, project_id: str | None = None, location: str | None = None,
                 credentials: Any = None) -> None:
        raise ServiceUnavailableError(unavailable(
            "GCPSkillRegistry", "Google Cloud's Agent Registry",
            "a SkillRegistry subclass of your own, or SkillToolset(skills=load_skills_from_dir(folder))"))
