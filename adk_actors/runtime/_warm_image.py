"""What each process of a host's tree would otherwise build at its first turn, built
once in the image they are forked from.

Pydantic completes some models and type adapters on first use, and a forked process
does not share what another built after the fork: every session partition built the
field adapters of ``RunRequest`` (``_validate.check_fields``: about 10 ms, most of it
``CallDecision``'s dataclass schema) at its first turn, and every run worker and
partition completed ``Event`` (its forward reference to ``UsageMetadata``: 1-7 ms) at
the first event it made or stored. :func:`warm_image` builds both in the process
that imports the tree's code (``Host.load_tree_code`` calls it), before its actors
are forked; a fresh host's first turn no
longer pays for them. It validates a sample request and completes a model: no I/O,
nothing started.
"""

from __future__ import annotations

from .._types import Content, Event
from .._validate import check_fields
from ..messages import RunRequest

__all__ = ["warm_image"]


def warm_image() -> None:
    """Complete ``Event`` (its validator and serializer), then build the field adapters
    a partition checks each ``RunRequest`` with (see the module)."""
    Event.model_rebuild()
    check_fields(RunRequest("app", "user", "session", new_message=Content.user("")))
