"""``{key}`` substitution in instructions (google-adk's rules, without its crashes).

* ``{key}`` -> ``str(state[key])``; ``None`` -> ""; braces and surrounding spaces are
  stripped, so ``{ key }`` and ``{{key}}`` substitute too (double braces are not an
  escape, as in google-adk);
* ``{key?}``: optional, a missing key gives "";
* keys are identifiers, optionally scoped ``app:``, ``user:`` or ``temp:``;
* ``{artifact.NAME}`` inserts the text of artifact NAME from the snapshot
  (``{artifact.NAME?}`` optional);
* a missing required key, or anything that is not a valid key (``{a b}``,
  ``{"json": 1}``, ``{}``, ``{1x}``), is left exactly as written; nothing raises;
* ``\\{key}`` and ``${key}`` are left untouched (a brace after ``\\``, ``$`` or ``{``
  never starts a placeholder).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["referenced_artifacts", "substitute_vars"]

_PLACEHOLDER = re.compile(r"(?<![{$\\]){+[^{}]*}+")
_KEY = re.compile(r"^(?:(?:app|user|temp):)?[A-Za-z_][A-Za-z0-9_]*$")
_ARTIFACT = "artifact."


def _parse(raw: str) -> tuple[str, bool]:
    name = raw.lstrip("{").rstrip("}").strip()
    if name.endswith("?"):
        return name[:-1].strip(), True
    return name, False


def substitute_vars(template: str, state: Mapping[str, Any], artifacts: Mapping[str, Any] | None = None) -> str:
    """Replace the placeholders of ``template`` from ``state`` (and ``artifacts``); never raises."""
    if "{" not in template:
        return template

    def replace(match: re.Match[str]) -> str:
        raw = match.group(0)
        name, optional = _parse(raw)
        if name.startswith(_ARTIFACT):
            artifact = name[len(_ARTIFACT):]
            value = None if artifacts is None or not artifact else artifacts.get(artifact)
            text = value if isinstance(value, str) else getattr(value, "text", None)
            if text is None:
                return "" if optional else raw
            return str(text)
        if not _KEY.match(name):
            return raw
        if name not in state:
            return "" if optional else raw
        value = state[name]
        return "" if value is None else str(value)

    return _PLACEHOLDER.sub(replace, template)


def referenced_artifacts(template: str) -> set[str]:
    """Names of the artifacts a template reads, so the caller can load them before compiling."""
    names: set[str] = set()
    if "{" not in template:
        return names
    for match in _PLACEHOLDER.finditer(template):
        name, _ = _parse(match.group(0))
        if name.startswith(_ARTIFACT) and len(name) > len(_ARTIFACT):
            names.add(name[len(_ARTIFACT):])
    return names
