"""What is known of one artifact version, and its ``artifact://`` URI: google-adk's
``ArtifactVersion`` and ``get_artifact_uri``, kept at the bottom layer because every
artifact service has them: the in-process services (``adk_actors.artifacts``, which
re-exports both under google-adk's module paths) and a host's artifacts actor's client
(``runtime._services_client``)."""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

__all__ = ["ARTIFACT_SCHEME", "ArtifactVersion", "get_artifact_uri"]

ARTIFACT_SCHEME = "artifact://"


class ArtifactVersion(BaseModel):
    """What is known of one version: ``version``, ``canonical_uri`` (where its data
    is), ``custom_metadata``, ``create_time`` (seconds since the epoch) and
    ``mime_type``."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    version: int
    canonical_uri: str
    custom_metadata: dict[str, Any] = Field(default_factory=dict)
    create_time: float = Field(default_factory=time.time)
    mime_type: str | None = None


def get_artifact_uri(app_name: str, user_id: str, filename: str, version: int, session_id: str | None = None) -> str:
    """The ``artifact://`` URI of a version: the session's shape when ``session_id`` is
    given (and not empty), else the user's. Nothing is checked nor escaped."""
    where = f"apps/{app_name}/users/{user_id}"
    if session_id:
        where += f"/sessions/{session_id}"
    return f"{ARTIFACT_SCHEME}{where}/artifacts/{filename}/versions/{version}"
