"""google-adk's import path of ``LoadArtifactsTool`` and ``load_artifacts_tool``
(``adk_actors.tools.load_artifacts`` is that same instance)."""

from ._load_artifacts import LoadArtifactsTool, load_artifacts_tool

load_artifacts = load_artifacts_tool

__all__ = ["LoadArtifactsTool", "load_artifacts", "load_artifacts_tool"]
