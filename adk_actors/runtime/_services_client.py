"""How a run reaches the host's services from a run worker's threads.

The engine takes service objects (breakers, artifacts, memory, approvals,
credentials); in a run worker each is a bridge that asks the host's service actor
through the worker (a :class:`ServiceCaller`: its main thread sends the request and
hands the answer back), and waits a bounded time: ``BREAKER_WAIT`` for a breaker
permit, ``SERVICE_WAIT`` for the others. A service that does not answer is looked up
again next time (it may have restarted).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
import uuid
from typing import Any, Protocol

from pydantic import SecretStr

from supervision import Backoff, ChildSpec
from supervision.lowlevel import load_scaled
from supervision.protocol import StartChild

from .._artifact_version import ArtifactVersion, get_artifact_uri
from .._exceptions import McpCallTimeout, McpError, McpUnavailable
from .._secrets import register_secret
from ..engine import Decision
from ..models import ModelError
from ..store import ArtifactError
from ._service_calls import (
    MCP_TOOLSET_ACTOR,
    Acquire,
    AddSessionToMemory,
    ArtifactMetadata,
    CallApproval,
    CallMcpTool,
    Credential,
    DeleteCredential,
    Deny,
    GetCredential,
    ListArtifacts,
    ListMcpTools,
    LoadArtifact,
    McpCallProgress,
    McpToolsetStart,
    PutCredential,
    Record,
    RegisterApproval,
    SaveArtifact,
    SearchMemory,
    WaitDecision,
)

__all__ = ["BREAKER_WAIT", "SERVICE_WAIT", "ServiceCaller", "ServiceError", "mcp_toolset_child", "service_bridges"]


class ServiceCaller(Protocol):
    """What a bridge needs of the run worker it lives in."""

    def service_call(self, name: str, request: Any) -> concurrent.futures.Future[Any]: ...

    def service_result(self, name: str, request: Any, timeout_error: type[Exception] = RuntimeError) -> Any: ...

    def service_cast(self, name: str, request: Any) -> None: ...

    def service_forget(self, name: str) -> None: ...


#: How long a model call waits for the breaker actor before failing fast.
BREAKER_WAIT = 2.0
#: How long a tool waits for a host service (artifacts ...) before failing.
SERVICE_WAIT = 10.0
#: How an MCP toolset actor is restarted after its server died: 0.2 s, doubling up to 10 s.
MCP_BACKOFF = Backoff(min_delay=0.2, max_delay=10.0)
#: How long one try at listing an MCP toolset's tools waits (see _RemoteMcp.list_tools).
_MCP_LIST_TRY = 1.0
#: How often a pending MCP call with a progress callback asks for the call's reports.
_MCP_PROGRESS_EVERY = 0.25
#: How long one such ask waits for the toolset actor.
_MCP_PROGRESS_WAIT = 2.0

_log = logging.getLogger("adk_actors.mcp")


class ServiceError(Exception):
    """A host service refused a request or could not be reached."""

    def __init__(self, service: str, code: str, detail: str) -> None:
        super().__init__(f"{service}: {code}: {detail}")
        self.code = code
        self.detail = detail


def _unavailable(why: str) -> Exception:
    return ModelError(f"the circuit breaker service is unavailable: {why}", error_type="breaker_unavailable")


class _BreakerBridge:
    """The breaker client of a run: the host's breaker actor, through the run worker."""

    def __init__(self, actor: ServiceCaller) -> None:
        self.actor = actor

    async def acquire(self, model: str) -> Any:
        future = self.actor.service_call("breakers", Acquire(model))
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), BREAKER_WAIT)
        except TimeoutError:
            self.actor.service_forget("breakers")
            raise _unavailable(f"no answer within {BREAKER_WAIT} s (it may be restarting)") from None
        except ServiceError as error:
            raise _unavailable(str(error)) from None

    def record(self, model: str, permit_id: str, outcome: str, duration: float, retry_after: float | None) -> None:
        self.actor.service_cast("breakers", Record(model, permit_id, outcome, duration, retry_after))


