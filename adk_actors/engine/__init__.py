"""The in-process agent engine that a run worker drives (asyncio, steppable, cancellable)."""

from ._agent_config import (
    ROOT_AGENT_FILE,
    AgentConfig,
    check_builder_upload,
    load_agent_config,
    read_yaml,
)
from ._agent_folders import load_dotenv_for_agent, remember_explicit_env
from ._app import App, as_app
from ._app_files import APP_NAME, DRAFT, YAML_SUFFIXES, app_file_path
from ._background import Background
from ._builder_assistant import BUILDER_ASSISTANT, BUILDER_MODEL, builder_assistant
from ._callbacks import CallbackError, Fallback, Reraise, Retry
from ._catalog import AppCatalog
from ._context import (
    CallbackContext,
    CancelToken,
    InvocationContext,
    RunCancelled,
    SessionView,
    State,
)
from ._flow import ModelRaised
from ._invocation import (
    answered_invocation,
    own_user_event,
    resume_invocation,
    run_invocation,
    select_agent,
)
from ._live import LIVE_UNSUPPORTED, run_live_invocation
from ._plugins import (
    HookResult,
    LoggingPlugin,
    Plugin,
    PluginManager,
    RateLimitPlugin,
    ReflectAndRetryToolPlugin,
)
from ._policy import ALLOW, Allow, ConfirmationPolicy, Deny, Policy, PolicySet, Reject
from ._resume import (
    CallDecision,
    EndedByDecision,
    NeedsDecision,
    NothingToResume,
    PendingCall,
    is_idempotent,
)
from ._services import (
    ApprovalService,
    ArtifactService,
    Decision,
    InMemoryApprovals,
    InMemoryArtifactService,
    InMemoryMemoryService,
    MemoryEntry,
    MemoryService,
)

__all__ = [
    "ALLOW",
    "APP_NAME",
    "BUILDER_ASSISTANT",
    "BUILDER_MODEL",
    "DRAFT",
    "LIVE_UNSUPPORTED",
    "ROOT_AGENT_FILE",
    "YAML_SUFFIXES",
    "AgentConfig",
    "Allow",
    "App",
    "AppCatalog",
    "ApprovalService",
    "ArtifactService",
    "Background",
    "CallDecision",
    "CallbackContext",
    "CallbackError",
    "CancelToken",
    "ConfirmationPolicy",
    "Decision",
    "Deny",
    "EndedByDecision",
    "Fallback",
    "HookResult",
    "InMemoryApprovals",
    "InMemoryArtifactService",
    "InMemoryMemoryService",
    "InvocationContext",
    "LoggingPlugin",
    "MemoryEntry",
    "MemoryService",
    "ModelRaised",
    "NeedsDecision",
    "NothingToResume",
    "PendingCall",
    "Plugin",
    "PluginManager",
    "Policy",
    "PolicySet",
    "RateLimitPlugin",
    "ReflectAndRetryToolPlugin",
    "Reject",
    "Reraise",
    "Retry",
    "RunCancelled",
    "SessionView",
    "State",
    "answered_invocation",
    "app_file_path",
    "as_app",
    "builder_assistant",
    "check_builder_upload",
    "is_idempotent",
    "load_agent_config",
    "load_dotenv_for_agent",
    "own_user_event",
    "read_yaml",
    "remember_explicit_env",
    "resume_invocation",
    "run_invocation",
    "run_live_invocation",
    "select_agent",
]
