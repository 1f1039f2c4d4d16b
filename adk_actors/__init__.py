"""adk-actors: an Agent Development Kit on an OTP-style actor runtime."""

from ._exceptions import AdkError, AgentDefinitionError, CompileError
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
from .agents import LlmAgent

__version__ = "0.1.0"

__all__ = [
    "AdkError",
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
    "LlmAgent",
    "LlmRequest",
    "LlmResponse",
    "Part",
    "RunConfig",
    "StreamingMode",
    "__version__",
]
