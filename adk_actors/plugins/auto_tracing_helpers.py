"""google-adk's ``google.adk.plugins.auto_tracing_helpers``: what
:class:`~adk_actors.plugins.auto_tracing_plugin.AutoTracingPlugin` wraps a function
with, and how it records a call.

:func:`build_tracing_wrapper` gives a function (plain, async, generator or async
generator) a wrapper that runs each call inside an OpenTelemetry span named
``Class.method`` or ``function`` (:func:`display_name_for`), and at the end writes
the call's arguments (``adk.fn.arg.<name>``), its result (``adk.fn.return``; a
generator's as a :class:`StreamResult`: how many items it yielded and the first
few) or its exception (``adk.fn.exc_type``, ``adk.fn.exc_repr``). Values are written
as :func:`safe_repr` renders them: cut to :class:`Caps`' length, never raising, an
``<X object at 0x..>`` repr replaced by its public fields, and credentials masked:
a value of a credential type (``AuthCredential``, ``Credentials``, ... anywhere in
its classes) as ``<TypeName>``, a field or key named like a secret (``token``,
``api_key``, ``..._password``, ...) likewise, inside lists, dicts, dataclasses,
pydantic models and plain objects; an argument named like a secret is not recorded
at all.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import logging
import re
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any

from opentelemetry import trace as trace_api

__all__ = ["DEFAULT_MAX_RECORDED_YIELDS", "DEFAULT_MAX_REPR_LEN", "WRAPPED_ATTR", "Caps", "NamedArg", "StreamResult",
           "build_tracing_wrapper", "display_name_for", "name_value_pairs", "positional_param_names",
           "public_slot_names", "record_io_on_span", "safe_repr", "tracer_will_record"]

_log = logging.getLogger("adk_actors.plugins")

DEFAULT_MAX_REPR_LEN = 4096
DEFAULT_MAX_RECORDED_YIELDS = 16
#: set on a wrapper, so a function is never wrapped twice
WRAPPED_ATTR = "_adk_auto_tracing_wrapped"
NamedArg = tuple[str, str]

_SCALARS = frozenset({int, float, bool, str, bytes, type(None)})
_RECEIVERS = frozenset({"self", "cls"})
_DEFAULT_REPR = re.compile(r"^<.+ object at 0x[0-9a-fA-F]+>$")
#: classes whose repr would show a secret (matched by name along a value's classes)
_SECRET_TYPES = frozenset({"AuthConfig", "AuthCredential", "AuthToolArguments", "Credentials", "HttpAuth",
                           "HttpCredentials", "OAuth2Auth", "OAuth2Session", "ServiceAccount",
                           "ServiceAccountCredential"})
#: names (of an argument, field or key) that hold a secret, whole or as a ``_suffix``
_SECRET_NAMES = frozenset({"api_key", "auth_config", "auth_credential", "authorization", "cookie", "cookies",
                           "credential", "credentials", "password", "private_key", "secret", "token"})
#: how deep, and over how many containers, the masking walk goes before it elides
_MAX_DEPTH = 10
_MAX_NODES = 1024


def _holds_secret_type(cls: type) -> bool:
    return any(klass.__name__ in _SECRET_TYPES for klass in cls.__mro__)


#: cached by class (typed by hand: the cache's own signature takes only hashables)
_secret_type: Callable[[type], bool] = functools.lru_cache(maxsize=512)(_holds_secret_type)


@functools.lru_cache(maxsize=1024)
def _secret_name(name: str) -> bool:
    folded = name.lower().replace("-", "_")
    return folded in _SECRET_NAMES or any(folded.endswith("_" + word) for word in _SECRET_NAMES)


@dataclasses.dataclass(frozen=True)
class Caps:
    """How long a recorded value may be, and how many of a generator's items are kept."""

    max_repr_len: int = DEFAULT_MAX_REPR_LEN
    max_recorded_yields: int = DEFAULT_MAX_RECORDED_YIELDS


