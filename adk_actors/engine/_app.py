"""App: what a host serves under one name (google-adk's ``App``).

An app bundles its root agent with the plugins and policies every one of its runs
uses. A host's ``[apps]`` entry (``name = "package.module:thing"``) may name an
:class:`App` or, as before, a bare root agent (an app with no plugins or policies).
Plugins keep state per invocation (``Plugin.initial_state`` is called at the start
of every run), so one ``App`` object serves every session at once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .._cache_types import ContextCacheConfig
from ._plugins import Plugin
from ._policy import Policy

__all__ = ["App", "as_app"]

_APP_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")


@dataclass(frozen=True)
class App:
    """``resume_interrupted``: durable runs. A run of this app that a crash ends (its
    run worker killed, or its partition or host gone: ``killed`` or ``interrupted``)
    is resumed by the host on its own from its last committed step, up to this many
    times per run (0: never; ``Runner.resume`` still can). See ``engine._resume``."""

    root_agent: Any
    plugins: Sequence[Plugin] = field(default_factory=tuple)
    policies: Sequence[Policy] = field(default_factory=tuple)
    resume_interrupted: int = 0
    #: google-adk's ``App.name``: the app's name for an in-process Runner (a host names
    #: its apps in its config). Given, it is a letter then letters, digits, ``_`` or
    #: ``-``, and not ``user`` (google-adk's rule; a ValueError otherwise).
    name: str = ""
    #: google-adk's ``App.context_cache_config``: context caching for every LLM agent of
    #: the app (Gemini's cachedContents, Claude's cache_control); None: none
    context_cache_config: ContextCacheConfig | None = None
    #: google-adk's ``App.events_compaction_config`` (``adk_actors.apps.EventsCompactionConfig``,
    #: checked by ``adk_actors.apps.App``): google-adk's event compaction of this app's
    #: sessions (``engine._compaction_adk``); None: none. Each run reads it from its
    #: context, so one root agent may serve two apps with two configs.
    events_compaction_config: Any = None

    def __post_init__(self) -> None:
        if self.name and (not _APP_NAME.match(self.name) or self.name == "user"):
            raise ValueError(f"invalid app name {self.name!r}: a letter, then letters, digits, '_' or '-'; "
                             f"not 'user'")


def as_app(target: Any) -> App:
    """``target`` itself if it is an :class:`App`, else an app of that root agent."""
    return target if isinstance(target, App) else App(root_agent=target)
