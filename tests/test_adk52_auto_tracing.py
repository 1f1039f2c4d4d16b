"""google-adk 2.13's ``AutoTracingPlugin`` and ``auto_tracing_helpers`` at our paths
(issue 52), side by side with google-adk's:

* the helpers render the same values the same way (``safe_repr``: scalars, cut
  strings, credentials masked by type and by name inside lists, dicts, tuples,
  dataclasses, pydantic models and plain objects, default reprs summarized, cycles
  and broken reprs), and name the same arguments, spans and parameters;
* the plugin, before a run, wraps the agent's own modules: the same calls give spans
  of the same names and ``adk.fn.*`` attributes (plain, async, generator and async
  generator functions, methods, static methods, a raised error), and it wraps nothing
  with a no-op tracer.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import inspect
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, NamedTuple

import pydantic
import pytest

pytest.importorskip("google.adk")
pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")]


def public_names(module: Any) -> list[str]:
    return sorted(name for name, value in vars(module).items()
                  if not name.startswith("_") and (inspect.isclass(value) or inspect.isfunction(value))
                  and getattr(value, "__module__", None) == module.__name__)


@pytest.mark.parametrize("module", ["plugins.auto_tracing_helpers", "plugins.auto_tracing_plugin"])
def test_every_public_name_is_at_our_path(module: str) -> None:
    theirs = importlib.import_module(f"google.adk.{module}")
    ours = importlib.import_module(f"adk_actors.{module}")
    assert [name for name in public_names(theirs) if not hasattr(ours, name)] == []


# -- helpers ---------------------------------------------------------------------------------


class AuthCredential:  # a credential type, by name
    def __init__(self) -> None:
        self.token = "s3cr3t"


class Plain:
    def __init__(self) -> None:
        self.city = "Paris"
        self.api_key = "k-123"
        self._hidden = "h"


class Slotted:
    __slots__ = ("_private", "name")

    def __init__(self) -> None:
        self.name = "slot"
        self._private = 1


@dataclasses.dataclass
class Settings:
    region: str
    password: str
    nested: dict[str, Any]


class Model(pydantic.BaseModel):
    user: str
    secret: str = "x"


class Pair(NamedTuple):
    left: Any
    right: Any


class Broken:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def values() -> list[Any]:
    cyclic: list[Any] = [1]
    cyclic.append(cyclic)
    return [1, "text", b"raw", None, 2.5, "x" * 100, AuthCredential(), Plain(), Slotted(),
            Settings("eu", "pw", {"token": "t", "ok": 1}), Model(user="u"), Pair(1, AuthCredential()),
            {"headers": {"Authorization": "Bearer x"}, "n": 1}, [AuthCredential(), 2], ({"x_api_key": "k"},),
            {1, 2}, frozenset({"a"}), cyclic, Broken(), [[[[[[[[[[[[AuthCredential()]]]]]]]]]]]], object(),
            ValueError("boom")]


def test_safe_repr_renders_as_google_adks() -> None:
    from google.adk.plugins import auto_tracing_helpers as theirs

    from adk_actors.plugins import auto_tracing_helpers as ours

    for caps in ((ours.Caps(), theirs.Caps()), (ours.Caps(max_repr_len=20), theirs.Caps(max_repr_len=20))):
        for value in values():
            assert ours.safe_repr(value, caps[0]) == theirs.safe_repr(value, caps[1]), value


def test_argument_and_span_helpers_match_google_adks() -> None:
    from google.adk.plugins import auto_tracing_helpers as theirs

    from adk_actors.plugins import auto_tracing_helpers as ours

    def fn(a: int, b: str, /, c: int = 0, *rest: Any, token: str = "", **more: Any) -> None: ...

    class Owner:
        def method(self, x: int) -> None: ...

    for helper in ("positional_param_names", "display_name_for"):
        for target in (fn, Owner.method, print, len):
            assert getattr(ours, helper)(target) == getattr(theirs, helper)(target)
    assert ours.public_slot_names(Slotted) == theirs.public_slot_names(Slotted) == {"name"}
    args = ("self", 1, AuthCredential(), "extra")
    kwargs = {"password": "p", "mode": Plain(), "X-Api-Key": "k"}
    names = ("self", "count", "who")
    assert (ours.name_value_pairs(names, args, kwargs, ours.Caps())
            == theirs.name_value_pairs(names, args, kwargs, theirs.Caps()))
    for total in (0, 3, 40):
        items = list(range(min(total, 16)))
        assert repr(ours.StreamResult(items, ours.Caps(), total)) == repr(theirs.StreamResult(items, theirs.Caps(), total))
    assert ours.tracer_will_record(trace.NoOpTracer()) is theirs.tracer_will_record(trace.NoOpTracer()) is False
    assert (ours.DEFAULT_MAX_REPR_LEN, ours.DEFAULT_MAX_RECORDED_YIELDS, ours.WRAPPED_ATTR) == (
        theirs.DEFAULT_MAX_REPR_LEN, theirs.DEFAULT_MAX_RECORDED_YIELDS, theirs.WRAPPED_ATTR)


# -- the plugin --------------------------------------------------------------------------------


AGENT_CODE = '''
import asyncio


def lookup(city: str, api_key: str = "k") -> dict:
    """Look a city up."""
    return {"city": city, "found": helper(city)}


def helper(city):
    return len(city)


def failing(n):
    raise ValueError(f"bad {n}")


def countdown(n):
    yield from range(n, 0, -1)


async def later(x):
    await asyncio.sleep(0)
    return x * 2


async def stream(n):
    for i in range(n):
        yield {"i": i}


class Agent:
    def __init__(self, tools):
        self.name = "helper"
        self.tools = tools
        self.sub_agents = []


class Desk:
    def __init__(self, name):
        self.name = name

    def greet(self, who):
        return f"{self.name} greets {who}"

    @staticmethod
    def shout(text):
        return text.upper()

    def _private(self):
        return 1
'''


@pytest.fixture
def agent_packages(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    """The same agent code as two packages (one for each side's plugin to wrap)."""
    for package in ("adk52_at_theirs", "adk52_at_ours"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
        (tmp_path / package / "tools.py").write_text(textwrap.dedent(AGENT_CODE))
    sys.path.insert(0, str(tmp_path))
    try:
        yield (importlib.import_module("adk52_at_theirs.tools"), importlib.import_module("adk52_at_ours.tools"))
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith(("adk52_at_theirs", "adk52_at_ours"))]:
            del sys.modules[name]


def exercise(module: Any) -> None:
    module.lookup("Oslo", api_key="secret")
    with pytest.raises(ValueError):
        module.failing(3)
    assert list(module.countdown(3)) == [3, 2, 1]
    desk = module.Desk("front")
    desk.greet("Ann")
    assert module.Desk.shout("hi") == "HI" and desk.shout("yo") == "YO"

    async def run() -> None:
        assert await module.later(4) == 8
        assert [item async for item in module.stream(20)][-1] == {"i": 19}

    asyncio.run(run())


def spans_of(plugin_class: Any, module: Any) -> list[tuple[str, dict[str, Any]]]:
    found = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(found))
    plugin = plugin_class(tracer=provider.get_tracer("t"), max_recorded_yields=4)
    agent = module.Agent([module.lookup])  # (an object of the agent's own package: the scope is that package)
    asyncio.run(plugin.before_run_callback(invocation_context=SimpleNamespace(agent=agent)))
    asyncio.run(plugin.before_run_callback(invocation_context=SimpleNamespace(agent=agent)))  # once only
    assert {prefix.split(".")[0] for prefix in plugin._scope_prefixes} == {module.__name__.split(".")[0]}
    exercise(module)
    return [(span.name, dict(span.attributes or {})) for span in found.get_finished_spans()]


