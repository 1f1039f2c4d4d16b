"""google-adk's ``ServiceTier``: the serving tier a model call asks for."""

from __future__ import annotations

import enum


class ServiceTier(str, enum.Enum):  # noqa: UP042 - str() as google-adk's: "ServiceTier.FLEX"
    """The serving tiers of a model call, by google-adk's names and wire values.

    A member is a ``str``: it equals, hashes and serialises as the value it carries
    (``ServiceTier.FLEX == "flex"``), so it goes on the wire as is, and a plain string
    naming a tier this enum does not know yet can stand in for it."""

    FLEX = "flex"  #: cheaper best-effort capacity, no latency promise
    STANDARD = "standard"  #: the default tier
    PRIORITY = "priority"  #: reserved capacity for latency-sensitive calls
    DEFERRED = "deferred"  #: queued for off-peak capacity; cannot be streamed


__all__ = ["ServiceTier"]
