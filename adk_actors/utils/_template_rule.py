"""The compiler's one ``{key}`` / ``{key?}`` / ``{artifact.NAME}`` rule, opened to
``instructions_utils``: which placeholders a template has and which of them must
be there (the scan), while the filling itself stays the compiler's
:func:`~adk_actors.compiler._templating.substitute_vars`.

Nothing here parses on its own: the placeholder pattern, the reading of one
placeholder and the key check are the compiler's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..compiler._templating import _ARTIFACT, _KEY, _PLACEHOLDER, _parse, substitute_vars

__all__ = ["Placeholder", "fill", "placeholders"]


@dataclass(frozen=True)
class Placeholder:
    """One placeholder of a template as the compiler reads it: ``artifact`` is the
    artifact's name for ``{artifact.NAME}`` (else None); ``key`` is the state key
    for a valid key (else None: the compiler leaves such a placeholder as written)."""

    raw: str
    optional: bool
    artifact: str | None
    key: str | None


def placeholders(template: str) -> Iterator[Placeholder]:
    """The template's placeholders, left to right, each read by the compiler's rule."""
    if "{" not in template:
        return
    for match in _PLACEHOLDER.finditer(template):
        raw = match.group(0)
        name, optional = _parse(raw)
        if name.startswith(_ARTIFACT):
            yield Placeholder(raw, optional, name[len(_ARTIFACT):], None)
        else:
            yield Placeholder(raw, optional, None, name if _KEY.match(name) else None)


def fill(template: str, state: Mapping[str, Any], artifacts: Mapping[str, Any]) -> str:
    """``template`` filled by the compiler's :func:`substitute_vars` (never raises)."""
    return substitute_vars(template, state, artifacts)
