"""google-adk's ``google.adk.plugins``: :class:`BasePlugin` to subclass, and the
built-in plugins, each at google-adk's module path (re-exported here as google-adk
re-exports them: :class:`LoggingPlugin`, :class:`ReflectAndRetryToolPlugin`,
:class:`DebugLoggingPlugin`, and the ``tool_result_classifier`` types). Such
plugins run on the engine's plugin pipeline beside this project's own kind
(``adk_actors.engine.Plugin``); see :mod:`adk_actors.plugins.base_plugin`."""

from ..engine._plugins import PluginError
from ._callback_helpers import ToolResultClassification, ToolResultClassifier
from .base_plugin import BasePlugin
from .debug_logging_plugin import DebugLoggingPlugin
from .logging_plugin import LoggingPlugin
from .reflect_retry_tool_plugin import ReflectAndRetryToolPlugin

__all__ = ["BasePlugin", "DebugLoggingPlugin", "LoggingPlugin", "PluginError", "ReflectAndRetryToolPlugin",
           "ToolResultClassification", "ToolResultClassifier"]
