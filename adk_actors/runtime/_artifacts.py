"""The artifact actor: the host's artifact store behind the message API.

Requests: ``SaveArtifact`` -> version; ``LoadArtifact`` -> Part or None;
``ListArtifacts`` -> names (session and ``user:`` ones); ``ArtifactVersions`` ->
[int]; ``ArtifactMetadata`` -> what was recorded with a version (custom metadata,
MIME type, time...) or None; ``DeleteArtifact`` -> bool. A bad name, custom metadata
that is not a JSON object or an artifact over the size limit is answered with
``bad_request`` and nothing is written. The data lives in files
(atomic writes), so a restarted actor (after kill -9 too) serves everything it had
acknowledged. A request the file system fails (a disk that is full, a path that is
a file) is answered ``internal_error`` and the actor carries on: it keeps nothing in
memory that such a failure could leave unsound, and a restart would not mend the
disk (it would only crash again, and use up its supervisor's restarts).
"""

from __future__ import annotations

import json
from typing import Any

from supervision import BadRequest, CallerRef, CallError, GenServer

from .._validate import check_message
from ..store._artifacts import ArtifactError, FileArtifactStore
from ._service_calls import (
    ArtifactMetadata,
    ArtifactVersions,
    DeleteArtifact,
    ListArtifacts,
    LoadArtifact,
    SaveArtifact,
)

__all__ = ["ArtifactActor"]


def _check_metadata(custom_metadata: Any) -> None:
    """``custom_metadata`` is None or a JSON object (string keys, values JSON can hold),
    else :class:`BadRequest` naming what is wrong, before anything is written."""
    if custom_metadata is None:
        return
    if not isinstance(custom_metadata, dict) or not all(isinstance(key, str) for key in custom_metadata):
        raise BadRequest("custom_metadata must be a dict with string keys")
    try:
        json.dumps(custom_metadata, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise BadRequest(f"custom_metadata must be JSON: {exc}") from None


class ArtifactActor(GenServer):
    check_request = staticmethod(check_message)  # malformed requests: invalid_request, never a crash

    def init(self, args: dict[str, Any]) -> None:
        self.store = FileArtifactStore(args["root"], max_bytes=args.get("max_bytes", 50 * 1024 * 1024))

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        try:
            if isinstance(request, SaveArtifact):
                _check_metadata(request.custom_metadata)
                return self.store.save(request.app_name, request.user_id, request.session_id, request.name,
                                       request.part, request.custom_metadata)
            if isinstance(request, LoadArtifact):
                return self.store.load(request.app_name, request.user_id, request.session_id, request.name,
                                       request.version)
            if isinstance(request, ListArtifacts):
                return self.store.list(request.app_name, request.user_id, request.session_id)
            if isinstance(request, ArtifactVersions):
                return self.store.versions(request.app_name, request.user_id, request.session_id, request.name)
            if isinstance(request, ArtifactMetadata):
                return self.store.metadata(request.app_name, request.user_id, request.session_id, request.name,
                                           request.version)
            if isinstance(request, DeleteArtifact):
                return self.store.delete(request.app_name, request.user_id, request.session_id, request.name)
        except ArtifactError as exc:
            raise BadRequest(str(exc)) from None
        return super().handle_call(request, caller)

    def handle_error(self, request: Any, error: Exception) -> CallError | None:
        """The file system failed the request (see the module): answered, logged."""
        if not isinstance(error, OSError):
            return None
        return CallError(f"the artifact store could not do it: {error.strerror or type(error).__name__}",
                         code="internal_error")
