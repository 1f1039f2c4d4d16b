"""Layers point one way: types -> agents -> compiler -> engine (tools, models) ->
runtime (store, services) -> clients (CLI, chaos, test doubles), and adk_actors
imports nothing private from supervision. Every import counts, function-local ones
too (they must not hide an arrow).

The arrows that still point the wrong way are listed in KNOWN: the runtime redesign
(issue 20) removes them. The test fails on any arrow not listed, and on a listed one
that is gone (take it off the list), so the list only shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "adk_actors"
LAYERS = (
    ("types", {"_types", "_exceptions", "_schema", "_tree", "_secrets", "_validate", "log", "telemetry",
               "messages"}),
    ("agents", {"agents"}),
    ("compiler", {"compiler"}),
    ("engine", {"engine", "tools", "models", "otel"}),
    ("runtime", {"runtime", "store", "config"}),
    ("clients", {"cli", "chaos", "testing"}),
)
KNOWN_WRONG_WAY = {
    ("adk_actors.agents._base", "adk_actors.engine._callbacks"),
    ("adk_actors.agents._base", "adk_actors.engine._context"),
    ("adk_actors.agents._llm_agent", "adk_actors.compiler._compressors"),
    ("adk_actors.agents._llm_agent", "adk_actors.compiler._providers"),
    ("adk_actors.agents._llm_agent", "adk_actors.engine._flow"),
    ("adk_actors.agents._llm_agent", "adk_actors.tools._function"),
    ("adk_actors.compiler._instructions", "adk_actors.models._base"),
    ("adk_actors.compiler._request", "adk_actors.models._base"),
    ("adk_actors.engine._services", "adk_actors.store._artifacts"),
    ("adk_actors.tools._base", "adk_actors.runtime._credentials"),
}
KNOWN_PRIVATE = {("adk_actors.runtime._partition", "supervision._supervisor")}


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "adk_actors" or len(parts) < 2:
        return None
    return next((i for i, (_, heads) in enumerate(LAYERS) if parts[1] in heads), None)


def imports() -> set[tuple[str, str]]:
    """(importing module, imported module or name) for every import in the package."""
    found: set[tuple[str, str]] = set()
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.with_suffix("").relative_to(PACKAGE.parent).parts)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        if module.endswith(".__init__"):
            module = module.removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text())):
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
    assert wrong - KNOWN_WRONG_WAY == set(), "a new import points up the layers"
    assert KNOWN_WRONG_WAY - wrong == set(), "fixed: take these off KNOWN_WRONG_WAY"


def test_adk_actors_imports_nothing_private_from_supervision() -> None:
    private = {(src, dst) for src, dst in imports() if dst.startswith("supervision._")}
    assert private - KNOWN_PRIVATE == set(), "use supervision's public API"
    assert KNOWN_PRIVATE - private == set(), "fixed: take these off KNOWN_PRIVATE"
