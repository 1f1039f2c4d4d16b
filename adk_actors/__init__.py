"""adk-actors: an Agent Development Kit on an OTP-style actor runtime.

The agent classes are loaded on first use (PEP 562): a process that needs only the
wire types (``adk-actors run``, a client of a host) does not pay for importing the
engine and the model providers behind them (bench/startup.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._exceptions import (
    AdkError,
    AgentDefinitionError,
    CompileError,
    HostError,
    HostStopped,
    InternalError,
    InvalidRequestError,
    LimitExceededError,
    NotFoundError,
    RunFailedError,
    SessionBusyError,
    SessionElsewhereError,
    SessionExistsError,
    SessionFailedError,
    SessionNotFoundError,
    SessionUnreadableError,
    UnknownAppError,
)
from ._types import (
    Blob,
    Compaction,
    Content,
    Event,
    EventActions,
    FunctionCall,
    FunctionDeclaration,
    FunctionResponse,
    LiveRequest,
    LlmRequest,
    LlmResponse,
    Part,
    RunConfig,
    StreamingMode,
    Transcription,
    UsageMetadata,
)

if TYPE_CHECKING:
    from .agents import Agent, BaseAgent, LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
    from .runners import InMemoryRunner, Runner
    from .workflow import Workflow

__version__ = "0.1.0"

__all__ = [
    "AdkError",
    "Agent",
    "AgentDefinitionError",
    "BaseAgent",
    "Blob",
    "Compaction",
    "CompileError",
    "Content",
    "Event",
    "EventActions",
    "FunctionCall",
    "FunctionDeclaration",
    "FunctionResponse",
    "HostError",
    "HostStopped",
    "InMemoryRunner",
    "InternalError",
    "InvalidRequestError",
    "LimitExceededError",
    "LiveRequest",
    "LlmAgent",
    "LlmRequest",
    "LlmResponse",
    "LoopAgent",
    "NotFoundError",
    "ParallelAgent",
    "Part",
    "RunConfig",
    "RunFailedError",
    "Runner",
    "SequentialAgent",
    "SessionBusyError",
    "SessionElsewhereError",
    "SessionExistsError",
    "SessionFailedError",
    "SessionNotFoundError",
    "SessionUnreadableError",
    "StreamingMode",
    "Transcription",
    "UnknownAppError",
    "UsageMetadata",
    "Workflow",
    "__version__",
]


_AGENTS = frozenset({"Agent", "BaseAgent", "LlmAgent", "LoopAgent", "ParallelAgent", "SequentialAgent"})


def __getattr__(name: str) -> Any:
    if name in _AGENTS:
        from . import agents

        return getattr(agents, name)
    if name in ("InMemoryRunner", "Runner"):  # google-adk's in-process runners
        from . import runners

        return getattr(runners, name)
    if name == "Workflow":  # google-adk 2.x's graph workflow
        from . import workflow

        return workflow.Workflow
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
