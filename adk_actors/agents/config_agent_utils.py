"""google-adk's ``google.adk.agents.config_agent_utils``: an agent tree from its YAML
files, and the reference resolvers the loader uses. All of them run the one loader of
agent files (:mod:`._config_loader`, also behind ``adk_actors.engine.load_agent_config``)
and fail with :class:`~adk_actors.AgentDefinitionError`, a ValueError as google-adk's
are, naming the file or the reference.

* :func:`from_config` (``path``): the loader's agent (its sub-agents, tools and
  callbacks resolved); a file that is not there is also a FileNotFoundError. Its
  ``agent_class`` is a built-in kind or the dotted name of a ``BaseAgent`` subclass of
  the user's, loaded as google-adk loads one: the class's own ``from_config`` if it
  overrides it, else the file validated against its ``config_type``, mapped onto its
  fields and passed through its ``_parse_config`` hook (which warns
  ``DeprecationWarning``). A dotted name that is refused (the standard library, the
  YAML parsers), cannot be imported, or names no agent class is an
  AgentDefinitionError naming the file. ``BaseAgent.from_config(config,
  config_abs_path)`` (google-adk's deprecated class method) runs the same loader.
* :func:`resolve_fully_qualified_name`, :func:`resolve_code_reference`,
  :func:`resolve_callbacks`: the objects dotted names name, imported (never from the
  standard library or the YAML parsers).
* :func:`resolve_agent_reference`: the agent an :class:`AgentRefConfig` names, its
  ``config_path`` loaded relative to the referring file (never absolute, never
  outside that file's folder), its ``code`` imported (an agent object, not a class
  or function).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._exceptions import AgentDefinitionError
from ._config_loader import import_reference, load_agent_file, resolve_agent_code
from .common_configs import AgentRefConfig, CodeConfig

__all__ = ["from_config", "resolve_agent_reference", "resolve_callbacks", "resolve_code_reference",
           "resolve_fully_qualified_name"]


def from_config(config_path: str) -> Any:
    """The agent the YAML file ``config_path`` defines, with every agent it refers to
    (references stay inside the file's folder). AgentDefinitionError naming the file
    for anything wrong in it or in a file it refers to; when that file is not there,
    the error is also a FileNotFoundError (as google-adk's), naming its absolute path."""
    return load_agent_file(Path(config_path).absolute())


def resolve_fully_qualified_name(name: str) -> Any:
    """The object the dotted name ``name`` names, imported; AgentDefinitionError
    naming it when that fails (not dotted, a refused module, not importable)."""
    try:
        return import_reference(name, "fully qualified name")
    except AgentDefinitionError:
        raise
    except Exception as exc:  # the named module failed while it was being imported
        raise AgentDefinitionError(f"fully qualified name: cannot import {name!r}: {exc}") from exc


def resolve_code_reference(code_config: CodeConfig) -> Any:
    """The object ``code_config.name`` names, imported (as
    :func:`resolve_fully_qualified_name`); AgentDefinitionError when it is empty."""
    if not code_config or not code_config.name:
        raise AgentDefinitionError("code reference: a CodeConfig names the code (name: package.module.name)")
    return import_reference(code_config.name, "code reference")


def resolve_callbacks(callbacks_config: list[CodeConfig]) -> list[Any]:
    """The callbacks the configs name, in order (:func:`resolve_code_reference` each)."""
    return [resolve_code_reference(config) for config in callbacks_config]


def resolve_agent_reference(ref_config: AgentRefConfig, referencing_agent_config_abs_path: str) -> Any:
    """The agent ``ref_config`` names, for the agent file at
    ``referencing_agent_config_abs_path``: its ``config_path`` is loaded (as
    :func:`from_config`) relative to that file and may not be absolute or leave that
    file's folder; its ``code`` is imported and must be an agent object.
    AgentDefinitionError naming the referring file otherwise."""
    base = Path(referencing_agent_config_abs_path).absolute()
    if ref_config.code is not None:
        return resolve_agent_code(ref_config.code, str(base))
    relative = ref_config.config_path
    if relative is None:
        raise AgentDefinitionError(f"{base}: an agent reference names config_path or code")
    if Path(relative).is_absolute():
        raise AgentDefinitionError(f"{base}: config_path {relative!r} is absolute; name the file relative to this one")
    path = (base.parent / relative).resolve()
    if not path.is_relative_to(base.parent.resolve()):
        raise AgentDefinitionError(f"{base}: config_path {relative!r} is outside the folder {base.parent}")
    return load_agent_file(path, root=base.parent)
