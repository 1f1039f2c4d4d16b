"""google-adk's ``FileArtifactService`` (``google.adk.artifacts.file_artifact_service``),
on our file artifact store (:class:`adk_actors.store.FileArtifactStore`).

``FileArtifactService(root_dir)`` keeps each version under ``root_dir`` (the store's
layout: ``<app>/<user>/<session or _user>/<name>/<version>.bin`` beside a ``.json``
with its MIME type, hash, time and custom metadata; each written to a temporary file
and renamed, so a crash leaves a whole version or none). A version is checked
against its hash when loaded. The store's name rules hold: a filename with a path
separator, a control character or ``..`` is refused (InvalidArtifactName, a
``ValueError``) where google-adk would nest folders; an id that could escape its
place is an InputValidationError. As in google-adk's, a filename given without a
``session_id`` is the user's (kept, and listed, as ``user:<filename>``), and a text
artifact's version has no MIME type; an inline part's ``display_name`` is kept with its
version (in the store's custom metadata, under a key of ours that is never shown) and
given back by ``load_artifact``. ``custom_metadata`` must be a JSON object (string keys,
values JSON holds as they are, no NaN or infinity), as a host's artifact actor requires:
anything else is an InputValidationError (a ``ValueError``) raised before anything is
written. The store's calls are quick local file writes made on
the caller's event loop.

:class:`FileArtifactVersion` is google-adk's model of a version's persisted metadata
(``ArtifactVersion`` with ``file_name`` and ``display_name``, camelCase in JSON). As
google-adk's, ``list_artifact_versions`` and ``get_artifact_version`` give
``ArtifactVersion``; what this service persists is the store's JSON, not that model,
and ``canonical_uri`` names the store's file of the version.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field
from pydantic.alias_generators import to_camel

from .._rewind import is_tombstone
from .._types import Part
from ..errors.input_validation_error import InputValidationError
from ..store import FileArtifactStore
from .artifact_util import validate_path_segment
from .base_artifact_service import ArtifactVersion, BaseArtifactService, ensure_part

__all__ = ["FileArtifactService", "FileArtifactVersion"]

_USER = "user:"
_USER_PLACE = "_user"
#: where a part's display name is kept in the store's custom metadata (never shown)
_DISPLAY_NAME = "adk_actors:display_name"


class FileArtifactVersion(ArtifactVersion):
    """google-adk's persisted metadata of a file-backed version: an
    :class:`ArtifactVersion` with ``file_name`` (the filename the caller gave) and
    ``display_name`` (the part's ``inline_data.display_name``, if any)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    file_name: str = Field(description="Original filename supplied by the caller.")
    display_name: str | None = None


def _checked_metadata(custom_metadata: Any) -> None:
    """Refuse ``custom_metadata`` that is not None or a JSON object (string keys, values
    JSON holds as they are: no set, no object, no NaN or infinity), with an
    InputValidationError naming what is wrong."""
    if custom_metadata is None:
        return
    if not isinstance(custom_metadata, dict):
        raise InputValidationError(f"custom_metadata must be a dict, not {type(custom_metadata).__name__}.")
    odd = next((key for key in custom_metadata if not isinstance(key, str)), None)
    if odd is not None:
        raise InputValidationError(f"custom_metadata's keys must be strings, not {type(odd).__name__} ({odd!r}).")
    try:
        json.dumps(custom_metadata, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InputValidationError(f"custom_metadata must be JSON: {exc}") from None


class FileArtifactService(BaseArtifactService):
    """Artifacts in files under ``root_dir`` (see the module); ``store`` is the file store."""

    def __init__(self, root_dir: Path | str) -> None:
        self.root_dir = Path(root_dir).expanduser().resolve()
        self.store = FileArtifactStore(self.root_dir)

    @staticmethod
    def _where(app_name: str, user_id: str, filename: str, session_id: str | None) -> tuple[str, str, str, str]:
        """(app, user, the store's session place, the store's name) of an artifact."""
        validate_path_segment(app_name, "app_name")
        validate_path_segment(user_id, "user_id")
        if not isinstance(filename, str) or not filename:
            raise InputValidationError("filename must not be empty.")
        if filename.startswith(_USER) or session_id is None:
            return app_name, user_id, _USER_PLACE, filename if filename.startswith(_USER) else _USER + filename
        validate_path_segment(session_id, "session_id")
        return app_name, user_id, session_id, filename

    def _info(self, where: tuple[str, str, str, str], meta: dict[str, Any]) -> ArtifactVersion:
        app, user, place, name = where
        payload = self.root_dir / app / user / place / name.removeprefix(_USER) / f"{meta['version']}.bin"
        mime_type = None if meta.get("kind") == "text" else meta.get("mime_type")
        custom = {k: v for k, v in (meta.get("custom_metadata") or {}).items() if k != _DISPLAY_NAME}
        return ArtifactVersion(version=int(meta["version"]), canonical_uri=payload.as_uri(),
                               custom_metadata=custom,
                               create_time=float(meta.get("created", 0.0)), mime_type=mime_type)

    async def save_artifact(self, *, app_name: str, user_id: str, filename: str, artifact: Any,
                            session_id: str | None = None, custom_metadata: dict[str, Any] | None = None) -> int:
        """Write the next version of ``filename`` (a part with text or inline data;
        the store's ArtifactError, a ``ValueError``, for anything else) with
        ``custom_metadata``; its number. The name, the part and the metadata are
        checked first (an InputValidationError for metadata JSON cannot hold as it
        is): a refused call writes nothing."""
        where = self._where(app_name, user_id, filename, session_id)
        part = ensure_part(artifact)
        _checked_metadata(custom_metadata)
        display = part.inline_data.display_name if part.inline_data is not None else None
        if display:
            custom_metadata = {**(custom_metadata or {}), _DISPLAY_NAME: display}
        return self.store.save(*where, part, custom_metadata)

    async def load_artifact(self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None,
                            version: int | None = None) -> Part | None:
        """The latest version (or ``version``), None when there is none or it is a
        rewind's tombstone; an inline part with the display name it was saved with."""
        where = self._where(app_name, user_id, filename, session_id)
        part = self.store.load(*where, version)
        if part is None or is_tombstone(part):
            return None
        if part.inline_data is not None:
            display = ((self.store.metadata(*where, version) or {}).get("custom_metadata") or {}).get(_DISPLAY_NAME)
            if display:
                part = part.model_copy(update={"inline_data": part.inline_data.model_copy(
                    update={"display_name": display})})
        return part

    async def list_artifact_keys(self, *, app_name: str, user_id: str, session_id: str | None = None) -> list[str]:
        """The session's filenames (with ``session_id``) and the user's (``user:...``), sorted."""
        validate_path_segment(app_name, "app_name")
        validate_path_segment(user_id, "user_id")
        if session_id is None:
            return [name for name in self.store.list(app_name, user_id, _USER_PLACE) if name.startswith(_USER)]
        validate_path_segment(session_id, "session_id")
        return self.store.list(app_name, user_id, session_id)

    async def delete_artifact(self, *, app_name: str, user_id: str, filename: str,
                              session_id: str | None = None) -> None:
        """Delete every version of ``filename`` (nothing when there is none)."""
        self.store.delete(*self._where(app_name, user_id, filename, session_id))

    async def list_versions(self, *, app_name: str, user_id: str, filename: str,
                            session_id: str | None = None) -> list[int]:
        """The version numbers kept, in order."""
        return self.store.versions(*self._where(app_name, user_id, filename, session_id))

    async def list_artifact_versions(self, *, app_name: str, user_id: str, filename: str,
                                     session_id: str | None = None) -> list[ArtifactVersion]:
        """What was recorded with each version, in order."""
        where = self._where(app_name, user_id, filename, session_id)
        found = (self.store.metadata(*where, version) for version in self.store.versions(*where))
        return [self._info(where, meta) for meta in found if meta is not None]

    async def get_artifact_version(self, *, app_name: str, user_id: str, filename: str,
                                   session_id: str | None = None,
                                   version: int | None = None) -> ArtifactVersion | None:
        """What was recorded with one version (the latest unless ``version``), or None."""
        where = self._where(app_name, user_id, filename, session_id)
        meta = self.store.metadata(*where, version)
        return None if meta is None else self._info(where, meta)
