"""google-adk's ``google.adk.plugins``: :class:`BasePlugin` to subclass, and the
built-in :class:`LoggingPlugin`. Such plugins run on the engine's plugin pipeline
beside this project's own kind (``adk_actors.engine.Plugin``); see
:mod:`adk_actors.plugins.base_plugin`."""

from ..engine._plugins import PluginError
from .base_plugin import BasePlugin
from .logging_plugin import LoggingPlugin

__all__ = ["BasePlugin", "LoggingPlugin", "PluginError"]
