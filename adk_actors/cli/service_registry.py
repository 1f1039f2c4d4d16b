"""google-adk's ``google.adk.cli.service_registry``: factories of session, artifact and
memory services, each found by the scheme of a URI (``--session_service_uri
mydb://...``).

* :class:`ServiceRegistry` keeps one factory per scheme and kind. A factory is called
  as ``factory(uri, **kwargs)`` and returns the service; ``create_*_service(uri,
  **kwargs)`` calls the one registered for the URI's scheme, or returns None when
  there is none.
* :func:`get_service_registry` is the process's registry, made at the first call with
  the built-in schemes registered (this kit's services): sessions ``memory``,
  ``sqlite``, ``postgresql``, ``mysql``, ``agentengine``; artifacts ``memory``,
  ``file``, ``gs``; memory ``memory``, ``sqlite``, ``rag``, ``agentengine``. The
  Google Cloud ones (``agentengine``, ``gs``, ``rag``) check their URI and then refuse
  when the service is made (``ServiceUnavailableError``: no Google Cloud client here),
  and ``mysql`` is refused by ``DatabaseSessionService`` (a ``ValueError``).
* :func:`load_services_module` reads a folder's ``services.yaml`` (or
  ``services.yml``: ``services:`` a list of ``scheme``, ``type`` (``session``,
  ``artifact``, ``memory``, ``task_store``) and ``class``, a class made as
  ``cls(uri=uri, **kwargs)``), then runs its ``services.py`` (which registers its own
  factories on :func:`get_service_registry`), as google-adk does for ``adk run``,
  ``adk web`` and ``get_fast_api_app``.

Who consults it here: :mod:`adk_actors.cli.utils.service_factory` (google-adk's
``create_*_service_from_options``), ``adk-actors run AGENT_DIR`` (a
``--session_service_uri`` whose scheme it does not open itself, after loading the
agent folder's services files), and ``get_fast_api_app``, which loads the services
files but refuses a registered scheme by name: a host keeps sessions, artifacts and
memory in its own store actors, which cannot hold a service object made in the
calling process.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Protocol, cast
from urllib.parse import unquote, urlparse

from ..artifacts import (
    BaseArtifactService,
    FileArtifactService,
    GcsArtifactService,
    InMemoryArtifactService,
)
from ..memory import (
    BaseMemoryService,
    InMemoryMemoryService,
    SqliteMemoryService,
    VertexAiMemoryBankService,
    VertexAiRagMemoryService,
)
from ..sessions import (
    BaseSessionService,
    DatabaseSessionService,
    InMemorySessionService,
    VertexAiSessionService,
)
from ..sessions.sqlite_session_service import SqliteSessionService
from ..utils.yaml_utils import load_yaml_file
from .utils.envs import load_dotenv_for_agent

__all__ = ["ServiceFactory", "ServiceKind", "ServiceRegistry", "custom_scheme", "get_service_registry",
           "load_services_module"]

logger = logging.getLogger(__name__)

#: The kinds of service a scheme is registered for (a services file's ``type``).
ServiceKind = Literal["session", "artifact", "memory", "task_store"]
_KINDS: tuple[ServiceKind, ...] = ("session", "artifact", "memory", "task_store")


class ServiceFactory(Protocol):
    """What a registered factory is: called with the whole URI and keyword arguments
    (``agents_dir`` among them when a CLI path builds the service), it returns the
    service."""

    def __call__(self, uri: str, **kwargs: Any) -> BaseSessionService | BaseArtifactService | BaseMemoryService:
        ...


def _scheme_of(uri: str) -> str:
    return urlparse(uri).scheme


class ServiceRegistry:
    """Factories by URI scheme, one table per kind of service (see the module). A
    scheme registered again replaces the earlier factory."""

    def __init__(self) -> None:
        self._factories: dict[ServiceKind, dict[str, ServiceFactory]] = {kind: {} for kind in _KINDS}
        self._builtin: set[tuple[ServiceKind, str]] = set()

    def _register(self, kind: ServiceKind, scheme: str, factory: ServiceFactory) -> None:
        """Keep ``factory`` for ``scheme``; a TypeError (nothing kept) when the scheme is
        not a non-empty string or the factory is not callable."""
        if not isinstance(scheme, str) or not scheme:
            raise TypeError(f"a {kind} service scheme is a non-empty string, not {scheme!r}")
        if not callable(factory):
            raise TypeError(f"the factory for {kind} scheme {scheme!r} is not callable: {factory!r}")
        self._factories[kind][scheme] = factory
        self._builtin.discard((kind, scheme))

    def register_session_service(self, scheme: str, factory: ServiceFactory) -> None:
        """Make ``factory`` the session service factory of URIs ``scheme://...``."""
        self._register("session", scheme, factory)

    def register_artifact_service(self, scheme: str, factory: ServiceFactory) -> None:
        """Make ``factory`` the artifact service factory of URIs ``scheme://...``."""
        self._register("artifact", scheme, factory)

    def register_memory_service(self, scheme: str, factory: ServiceFactory) -> None:
        """Make ``factory`` the memory service factory of URIs ``scheme://...``."""
        self._register("memory", scheme, factory)

    def _register_task_store_service(self, scheme: str, factory: ServiceFactory) -> None:
        """Keep an A2A task store factory (google-adk's private hook; nothing here
        consults it but :meth:`_create_task_store_service`)."""
        self._register("task_store", scheme, factory)

    def _create(self, kind: ServiceKind, uri: str, kwargs: dict[str, Any]) -> Any:
        factory = self._factories[kind].get(_scheme_of(uri))
        return None if factory is None else factory(uri, **kwargs)

    def create_session_service(self, uri: str, **kwargs: Any) -> BaseSessionService | None:
        """The session service the factory of ``uri``'s scheme makes from ``uri`` and
        ``kwargs`` (its own errors raised as they are); None when no factory serves the
        scheme (or ``uri`` has none)."""
        return cast("BaseSessionService | None", self._create("session", uri, kwargs))

    def create_artifact_service(self, uri: str, **kwargs: Any) -> BaseArtifactService | None:
        """As :meth:`create_session_service`, for an artifact service."""
        return cast("BaseArtifactService | None", self._create("artifact", uri, kwargs))

    def create_memory_service(self, uri: str, **kwargs: Any) -> BaseMemoryService | None:
        """As :meth:`create_session_service`, for a memory service."""
        return cast("BaseMemoryService | None", self._create("memory", uri, kwargs))

    def _create_task_store_service(self, uri: str, **kwargs: Any) -> Any:
        """The A2A task store of ``uri``'s scheme; a ValueError naming the scheme and the
        registered ones when none is registered for it."""
        scheme = _scheme_of(uri)
        if scheme not in self._factories["task_store"]:
            raise ValueError(f"no A2A task store is registered for scheme {scheme!r}; registered: "
                             f"{sorted(self._factories['task_store'])}")
        return self._factories["task_store"][scheme](uri, **kwargs)

    def _custom_scheme(self, kind: ServiceKind, uri: str) -> str | None:
        """``uri``'s scheme when a factory that is not built in (a user's) serves it."""
        scheme = _scheme_of(uri)
        if scheme and scheme in self._factories[kind] and (kind, scheme) not in self._builtin:
            return scheme
        return None


