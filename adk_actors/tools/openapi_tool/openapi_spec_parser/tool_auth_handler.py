"""google-adk's import path of ``ToolAuthHandler`` (how a ``RestApiTool`` gets, keeps,
refreshes and asks for its user's credential)."""

from .._tool_auth_handler import (
    AuthPreparationResult,
    AuthPreparationState,
    ToolAuthHandler,
    ToolContextCredentialStore,
    UnauthorizedRecoveryState,
)

__all__ = ["AuthPreparationResult", "AuthPreparationState", "ToolAuthHandler", "ToolContextCredentialStore",
           "UnauthorizedRecoveryState"]
