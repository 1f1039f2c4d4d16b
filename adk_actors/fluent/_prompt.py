"""``P``: an instruction built from sections, in adk-fluent's order and words.

Sections render in a fixed order whatever order they are written in: role (no
header), ``Context:``, ``Task:``, ``Constraints:``, ``Output Format:``,
``Examples:``, then custom sections (``P.section("house_rules", ...)`` is headed
``House Rules:``). Several blocks of one kind are joined by a newline under one
header; sections are separated by a blank line. ``P.when`` / ``P.from_state`` /
``P.template`` read the session state when the instruction is compiled.
``P.scaffolded`` wraps a block in a preamble and a postamble (one section, last);
``P.versioned`` tags a block and changes nothing of its text.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..compiler import substitute_vars

__all__ = ["P", "PTransform"]

_ORDER = {"role": 100, "context": 200, "task": 300, "constraint": 400, "format": 500, "example": 600}
_LABELS = {"role": None, "context": "Context", "task": "Task", "constraint": "Constraints",
           "format": "Output Format", "example": "Examples"}
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_:]*)(\?)?\}")


def holds(predicate: Callable[[Mapping[str, Any]], Any] | str, state: Mapping[str, Any]) -> bool:
    """A predicate on state: a state key (truthy) or a callable; one that raises a
    KeyError, TypeError or ValueError does not hold (adk-fluent's rule)."""
    if isinstance(predicate, str):
        return bool(state.get(predicate))
    try:
        return bool(predicate(state))
    except (KeyError, TypeError, ValueError):
        return False


def render_template(text: str, state: Mapping[str, Any], *, strict: bool = False) -> str:
    """``text`` with its placeholders filled by the compiler's one rule
    (:func:`adk_actors.compiler.substitute_vars`: ``{key?}`` optional, a missing
    required key left as written); with ``strict``, a missing required key raises
    KeyError instead."""
    if strict:
        missing = sorted(template_keys(text)[0] - set(state))
        if missing:
            raise KeyError(missing[0])
    return substitute_vars(text, state)


def template_keys(text: str) -> tuple[set[str], set[str]]:
    """(required, optional) state keys a template reads."""
    required: set[str] = set()
    optional: set[str] = set()
    for match in _PLACEHOLDER.finditer(text):
        (optional if match.group(2) else required).add(match.group(1))
    return required, optional


#: blocks that say which sections are kept and in what order, not what they say
_STRUCTURAL = ("only", "without", "reorder")
#: blocks around another block: (block, ...)
_WRAPPERS = ("scaffolded", "versioned")
_PREAMBLE = "You must follow these instructions carefully. Do not deviate from the specified task."
_POSTAMBLE = "Remember: stay on topic, be accurate, and follow all constraints above."


@dataclass(frozen=True)
class PTransform:
    """One or more prompt blocks; ``a + b`` joins them (order of writing does not
    matter, the section order does)."""

    blocks: tuple[tuple[str, Any], ...]

    def __add__(self, other: PTransform) -> PTransform:
        if not isinstance(other, PTransform):
            return NotImplemented
        return PTransform(self.blocks + other.blocks)

    @property
    def dynamic(self) -> bool:
        """True when the text depends on the session state."""
        return any(kind in ("when", "from_state", "template") or (kind in _WRAPPERS and value[0].dynamic)
                   for kind, value in self.blocks)

    def reads(self) -> set[str]:
        """The state keys it needs (a template's required keys, from_state's)."""
        keys: set[str] = set()
        for kind, value in self.blocks:
            if kind == "from_state":
                keys.update(value)
            elif kind == "template":
                keys.update(template_keys(value)[0])
            elif kind in _WRAPPERS:
                keys |= value[0].reads()
        return keys

    def render(self, state: Mapping[str, Any]) -> str:
        """The instruction's text for ``state``: its sections grouped by kind, kept or
        dropped by ``P.only`` / ``P.without``, in the default order or ``P.reorder``'s
        (the sections it names first, then the others in the default order)."""
        groups: dict[str, list[str]] = {}
        for kind, text in self._resolved(state):
            if text:
                groups.setdefault(kind, []).append(text)
        first: tuple[str, ...] = ()
        for kind, names in self.blocks:
            if kind == "only":
                groups = {k: v for k, v in groups.items() if k in names}
            elif kind == "without":
                groups = {k: v for k, v in groups.items() if k not in names}
            elif kind == "reorder":
                first = names

        def place(kind: str) -> tuple[int, int]:
            return (first.index(kind), 0) if kind in first else (len(first), _ORDER.get(kind, 700))

        parts = []
        for kind in sorted(groups, key=place):
            body = "\n".join(groups[kind])
            label = _LABELS.get(kind, kind.replace("_", " ").title())
            parts.append(body if label is None or kind.startswith("_") else f"{label}:\n{body}")
        return "\n\n".join(parts)

    def _resolved(self, state: Mapping[str, Any]) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        for kind, value in self.blocks:
            if kind == "when":
                predicate, block = value
                if holds(predicate, state):
                    found.extend(block._resolved(state))
            elif kind == "from_state":
                lines = [f"{key}: {state[key]}" for key in value if state.get(key) is not None]
                found.append(("context", "\n".join(lines)))
            elif kind == "template":
                found.append(("_template", render_template(value, state)))
            elif kind == "scaffolded":
                block, preamble, postamble = value
                found.append(("_scaffolded", f"{preamble}\n\n{block.render(state)}\n\n{postamble}"))
            elif kind == "versioned":
                found.extend(value[0]._resolved(state))
            elif kind not in _STRUCTURAL:
                found.append((kind, value))
        return found

    @property
    def fingerprint(self) -> str:
        """12 hex digits that change when any block (text, tag, predicate key) does."""
        def described(blocks: tuple[tuple[str, Any], ...]) -> str:
            return repr([(kind, [described(v.blocks) if isinstance(v, PTransform) else
                                 (v if isinstance(v, str | tuple) else "fn") for v in value]
                          if isinstance(value, tuple) else value) for kind, value in blocks])

        return hashlib.sha256(described(self.blocks).encode()).hexdigest()[:12]

    def __str__(self) -> str:
        return self.render({})


class P:
    """Prompt sections (adk-fluent's ``P``)."""

    @staticmethod
    def role(text: str) -> PTransform:
        return PTransform((("role", text),))

    @staticmethod
    def context(text: str) -> PTransform:
        return PTransform((("context", text),))

    @staticmethod
    def task(text: str) -> PTransform:
        return PTransform((("task", text),))

    @staticmethod
    def constraint(*rules: str) -> PTransform:
        return PTransform(tuple(("constraint", rule) for rule in rules))

    @staticmethod
    def format(text: str) -> PTransform:
        return PTransform((("format", text),))

    @staticmethod
    def example(text: str = "", *, input: str = "", output: str = "") -> PTransform:
        if input or output:
            text = "\n".join(line for line in (f"Input: {input}" if input else "",
                                               f"Output: {output}" if output else "") if line)
        return PTransform((("example", text),))

    @staticmethod
    def section(name: str, text: str) -> PTransform:
        return PTransform(((name, text),))

    @staticmethod
    def when(predicate: Callable[[Mapping[str, Any]], Any] | str, block: PTransform) -> PTransform:
        return PTransform((("when", (predicate, block)),))

    @staticmethod
    def from_state(*keys: str) -> PTransform:
        return PTransform((("from_state", keys),))

    @staticmethod
    def template(text: str) -> PTransform:
        return PTransform((("template", text),))

    @staticmethod
    def scaffolded(block: PTransform, *, preamble: str = _PREAMBLE, postamble: str = _POSTAMBLE) -> PTransform:
        """``block`` rendered whole between a preamble and a postamble (each a blank line
        apart), as one section after the others."""
        return PTransform((("scaffolded", (block, preamble, postamble)),))

    @staticmethod
    def versioned(block: PTransform, *, tag: str = "") -> PTransform:
        """``block`` as it is, with a version tag (:attr:`PTransform.fingerprint` tells versions apart)."""
        return PTransform((("versioned", (block, tag)),))

    @staticmethod
    def only(*section_names: str) -> PTransform:
        """Keep only the named sections (``role``, ``task``, ``constraint`` ...)."""
        return PTransform((("only", section_names),))

    @staticmethod
    def without(*section_names: str) -> PTransform:
        """Drop the named sections."""
        return PTransform((("without", section_names),))

    @staticmethod
    def reorder(*section_names: str) -> PTransform:
        """The named sections first, in this order; the others after, in the default
        order. (adk-fluent 0.18 documents this but ignores it when it compiles.)"""
        return PTransform((("reorder", section_names),))
