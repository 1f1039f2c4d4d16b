"""google-adk's ``InMemoryArtifactService`` (``google.adk.artifacts.in_memory_artifact_service``).

Versions live in ``artifacts`` (a path ``app/user/session/filename``, or
``app/user/user/filename`` for a ``user:`` filename -> its versions, oldest first),
each with its :class:`ArtifactVersion` (``memory://`` URI, the part's MIME type:
its inline data's, ``text/plain`` for text, its file data's). In order, a save:
a session-scoped filename without a ``session_id``, or an id that could escape its
place, is an InputValidationError; a part with no inline data, text or file data
is one too; an artifact reference (``file_data`` with an ``artifact://`` URI, see
``artifact_util``) that does not parse or leaves its app, user or session is one too
(it is kept with no MIME type: its target's is known when it is loaded); the part is
kept (a deep copy) as the next version. A load follows a reference to the version it
names, in its target's place, at most five hops (a longer or looping chain is an
InputValidationError), as google-adk's does. A version that is a rewind's tombstone
(empty octet-stream data, written by ``Runner.rewind_async``) loads as None.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from .._rewind import is_tombstone
from .._types import Part
from ..errors.input_validation_error import InputValidationError
from .artifact_util import (
    _MAX_ARTIFACT_REFERENCE_DEPTH,
    is_artifact_ref,
    parse_artifact_uri,
    resolve_artifact_reference,
    validate_artifact_reference_scope,
    validate_path_segment,
    validate_session_id,
)
from .base_artifact_service import ArtifactVersion, BaseArtifactService, ensure_part

__all__ = ["InMemoryArtifactService"]

_USER = "user:"


@dataclass
class _Entry:
    data: Part
    artifact_version: ArtifactVersion


def _mime_type(part: Part) -> str | None:
    if part.inline_data is not None:
        return part.inline_data.mime_type
    if part.text is not None:
        return "text/plain"
    file_data = getattr(part, "file_data", None)
    if file_data is not None:
        return getattr(file_data, "mime_type", None)
    raise InputValidationError("Not supported artifact type.")


class InMemoryArtifactService(BaseArtifactService, BaseModel):
    """Artifacts in memory, for tests and development (see the module)."""

    artifacts: dict[str, list[_Entry]] = Field(default_factory=dict)

    def _path(self, app_name: str, user_id: str, filename: str, session_id: str | None) -> str:
        validate_path_segment(app_name, "app_name")
        validate_path_segment(user_id, "user_id")
        if filename.startswith(_USER):
            return f"{app_name}/{user_id}/user/{filename}"
        if session_id is None:
            raise InputValidationError("Session ID must be provided for session-scoped artifacts.")
        validate_session_id(session_id)
        return f"{app_name}/{user_id}/{session_id}/{filename}"

    async def save_artifact(self, *, app_name: str, user_id: str, filename: str, artifact: Any,
                            session_id: str | None = None, custom_metadata: dict[str, Any] | None = None) -> int:
        """The next version of ``filename`` (see the module); its number."""
        path = self._path(app_name, user_id, filename, session_id)
        part = ensure_part(artifact).model_copy(deep=True)
        if is_artifact_ref(part):
            assert part.file_data is not None and part.file_data.file_uri is not None
            parsed = parse_artifact_uri(part.file_data.file_uri)
            if parsed is None:
                raise InputValidationError(f"Invalid artifact reference URI: {part.file_data.file_uri}")
            validate_artifact_reference_scope(app_name=app_name, user_id=user_id, session_id=session_id,
                                              parsed_uri=parsed)
            mime_type = None
        else:
            mime_type = _mime_type(part)
        versions = self.artifacts.setdefault(path, [])
        version = len(versions)
        where = (f"{app_name}/users/{user_id}/artifacts" if filename.startswith(_USER)
                 else f"{app_name}/users/{user_id}/sessions/{session_id}/artifacts")
        info = ArtifactVersion(version=version, canonical_uri=f"memory://apps/{where}/{filename}/versions/{version}",
                               custom_metadata=copy.deepcopy(custom_metadata or {}), mime_type=mime_type)
        versions.append(_Entry(part, info))
        return version

    async def load_artifact(self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None,
                            version: int | None = None) -> Part | None:
        """The latest version (or ``version``), a reference followed to its target;
        None when there is none or it is a tombstone (see the module)."""
        return await self._load(app_name, user_id, filename, session_id, version, _MAX_ARTIFACT_REFERENCE_DEPTH)

    async def _load(self, app_name: str, user_id: str, filename: str, session_id: str | None, version: int | None,
                    remaining_depth: int) -> Part | None:
        entry = self._entry(app_name, user_id, filename, session_id, version)
        if entry is None:
            return None
        data = entry.data
        if is_artifact_ref(data):
            assert data.file_data is not None and data.file_data.file_uri is not None
            target = resolve_artifact_reference(file_uri=data.file_data.file_uri, app_name=app_name, user_id=user_id,
                                                session_id=session_id, remaining_depth=remaining_depth)
            return await self._load(target.app_name, target.user_id, target.filename, target.session_id,
                                    target.version, remaining_depth - 1)
        if data == Part() or is_tombstone(data):
            return None
        return data.model_copy(deep=True)

    def _entry(self, app_name: str, user_id: str, filename: str, session_id: str | None,
               version: int | None) -> _Entry | None:
        versions = self.artifacts.get(self._path(app_name, user_id, filename, session_id))
        if not versions:
            return None
        if version is None:
            return versions[-1]
        return versions[version] if 0 <= version < len(versions) else None

    async def list_artifact_keys(self, *, app_name: str, user_id: str, session_id: str | None = None) -> list[str]:
        """The session's filenames (with ``session_id``) and the user's, sorted."""
        validate_path_segment(app_name, "app_name")
        validate_path_segment(user_id, "user_id")
        if session_id is not None:
            validate_path_segment(session_id, "session_id")
        prefixes = [f"{app_name}/{user_id}/user/"] + ([f"{app_name}/{user_id}/{session_id}/"] if session_id else [])
        return sorted(path.removeprefix(prefix) for path in self.artifacts for prefix in prefixes
                      if path.startswith(prefix))

    async def delete_artifact(self, *, app_name: str, user_id: str, filename: str,
                              session_id: str | None = None) -> None:
        """Forget every version of ``filename``."""
        self.artifacts.pop(self._path(app_name, user_id, filename, session_id), None)

    async def list_versions(self, *, app_name: str, user_id: str, filename: str,
                            session_id: str | None = None) -> list[int]:
        """0 .. the latest version (empty when there is none)."""
        return list(range(len(self.artifacts.get(self._path(app_name, user_id, filename, session_id), []))))

    async def list_artifact_versions(self, *, app_name: str, user_id: str, filename: str,
                                     session_id: str | None = None) -> list[ArtifactVersion]:
        """Copies of each version's :class:`ArtifactVersion`, in order."""
        entries = self.artifacts.get(self._path(app_name, user_id, filename, session_id), [])
        return [entry.artifact_version.model_copy(deep=True) for entry in entries]

    async def get_artifact_version(self, *, app_name: str, user_id: str, filename: str,
                                   session_id: str | None = None,
                                   version: int | None = None) -> ArtifactVersion | None:
        """A copy of one version's :class:`ArtifactVersion` (the latest unless ``version``), or None."""
        entry = self._entry(app_name, user_id, filename, session_id, version)
        return None if entry is None else entry.artifact_version.model_copy(deep=True)