class StreamResult:
    """A generator's result as recorded: the first ``items`` it yielded and ``total``."""

    def __init__(self, items: Sequence[Any], caps: Caps, total: int) -> None:
        self._items = items
        self._caps = caps
        self._total = total

    def __repr__(self) -> str:
        if self._total == 0:
            return "<generator: 0 items yielded>"
        shown = [safe_repr(item, self._caps) for item in self._items]
        more = f" ... + {self._total - len(shown)} more" if self._total > len(shown) else ""
        return f"<generator: {self._total} items yielded; first {len(shown)}: [{', '.join(shown)}]{more}>"


def _repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception:  # a broken __repr__: named, never raised into the traced call
        return f"<unrepr-able {type(value).__name__}>"


def public_slot_names(cls: type) -> set[str]:
    """The public names in ``__slots__`` along ``cls``'s classes (a single-string
    ``__slots__`` is one name)."""
    found: set[str] = set()
    for klass in cls.__mro__:
        slots = getattr(klass, "__slots__", None)
        if slots is None:
            continue
        for slot in (slots,) if isinstance(slots, str) else slots:
            if slot and not slot.startswith("_"):
                found.add(slot)
    return found


def _held(value: Any) -> list[tuple[str, Any]]:
    """An object's instance attributes and slot values, by name."""
    found = list(vars(value).items()) if isinstance(getattr(value, "__dict__", None), dict) else []
    for slot in sorted(public_slot_names(type(value))):
        try:
            found.append((slot, getattr(value, slot)))
        except AttributeError:
            continue
    return found


class _Masker:
    """The masking walk: ``text(value)`` is None when nothing in ``value`` needs
    masking, else its rendering with the secrets masked."""

    def __init__(self) -> None:
        self.budget = _MAX_NODES
        self.open: set[int] = set()

    def named(self, name: Any, value: Any, depth: int) -> str | None:
        if isinstance(name, str) and _secret_name(name):
            return f"<{type(value).__name__}>"
        return self.text(value, depth)

    def fields(self, items: Sequence[tuple[str, Any]], depth: int) -> list[str] | None:
        rendered = [(name, value, self.named(name, value, depth)) for name, value in items]
        if all(text is None for _, _, text in rendered):
            return None
        return [f"{name}={text if text is not None else _repr(value)}" for name, value, text in rendered]

    def text(self, value: Any, depth: int = 0) -> str | None:
        cls = type(value)
        if cls in _SCALARS or isinstance(value, type) or inspect.ismodule(value) or isinstance(value, StreamResult):
            return None
        if _secret_type(cls):
            return f"<{cls.__name__}>"
        self.budget -= 1
        if self.budget < 0 or depth >= _MAX_DEPTH or id(value) in self.open:
            return f"<{cls.__name__} ...>"  # not walked: elided, never shown unmasked
        self.open.add(id(value))
        try:
            return self._inside(value, depth + 1)
        finally:
            self.open.discard(id(value))

    def _inside(self, value: Any, depth: int) -> str | None:
        cls = type(value)
        own_repr = getattr(cls, "__repr__", None) is not object.__repr__
        if own_repr and isinstance(value, tuple) and hasattr(cls, "_fields"):
            parts = self.fields(list(zip(cls._fields, value, strict=False)), depth)
            return f"{cls.__name__}({', '.join(parts)})" if parts else None
        if own_repr and isinstance(value, Mapping):
            return self._mapping(value, depth)
        if isinstance(value, (list, tuple, set, frozenset)):
            return self._collection(value, depth)
        if own_repr and dataclasses.is_dataclass(value):
            parts = self.fields([(f.name, getattr(value, f.name, None)) for f in dataclasses.fields(value)], depth)
            return f"{cls.__name__}({', '.join(parts)})" if parts else None
        if own_repr and isinstance(getattr(cls, "model_fields", None), dict):
            items = list((getattr(value, "__dict__", None) or {}).items())
            items += list((getattr(value, "__pydantic_extra__", None) or {}).items())
            parts = self.fields(items, depth)
            return f"{cls.__name__}({', '.join(parts)})" if parts else None
        rendered = [(name, item, self.named(name, item, depth)) for name, item in _held(value)]
        if all(text is None for _, _, text in rendered):
            return None
        shown = [f"{name}={text if text is not None else _repr(item)}" for name, item, text in rendered
                 if not name.startswith("_")]  # private state is checked, never shown
        return f"<{cls.__name__} fields={{{', '.join(shown)}}}>" if shown else f"<{cls.__name__}>"

    def _mapping(self, value: Mapping[Any, Any], depth: int) -> str | None:
        rendered = [(key, self.text(key, depth), item, self.named(key, item, depth)) for key, item in value.items()]
        if all(key_text is None and item_text is None for _, key_text, _, item_text in rendered):
            return None
        return "{" + ", ".join(f"{kt if kt is not None else _repr(k)}: {vt if vt is not None else _repr(v)}"
                               for k, kt, v, vt in rendered) + "}"

    def _collection(self, value: Any, depth: int) -> str | None:
        rendered = [(item, self.text(item, depth)) for item in value]
        if all(text is None for _, text in rendered):
            return None
        parts = [text if text is not None else _repr(item) for item, text in rendered]
        if isinstance(value, list):
            return f"[{', '.join(parts)}]"
        if isinstance(value, tuple):
            return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"
        body = "{" + ", ".join(parts) + "}"
        return body if isinstance(value, set) else f"frozenset({body})"


