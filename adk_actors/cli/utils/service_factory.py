"""google-adk's ``google.adk.cli.utils.service_factory``: the session, artifact and
memory services a server builds from its options (``--session_service_uri`` ...), in
this process, through :func:`adk_actors.cli.service_registry.get_service_registry`
(a scheme a user registered included).

With no URI, google-adk's defaults: ``GOOGLE_CLOUD_AGENT_ENGINE_ID`` set: Agent
Engine's sessions and memory (refused here when made: no Google Cloud client; this
best-effort choice then falls back, with a warning); else local storage, in the
agents folder's ``.adk/`` (``session.db``, ``artifacts/``), unless it is turned off
(``use_local_storage=False``, ``ADK_DISABLE_LOCAL_STORAGE``), the process runs in
Cloud Run or Kubernetes (``K_SERVICE``, ``KUBERNETES_SERVICE_HOST``) or the folder is
not writable (each: in memory, with a warning), ``ADK_FORCE_LOCAL_STORAGE`` turning it
back on. Unlike google-adk's, the local storage is one ``.adk/`` of the agents folder
for all its agents, not one per agent.
"""

from __future__ import annotations

import errno
import logging
import os
from pathlib import Path
from typing import Any

from ...artifacts import BaseArtifactService, FileArtifactService, InMemoryArtifactService
from ...errors import ServiceUnavailableError
from ...memory import BaseMemoryService, InMemoryMemoryService
from ...sessions import BaseSessionService, DatabaseSessionService, InMemorySessionService
from ...sessions.sqlite_session_service import SqliteSessionService
from ...store import redacted_url
from ...utils.env_utils import is_env_enabled
from ..service_registry import get_service_registry

__all__ = ["create_artifact_service_from_options", "create_memory_service_from_options",
           "create_session_service_from_options"]

logger = logging.getLogger(__name__)

_DISABLE = "ADK_DISABLE_LOCAL_STORAGE"
_FORCE = "ADK_FORCE_LOCAL_STORAGE"
_LOCAL_FAILURES = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})


def _agent_engine_uri() -> str | None:
    engine = os.environ.get("GOOGLE_CLOUD_AGENT_ENGINE_ID")
    return f"agentengine://{engine}" if engine else None


def _writable(folder: Path) -> bool:
    try:
        return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)
    except OSError:
        return False


def _local_storage(base: Path, requested: bool) -> tuple[bool, str | None]:
    """Whether to keep the services in ``base/.adk`` and, if not, why (None: not asked
    for), by the rules of the module, in google-adk's order."""
    if is_env_enabled(_DISABLE):
        return False, f"{_DISABLE} is set: the services are kept in memory"
    if is_env_enabled(_FORCE):
        if _writable(base):
            return True, None
        return False, f"{_FORCE} is set but {base} is not writable: the services are kept in memory"
    if not requested:
        return False, None
    if os.environ.get("K_SERVICE") or os.environ.get("KUBERNETES_SERVICE_HOST"):
        return False, (f"Cloud Run or Kubernetes: the services are kept in memory, not in {base}/.adk "
                       f"({_FORCE}=1 keeps them there)")
    if not _writable(base):
        return False, f"{base} is not writable: the services are kept in memory ({_FORCE}=1 insists)"
    return True, None


def _auto_agent_engine(kind: str, base: Path, **kwargs: Any) -> Any:
    """The Agent Engine service of ``GOOGLE_CLOUD_AGENT_ENGINE_ID``, or None when it is
    unset or the service cannot be made (a warning says why)."""
    uri = _agent_engine_uri()
    if uri is None:
        return None
    registry = get_service_registry()
    create = registry.create_session_service if kind == "session" else registry.create_memory_service
    try:
        return create(uri, agents_dir=str(base), **kwargs)
    except (ValueError, ServiceUnavailableError) as exc:
        logger.warning("GOOGLE_CLOUD_AGENT_ENGINE_ID: no Agent Engine %s service (%s); using the local one",
                       kind, exc)
        return None


