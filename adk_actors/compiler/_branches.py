"""Which branch's events an agent on a branch sees: the rule the history and the late
answers' rearrangement (``_contents``, ``_answers``) both apply."""

from __future__ import annotations

__all__ = ["branch_visible"]


def branch_visible(event_branch: str | None, current: str | None) -> bool:
    """Whether an event of ``event_branch`` is seen from ``current``: always when either
    has no branch or they are the same; else when ``current`` lies under it
    (``a.b`` sees ``a``'s events, not ``a.c``'s)."""
    if not event_branch or not current or event_branch == current:
        return True
    return current.startswith(event_branch + ".")