class _RemoteArtifacts:
    """The engine's artifact service for a run: the host's artifact actor (sync calls
    from tool threads; each waits at most ``SERVICE_WAIT`` seconds). A bad name or
    metadata the actor refuses is an :class:`ArtifactError` with its reason; an actor
    that does not answer, an :class:`ArtifactError` saying so."""

    #: the artifact actor keeps custom metadata with each version (its store's JSON
    #: beside the data, so a restarted actor has it too): ``save``'s
    #: ``custom_metadata``, :meth:`version`
    keeps_metadata = True

    def __init__(self, actor: ServiceCaller) -> None:
        self.actor = actor

    def _call(self, request: Any) -> Any:
        try:
            return self.actor.service_result("artifacts", request, ArtifactError)
        except ServiceError as error:
            raise ArtifactError(error.detail if error.code == "bad_request" else str(error)) from None

    def save(self, app: str, user: str, session: str, name: str, part: Any,
             custom_metadata: dict[str, Any] | None = None) -> int:
        """The actor stores the next version of ``name`` (with ``custom_metadata``); its
        number."""
        version: int = self._call(SaveArtifact(app, user, session, name, part, custom_metadata))
        return version

    def version(self, app: str, user: str, session: str, name: str, version: int | None = None
                ) -> ArtifactVersion | None:
        """What the actor recorded with a version of ``name`` (the latest unless
        ``version``) as google-adk's ``ArtifactVersion``: its custom metadata, MIME type
        (``text/plain`` for text, as the in-memory service says), create time and an
        ``artifact://`` URI naming it (the user's shape for a ``user:`` name); None when
        there is no such artifact or version."""
        meta: dict[str, Any] | None = self._call(ArtifactMetadata(app, user, session, name, version))
        if meta is None:
            return None
        number = int(meta["version"])
        where = None if name.startswith("user:") else session
        return ArtifactVersion(version=number, canonical_uri=get_artifact_uri(app, user, name, number, where),
                               custom_metadata=dict(meta.get("custom_metadata") or {}),
                               create_time=float(meta.get("created", 0.0)), mime_type=meta.get("mime_type"))

    def load(self, app: str, user: str, session: str, name: str, version: int | None = None) -> Any:
        return self._call(LoadArtifact(app, user, session, name, version))

    def list(self, app: str, user: str, session: str) -> list[str]:
        names: list[str] = self._call(ListArtifacts(app, user, session))
        return names


class _RemoteMemory:
    """The engine's memory service for a run: the host's memory actor."""

    def __init__(self, actor: ServiceCaller) -> None:
        self.actor = actor

    def search(self, app: str, user: str, query: str, limit: int = 10) -> list[Any]:
        found: list[Any] = self.actor.service_result("memory", SearchMemory(app, user, query, limit))
        return found

    def add_session(self, app: str, user: str, session: str, events: list[Any]) -> None:
        """Index the session as this run sees it (``events``: its own events not yet
        in the session store included)."""
        self.actor.service_result("memory", AddSessionToMemory(app, user, session, tuple(events)))


class _RemoteApprovals:
    """Approvals through the host's approval server. Waits in 1 s slices, checking for
    cancellation between them; a server that restarts is looked up again and asked
    again (pending approvals are persisted, so the decision still arrives)."""

    def __init__(self, actor: ServiceCaller) -> None:
        self.actor = actor

    async def _ask(self, request: Any, wait: float) -> Any:
        future = self.actor.service_call("approvals", request)
        return await asyncio.wait_for(asyncio.wrap_future(future), wait)

    async def call_status(self, ctx: Any, call_id: str) -> str | None:
        """How the approval of the session's call ``call_id`` stands (None: never asked);
        ``ServiceError`` when the approval server does not answer."""
        session = ctx.session
        try:
            approval = await self._ask(CallApproval(session.app_name, session.user_id, session.session_id, call_id),
                                       SERVICE_WAIT)
        except TimeoutError:
            raise ServiceError("approvals", "timeout", "the approval server did not answer") from None
        return None if approval is None else str(approval.status)

    async def request(self, ctx: Any, tool: str, args: dict[str, Any], hint: str, timeout: float,
                      call_id: str = "") -> Any:
        session = ctx.session
        deadline = time.monotonic() + timeout
        approval = None
        while approval is None:
            ctx.check_cancelled()
            if time.monotonic() >= deadline:
                return Decision(False, f"the approval service could not be reached within {timeout:g} s")
            try:
                approval = await self._ask(RegisterApproval(session.app_name, session.user_id, session.session_id,
                                                            ctx.run_id, ctx.agent.name, tool, dict(args), hint,
                                                            call_id), SERVICE_WAIT)
            except (TimeoutError, ServiceError):
                self.actor.service_forget("approvals")
                await asyncio.sleep(0.1)
        while True:
            ctx.check_cancelled()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.actor.service_cast("approvals", Deny(approval.id, f"no decision within {timeout:g} s"))
                return Decision(False, f"no decision within {timeout:g} s (timed out)", approval.id)
            slice_ = min(1.0, remaining)
            try:
                current = await self._ask(WaitDecision(approval.id, slice_), slice_ + 2.0)
            except (TimeoutError, ServiceError):
                self.actor.service_forget("approvals")  # restarting: ask the new one
                await asyncio.sleep(0.05)
                continue
            if current.status == "approved":
                return Decision(True, "", approval.id)
            if current.status != "pending":
                return Decision(False, current.reason or current.status, approval.id)