def test_the_plugin_traces_the_agents_code_as_google_adks(agent_packages: tuple[Any, Any]) -> None:
    from google.adk.plugins.auto_tracing_plugin import AutoTracingPlugin as Theirs

    from adk_actors.plugins.auto_tracing_plugin import AutoTracingPlugin as Ours

    their_module, our_module = agent_packages
    theirs = spans_of(Theirs, their_module)
    ours = spans_of(Ours, our_module)
    assert ours == theirs
    names = [name for name, _ in ours]
    assert {"lookup", "helper", "failing", "countdown", "later", "stream", "Desk.greet", "Desk.shout"} <= set(names)
    assert "Desk._private" not in names and "Desk.__init__" not in names
    lookup = dict(ours)["lookup"]
    assert "adk.fn.arg.api_key" not in lookup and lookup["adk.fn.arg.city"] == "'Oslo'"
    assert dict(ours)["failing"]["adk.fn.exc_type"] == "ValueError"
    assert dict(ours)["stream"]["adk.fn.return"].startswith("<generator: 20 items yielded; first 4:")


def test_a_no_op_tracer_wraps_nothing(agent_packages: tuple[Any, Any]) -> None:
    from adk_actors.plugins.auto_tracing_plugin import AutoTracingPlugin

    _, module = agent_packages
    original = module.lookup
    plugin = AutoTracingPlugin(tracer=trace.NoOpTracer())
    agent = module.Agent([module.lookup])
    asyncio.run(plugin.before_run_callback(invocation_context=SimpleNamespace(agent=agent)))
    assert module.lookup is original
