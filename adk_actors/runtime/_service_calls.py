"""What the service actors are asked, apart from the actors themselves.

The Runner and a run worker's services client send these; the actors (``_approvals``,
``_artifacts``, ``_breakers``, ``_credentials``, ``_memory``) answer them. Kept here,
with nothing but the wire types, so a client of a running host (``Host.connect``,
``adk-actors run``) imports no store, model provider or engine to ask a service
(bench/startup.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, SecretStr

from .._exceptions import AdkError
from .._types import Part

__all__ = [
    "MCP_TOOLSET_ACTOR",
    "Acquire",
    "AddSessionToMemory",
    "Approval",
    "Approve",
    "ArtifactMetadata",
    "ArtifactVersions",
    "AuthRequired",
    "BreakerStatus",
    "CallApproval",
    "CallMcpTool",
    "Credential",
    "DeleteArtifact",
    "DeleteCredential",
    "Deny",
    "Disable",
    "ForceOpen",
    "GetCredential",
    "ListApprovals",
    "ListArtifacts",
    "ListMcpTools",
    "LoadArtifact",
    "McpCallProgress",
    "McpToolsetStart",
    "PutCredential",
    "Record",
    "RegisterApproval",
    "Reset",
    "SaveArtifact",
    "SearchMemory",
    "WaitDecision",
]


# -- human approvals -----------------------------------------------------------


@dataclass(frozen=True)
class Approval:
    id: str
    app_name: str
    user_id: str
    session_id: str
    run_id: str
    agent: str
    tool: str
    args: dict[str, Any]
    hint: str
    status: str  # pending | approved | denied | expired
    reason: str = ""
    created: float = 0.0


@dataclass(frozen=True)
class RegisterApproval:
    """Ask a human about a call. ``call_id``: the tool call's; registering a call of the
    session again (a resumed run) answers the approval it had (pending again if it had
    expired, now for ``run_id``; a decision made meanwhile stands)."""

    app_name: str
    user_id: str
    session_id: str
    run_id: str
    agent: str
    tool: str
    args: dict[str, Any]
    hint: str = ""
    call_id: str = ""


@dataclass(frozen=True)
class CallApproval:
    """The approval of a session's call (``call_id``), or None if it never had one."""

    app_name: str
    user_id: str
    session_id: str
    call_id: str


@dataclass(frozen=True)
class Approve:
    id: str


@dataclass(frozen=True)
class Deny:
    id: str
    reason: str = "denied by a human"


@dataclass(frozen=True)
class WaitDecision:
    id: str
    wait: float = 5.0


@dataclass(frozen=True)
class ListApprovals:
    app_name: str | None = None
    user_id: str | None = None
    status: str | None = "pending"


# -- artifacts -----------------------------------------------------------------


@dataclass(frozen=True)
class SaveArtifact:
    app_name: str
    user_id: str
    session_id: str
    name: str
    part: Part
    custom_metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class LoadArtifact:
    app_name: str
    user_id: str
    session_id: str
    name: str
    version: int | None = None


@dataclass(frozen=True)
class ListArtifacts:
    app_name: str
    user_id: str
    session_id: str


@dataclass(frozen=True)
class ArtifactVersions:
    app_name: str
    user_id: str
    session_id: str
    name: str


@dataclass(frozen=True)
class ArtifactMetadata:
    app_name: str
    user_id: str
    session_id: str
    name: str
    version: int | None = None


@dataclass(frozen=True)
class DeleteArtifact:
    app_name: str
    user_id: str
    session_id: str
    name: str


# -- the circuit breakers ------------------------------------------------------


@dataclass(frozen=True)
class Acquire:
    model: str


@dataclass(frozen=True)
class Record:
    model: str
    permit_id: str
    outcome: str  # success | failure | ignored
    duration: float = 0.0
    retry_after: float | None = None


@dataclass(frozen=True)
class BreakerStatus:
    model: str | None = None


@dataclass(frozen=True)
class ForceOpen:
    model: str


@dataclass(frozen=True)
class Disable:
    model: str


@dataclass(frozen=True)
class Reset:
    model: str


# -- credentials ---------------------------------------------------------------


class AuthRequired(AdkError):
    """No usable credential: the user must (re)authorize."""


class Credential(BaseModel):
    kind: Literal["api_key", "oauth2"] = "api_key"
    api_key: SecretStr | None = None
    access_token: SecretStr | None = None
    refresh_token: SecretStr | None = None
    expires_at: float | None = None
    token_url: str | None = None
    client_id: str | None = None
    client_secret: SecretStr | None = None

    def secrets_json(self) -> str:
        data = self.model_dump()
        for key, value in data.items():
            if isinstance(value, SecretStr):
                data[key] = value.get_secret_value()
        return json.dumps(data)


@dataclass(frozen=True)
class PutCredential:
    app_name: str
    user_id: str
    key: str
    credential: Credential


@dataclass(frozen=True)
class GetCredential:
    app_name: str
    user_id: str
    key: str


@dataclass(frozen=True)
class DeleteCredential:
    app_name: str
    user_id: str
    key: str


# -- memory --------------------------------------------------------------------


@dataclass(frozen=True)
class AddSessionToMemory:
    """Index a session: as the session store holds it, or (``events`` given, from a
    run's callback or tool) as that run sees it, its own events not yet stored
    included."""

    app_name: str
    user_id: str
    session_id: str
    events: tuple[Any, ...] | None = None


@dataclass(frozen=True)
class SearchMemory:
    app_name: str
    user_id: str
    query: str
    limit: int = 10


# -- MCP toolsets (``_mcp``) -----------------------------------------------------------

#: The toolset actor, named so that importing this module does not import the mcp SDK.
MCP_TOOLSET_ACTOR = "adk_actors.runtime._mcp:McpToolsetActor"


@dataclass(frozen=True)
class McpToolsetStart:
    """A toolset actor's start arguments: the toolset's ``key``, and its connection
    parameters as the name of their class (``StdioConnectionParams``, ...) and their
    JSON. Plain strings, so that the ``mcp`` supervisor, which holds them and unpickles
    them, never imports the mcp SDK that the parameters' classes come from: only the
    toolset actor does, in its own process (``_mcp``)."""

    key: str
    kind: str
    params: str

    @classmethod
    def of(cls, toolset: Any) -> McpToolsetStart:
        """The start arguments of ``toolset`` (an ``adk_actors.mcp.McpToolsetSpec``)."""
        return cls(toolset.key, type(toolset.params).__name__, toolset.params.model_dump_json())


@dataclass(frozen=True)
class ListMcpTools:
    """-> the toolset's tools (name, description, input_schema), as its server listed them."""


@dataclass(frozen=True)
class CallMcpTool:
    """-> the tool's result (content, structuredContent, isError); ``mcp_timeout`` when
    ``timeout`` passes first, ``mcp_unavailable`` when the server cannot answer. With a
    ``progress`` id, the toolset actor keeps the call's progress reports under it, for
    :class:`McpCallProgress`."""

    name: str
    args: dict[str, Any]
    timeout: float
    progress: str = ""


@dataclass(frozen=True)
class McpCallProgress:
    """-> the progress reports (``[progress, total, message]`` lists) a toolset actor
    kept for the call of id ``progress``, after its first ``after``; an unknown id has
    none. ``done``: forget the call's reports after answering (its result came)."""

    progress: str
    after: int
    done: bool = False
