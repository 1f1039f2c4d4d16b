"""The read-only snapshot a request is compiled from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .._types import Content, Event, Part, RunConfig

__all__ = ["CompileContext"]


@dataclass(frozen=True, kw_only=True)
class CompileContext:
    """Everything the compiler may read; instruction providers receive it too.

    * ``state``: the session state as the agent sees it, scopes merged back with
      their prefixes (``app:x``, ``user:x``, ``temp:x``, plain keys);
    * ``events``: the session's events, oldest first;
    * ``artifacts``: artifact texts (or Parts) that templates reference, loaded by the
      caller beforehand (see :func:`referenced_artifacts`);
    * ``root_agent``: the tree's root, for the global instruction and transfer
      targets (defaults to the compiled agent's own tree);
    * ``branch``: the current branch (``parent.child`` under a ParallelAgent);
    * ``new_message``: a user message not yet among ``events``, placed last;
    * ``extra_tools``: tools the caller resolved from toolsets for this request;
    * ``memories``: memory entries the caller preloaded (``preload_memory``).
    """

    state: Mapping[str, Any] = field(default_factory=dict)
    events: Sequence[Event] = ()
    artifacts: Mapping[str, str | Part] = field(default_factory=dict)
    run_config: RunConfig = field(default_factory=RunConfig)
    root_agent: Any = None
    branch: str | None = None
    invocation_id: str = ""
    new_message: Content | None = None
    extra_tools: Sequence[Any] = ()
    memories: Sequence[Any] = ()  # preloaded memory entries (text, author) to show the model
    #: the texts async instruction providers gave (awaited by the caller beforehand, see
    #: :func:`~adk_actors.compiler._providers.await_providers`), by ``id()`` of the provider
    provided: Mapping[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.state, MappingProxyType):
            object.__setattr__(self, "state", MappingProxyType(dict(self.state)))
        if not isinstance(self.artifacts, MappingProxyType):
            object.__setattr__(self, "artifacts", MappingProxyType(dict(self.artifacts)))
        if not isinstance(self.events, tuple):
            object.__setattr__(self, "events", tuple(self.events))
