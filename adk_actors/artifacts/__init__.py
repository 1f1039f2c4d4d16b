"""google-adk's ``google.adk.artifacts``: artifact services, in process.

:class:`BaseArtifactService` is the class a user's own service subclasses (the
in-process Runner's agents use any subclass); :class:`InMemoryArtifactService` keeps
versions in memory and :class:`FileArtifactService` in files, as google-adk's do.
``GcsArtifactService`` is refused when made, with a typed error naming what it needs
(no Google Cloud Storage client here).
"""

from .base_artifact_service import ArtifactVersion, BaseArtifactService, ensure_part
from .file_artifact_service import FileArtifactService
from .gcs_artifact_service import GcsArtifactService
from .in_memory_artifact_service import InMemoryArtifactService

__all__ = ["ArtifactVersion", "BaseArtifactService", "FileArtifactService", "GcsArtifactService",
           "InMemoryArtifactService", "ensure_part"]
