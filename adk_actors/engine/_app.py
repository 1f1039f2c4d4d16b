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
from typing import Any, Literal

from .._cache_types import ContextCacheConfig
from ._plugins import Plugin
from ._policy import Policy

__all__ = ["TOOL_ERRORS", "App", "as_app"]

_APP_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")

#: ``App.tool_errors``'s values: ``to_model`` (the default) answers a tool's failure to
#: the model as an error result; ``raise`` ends the run with it, as google-adk does
TOOL_ERRORS = ("to_model", "raise")


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
    #: What a tool that raises does to its run, when no on-tool-error hook answers for it
    #: (``engine._flow_tools``): ``"to_model"`` (the default) gives the model an error
    #: result (``{"error": "<type>: <message>"}``) and the turn goes on; ``"raise"`` ends
    #: the run with the tool's own exception, as google-adk 2.13 does: in process
    #: ``run_async`` raises it after the run's error event; a host's run ends
    #: ``RunFailed`` (reason ``error``, the exception's type, a detail naming the tool).
    #: Bad arguments from the model and an unknown tool are error results either way.
    #: Carried on each run's context (``InvocationContext.tool_errors``).
    tool_errors: Literal["to_model", "raise"] = "to_model"

    def __post_init__(self) -> None:
        """Check, in order: the name (see ``name``), then ``tool_errors`` (one of
        :data:`TOOL_ERRORS`); a ValueError naming the bad value for either."""
        if self.name and (not _APP_NAME.match(self.name) or self.name == "user"):
            raise ValueError(f"invalid app name {self.name!r}: a letter, then letters, digits, '_' or '-'; "
                             f"not 'user'")
        if self.tool_errors not in TOOL_ERRORS:
            raise ValueError(f"invalid App.tool_errors {self.tool_errors!r}: 'to_model' (a failing tool's error "
                             f"goes to the model as its result) or 'raise' (the run ends with the tool's exception)")


def as_app(target: Any) -> App:
    """``target`` itself if it is an :class:`App`, else an app of that root agent."""
    return target if isinstance(target, App) else App(root_agent=target)
