"""google-adk's ``AuthenticatedFunctionTool``: a :class:`FunctionTool` whose function may
take a ``credential`` parameter, given the ready credential of the tool's ``auth_config``.

When made: the function is described as a :class:`FunctionTool` describes it, except
that a parameter named ``credential`` is neither declared to the model nor taken from
its arguments (as ``tool_context``). With no ``auth_config``, or one without an
``auth_scheme``, a warning is logged and the tool runs unauthenticated.

When run (:meth:`AuthenticatedFunctionTool.run_async`), in order: the credential is got,
or the client asked for it, exactly as :class:`BaseAuthenticatedTool` does (the call
then answers ``response_for_auth_required``, else ``"Pending User Authorization."``,
and runs again after the client's answer); then :meth:`_run_async_impl` runs the
function as a :class:`FunctionTool` runs it (the model's arguments validated, a
validation error the call's error; the context given), with ``credential=`` the
credential (None when unauthenticated) when the function has that parameter.
"""

from __future__ import annotations

import copy
import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any

from .._callables import resolve_function
from ..auth.auth_credential import AuthCredential
from ..auth.auth_tool import AuthConfig
from ._base import ToolContext
from ._function import FunctionTool
from .base_authenticated_tool import authenticated_call, credential_manager_of

__all__ = ["AuthenticatedFunctionTool"]

_log = logging.getLogger("adk_actors.tools")

#: the parameter the ready credential is given as (google-adk's name)
CREDENTIAL = "credential"


def _without_credential(func: Callable[..., Any], skipped: int) -> Callable[..., Any]:
    """``func`` as the model is told of it: a stand-in with its name, docstring and
    module, its signature without its first ``skipped`` parameters (extra arguments given
    first) nor ``credential``; only described, never called."""
    signature = inspect.signature(func)

    def view(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{func!r} is only described here")

    functools.update_wrapper(view, func)  # its __wrapped__ resolves the type hints; marks copied
    kept = [p for p in list(signature.parameters.values())[skipped:] if p.name != CREDENTIAL]
    view.__signature__ = signature.replace(parameters=kept)  # type: ignore[attr-defined]
    view.__annotations__ = {k: v for k, v in getattr(func, "__annotations__", {}).items() if k != CREDENTIAL}
    return view


class AuthenticatedFunctionTool(FunctionTool):
    """A function tool given the ready credential of its ``auth_config`` (see the module)."""

    def __init__(self, *, func: Callable[..., Any], auth_config: AuthConfig | None = None,
                 response_for_auth_required: dict[str, Any] | str | None = None) -> None:
        """Describe ``func`` without its ``credential`` parameter, keep the config's
        credential manager (none, and a warning logged, when the config or its scheme is
        missing) and the response given while the client is asked."""
        target, extra = resolve_function(func)
        takes_credential = CREDENTIAL in inspect.signature(target).parameters
        super().__init__(_without_credential(target, len(extra)) if takes_credential else func)
        if takes_credential:  # described from the stand-in; the function itself is called
            self.func, self.extra_args = target, extra
            self._is_async = inspect.iscoroutinefunction(target)
        self._takes_credential = takes_credential
        self._credentials_manager = credential_manager_of(auth_config)
        if self._credentials_manager is None:
            _log.warning("auth_config or auth_config.auth_scheme is missing: %s runs without authentication "
                         "(use FunctionTool when it needs none)", self.name)
        self._response_for_auth_required = response_for_auth_required

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """Get the credential, or ask the client for it, then run (see the module)."""
        ready, credential, pending = await authenticated_call(self._credentials_manager, tool_context,
                                                              self._response_for_auth_required)
        if not ready:
            return pending
        return await self._run_async_impl(args=args, tool_context=tool_context, credential=credential)

    async def _run_async_impl(self, *, args: dict[str, Any], tool_context: ToolContext,
                              credential: AuthCredential | None) -> Any:
        """Run the function as a :class:`FunctionTool` does, ``credential=credential``
        added when the function takes it."""
        if not self._takes_credential:
            return await super().run_async(args=args, tool_context=tool_context)
        call = copy.copy(self)  # this call's own function, bound to its credential
        call.func = functools.partial(self.func, credential=credential)
        return await FunctionTool.run_async(call, args=args, tool_context=tool_context)