class _RemoteCredentials:
    """The user's credentials through the host's credential actor (sync, from tools)."""

    def __init__(self, actor: ServiceCaller) -> None:
        self.actor = actor

    def get(self, app: str, user: str, key: str) -> Any:
        """The stored credential; its secrets are known secrets of this run's process
        from now on, so a tool result or error that holds one is redacted."""
        credential = self.actor.service_result("credentials", GetCredential(app, user, key))
        for value in vars(credential).values() if credential is not None else ():
            if isinstance(value, SecretStr):
                register_secret(value.get_secret_value())
        return credential

    def delete(self, app: str, user: str, key: str) -> bool:
        """Forget the user's credential ``key`` (a token the API rejected); whether
        there was one."""
        return bool(self.actor.service_result("credentials", DeleteCredential(app, user, key)))

    def put(self, app: str, user: str, key: str, credential: Any) -> None:
        """Store ``credential`` (a :class:`Credential`, or a dict of its fields: a tool
        below the runtime's layer gives one) for the user."""
        if isinstance(credential, dict):
            credential = Credential.model_validate(credential)
        self.actor.service_result("credentials", PutCredential(app, user, key, credential))


class _RemoteMcp:
    """The host's MCP toolset actors (``_mcp``), as a run's ``mcp`` service."""

    def __init__(self, actor: ServiceCaller) -> None:
        self.actor = actor

    async def list_tools(self, toolset: Any) -> list[dict[str, Any]]:
        """The toolset's tools, asked again (with a fresh lookup) every ``_MCP_LIST_TRY``
        seconds until ``timeout + SERVICE_WAIT``: the name may still lead to an actor
        that just died (the registry forgets it a moment later), and a living one
        answers at once from the list it holds."""
        deadline = time.monotonic() + toolset.params.timeout + SERVICE_WAIT
        while True:
            try:
                tools: list[dict[str, Any]] = await self._ask(toolset, ListMcpTools(), _MCP_LIST_TRY)
                return tools
            except _McpNotYet:
                if time.monotonic() >= deadline:
                    raise
                await asyncio.sleep(0.05)

    async def call_tool(self, toolset: Any, name: str, args: dict[str, Any], timeout: float,
                        progress: Any = None) -> dict[str, Any]:
        """Call the tool once (a call is not repeated: it may have done something);
        the toolset actor answers ``mcp_timeout`` at ``timeout``, so waiting a little
        longer only covers an actor that died with the call. With ``progress`` (an
        async callable), in order: the call is sent with a new progress id; while it is
        pending, every ``_MCP_PROGRESS_EVERY`` s the actor is asked for the call's new
        reports (each ask within ``_MCP_PROGRESS_WAIT`` s; one unanswered is skipped),
        and each is awaited with ``progress`` here, in the run worker, in order; when
        the call has ended, once more (the actor then forgets them); then the call's
        result or error. A callback that raises is logged; the call goes on."""
        if progress is None:
            result: dict[str, Any] = await self._ask(toolset, CallMcpTool(name, args, timeout), timeout + 2.0)
            return result
        call_id = uuid.uuid4().hex
        call = asyncio.ensure_future(self._ask(toolset, CallMcpTool(name, args, timeout, call_id), timeout + 2.0))
        seen = 0
        try:
            while True:
                ended = bool((await asyncio.wait({call}, timeout=_MCP_PROGRESS_EVERY))[0])
                seen = await self._relay(toolset, call_id, seen, progress, ended)
                if ended:
                    relayed: dict[str, Any] = call.result()
                    return relayed
        finally:
            call.cancel()

    async def _relay(self, toolset: Any, call_id: str, seen: int, progress: Any, done: bool) -> int:
        """Give ``progress`` the call's reports after the first ``seen`` (asked of the
        toolset's actor; ``done``: the last ask); how many have been given in all."""
        try:
            reports = await self._once(f"mcp:{toolset.key}", McpCallProgress(call_id, seen, done), _MCP_PROGRESS_WAIT)
        except (ServiceError, McpUnavailable):
            return seen
        for value, total, message in reports:
            try:
                await progress(value, total, message)
            except Exception as exc:
                _log.warning("an MCP progress callback raised %s: %s", type(exc).__name__, exc)
        return seen + len(reports)

    async def _ask(self, toolset: Any, request: Any, wait: float) -> Any:
        """Ask toolset's actor, looked up afresh (it may have restarted elsewhere); when
        there is none, have the ``mcp`` supervisor start it (one already there is as
        good) and ask once more. Every failure is a typed MCP error."""
        name = f"mcp:{toolset.key}"
        try:
            return await self._once(name, request, wait)
        except ServiceError as error:
            if error.code != "not_running":
                raise _mcp_error(error) from None
        try:
            await self._once("mcp", StartChild(mcp_toolset_child(toolset)), load_scaled(toolset.params.timeout + 15.0))
        except ServiceError as error:
            if error.code not in ("already_present", "already_started"):
                raise McpUnavailable(f"the MCP server could not be started: {error.detail}") from None
        try:
            return await self._once(name, request, wait)
        except ServiceError as error:
            if error.code == "not_running":
                raise _McpNotYet("the MCP server's connection is restarting; try again shortly") from None
            raise _mcp_error(error) from None

    async def _once(self, name: str, request: Any, wait: float) -> Any:
        self.actor.service_forget(name)
        future = self.actor.service_call(name, request)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), wait)
        except TimeoutError:
            raise _McpNotYet(f"the MCP toolset did not answer within {wait:g} s") from None


