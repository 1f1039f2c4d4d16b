"""google-adk's ``GcsArtifactService`` path. Its artifacts live in Google Cloud
Storage, which this project does not reach: making one raises
:class:`~adk_actors.errors.ServiceUnavailableError` (a ``NotImplementedError``)."""

from __future__ import annotations

from typing import Any

from ..errors._unavailable import ServiceUnavailableError, unavailable

__all__ = ["GcsArtifactService"]


class GcsArtifactService:
    """Refused when made (see the module); its arguments are google-adk's."""

    def __init__(self, bucket_name: str, **kwargs: Any) -> None:
        raise ServiceUnavailableError(unavailable(
            "GcsArtifactService", f"Google Cloud Storage (bucket {bucket_name!r})",
            "FileArtifactService(root_dir) for artifacts that outlive the process, or InMemoryArtifactService"))
