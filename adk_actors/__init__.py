"""adk-actors: an Agent Development Kit on an OTP-style actor runtime."""

from ._exceptions import (
    AdkError,
    AgentDefinitionError,
    CompileError,
    HostError,
    LimitExceededError,
    RunFailedError,
    SessionBusyError,
    SessionExistsError,
    SessionNotFoundError,
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
    LlmRequest,
    LlmResponse,
    Part,
    RunConfig,
    StreamingMode,
)
from .agents import Agent, LlmAgent, LoopAgent, ParallelAgent, SequentialAgent

__version__ = "0.1.0"

__all__ = [
    "AdkError",
    "Agent",
    "AgentDefinitionError",
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
    "LimitExceededError",
    "LlmAgent",
    "LlmRequest",
    "LlmResponse",
    "LoopAgent",
    "ParallelAgent",
    "Part",
    "RunConfig",
    "RunFailedError",
    "SequentialAgent",
    "SessionBusyError",
    "SessionExistsError",
    "SessionNotFoundError",
    "StreamingMode",
    "UnknownAppError",
    "__version__",
]