def mcp_toolset_child(toolset: Any) -> ChildSpec:
    """The ``mcp`` supervisor's child for ``toolset`` (an ``adk_actors.mcp.McpToolsetSpec``):
    ``mcp-<key>``, registered as ``mcp:<key>``, restarted with ``MCP_BACKOFF``; its
    arguments are :class:`McpToolsetStart` (no SDK object: see ``_mcp``); its start (the
    SDK's import, the server's start and handshake) may take the parameters' timeout
    and 10 s more, stretched with the load by the supervisor."""
    return ChildSpec(id=f"mcp-{toolset.key}", start=MCP_TOOLSET_ACTOR, args=McpToolsetStart.of(toolset),
                     name=f"mcp:{toolset.key}", backoff=MCP_BACKOFF, start_timeout=toolset.params.timeout + 10.0)


class _McpNotYet(McpUnavailable):
    """The toolset's actor is restarting, or did not answer: asking again may work."""


def _mcp_error(error: ServiceError) -> Exception:
    """The typed error of an MCP service's refusal: a call past its deadline, the server's
    own refusal (its connection still open: ``mcp_error``), else the server unreachable."""
    if error.code == "mcp_timeout":
        return McpCallTimeout(error.detail)
    if error.code == "mcp_error":
        return McpError(error.detail)
    return McpUnavailable(error.detail)


def service_bridges(actor: ServiceCaller) -> dict[str, Any]:
    """The engine's service arguments for one run, all through ``actor``."""
    return {"breaker_client": _BreakerBridge(actor), "artifacts": _RemoteArtifacts(actor),
            "memory": _RemoteMemory(actor), "approvals": _RemoteApprovals(actor),
            "credentials": _RemoteCredentials(actor), "mcp": _RemoteMcp(actor)}
