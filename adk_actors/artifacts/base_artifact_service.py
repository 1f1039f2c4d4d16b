"""google-adk's ``BaseArtifactService`` (``google.adk.artifacts.base_artifact_service``),
with ``ArtifactVersion`` and ``ensure_part``.

A subclass writes the seven abstract methods, all async and by keyword. A filename
that starts with ``user:`` is the user's (every session of the user sees it); any
other belongs to the session named by ``session_id``. Versions count from 0. The
in-process Runner uses any subclass: its agents' ``save_artifact`` /
``load_artifact`` / ``list_artifacts`` reach it.
"""

from __future__ import annotations

import abc
from typing import Any

from .._artifact_version import ArtifactVersion
from .._types import Part
from ..types import ours

__all__ = ["ArtifactVersion", "BaseArtifactService", "ensure_part"]


def ensure_part(artifact: Any) -> Part:
    """``artifact`` (a Part, ours or google.genai's, or a dict of its fields,
    camelCase or snake_case) as our :class:`Part`; InvalidRequestError (a
    ``ValueError``) when it is none."""
    return ours(artifact, Part)


class BaseArtifactService(abc.ABC):
    """What every artifact service does (see the module)."""

    @abc.abstractmethod
    async def save_artifact(self, *, app_name: str, user_id: str, filename: str, artifact: Any,
                            session_id: str | None = None, custom_metadata: dict[str, Any] | None = None) -> int:
        """Save ``artifact`` as the next version of ``filename``; its version number."""

    @abc.abstractmethod
    async def load_artifact(self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None,
                            version: int | None = None) -> Part | None:
        """The saved part (the latest version unless ``version``), or None."""

    @abc.abstractmethod
    async def list_artifact_keys(self, *, app_name: str, user_id: str, session_id: str | None = None) -> list[str]:
        """The filenames of the session (with ``session_id``) and of the user, sorted."""

    @abc.abstractmethod
    async def delete_artifact(self, *, app_name: str, user_id: str, filename: str,
                              session_id: str | None = None) -> None:
        """Delete every version of ``filename``."""

    @abc.abstractmethod
    async def list_versions(self, *, app_name: str, user_id: str, filename: str,
                            session_id: str | None = None) -> list[int]:
        """The version numbers of ``filename`` (empty when there is none)."""

    @abc.abstractmethod
    async def list_artifact_versions(self, *, app_name: str, user_id: str, filename: str,
                                     session_id: str | None = None) -> list[ArtifactVersion]:
        """What is known of each version of ``filename``, in order."""

    @abc.abstractmethod
    async def get_artifact_version(self, *, app_name: str, user_id: str, filename: str,
                                   session_id: str | None = None,
                                   version: int | None = None) -> ArtifactVersion | None:
        """What is known of one version (the latest unless ``version``), or None."""
