"""docs/models.md names only environment variables the package reads and import paths
that exist, so the provider guide cannot go stale silently."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "models.md"
PACKAGE = ROOT / "adk_actors"

# An environment variable as the page writes it: upper case with an underscore, in backticks.
_ENV = re.compile(r"`([A-Z][A-Z0-9]*_[A-Z0-9_]+)(?:=[^`]*)?`|\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)=")
_IMPORT_FROM = re.compile(r"from (adk_actors[\w.]*) import ([\w, ]+)")
_DOTTED = re.compile(r"`(adk_actors(?:\.\w+)+)`")


def _source() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py"))


def test_every_env_var_named_is_read_by_the_package() -> None:
    names = {a or b for a, b in _ENV.findall(DOC.read_text(encoding="utf-8"))}
    assert {"GEMINI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI"} <= names
    source = _source()
    missing = sorted(n for n in names if f'"{n}"' not in source)
    assert not missing, f"docs/models.md names variables the package never reads: {missing}"


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_import_path_named_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    paths = set(_DOTTED.findall(text))
    for module, names in _IMPORT_FROM.findall(text):
        paths.update(f"{module}.{name.strip()}" for name in names.split(",") if name.strip())
    assert "adk_actors.models.Gemini" in paths and "adk_actors.models.ScriptedModel" in paths
    missing = sorted(p for p in paths if not _resolves(p))
    assert not missing, f"docs/models.md names import paths that do not exist: {missing}"


@pytest.mark.parametrize("section", ["retry", "breaker"])
def test_config_keys_shown_are_the_config_files(section: str) -> None:
    from adk_actors.config import Settings

    text = DOC.read_text(encoding="utf-8")
    block = re.search(rf"\[{section}\]\n(.*?)(?:\n\n|```)", text, re.S)
    assert block, f"docs/models.md shows no [{section}] table"
    keys = {line.split("=")[0].strip() for line in block.group(1).splitlines() if "=" in line}
    fields = set(Settings.model_fields[section].annotation.model_fields)  # type: ignore[union-attr]
    assert keys and keys <= fields, f"[{section}] keys not in the config: {sorted(keys - fields)}"
