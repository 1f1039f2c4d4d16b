"""A google-adk artifact service (any :class:`BaseArtifactService`) as the engine's
artifact service (``save`` / ``load`` / ``list``, sync): what lets the in-process
Runner's agents use a user's own service."""

from __future__ import annotations

from typing import Any

from .. import _service_loop
from .._types import Part
from ..types import ours
from .base_artifact_service import ArtifactVersion, BaseArtifactService

__all__ = ["EngineArtifacts", "engine_artifacts"]


class EngineArtifacts:
    """The engine's artifact calls made on ``service`` (on the service loop, see
    :mod:`adk_actors._service_loop`); ``service`` is the user's object."""

    def __init__(self, service: BaseArtifactService) -> None:
        self.service = service

    def _name(self, method: str) -> str:
        return f"{type(self.service).__name__}.{method}"

    #: a google-adk service keeps custom metadata with each version (``save``'s
    #: ``custom_metadata``, :meth:`version`)
    keeps_metadata = True

    def save(self, app: str, user: str, session: str, name: str, part: Part,
             custom_metadata: dict[str, Any] | None = None) -> int:
        """``save_artifact``'s version number."""
        version = _service_loop.call(lambda: self.service.save_artifact(
            app_name=app, user_id=user, filename=name, artifact=part, session_id=session,
            custom_metadata=custom_metadata), self._name("save_artifact"))
        return int(version)

    def version(self, app: str, user: str, session: str, name: str, version: int | None = None
                ) -> ArtifactVersion | None:
        """``get_artifact_version``'s answer (None: no such version)."""
        found = _service_loop.call(lambda: self.service.get_artifact_version(
            app_name=app, user_id=user, filename=name, session_id=session, version=version),
            self._name("get_artifact_version"))
        return found if found is None or isinstance(found, ArtifactVersion) else ArtifactVersion.model_validate(
            found.model_dump() if hasattr(found, "model_dump") else found)

    def load(self, app: str, user: str, session: str, name: str, version: int | None = None) -> Part | None:
        """``load_artifact``'s part as ours (google.genai's converted), or None."""
        found = _service_loop.call(lambda: self.service.load_artifact(
            app_name=app, user_id=user, filename=name, session_id=session, version=version),
            self._name("load_artifact"))
        return None if found is None else ours(found, Part)

    def list(self, app: str, user: str, session: str) -> list[str]:
        """``list_artifact_keys`` of the session (and the user)."""
        keys = _service_loop.call(lambda: self.service.list_artifact_keys(
            app_name=app, user_id=user, session_id=session), self._name("list_artifact_keys"))
        return [str(key) for key in keys]


def engine_artifacts(service: Any) -> Any:
    """What the engine is given for ``service``: a :class:`BaseArtifactService` behind
    :class:`EngineArtifacts`; anything else (the engine's own services) as it is."""
    return EngineArtifacts(service) if isinstance(service, BaseArtifactService) else service