def create_session_service_from_options(*, base_dir: Path | str, session_service_uri: str | None = None,
                                        session_db_kwargs: dict[str, Any] | None = None,
                                        app_name_to_dir: dict[str, str] | None = None,
                                        use_local_storage: bool = True) -> BaseSessionService:
    """The session service of these options. A URI: the registry's factory of its
    scheme, called with the URI, ``agents_dir=str(base_dir)`` and ``session_db_kwargs``;
    a scheme with none: ``DatabaseSessionService`` (a ValueError naming the URL for one
    it does not open). No URI: Agent Engine or local storage (``base_dir/.adk/session.db``)
    or memory, as the module says; ``app_name_to_dir`` is not used (one file for all)."""
    base = Path(base_dir)
    kwargs: dict[str, Any] = {"agents_dir": str(base), **(session_db_kwargs or {})}
    if session_service_uri:
        logger.info("sessions: %s", redacted_url(session_service_uri))
        service = get_service_registry().create_session_service(session_service_uri, **kwargs)
        if service is not None:
            return service
        return DatabaseSessionService(db_url=session_service_uri, **session_db_kwargs or {})
    engine = _auto_agent_engine("session", base, **(session_db_kwargs or {}))
    if engine is not None:
        return engine  # type: ignore[no-any-return]
    local, why = _local_storage(base, use_local_storage)
    if not local:
        logger.warning("%s", why or "local storage is off: the sessions are kept in memory")
        return InMemorySessionService()
    try:
        (base / ".adk").mkdir(exist_ok=True)
        return SqliteSessionService(db_path=str(base / ".adk" / "session.db"))
    except OSError as exc:
        if exc.errno not in _LOCAL_FAILURES and not isinstance(exc, PermissionError):
            raise
        logger.warning("the sessions cannot be kept in %s/.adk (%s): kept in memory", base, exc)
        return InMemorySessionService()


def create_memory_service_from_options(*, base_dir: Path | str,
                                       memory_service_uri: str | None = None) -> BaseMemoryService:
    """The memory service of these options. A URI: the registry's factory of its scheme,
    called with the URI and ``agents_dir=str(base_dir)``; a ValueError naming the URI
    when no factory serves its scheme. No URI: Agent Engine's (see the module), else in
    memory."""
    base = Path(base_dir)
    if memory_service_uri:
        logger.info("memory: %s", redacted_url(memory_service_uri))
        service = get_service_registry().create_memory_service(memory_service_uri, agents_dir=str(base))
        if service is None:
            raise ValueError(f"no memory service for {redacted_url(memory_service_uri)}: its scheme is not "
                             "registered (memory://, sqlite://, or one a services file registers)")
        return service
    engine = _auto_agent_engine("memory", base)
    return engine if engine is not None else InMemoryMemoryService()


def create_artifact_service_from_options(*, base_dir: Path | str, artifact_service_uri: str | None = None,
                                         strict_uri: bool = False, app_name_to_dir: dict[str, str] | None = None,
                                         use_local_storage: bool = True) -> BaseArtifactService:
    """The artifact service of these options. A URI: the registry's factory of its
    scheme, called with the URI and ``agents_dir=str(base_dir)``; a scheme with none: a
    ValueError naming the URI when ``strict_uri``, else in memory with a warning. No
    URI: local storage (``base_dir/.adk/artifacts``) or memory, as the module says;
    ``app_name_to_dir`` is not used."""
    base = Path(base_dir)
    if artifact_service_uri:
        logger.info("artifacts: %s", redacted_url(artifact_service_uri))
        service = get_service_registry().create_artifact_service(artifact_service_uri, agents_dir=str(base))
        if service is not None:
            return service
        problem = (f"no artifact service for {redacted_url(artifact_service_uri)}: its scheme is not registered "
                   "(memory://, file:///PATH, or one a services file registers)")
        if strict_uri:
            raise ValueError(problem)
        logger.warning("%s; the artifacts are kept in memory", problem)
        return InMemoryArtifactService()
    local, why = _local_storage(base, use_local_storage)
    if not local:
        logger.warning("%s", why or "local storage is off: the artifacts are kept in memory")
        return InMemoryArtifactService()
    try:
        return FileArtifactService(root_dir=base / ".adk" / "artifacts")
    except OSError as exc:
        if exc.errno not in _LOCAL_FAILURES and not isinstance(exc, PermissionError):
            raise
        logger.warning("the artifacts cannot be kept in %s/.adk (%s): kept in memory", base, exc)
        return InMemoryArtifactService()
