"""google-adk's ``google.adk.plugins.auto_tracing_plugin``: a span for every call of
the agent's own Python functions.

Before each run, :class:`AutoTracingPlugin` finds the packages the agent's code
lives in (the modules of every object reachable from the invocation's agent through
public attributes, lists and dicts, to ``max_walk_depth``), adds the
``extra_scope_prefixes`` given, and, once per module, replaces each public function
and each method of each public class defined in a loaded module under those
prefixes with a tracing wrapper (:func:`.auto_tracing_helpers.build_tracing_wrapper`:
a span per call named ``Class.method`` or ``function``, with its arguments and
result). A module that fails to wrap is logged and skipped. With OpenTelemetry's
no-op tracer it does nothing.

The wrapping is in the process where the run's agent code runs (the in-process
runner's, a host's run worker's); a function already imported by name elsewhere
(``from module import fn``) keeps its unwrapped reference there, as google-adk's.
"""

from __future__ import annotations

import inspect
import logging
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

from opentelemetry import trace

from . import auto_tracing_helpers
from .base_plugin import BasePlugin

__all__ = ["DEFAULT_MAX_WALK_DEPTH", "AutoTracingPlugin"]

_log = logging.getLogger("adk_actors.plugins")

DEFAULT_MAX_WALK_DEPTH = 30
_LEAVES = (str, bytes, int, float, bool, type(None))


def _packages_of(root: Any, max_depth: int) -> set[str]:
    """The package prefixes (``pkg.``; a top-level module as ``mod`` and ``mod.``) of
    the objects reachable from ``root`` (see the module); properties are not read."""
    seen: set[int] = set()
    found: set[str] = set()
    pending: list[tuple[Any, int]] = [(root, 0)]
    while pending:
        value, depth = pending.pop()
        if value is None or depth > max_depth or id(value) in seen or isinstance(value, _LEAVES):
            continue
        seen.add(id(value))
        module = getattr(value, "__module__", None) or getattr(getattr(value, "func", None), "__module__", None)
        if isinstance(module, str) and module:
            found.update({module.rsplit(".", 1)[0] + "."} if "." in module else {module, module + "."})
        if isinstance(value, (list, tuple, set, frozenset)):
            pending.extend((item, depth + 1) for item in value)
            continue
        if isinstance(value, dict):
            pending.extend((item, depth + 1) for item in value.values())
            continue
        own = getattr(value, "__dict__", None)
        if isinstance(own, dict):
            pending.extend((item, depth + 1) for name, item in own.items() if not name.startswith("_"))
        for slot in auto_tracing_helpers.public_slot_names(type(value)):
            try:
                pending.append((getattr(value, slot), depth + 1))
            except AttributeError:
                continue
    return found


class AutoTracingPlugin(BasePlugin):
    """Spans for the agent's own functions (see the module); the arguments are google-adk's."""

    def __init__(self, *, name: str = "AutoTracingPlugin", extra_scope_prefixes: tuple[str, ...] = (),
                 tracer: trace.Tracer | None = None,
                 max_repr_len: int = auto_tracing_helpers.DEFAULT_MAX_REPR_LEN,
                 max_recorded_yields: int = auto_tracing_helpers.DEFAULT_MAX_RECORDED_YIELDS,
                 max_walk_depth: int = DEFAULT_MAX_WALK_DEPTH) -> None:
        super().__init__(name=name)
        self._scope_prefixes = tuple(extra_scope_prefixes)
        self._tracer = tracer or trace.get_tracer(__name__)
        self._caps = auto_tracing_helpers.Caps(max_repr_len=max_repr_len, max_recorded_yields=max_recorded_yields)
        self._max_walk_depth = max_walk_depth
        self._tracer_eligible = auto_tracing_helpers.tracer_will_record(self._tracer)
        self._lock = threading.Lock()
        self._wrapped_modules: set[str] = set()

    async def before_run_callback(self, *, invocation_context: Any) -> None:
        """Widen the scope by the agent's packages, then wrap each loaded module in
        scope not wrapped yet (this one aside); nothing with a no-op tracer."""
        if not self._tracer_eligible:
            return
        with self._lock:
            found = _packages_of(getattr(invocation_context, "agent", None), self._max_walk_depth)
            self._scope_prefixes += tuple(sorted(found - set(self._scope_prefixes)))
            for module_name in list(sys.modules):
                if (module_name in self._wrapped_modules or module_name == __name__
                        or not module_name.startswith(self._scope_prefixes)):
                    continue
                module = sys.modules.get(module_name)
                if module is None:
                    continue
                try:
                    self._wrap_module(module)
                except Exception:  # one module's failure never stops the run
                    _log.exception("auto tracing could not wrap module %s", module_name)
                self._wrapped_modules.add(module_name)

    def _wrap_module(self, module: ModuleType) -> None:
        """Wrap the module's own public functions and its own classes' methods."""
        for attr_name, attr in inspect.getmembers(module):
            if attr_name.startswith("_") or getattr(attr, "__module__", "") != module.__name__:
                continue
            if inspect.isfunction(attr):
                self._rebind(module, attr_name, attr)
            elif inspect.isclass(attr):
                for member_name, member in inspect.getmembers(attr):
                    if (not member_name.startswith("__") and inspect.isfunction(member)
                            and getattr(member, "__module__", "") == module.__name__):
                        self._rebind(attr, member_name, member)

    def _rebind(self, owner: ModuleType | type[Any], name: str, fn: Callable[..., Any]) -> None:
        """Put ``fn``'s wrapper in its place on ``owner`` (a static method stays one); a
        place that cannot be set is logged and left."""
        if getattr(fn, auto_tracing_helpers.WRAPPED_ATTR, False):
            return
        try:
            wrapper: Any = auto_tracing_helpers.build_tracing_wrapper(fn, self._tracer, self._caps)
            if isinstance(owner, type) and isinstance(inspect.getattr_static(owner, name, None), staticmethod):
                wrapper = staticmethod(wrapper)
            setattr(owner, name, wrapper)
        except (AttributeError, TypeError) as error:
            _log.info("auto tracing could not rebind %s.%s: %s", getattr(owner, "__qualname__", owner), name, error)
