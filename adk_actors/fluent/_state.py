"""``S``: state transforms as pipeline steps, and the small agents the builder adds.

An :class:`STransform` is a function of the state (a read-only copy) that returns a
:class:`StateDelta` (only its keys set) or a :class:`StateReplacement` (its keys
set, every other plain key removed; ``app:``, ``user:`` and ``temp:`` keys are never
touched). In a pipeline it runs as a :class:`StateStep`, which commits the change
as one event's ``state_delta`` (so a host stores it, and a crash never half-applies
it). ``a >> b`` chains transforms, ``a + b`` runs both on the same state.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .._types import Event, EventActions
from ..agents import AgentBase
from ._prompt import holds

__all__ = ["S", "STransform", "StateDelta", "StateReplacement", "StateStep", "UntilCheck", "step_name", "until"]

_SCOPES = ("app:", "user:", "temp:")


_log = logging.getLogger("adk_actors.fluent")


def step_name(step: Any) -> str:
    """A step's name as an agent name: its ``name`` or ``__name__`` when that is an
    identifier (a lambda's is not), else ``fn``."""
    name = getattr(step, "name", None) or getattr(step, "__name__", "")
    return name if isinstance(name, str) and name.isidentifier() else "fn"


class StateDelta(dict[str, Any]):
    """Set these keys; leave the others."""


class StateReplacement(dict[str, Any]):
    """The plain (unscoped) keys become exactly these."""


def delta_for(state: Mapping[str, Any], result: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``state_delta`` that makes ``state`` what ``result`` says: the keys that
    change (None removes one); unchanged keys are left out."""
    if not result:
        return {}
    delta = {key: value for key, value in result.items() if key not in state or state[key] != value}
    if isinstance(result, StateReplacement):
        delta.update({key: None for key in state if not key.startswith(_SCOPES) and key not in result})
    return delta


@dataclass(frozen=True)
class STransform:
    """A named state transform; ``reads`` / ``writes``: the keys it needs and sets
    (None: not known), for the build-time contract checks."""

    name: str
    apply: Callable[[Mapping[str, Any]], Mapping[str, Any] | None]
    reads: frozenset[str] | None = None
    writes: frozenset[str] | None = None
    #: the plain keys there are after it, from those there were (None: the keys
    #: before and ``writes``; unknown when ``writes`` is None)
    reshape: Callable[[frozenset[str]], frozenset[str]] | None = None
    #: ``S.capture``: the key the user's latest message goes into (its step reads the events)
    capture: str | None = None

    def keys_after(self, before: frozenset[str]) -> frozenset[str] | None:
        """The state keys present after this step (None: cannot be known)."""
        if self.reshape is not None:
            return self.reshape(before)
        return None if self.writes is None else before | self.writes

    def __call__(self, state: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return self.apply(MappingProxyType(dict(state)))

    def __rshift__(self, other: Any) -> Any:
        if isinstance(other, STransform):
            def chained(state: Mapping[str, Any]) -> StateDelta:
                current = dict(state)
                delta: dict[str, Any] = {}
                for step in (self, other):
                    change = delta_for(current, step(current))
                    delta.update(change)
                    for key, value in change.items():
                        current.pop(key, None) if value is None else current.__setitem__(key, value)
                return StateDelta(delta)

            return STransform(f"{self.name}_then_{other.name}", chained, _union(self.reads, other.reads),
                              _union(self.writes, other.writes))
        return NotImplemented  # a builder on the right: its __rrshift__ makes the pipeline

    def __add__(self, other: STransform) -> STransform:
        if not isinstance(other, STransform):
            return NotImplemented

        def both(state: Mapping[str, Any]) -> Mapping[str, Any]:
            first, second = self(state) or StateDelta(), other(state) or StateDelta()
            if isinstance(first, StateReplacement) and not isinstance(second, StateReplacement):
                return StateReplacement({**first, **second})
            if isinstance(second, StateReplacement):
                return second
            return StateDelta({**first, **second})

        return STransform(f"{self.name}_and_{other.name}", both, _union(self.reads, other.reads),
                          _union(self.writes, other.writes))


def _union(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    return None if a is None or b is None else a | b


def _plain(state: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if not k.startswith(_SCOPES)}


class S:
    """State transforms (adk-fluent's ``S``)."""

    @staticmethod
    def pick(*keys: str) -> STransform:
        """Keep only these plain keys."""
        return STransform("pick_" + "_".join(keys),
                          lambda s: StateReplacement({k: s[k] for k in keys if k in s}), None, frozenset(keys),
                          lambda before: frozenset(k for k in before if k in keys or k.startswith(_SCOPES)))

    @staticmethod
    def drop(*keys: str) -> STransform:
        return STransform("drop_" + "_".join(keys),
                          lambda s: StateReplacement({k: v for k, v in _plain(s).items() if k not in keys}),
                          None, frozenset(), lambda before: before - set(keys))

    @staticmethod
    def rename(**old_to_new: str) -> STransform:
        """Rename keys; the others pass through."""
        def apply(s: Mapping[str, Any]) -> StateReplacement:
            return StateReplacement({old_to_new.get(k, k): v for k, v in _plain(s).items()})

        return STransform("rename_" + "_".join(old_to_new), apply, frozenset(old_to_new),
                          frozenset(old_to_new.values()),
                          lambda before: frozenset(old_to_new.get(k, k) for k in before))

    @staticmethod
    def default(**values: Any) -> STransform:
        """Set keys that are missing."""
        return STransform("default_" + "_".join(values),
                          lambda s: StateDelta({k: v for k, v in values.items() if k not in s}),
                          frozenset(), frozenset(values))

    @staticmethod
    def merge(*keys: str, into: str, fn: Callable[..., Any] | None = None) -> STransform:
        """``fn(*values)``, or the present values joined by a newline, into ``into``."""
        def apply(s: Mapping[str, Any]) -> StateDelta:
            if fn is not None:
                return StateDelta({into: fn(*(s.get(k) for k in keys))})
            return StateDelta({into: "\n".join(str(s[k]) for k in keys if k in s)})

        return STransform(f"merge_{'_'.join(keys)}_into_{into}", apply, frozenset(keys), frozenset({into}))

    @staticmethod
    def transform(key: str, fn: Callable[[Any], Any]) -> STransform:
        """``fn`` applied to the key's value (nothing when it is missing)."""
        return STransform(f"transform_{key}_{step_name(fn)}",
                          lambda s: StateDelta({key: fn(s[key])} if key in s else {}), frozenset({key}),
                          frozenset({key}))

    @staticmethod
    def compute(**derivations: Callable[[Mapping[str, Any]], Any]) -> STransform:
        return STransform("compute_" + "_".join(derivations),
                          lambda s: StateDelta({k: f(s) for k, f in derivations.items()}), None,
                          frozenset(derivations))

    @staticmethod
    def set(**values: Any) -> STransform:
        return STransform("set_" + "_".join(values), lambda s: StateDelta(values), frozenset(), frozenset(values))

    @staticmethod
    def guard(predicate: Callable[[Mapping[str, Any]], Any], msg: str = "State guard failed") -> STransform:
        """Stop the run with ``msg`` (a ValueError) unless ``predicate`` holds."""
        def apply(s: Mapping[str, Any]) -> StateDelta:
            if not predicate(s):
                raise ValueError(msg)
            return StateDelta()

        return STransform("guard", apply, None, frozenset())

    @staticmethod
    def require(*keys: str) -> STransform:
        """Stop the run (a ValueError) when a key is missing or empty."""
        def apply(s: Mapping[str, Any]) -> StateDelta:
            missing = [k for k in keys if not s.get(k)]
            if missing:
                raise ValueError(f"required state keys missing: {', '.join(missing)}")
            return StateDelta()

        return STransform("require_" + "_".join(keys), apply, frozenset(keys), frozenset())

    @staticmethod
    def identity() -> STransform:
        return STransform("identity", lambda s: StateDelta(), frozenset(), frozenset())

    @staticmethod
    def when(predicate: Callable[[Mapping[str, Any]], Any] | str, transform: STransform) -> STransform:
        """``transform`` only when ``predicate(state)`` holds (a string: that key is truthy);
        a predicate that raises does not hold."""
        def apply(s: Mapping[str, Any]) -> Mapping[str, Any] | None:
            return transform(s) if holds(predicate, s) else StateDelta()

        reads = _union(frozenset({predicate}), transform.reads) if isinstance(predicate, str) else None
        return STransform(f"when_{transform.name}", apply, reads, transform.writes)

    @staticmethod
    def capture(key: str) -> STransform:
        """The user's latest message (its text) into ``key``."""
        return STransform(f"capture_{key}", lambda s: StateDelta(), frozenset(), frozenset({key}), capture=key)

    @staticmethod
    def log(*keys: str, label: str = "") -> STransform:
        """Write these keys (all of the state with none) to the ``adk_actors.fluent``
        log at INFO, as adk-fluent prints them; no change."""
        def apply(s: Mapping[str, Any]) -> StateDelta:
            shown = {k: s.get(k, "<missing>") for k in keys} if keys else dict(s)
            _log.info("%s%s", f"[{label}] " if label else "", shown)
            return StateDelta()

        return STransform(f"log_{'_'.join(keys) if keys else 'all'}", apply,
                          frozenset(keys) if keys else None, frozenset())

    @staticmethod
    def branch(key: str, **transforms: STransform) -> STransform:
        """The transform named by the key's value (as text); none when no name matches."""
        def apply(s: Mapping[str, Any]) -> Mapping[str, Any] | None:
            chosen = transforms.get(str(s[key])) if s.get(key) is not None else None
            return chosen(s) if chosen is not None else StateDelta()

        writes: frozenset[str] | None = frozenset()
        for transform in transforms.values():
            writes = _union(writes, transform.writes)
        return STransform(f"branch_{key}", apply, frozenset({key}), writes)

    @staticmethod
    def flatten(key: str, separator: str = ".") -> STransform:
        """The nested dict at ``key`` as keys joined by ``separator`` (``a.b``)."""
        def apply(s: Mapping[str, Any]) -> StateDelta:
            flat: dict[str, Any] = {}

            def walk(value: Any, prefix: str) -> None:
                if isinstance(value, dict):
                    for name, inner in value.items():
                        walk(inner, f"{prefix}{separator}{name}" if prefix else name)
                else:
                    flat[prefix] = value

            walk(s.get(key, {}), "")
            return StateDelta(flat)

        return STransform(f"flatten_{key}", apply, frozenset({key}), None)

    @staticmethod
    def unflatten(separator: str = ".") -> STransform:
        """Keys joined by ``separator`` (``a.b``) back into nested dicts (``a: {b: ...}``);
        the state replaced by the result (the joined keys gone)."""
        def apply(s: Mapping[str, Any]) -> StateReplacement:
            result: dict[str, Any] = {}
            for name, value in s.items():
                if separator not in name:
                    result[name] = value
                    continue
                *path, last = name.split(separator)
                nested = result
                for part in path:
                    nested = nested.setdefault(part, {})
                nested[last] = value
            return StateReplacement(result)

        return STransform("unflatten", apply, None, None)

    @staticmethod
    def zip(*keys: str, into: str = "zipped") -> STransform:
        """The lists at ``keys`` zipped into a list of tuples at ``into``."""
        return STransform(f"zip_{'_'.join(keys)}_into_{into}",
                          lambda s: StateDelta({into: list(zip(*(s.get(k, []) for k in keys), strict=False))}),
                          frozenset(keys), frozenset({into}))

    @staticmethod
    def group_by(items_key: str, key_fn: Callable[[Any], Any], into: str) -> STransform:
        """The items at ``items_key`` grouped by ``str(key_fn(item))`` into ``into``."""
        def apply(s: Mapping[str, Any]) -> StateDelta:
            groups: dict[str, list[Any]] = {}
            for item in s.get(items_key, []):
                groups.setdefault(str(key_fn(item)), []).append(item)
            return StateDelta({into: groups})

        return STransform(f"group_by_{items_key}_into_{into}", apply, frozenset({items_key}), frozenset({into}))

    @staticmethod
    def accumulate(key: str, *, into: str | None = None) -> STransform:
        """Append the key's value (when present) to the list at ``into`` (``<key>_all``)."""
        target = into or f"{key}_all"

        def apply(s: Mapping[str, Any]) -> StateDelta:
            items = list(s.get(target) or [])
            if s.get(key) is not None:
                items.append(s[key])
            return StateDelta({target: items})

        return STransform(f"accumulate_{key}_into_{target}", apply, frozenset({key}), frozenset({target}))

    @staticmethod
    def counter(key: str, step: int = 1) -> STransform:
        """Add ``step`` to the key's number (0 when missing)."""
        return STransform(f"counter_{key}", lambda s: StateDelta({key: s.get(key, 0) + step}), frozenset(),
                          frozenset({key}))

    @staticmethod
    def history(key: str, max_size: int = 10) -> STransform:
        """Keep the key's last ``max_size`` values in ``<key>_history``."""
        target = f"{key}_history"

        def apply(s: Mapping[str, Any]) -> StateDelta:
            past = list(s.get(target) or [])
            if s.get(key) is not None:
                past = [*past, s[key]][-max_size:]
            return StateDelta({target: past})

        return STransform(f"history_{key}", apply, frozenset({key}), frozenset({target}))

    @staticmethod
    def validate(schema: type, *, strict: bool = False) -> STransform:
        """Stop the run (a ValueError naming the schema) unless the state is a valid
        ``schema`` (a pydantic model or a dataclass)."""
        def apply(s: Mapping[str, Any]) -> StateDelta:
            try:
                if hasattr(schema, "model_validate"):
                    schema.model_validate(dict(s), strict=strict)
                else:
                    schema(**s)
            except Exception as exc:
                raise ValueError(f"State validation failed against {schema.__name__}: {exc}") from exc
            return StateDelta()

        return STransform(f"validate_{schema.__name__}", apply, None, frozenset())


class StateStep(AgentBase):
    """A pipeline step that applies a state transform: one event carrying the change
    (none when nothing changes). A transform that raises ends the run with its error."""

    transform: Any

    async def _run_impl(self, ctx: Any) -> AsyncIterator[Event]:
        capture = getattr(self.transform, "capture", None)
        if capture is not None:
            said = next((e.content.text for e in reversed(ctx.session.events)
                         if e.author == "user" and e.content is not None and e.content.text), None)
            delta = delta_for(ctx.session.state, {capture: said} if said is not None else {})
        else:
            delta = delta_for(ctx.session.state, self.transform(ctx.session.state))
        if delta:
            yield ctx.event(actions=EventActions(state_delta=delta))


@dataclass(frozen=True)
class Until:
    """``a * until(pred, max=10)``: loop ``a`` until ``pred(state)`` holds."""

    predicate: Callable[[Mapping[str, Any]], Any]
    max: int = 10


def until(predicate: Callable[[Mapping[str, Any]], Any], max: int = 10) -> Until:
    return Until(predicate, max)


class UntilCheck(AgentBase):
    """The last step of an ``until`` loop: escalates (ends the loop) once the predicate
    holds on the state; a predicate that raises does not hold."""

    predicate: Any

    async def _run_impl(self, ctx: Any) -> AsyncIterator[Event]:
        if holds(self.predicate, ctx.session.state):
            yield ctx.event(actions=EventActions(escalate=True))