_service_registry_instance: ServiceRegistry | None = None


def get_service_registry() -> ServiceRegistry:
    """The process's registry: made at the first call, with the built-in schemes
    registered (see the module); the same object afterwards."""
    global _service_registry_instance
    if _service_registry_instance is None:
        registry = ServiceRegistry()
        _register_builtin_services(registry)
        _service_registry_instance = registry
    return _service_registry_instance


def custom_scheme(kind: ServiceKind, uri: str | None) -> str | None:
    """The scheme of ``uri`` when the process's registry serves it for ``kind`` with a
    factory registered by the user (in code or a services file), not a built-in one;
    else None (no URI, no scheme, unregistered or built in)."""
    return None if not uri else get_service_registry()._custom_scheme(kind, uri)


# -- the services files ------------------------------------------------------------------


def load_services_module(agents_dir: str) -> None:
    """Register the services a folder declares. In order: nothing (a debug line) when
    ``agents_dir`` is no folder; the folder put first on ``sys.path`` (so that its
    files import their neighbours), if not there yet; ``services.yaml`` then
    ``services.yml``, each present one registered (a file that does not read, or names a
    class that does not import: a warning logged and nothing more is loaded, its
    earlier entries kept); then ``services.py`` run as module ``services`` (once per
    file: a file already run is not run again; one that raises is logged as a warning
    and leaves no ``services`` module behind). A scheme in both files ends with the
    ``services.py`` factory, which registers last."""
    folder = Path(agents_dir)
    if not folder.is_dir():
        logger.debug("load_services_module: %s is no folder; no services loaded", agents_dir)
        return
    if agents_dir not in sys.path:
        sys.path.insert(0, agents_dir)
    for name in ("services.yaml", "services.yml"):
        path = folder / name
        if not path.exists():
            continue
        try:
            _register_services_from_yaml_config(load_yaml_file(path), get_service_registry())
        except Exception as exc:  # the user's file or class: any error stops the loading, as in google-adk
            logger.warning("services not loaded from %s: %s", path, exc)
            return
        logger.debug("services registered from %s", path)
    _run_services_py(folder / "services.py")


