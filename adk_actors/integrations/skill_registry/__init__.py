"""google-adk's ``google.adk.integrations.skill_registry`` path: the Agent Registry of
Google Cloud as a skill registry, refused here (see :mod:`.gcp_skill_registry`)."""

from .gcp_skill_registry import GCPSkillRegistry

__all__ = ["GCPSkillRegistry"]
