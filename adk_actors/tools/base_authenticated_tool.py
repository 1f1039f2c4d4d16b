"""google-adk's ``BaseAuthenticatedTool``: a tool that gets a ready credential before its
own work runs.

A subclass implements ``_run_async_impl(*, args, tool_context, credential)`` (and, to be
declared to the model, ``_get_declaration``). When made with an ``auth_config`` that has
an ``auth_scheme``, a :class:`~adk_actors.auth.credential_manager.CredentialManager` of
that config is kept; without one, the tool runs unauthenticated (``credential`` None; a
debug line is logged).

:meth:`BaseAuthenticatedTool.run_async`, in order:

1. no credential manager: ``_run_async_impl`` runs with ``credential=None``;
2. else the manager's ``get_auth_credential(tool_context)`` (the credential service's,
   the client's answer, exchanged or refreshed as the manager does; its errors, such as
   a ``ValueError`` for a config it cannot use, are raised to the call);
3. a credential: ``_run_async_impl`` runs with it and its result is the call's;
4. none: the manager's ``request_credential(tool_context)`` puts the request on this
   call's actions (the run then emits google-adk's ``adk_request_credential`` call and
   ends the turn; see ``engine._credential_request``), and the call's response is
   ``response_for_auth_required`` when given, else ``"Pending User Authorization."``.
   When the client answers, the same call runs again and step 2 finds the credential.
"""

from __future__ import annotations

import logging
from abc import abstractmethod
from typing import Any

from ..auth.auth_credential import AuthCredential
from ..auth.auth_tool import AuthConfig
from ..auth.credential_manager import CredentialManager
from ._base import ToolContext
from ._classes import BaseTool

__all__ = ["BaseAuthenticatedTool"]

_log = logging.getLogger("adk_actors.tools")

#: the call's response while the client is asked for a credential (google-adk's words)
PENDING_AUTHORIZATION = "Pending User Authorization."


def credential_manager_of(auth_config: AuthConfig | None) -> CredentialManager | None:
    """A credential manager of ``auth_config``, or None when it or its scheme is missing."""
    if auth_config is not None and auth_config.auth_scheme is not None:
        return CredentialManager(auth_config=auth_config)
    return None


async def authenticated_call(manager: CredentialManager | None, tool_context: ToolContext,
                             response_for_auth_required: dict[str, Any] | str | None,
                             ) -> tuple[bool, AuthCredential | None, Any]:
    """Steps 1, 2 and 4 of the module: ``(True, credential, None)`` when the tool may run
    (``credential`` None without a manager), ``(False, None, response)`` when the client
    was asked and ``response`` is the call's answer meanwhile."""
    if manager is None:
        return True, None, None
    credential = await manager.get_auth_credential(tool_context)
    if credential:
        return True, credential, None
    await manager.request_credential(tool_context)
    return False, None, response_for_auth_required or PENDING_AUTHORIZATION


class BaseAuthenticatedTool(BaseTool):
    """A tool whose ``_run_async_impl`` is given a ready credential (see the module)."""

    def __init__(self, *, name: str, description: str, auth_config: AuthConfig | None = None,
                 response_for_auth_required: dict[str, Any] | str | None = None) -> None:
        """Keep ``name``, ``description``, the config and the response given while the
        client is asked; make the config's credential manager (none, and a debug line
        logged, when ``auth_config`` or its scheme is missing)."""
        super().__init__(name=name, description=description)
        self._auth_config = auth_config
        self._credentials_manager = credential_manager_of(auth_config)
        if self._credentials_manager is None:
            _log.debug("auth_config or auth_config.auth_scheme is missing: %s runs without authentication", name)
        self._response_for_auth_required = response_for_auth_required

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """Get the credential, or ask the client for it (see the module)."""
        ready, credential, pending = await authenticated_call(self._credentials_manager, tool_context,
                                                              self._response_for_auth_required)
        if not ready:
            return pending
        # None only on the unauthenticated path (no manager), as google-adk's
        return await self._run_async_impl(args=args, tool_context=tool_context,
                                          credential=credential)  # type: ignore[arg-type]

    @abstractmethod
    async def _run_async_impl(self, *, args: dict[str, Any], tool_context: ToolContext,
                              credential: AuthCredential) -> Any:
        """The tool's work with the ready ``credential``; what it returns is the call's."""
