"""google-adk's ``google.adk.utils.yaml_utils``: reading a YAML file, writing a
pydantic model as YAML."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

__all__ = ["dump_pydantic_to_yaml", "load_yaml_file"]


def load_yaml_file(file_path: str | Path) -> Any:
    """The document in ``file_path`` (``yaml.safe_load``, UTF-8). A path that is not
    a file raises ``FileNotFoundError``; invalid YAML raises ``yaml.YAMLError``."""
    path = Path(file_path)
    if not path.is_file():
        raise FileNotFoundError(f"YAML file not found: {path}")
    with path.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


class _Dumper(yaml.SafeDumper):
    """A safe dumper that indents a list under a key, and writes a string holding a
    newline or a quote as a ``|`` block."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _string(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    block = "\n" in data or '"' in data or "'" in data
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if block else None)


_Dumper.add_representer(str, _string)


def dump_pydantic_to_yaml(model: BaseModel, file_path: str | Path, *, indent: int = 2, sort_keys: bool = True,
                          exclude_none: bool = True, exclude_defaults: bool = True, exclude: Any = None) -> None:
    """Write ``model`` (its JSON-mode dump, without None fields and defaults unless
    told, without ``exclude``) to ``file_path`` as YAML, creating missing parent
    folders: keys sorted unless told, lines never wrapped, non-ASCII as it is."""
    data = model.model_dump(exclude_none=exclude_none, exclude_defaults=exclude_defaults, exclude=exclude, mode="json")
    path = Path(file_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        yaml.dump(data, handle, Dumper=_Dumper, indent=indent, sort_keys=sort_keys, width=1_000_000,
                  allow_unicode=True)
