"""google-adk's ``State`` (``google.adk.sessions.state``): a session's state seen
through the delta a callback or tool is writing, with the scope prefixes.

Keys are scoped by prefix: ``app:`` (every user of the app), ``user:`` (every session
of one user), ``temp:`` (this invocation only, never stored), none (this session).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from .._node_settings import StateSchemaError
from .._node_settings import check_state_entry as _checked
from .._types import State as _EngineState

__all__ = ["State", "StateSchemaError"]


class State(_EngineState):
    """``State(value, delta, schema=None)``: reads see ``delta`` over ``value``; writes
    go to ``delta`` (checked against ``schema``, a pydantic model, when one is
    given). A key deleted, or set to None, reads as absent once stored (the host's
    rule: a None in a delta removes the key)."""

    APP_PREFIX = "app:"
    USER_PREFIX = "user:"
    TEMP_PREFIX = "temp:"

    def __init__(self, value: Mapping[str, Any], delta: dict[str, Any],
                 schema: type[BaseModel] | None = None) -> None:
        super().__init__(value, delta)
        self._schema = schema

    def __setitem__(self, key: str, value: Any) -> None:
        _checked(self._schema, key, value)
        super().__setitem__(key, value)

    def has_delta(self) -> bool:
        """Whether anything was written."""
        return bool(self.delta)

    def update(self, other: Any = (), /, **kwds: Any) -> None:
        """Write every key of ``other`` (a mapping or pairs) and of ``kwds``; with a
        schema, every one is checked before any is written."""
        items = dict(other, **kwds)
        for key, value in items.items():
            _checked(self._schema, key, value)
        self.delta.update(items)
