"""What every router of the HTTP API shares, injected as a FastAPI dependency.

``create_app`` puts one :class:`HostApi` on the app (``app.state.host_api``); a route
asks for it with a parameter annotated :data:`Api`, and for the request's right to
act for a user with :meth:`HostApi.allowed`. A router never holds the host itself, so
each one can be mounted on a test app with a stand-in ``HostApi``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, HTTPException
from starlette.requests import HTTPConnection

from .._exceptions import UnknownAppError
from ..engine import BUILDER_ASSISTANT, ROOT_AGENT_FILE, AppCatalog, load_agent_config
from ._guard import OPERATOR, acts_for_anyone

__all__ = ["Api", "HostApi", "host_api"]


class HostApi:
    """The host behind the routes: its apps, one Runner per app (made on first use;
    with ``auto_create_session``, its runs create a missing session), the folder of its
    eval sets (None: no eval routes; ``_evals`` reads it), and the job functions a
    request may enqueue."""

    def __init__(self, host: Any, apps: AppCatalog, evals_dir: str | None = None,
                 http_functions: frozenset[str] = frozenset(), *, auto_create_session: bool = False) -> None:
        self.host = host
        self.apps = apps
        self.evals_dir = evals_dir
        self.http_functions = http_functions
        self.auto_create_session = auto_create_session
        self._runners: dict[str, Any] = {}

    def runner(self, app: str) -> Any:
        """The app's Runner; ``UnknownAppError`` (404) for an app the host does not run
        (a draft of the agent builder says so)."""
        if app not in self.apps:
            if self.apps.is_draft(app):
                raise UnknownAppError(f"app {app!r} is a draft of the agent builder: save it to run it")
            raise UnknownAppError(f"unknown app {app!r}; known apps: {self.apps.names()}")
        runner = self._runners.get(app)
        if runner is None:
            runner = self._runners[app] = self.host.runner(app, auto_create_session=self.auto_create_session)
        return runner

    def root_agent_of(self, app: str) -> Any:
        """The app's root agent (for ``/list-apps?detailed=true``, ``app-info`` and
        adk-web's graph); a draft's, from its draft; None if there is no such app or
        its definition is broken (its turns say why)."""
        try:
            if self.apps.is_draft(app):
                draft = self.apps.draft_folder(app)
                return load_agent_config(draft / ROOT_AGENT_FILE) if draft is not None else None
            return self.apps.load(app).root_agent
        except Exception:
            return None

    @staticmethod
    def allowed(request: HTTPConnection, user: str, app: str) -> None:
        """403 unless the request's token may act for ``user`` in ``app`` (the agent
        builder's assistant writes the host's agent files: the operator's only)."""
        principal = request.state.principal
        if not acts_for_anyone(principal) and principal != user:
            raise HTTPException(403, "this token may not act for that user")
        if app == BUILDER_ASSISTANT and principal != OPERATOR:
            raise HTTPException(403, "the agent builder's assistant writes the host's agent files: operator only")


async def host_api(connection: HTTPConnection) -> HostApi:
    """The app's :class:`HostApi` (a request's or a WebSocket's). A coroutine, so that
    FastAPI calls it on the event loop: a plain function would cost every request a
    hop to its thread pool and back."""
    api: HostApi = connection.app.state.host_api
    return api


#: A route's parameter ``api: Api`` is the app's :class:`HostApi`.
Api = Annotated[HostApi, Depends(host_api)]
