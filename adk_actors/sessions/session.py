"""google-adk's ``Session`` (``google.adk.sessions.session``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from pydantic.alias_generators import to_camel

from .._types import Event

__all__ = ["Session"]


class Session(BaseModel):
    """One conversation of a user with an app: ``id``, ``app_name``, ``user_id``,
    ``state`` (its own keys with the ``app:`` and ``user:`` ones merged in),
    ``events`` (in order) and ``last_update_time`` (seconds since the epoch). Its JSON
    form uses camelCase names, as google-adk's; unknown fields are refused."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, alias_generator=to_camel,
                              populate_by_name=True)

    id: str
    app_name: str
    user_id: str
    state: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    last_update_time: float = 0.0

    #: how many events the stored session held when this object was read from (or last
    #: appended to) a store-backed service: its stale-session check (None: not read so)
    _stored_events: int | None = PrivateAttr(default=None)

    @property
    def session_id(self) -> str:
        """The engine's name for ``id``."""
        return self.id
