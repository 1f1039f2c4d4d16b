"""Layers point one way: types -> agents -> compiler -> engine (tools, models) ->
runtime (store, services) -> clients (CLI, chaos, test doubles), and adk_actors
imports nothing private from supervision. Every import counts, function-local ones
too (they must not hide an arrow).

No module imports itself through others either (an import circle), whether the
imports are at the top of a module or inside a function.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "adk_actors"
LAYERS = (
    ("types", {"_types", "types", "planners", "events", "examples",
               "_exceptions", "_schema", "_tree", "_secrets", "_validate", "_callables", "_names", "_files", "_decisions", "_artifact_version",
               "log", "telemetry", "tracing", "messages"}),
    ("agents", {"agents"}),
    ("compiler", {"compiler"}),
    # workflow: graphs and the runner of their nodes, which gives a task agent its
    # ``finish_task`` tool; the engine runs a graph as an agent's turn
    ("engine", {"engine", "tools", "models", "otel", "mcp", "apps", "plugins", "code_executors", "workflow",
                "integrations", "skills"}),
    ("runtime", {"runtime", "store", "config", "jobs"}),
    ("clients", {"cli", "chaos", "testing", "http", "remote", "evals", "evaluation", "a2a", "sessions", "runners", "fluent",
                 "_repl", "_create", "memory", "artifacts", "_service_loop"}),
)


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "adk_actors" or len(parts) < 2:
        return None
    return next((i for i, (_, heads) in enumerate(LAYERS) if parts[1] in heads), None)


def type_checking_only(tree: ast.AST) -> set[ast.AST]:
    """The imports under ``if TYPE_CHECKING:``: read by type checkers, never run."""
    return {node for block in ast.walk(tree) if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
            for stmt in block.body for node in ast.walk(stmt)}


def imports(*, at_run_time: bool = False) -> set[tuple[str, str]]:
    """(importing module, imported module or name) for every import in the package;
    ``at_run_time``: without those made for type checkers only."""
    found: set[tuple[str, str]] = set()
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.with_suffix("").relative_to(PACKAGE.parent).parts).removesuffix(".__init__")
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        tree = ast.parse(path.read_text())
        skipped = type_checking_only(tree) if at_run_time else set()
        for node in ast.walk(tree):
            if node in skipped:
                continue
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                target = ".".join([*base, node.module] if node.module else base)
                targets = [target] if node.module else [f"{target}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            found.update((module, target) for target in targets)
    return found


def test_layers_point_one_way() -> None:
    wrong = {(src, dst) for src, dst in imports()
             if (a := layer_of(src)) is not None and (b := layer_of(dst)) is not None and b > a}
    assert wrong == set(), "these imports point up the layers"


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in list(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle() -> None:
    """Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first: those count
    as imported too (unless the importer is inside them)."""
    found = imports(at_run_time=True)
    modules = {src for src, _ in found}

    def module_of(target: str) -> str | None:
        while target not in modules:  # "package.module.name" -> "package.module"
            if "." not in target:
                return None
            target = target.rsplit(".", 1)[0]
        return target

    graph: dict[str, set[str]] = {}
    for src, dst in found:
        target = module_of(dst)
        if target is None:
            continue
        parts = target.split(".")
        for depth in range(1, len(parts) + 1):
            ancestor = ".".join(parts[:depth])
            if ancestor in modules and ancestor != src and not src.startswith(ancestor + "."):
                graph.setdefault(src, set()).add(ancestor)
    assert circles(graph) == [], "these modules import each other"
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]  # the check itself


def test_adk_actors_imports_nothing_private_from_supervision() -> None:
    private = {(src, dst) for src, dst in imports() if dst.startswith("supervision._")}
    assert private == set(), "use supervision's public API"



HOST_SIDE = ("httpx", "websockets", "fastapi", "yaml", "adk_actors.engine", "adk_actors.compiler", "adk_actors.store",
             "adk_actors.runtime._partition", "adk_actors.runtime._run", "adk_actors.models._http", "adk_actors.config",
             "pydantic_settings", "structlog", "adk_actors.log")


@pytest.mark.parametrize(("client", "expected"), [
    ("from adk_actors.runtime import Host, Runner", []),  # `adk-actors run`, a program attached to a host
    ("from adk_actors.remote import HttpRunner", ["httpx"]),  # `adk-actors run --url`: its own HTTP client only
])
def test_a_client_of_a_running_host_imports_none_of_the_hosts_code(client: str, expected: list[str]) -> None:
    """A client loads no engine, store, model connector, config reader or web stack: it
    starts in a fraction of the time a host takes (bench/startup.py)."""
    script = f"import sys\n{client}\nprint(' '.join(sorted(m for m in {HOST_SIDE!r} if m in sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                            cwd=PACKAGE.parent).stdout.split()
    assert loaded == expected