def _fields_summary(value: Any) -> str:
    """An ``<X object at 0x..>`` value as ``<X fields={...}>`` (its public attributes;
    a secret-named or secret-typed one by its type only), or ``<X>``."""
    cls = type(value).__name__
    shown = []
    for name, item in _held(value):
        if name.startswith("_"):
            continue
        secret = _secret_name(name) or _secret_type(type(item))
        shown.append(f"{name}=<{type(item).__name__}>" if secret else f"{name}={_repr(item)}")
    return f"<{cls} fields={{{', '.join(shown)}}}>" if shown else f"<{cls}>"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"...[{len(text) - limit} more chars]"


def safe_repr(value: Any, caps: Caps) -> str:
    """``value`` as recorded (see the module): scalars by ``repr``; a secret type as
    ``<Type>``; else its masked rendering when it holds a secret, else its ``repr``
    (a default one as its public fields); cut to ``caps.max_repr_len``. A masking
    walk that fails gives ``<Type ...>`` (logged), a failing ``repr`` a note of it."""
    if type(value) in _SCALARS:
        return _cut(repr(value), caps.max_repr_len)
    if _secret_type(type(value)):
        return f"<{type(value).__name__}>"
    try:
        masked = _Masker().text(value)
    except Exception as error:  # the walk stopped partway: nothing says the rest is clean
        _log.warning("auto tracing could not mask a %s: %s", type(value).__name__, error)
        return f"<{type(value).__name__} ...>"
    if masked is not None:
        return _cut(masked, caps.max_repr_len)
    try:
        text = repr(value)
    except Exception as error:
        _log.warning("auto tracing: repr of a %s failed: %s", type(value).__name__, error)
        text = f"<unrepr-able {type(value).__name__}: {error!r}>"
    if _DEFAULT_REPR.match(text):
        text = _fields_summary(value)
    return _cut(text, caps.max_repr_len)


def positional_param_names(fn: Callable[..., Any]) -> tuple[str, ...]:
    """``fn``'s positional parameters' names (``()`` when it has no signature)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def name_value_pairs(param_names: Sequence[str], args: tuple[Any, ...], kwargs: dict[str, Any],
                     caps: Caps) -> list[NamedArg]:
    """A call's arguments as ``(name, safe_repr)``: positional ones by ``param_names``
    (``argN`` past them), then keywords; ``self`` / ``cls`` and secret-named ones left out."""
    named = [(param_names[i] if i < len(param_names) else f"arg{i}", value) for i, value in enumerate(args)]
    named += list(kwargs.items())
    return [(name, safe_repr(value, caps)) for name, value in named
            if name not in _RECEIVERS and not _secret_name(name)]


def record_io_on_span(span: trace_api.Span, pairs: Sequence[NamedArg], result: Any, exc: BaseException | None,
                      caps: Caps) -> None:
    """Write a call's ``adk.fn.arg.<name>`` (secret-named ones still left out), then its
    ``adk.fn.exc_type`` and ``adk.fn.exc_repr`` if it raised, else ``adk.fn.return``."""
    for name, text in pairs:
        if not _secret_name(name):
            span.set_attribute(f"adk.fn.arg.{name}", text)
    if exc is not None:
        span.set_attribute("adk.fn.exc_type", type(exc).__qualname__)
        span.set_attribute("adk.fn.exc_repr", safe_repr(exc, caps))
    else:
        span.set_attribute("adk.fn.return", safe_repr(result, caps))


def display_name_for(fn: Callable[..., Any]) -> str:
    """The span name of ``fn``: the last two parts of its qualified name (``Class.method``)."""
    return ".".join(fn.__qualname__.split(".")[-2:])


def tracer_will_record(tracer: trace_api.Tracer) -> bool:
    """False for OpenTelemetry's no-op tracer, else True."""
    return not isinstance(tracer, trace_api.NoOpTracer)


