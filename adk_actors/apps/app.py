"""google-adk's ``google.adk.apps.app``: ``App`` with google-adk's app-wide configs
(``EventsCompactionConfig``, ``ResumabilityConfig``) and ``validate_app_name``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..engine._app import App as _EngineApp
from ._configs import EventsCompactionConfig, ResumabilityConfig

__all__ = ["App", "EventsCompactionConfig", "ResumabilityConfig", "validate_app_name"]

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")


def validate_app_name(name: str) -> None:
    """Return when ``name`` is a letter then letters, digits, ``_`` or ``-`` and is not
    ``user`` (google-adk's rule, the one ``App(name=...)`` applies); else raise a
    ValueError naming it. Unlike google-adk's, a name ending in a newline is refused."""
    if not _NAME.match(name):
        raise ValueError(f"invalid app name {name!r}: a letter, then letters, digits, '_' or '-'")
    if name == "user":
        raise ValueError("invalid app name 'user': the name of the end user's messages")


def _config(value: Any, kind: type[Any], field: str) -> Any:
    if value is None or isinstance(value, kind):
        return value
    if isinstance(value, dict):
        return kind.model_validate(value)
    raise TypeError(f"App.{field} must be a {kind.__name__} (or a dict of its fields), not {type(value).__name__}")


@dataclass(frozen=True)
class App(_EngineApp):
    """The engine's ``App`` (root agent, plugins, policies, ``resume_interrupted``,
    name, context cache, ``tool_errors``: ``"raise"`` for google-adk's way with a tool
    that raises, see the engine's ``App``) with google-adk's two configs:

    * ``events_compaction_config``: google-adk's event compaction for this app's runs
      (a dict is read as one): the engine's ``App`` field, carried on each run's
      context; the in-process Runner and a host's run worker summarize after an
      invocation, the model step before a model request by the token threshold
      (``engine._compaction_adk``). Our own ``Summarize`` compressors of agents go on
      as they are.
    * ``resumability_config``: accepted with google-adk's field and kept. Our durable
      runs need no switch: a host keeps every run's committed steps and
      ``Runner.resume`` resumes any of them; crashed runs resume on their own only with
      ``resume_interrupted`` (our setting, left as given).

    Made: the name checked (as the engine's ``App``), then the configs checked (a
    dict read as one, a ValueError from its checks; a TypeError for another type).
    Nothing is kept outside the App: one root agent may serve two apps with two
    configs."""

    events_compaction_config: EventsCompactionConfig | None = None
    resumability_config: ResumabilityConfig | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "events_compaction_config", _config(
            self.events_compaction_config, EventsCompactionConfig, "events_compaction_config"))
        object.__setattr__(self, "resumability_config", _config(
            self.resumability_config, ResumabilityConfig, "resumability_config"))
