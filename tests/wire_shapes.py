"""Our JSON against google-adk's, by shape: the keys at every level and the kinds of
values, not the values (ids, timestamps and texts differ by nature)."""

from __future__ import annotations

from typing import Any

__all__ = ["ONE_SIDE_ONLY", "differences", "shape"]

#: Keys only one side sends, not part of this comparison: google-adk 2.x's workflow graph's
#: node path (we run no workflow graph), and an artifact version's mimeType, which
#: google-adk's in-memory artifact service sets for text (as we do) and its file service,
#: the one ``adk api_server`` uses, does not.
ONE_SIDE_ONLY = {"nodeInfo", "mimeType"}


def shape(value: Any) -> Any:
    """The keys of ``value`` at every level (lists: each element's), not its values."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in sorted(value.items()) if key not in ONE_SIDE_ONLY}
    if isinstance(value, list):
        return [shape(item) for item in value]
    return type(value).__name__ if isinstance(value, bool) else "value"


def differences(ours: Any, theirs: Any, where: str = "") -> list[str]:
    """Where two shapes differ: a key only one has, or a different kind of value."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        found = [f"{where}.{key}: ours only" for key in ours.keys() - theirs.keys()]
        found += [f"{where}.{key}: google-adk's only" for key in theirs.keys() - ours.keys()]
        for key in ours.keys() & theirs.keys():
            found += differences(ours[key], theirs[key], f"{where}.{key}")
        return sorted(found)
    if isinstance(ours, list) and isinstance(theirs, list):
        if len(ours) != len(theirs):
            return [f"{where}: {len(ours)} items, google-adk's {len(theirs)}"]
        return [d for i, (a, b) in enumerate(zip(ours, theirs, strict=True)) for d in differences(a, b, f"{where}[{i}]")]
    return [] if ours == theirs else [f"{where}: {ours} here, {theirs} in google-adk's"]
