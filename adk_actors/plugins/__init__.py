"""google-adk's ``google.adk.plugins``: :class:`BasePlugin` to subclass, and the
built-in plugins, each at google-adk's module path (re-exported here as google-adk
re-exports them: :class:`LoggingPlugin`, :class:`ReflectAndRetryToolPlugin`,
:class:`ReflectAndRetryModelPlugin`, :class:`ToolCallIntegrityPlugin` (and its
error), :class:`ForceEscalationPlugin`, :class:`DebugLoggingPlugin`, and the
``tool_result_classifier`` types; :class:`PluginManager`, google-adk's registry of
plugins, which is the engine's pipeline (``Runner.plugin_manager``,
``ctx.plugin_manager``); ``ModelConsultObservabilityPlugin``, from
``adk_actors.tools.model_consult``, on first use, as google-adk's). Such
plugins run on the engine's plugin pipeline beside this project's own kind
(``adk_actors.engine.Plugin``); see :mod:`adk_actors.plugins.base_plugin`."""

import importlib
from typing import Any

from ..engine._plugins import PluginError
from ._callback_helpers import ToolResultClassification, ToolResultClassifier
from ._force_escalation_plugin import ForceEscalationPlugin
from ._reflect_retry_model_plugin import ReflectAndRetryModelPlugin
from ._tool_call_integrity_plugin import ToolCallIntegrityError, ToolCallIntegrityPlugin
from .base_plugin import BasePlugin
from .debug_logging_plugin import DebugLoggingPlugin
from .logging_plugin import LoggingPlugin
from .plugin_manager import PluginManager
from .reflect_retry_tool_plugin import ReflectAndRetryToolPlugin

__all__ = ["BasePlugin", "DebugLoggingPlugin", "ForceEscalationPlugin", "LoggingPlugin",
           "ModelConsultObservabilityPlugin", "PluginError", "PluginManager", "ReflectAndRetryModelPlugin",
           "ReflectAndRetryToolPlugin",
           "ToolCallIntegrityError", "ToolCallIntegrityPlugin", "ToolResultClassification", "ToolResultClassifier"]


def __getattr__(name: str) -> Any:
    """``ModelConsultObservabilityPlugin`` from :mod:`adk_actors.tools.model_consult`,
    imported when first asked for; any other unknown name is an AttributeError."""
    if name == "ModelConsultObservabilityPlugin":  # by name: the tools' package imports this one
        return getattr(importlib.import_module("..tools.model_consult", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
