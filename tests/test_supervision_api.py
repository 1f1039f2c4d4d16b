"""supervision's public face, trio's split: a small core in ``supervision``, the wire
messages in ``supervision.protocol``, OS plumbing and the parts for building servers
in ``supervision.lowlevel``. Each name lives in exactly one of them, each resolves,
and every importer in the repository asks the right module for it."""

from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

import pytest

import supervision
import supervision.lowlevel
import supervision.protocol

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = ("supervision", "supervision.protocol", "supervision.lowlevel")

CORE = {
    # servers and trees: the behaviours a user subclasses, and the registry
    "GenServer", "CallerRef", "Supervisor", "Registry",
    # specs (each starts its supervisor) and their everyday options
    "ChildSpec", "SupervisorSpec", "DynamicSupervisorSpec", "PartitionSupervisorSpec", "Strategy", "Restart", "Backoff",
    # starting, stopping and talking
    "start_actor_system", "start_supervisor", "start_server", "stop_server", "SupervisorClient",
    "call", "cast", "call_name",
    # time
    "Clock",
    # the key errors
    "SupervisionError", "SpecError", "CallError", "CallTimeout", "BadRequest", "ServerNotRunning",
}


def test_the_core_is_the_small_set_a_user_needs() -> None:
    assert set(supervision.__all__) == CORE
    assert len(supervision.__all__) == len(CORE), "a name listed twice"


def test_plumbing_and_wire_messages_are_not_in_the_core() -> None:
    for name in ("proc_stat", "open_pidfd", "free_port", "process_alive", "call_on_fresh_chunk", "ask_delivered",
                 "NO_REPLY", "HealthCheck", "ChildType", "AutoShutdown", "whereis", "DynamicSupervisor",
                 "PartitionSupervisor"):
        assert name in supervision.lowlevel.__all__ and not hasattr(supervision, name), name
    for name in ("Call", "Reply", "Init", "InitOk", "Shutdown", "Exiting", "ErrorReply", "Cast", "OsPid", "StartChild",
                 "ServerDiedAnswering", "ServerCrashed"):
        assert name in supervision.protocol.__all__ and not hasattr(supervision, name), name


@pytest.mark.parametrize("module_name", PUBLIC)
def test_every_listed_name_resolves_to_the_librarys_own_object(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert module.__doc__ and len(module.__doc__) > 200, "say what is in it and why"
    assert len(set(module.__all__)) == len(module.__all__), "a name listed twice"
    for name in module.__all__:
        value = getattr(module, name)  # AttributeError: listed but missing
        defined_in = getattr(value, "__module__", None)
        if isinstance(value, type | types.FunctionType):
            assert defined_in is not None and defined_in.startswith("supervision._"), (name, defined_in)


@pytest.mark.parametrize("module_name", PUBLIC)
def test_a_module_exposes_nothing_public_beyond_its_list(module_name: str) -> None:
    module = importlib.import_module(module_name)
    submodules = {"protocol", "lowlevel", "testing"} if module_name == "supervision" else set()
    extra = {name for name in vars(module) if not name.startswith("_")} - set(module.__all__) - submodules
    assert extra == set()


def test_each_name_lives_in_exactly_one_module() -> None:
    lists = [set(importlib.import_module(name).__all__) for name in PUBLIC]
    assert lists[0].isdisjoint(lists[1]) and lists[0].isdisjoint(lists[2]) and lists[1].isdisjoint(lists[2])


def _imports_in(tree: ast.AST, where: str) -> list[tuple[str, int, str, str]]:
    """(where, line, module, name) for every ``from supervision[...] import name`` in
    ``tree``, function-local imports too, and in the Python source held in its string
    constants (a script a test runs with ``python -c``)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in PUBLIC:
            found += [(where, node.lineno, node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "from supervision" in node.value:
            try:
                inner = ast.parse(node.value)
            except SyntaxError:  # prose that mentions an import, not code
                continue
            found += _imports_in(inner, f"{where} (the string at line {node.lineno})")
    return found


def _supervision_imports() -> list[tuple[str, int, str, str]]:
    found = []
    for folder in ("adk_actors", "bench", "tests", "examples", "supervision"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            found += _imports_in(ast.parse(path.read_text()), str(path.relative_to(ROOT)))
    return found


def test_every_importer_asks_the_module_that_lists_the_name() -> None:
    """Checked from the source, so that bench scripts and examples no test imports
    are covered too: a name asked of the wrong module fails here, not at run time."""
    found = _supervision_imports()
    assert len(found) > 100  # the check reads the repository, not nothing
    wrong = [(path, line, f"{module}.{name}") for path, line, module, name in found
             if name not in importlib.import_module(module).__all__]
    assert wrong == []
