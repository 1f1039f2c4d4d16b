"""No folder we put on ``sys.path`` holds a module that hides an installed one (issue 60).

A script run as ``python bench/x.py`` has bench/ first on its path; pytest puts tests/
and the repository's root there; the examples' scripts put their own folders there.
A file in one of them named like an installed distribution's top-level module or a
standard-library module hides that module from every process started that way:
bench/a2a.py hid a2a-sdk's ``a2a`` from google-adk, which looked it up on every turn.
"""

from __future__ import annotations

import importlib.metadata
import sys
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATH_FOLDERS = ("bench", "tests", "examples")  # each, and every folder under it


def top_level_names(folder: Path) -> Iterator[tuple[str, Path]]:
    """(importable name, file or folder) of every module and package directly in
    ``folder``: ``*.py`` files, and folders whose name is an identifier (packages,
    or namespace packages without ``__init__.py``)."""
    for entry in sorted(folder.iterdir()):
        if entry.is_file() and entry.suffix == ".py" and entry.stem.isidentifier() and entry.stem != "__init__":
            yield entry.stem, entry
        elif entry.is_dir() and entry.name.isidentifier() and entry.name != "__pycache__":
            yield entry.name, entry


def clashes(folders: Sequence[Path], installed: Mapping[str, Sequence[str]], stdlib: frozenset[str],
            own: Mapping[str, str] | None = None) -> list[str]:
    """One line per module of ``folders`` whose name is a standard-library module's
    or an installed distribution's top-level module's, except a name of ``own`` (name
    -> the distribution it is: this project's own packages at the root)."""
    found = []
    for folder in folders:
        for name, entry in top_level_names(folder):
            if (own or {}).get(name) is not None and set(installed.get(name, ())) == {(own or {})[name]}:
                continue
            if name in stdlib:
                found.append(f"{entry.relative_to(folder.parent)}: the standard library's {name!r}")
            elif name in installed:
                found.append(f"{entry.relative_to(folder.parent)}: {name!r} of {sorted(set(installed[name]))}")
    return found


def folders_on_path() -> list[Path]:
    """bench/, tests/, examples/ and every folder under them (but caches)."""
    folders = []
    for top in PATH_FOLDERS:
        folders.append(ROOT / top)
        folders.extend(sorted(p for p in (ROOT / top).rglob("*") if p.is_dir() and "__pycache__" not in p.parts))
    return folders


def project_name() -> str:
    with open(ROOT / "pyproject.toml", "rb") as file:
        name: str = tomllib.load(file)["project"]["name"]
    return name


def test_no_module_in_bench_tests_or_examples_hides_an_installed_or_standard_module() -> None:
    found = clashes(folders_on_path(), importlib.metadata.packages_distributions(), sys.stdlib_module_names)
    assert found == [], "rename these (they hide what processes started beside them import):\n" + "\n".join(found)


def test_the_root_holds_only_this_projects_own_packages_of_an_installed_name() -> None:
    """pytest puts the root first on the path (``pythonpath = ["."]``): its packages
    may be this project's own installed ones (``adk_actors``, ``supervision``), no other."""
    installed = importlib.metadata.packages_distributions()
    project = project_name()
    own = {name: project for name, dists in installed.items() if set(dists) == {project}}
    assert "adk_actors" in own and "supervision" in own
    found = clashes([ROOT], installed, sys.stdlib_module_names, own)
    assert found == [], "\n".join(found)


def test_the_check_finds_a_module_named_like_an_installed_or_standard_one(tmp_path: Path) -> None:
    """The check itself can fail: a folder holding ``a2a.py`` (a2a-sdk's name),
    ``json.py`` (the standard library's), a ``supervision`` package (this project's)
    and a module of a name nobody has is reported for exactly the first three."""
    installed = importlib.metadata.packages_distributions()
    assert "a2a" in installed, "a2a-sdk (a dev dependency) is not installed"
    folder = tmp_path / "scripts"
    (folder / "supervision").mkdir(parents=True)
    (folder / "supervision" / "__init__.py").write_text("")
    for name in ("a2a.py", "json.py", "a2a_bench.py", "__init__.py"):
        (folder / name).write_text("")
    found = clashes([folder], installed, sys.stdlib_module_names)
    assert [line.split(":")[0] for line in found] == ["scripts/a2a.py", "scripts/json.py", "scripts/supervision"]
    assert "a2a-sdk" in found[0] and "standard library" in found[1] and project_name() in found[2]