def build_tracing_wrapper(fn: Callable[..., Any], tracer: trace_api.Tracer, caps: Caps) -> Callable[..., Any]:
    """``fn`` wrapped to run each call in its span (see the module), in the same shape
    (a coroutine function stays one, a generator yields through); ``fn`` itself for a
    tracer that records nothing. An exception is recorded and raised on. The wrapper
    carries :data:`WRAPPED_ATTR`."""
    if not tracer_will_record(tracer):
        return fn
    name = display_name_for(fn)
    params = positional_param_names(fn)

    def finish(span: trace_api.Span, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any,
               exc: BaseException | None) -> None:
        if span.is_recording():
            record_io_on_span(span, name_value_pairs(params, args, kwargs, caps), result, exc, caps)

    @functools.wraps(fn)
    def plain(*args: Any, **kwargs: Any) -> Any:
        with tracer.start_as_current_span(name) as span:
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                finish(span, args, kwargs, None, exc)
                raise
            finish(span, args, kwargs, result, None)
            return result

    @functools.wraps(fn)
    async def coroutine(*args: Any, **kwargs: Any) -> Any:
        with tracer.start_as_current_span(name) as span:
            try:
                result = await fn(*args, **kwargs)
            except BaseException as exc:
                finish(span, args, kwargs, None, exc)
                raise
            finish(span, args, kwargs, result, None)
            return result

    generator, async_generator = _generator_wrappers(fn, name, tracer, caps, finish)
    wrapper: Callable[..., Any] = (async_generator if inspect.isasyncgenfunction(fn)
                                   else coroutine if inspect.iscoroutinefunction(fn)
                                   else generator if inspect.isgeneratorfunction(fn) else plain)
    setattr(wrapper, WRAPPED_ATTR, True)
    return wrapper


_Finish = Callable[[trace_api.Span, tuple[Any, ...], dict[str, Any], Any, BaseException | None], None]


def _generator_wrappers(fn: Callable[..., Any], name: str, tracer: trace_api.Tracer, caps: Caps,
                        finish: _Finish) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The wrappers of a generator and of an async generator ``fn``: each call's span is
    open while it yields, its result the :class:`StreamResult` of what it yielded."""
    keep = caps.max_recorded_yields

    @functools.wraps(fn)
    def generator(*args: Any, **kwargs: Any) -> Iterator[Any]:
        with tracer.start_as_current_span(name) as span:
            kept: list[Any] = []
            total = 0
            try:
                for item in fn(*args, **kwargs):
                    total += 1
                    if len(kept) < keep:
                        kept.append(item)
                    yield item
            except BaseException as exc:
                finish(span, args, kwargs, StreamResult(kept, caps, total), exc)
                raise
            finish(span, args, kwargs, StreamResult(kept, caps, total), None)

    @functools.wraps(fn)
    async def async_generator(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        with tracer.start_as_current_span(name) as span:
            kept: list[Any] = []
            total = 0
            try:
                async for item in fn(*args, **kwargs):
                    total += 1
                    if len(kept) < keep:
                        kept.append(item)
                    yield item
            except BaseException as exc:
                finish(span, args, kwargs, StreamResult(kept, caps, total), exc)
                raise
            finish(span, args, kwargs, StreamResult(kept, caps, total), None)

    return generator, async_generator