def _run_services_py(path: Path) -> None:
    """Run ``path`` as module ``services`` unless it is missing or already that module
    (see :func:`load_services_module`)."""
    if not path.is_file():
        logger.debug("no %s; no services registered from Python", path)
        return
    held = sys.modules.get("services")
    held_file = getattr(held, "__file__", None)
    if held_file and Path(held_file).resolve() == path.resolve():
        return
    spec = importlib.util.spec_from_file_location("services", path)
    if spec is None or spec.loader is None:
        logger.warning("services not loaded: %s cannot be imported", path)
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["services"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's services.py: any error it raises is told, as google-adk tells it
        if sys.modules.get("services") is module:
            del sys.modules["services"]
        logger.warning("services not loaded from %s: %s: %s", path, type(exc).__name__, exc)
        return
    logger.debug("services registered by %s", path)


def _class_factory(class_path: str) -> ServiceFactory:
    """A factory making ``cls(uri=uri, **kwargs)`` of the class ``module.Class`` names;
    ImportError (with the cause) when it does not import."""
    module_name, _, class_name = class_path.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except Exception as exc:  # a bad path: ValueError (no module), ImportError, AttributeError ...
        raise ImportError(f"the service class {class_path!r} does not import: {exc}") from exc

    def factory(uri: str, **kwargs: Any) -> Any:
        return cls(uri=uri, **kwargs)

    return cast(ServiceFactory, factory)


def _register_services_from_yaml_config(config: Any, registry: ServiceRegistry) -> None:
    """Register each entry of ``config["services"]``: an entry lacking its scheme, type
    or class, or of an unknown type, is skipped with a warning; a class that does not
    import raises ImportError (entries before it stay registered)."""
    if not isinstance(config, dict) or not config.get("services"):
        return
    registrars: dict[str, Callable[[str, ServiceFactory], None]] = {
        "session": registry.register_session_service, "artifact": registry.register_artifact_service,
        "memory": registry.register_memory_service, "task_store": registry._register_task_store_service}
    for entry in config["services"]:
        fields = entry if isinstance(entry, dict) else {}
        scheme, kind, class_path = fields.get("scheme"), fields.get("type"), fields.get("class")
        if not (scheme and kind and class_path):
            logger.warning("services file: an entry needs scheme, type and class; skipped: %s", entry)
            continue
        if kind not in registrars:
            logger.warning("services file: unknown service type %r (session, artifact, memory or task_store); "
                           "skipped", kind)
            continue
        registrars[kind](str(scheme), _class_factory(str(class_path)))


# -- the built-in schemes ----------------------------------------------------------------


def _without(kwargs: dict[str, Any], *names: str) -> dict[str, Any]:
    return {key: value for key, value in kwargs.items() if key not in names}


def _gcp_project(agents_dir: Any, what: str) -> tuple[str, str]:
    """``GOOGLE_CLOUD_PROJECT`` and ``GOOGLE_CLOUD_LOCATION``, the ``.env`` of
    ``agents_dir`` read first; a ValueError without an agents folder or either value."""
    if not agents_dir:
        raise ValueError(f"{what} needs the agents folder (agents_dir) to read its Google Cloud project")
    load_dotenv_for_agent("", str(agents_dir))
    project, location = os.environ.get("GOOGLE_CLOUD_PROJECT"), os.environ.get("GOOGLE_CLOUD_LOCATION")
    if not project or not location:
        raise ValueError(f"{what} needs GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION set")
    return project, location


def _agent_engine(uri: str, agents_dir: Any) -> dict[str, Any]:
    """Project, location and engine id from ``agentengine://ID`` (the project from the
    environment) or ``agentengine://projects/P/locations/L/reasoningEngines/ID``; a
    ValueError for an empty or misshapen name."""
    parsed = urlparse(uri)
    name = parsed.netloc + parsed.path
    if not name:
        raise ValueError("an agentengine:// URI names the agent engine (its id or its resource name)")
    if "/" not in name:
        project, location = _gcp_project(agents_dir, "agentengine://ID")
        return {"project": project, "location": location, "agent_engine_id": name}
    parts = name.split("/")
    if len(parts) != 6 or parts[0] != "projects" or parts[2] != "locations" or parts[4] != "reasoningEngines":
        raise ValueError(f"agentengine://{name}: a resource name is "
                         "projects/PROJECT/locations/LOCATION/reasoningEngines/ID")
    return {"project": parts[1], "location": parts[3], "agent_engine_id": parts[5]}


def _sqlite_sessions(uri: str, **kwargs: Any) -> BaseSessionService:
    """``sqlite:///rel.db`` (from the working folder) or ``sqlite:////abs.db``; no
    path: in memory. Keyword arguments other than ``agents_dir`` are not used (a
    warning names them)."""
    path = urlparse(uri).path
    if not path:
        return InMemorySessionService()
    unused = sorted(_without(kwargs, "agents_dir"))
    if unused:
        logger.warning("sqlite sessions take no options; not used: %s", unused)
    return SqliteSessionService(db_path=path[1:] if path.startswith("/") else path)


def _file_artifacts(uri: str, **_: Any) -> BaseArtifactService:
    """``file:///PATH`` (or ``file://localhost/PATH``): the files under PATH; a
    ValueError for another host or no path."""
    parsed = urlparse(uri)
    if parsed.netloc not in ("", "localhost"):
        raise ValueError(f"{uri}: a file:// artifact URI names a folder of this machine")
    if not parsed.path:
        raise ValueError(f"{uri}: a file:// artifact URI needs a path")
    return FileArtifactService(root_dir=Path(unquote(parsed.path)))


def _rag_memory(uri: str, **kwargs: Any) -> BaseMemoryService:
    corpus = urlparse(uri).netloc
    if not corpus:
        raise ValueError("a rag:// URI names the RAG corpus (rag://CORPUS)")
    project, location = _gcp_project(kwargs.get("agents_dir"), "rag://")
    service = VertexAiRagMemoryService(rag_corpus=f"projects/{project}/locations/{location}/ragCorpora/{corpus}")
    return cast(BaseMemoryService, service)


def _register_builtin_services(registry: ServiceRegistry) -> None:
    """Register the built-in schemes (see the module) and mark them built in."""
    def database(uri: str, **kwargs: Any) -> BaseSessionService:
        return DatabaseSessionService(db_url=uri, **_without(kwargs, "agents_dir"))

    def agentengine_sessions(uri: str, **kwargs: Any) -> BaseSessionService:
        return VertexAiSessionService(**_agent_engine(uri, kwargs.get("agents_dir")))

    def gcs(uri: str, **kwargs: Any) -> BaseArtifactService:
        service = GcsArtifactService(bucket_name=urlparse(uri).netloc, **_without(kwargs, "agents_dir", "per_agent"))
        return cast(BaseArtifactService, service)

    def agentengine_memory(uri: str, **kwargs: Any) -> BaseMemoryService:
        return cast(BaseMemoryService, VertexAiMemoryBankService(**_agent_engine(uri, kwargs.get("agents_dir"))))

    def sqlite_memory(uri: str, **kwargs: Any) -> BaseMemoryService:
        return SqliteMemoryService(db_path=uri, **_without(kwargs, "agents_dir"))

    builtin: dict[ServiceKind, dict[str, Callable[..., Any]]] = {
        "session": {"memory": lambda uri, **_: InMemorySessionService(), "agentengine": agentengine_sessions,
                    "sqlite": _sqlite_sessions, "postgresql": database, "mysql": database},
        "artifact": {"memory": lambda uri, **_: InMemoryArtifactService(), "gs": gcs, "file": _file_artifacts},
        "memory": {"memory": lambda uri, **_: InMemoryMemoryService(), "rag": _rag_memory,
                   "agentengine": agentengine_memory, "sqlite": sqlite_memory},
    }
    for kind, factories in builtin.items():
        for scheme, factory in factories.items():
            registry._register(kind, scheme, cast(ServiceFactory, factory))
            registry._builtin.add((kind, scheme))
