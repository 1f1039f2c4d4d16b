"""The agent builder's assistant: the app adk-web's builder panel chats with.

adk-web names it ``__adk_agent_builder_assistant``; a host with an ``agents_dir``
serves it (``AppCatalog``) and lists it nowhere. google-adk's is its own Gemini agent;
this one is an :class:`LlmAgent` of the kit with the same model default
(``gemini-2.5-flash``: it needs ``GEMINI_API_KEY``, as google-adk's does) and four
tools on the draft of the app being built. adk-web opens each chat with the state
``root_directory = "<app>/tmp/<app>"``, the app's draft folder inside ``agents_dir``
(the one the builder routes read); every tool works there and only there:

* ``explore_project()``: the draft's YAML files;
* ``read_config_files(file_paths)``: their text;
* ``write_config_files(files)``: each file checked first, as a builder upload is (YAML,
  a valid agent file, no code references, a path inside the draft), then written
  (0600); the result reports what the whole draft would fail on if saved now;
* ``delete_files(file_paths)``.

A refused call is a result with ``error`` (the model reads it and tries again),
never an exception. Only the operator may run this app (``http`` refuses others):
it writes the host's agent files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .._exceptions import AgentDefinitionError
from .._files import write_private
from ..agents import LlmAgent
from ..tools import ToolContext
from ._agent_config import ROOT_AGENT_FILE, agent_document, check_builder_upload, load_agent_config
from ._app import App
from ._app_files import APP_NAME, DRAFT, YAML_SUFFIXES, app_file_path

__all__ = ["BUILDER_ASSISTANT", "BUILDER_MODEL", "builder_assistant"]

#: the app name adk-web's builder panel asks for
BUILDER_ASSISTANT = "__adk_agent_builder_assistant"
BUILDER_MODEL = "gemini-2.5-flash"

_INSTRUCTION = """You help the user build an agent in google-adk's Agent Config YAML format.
The agent's files are in its draft; use your tools to explore, read, write and delete them.
The root agent is in root_agent.yaml. An agent file is a YAML mapping, for example:

agent_class: LlmAgent            # or SequentialAgent, ParallelAgent, LoopAgent
name: helper                     # a Python identifier
model: gemini-2.5-flash          # LlmAgent only
description: One line on what it does.
instruction: What the agent does and how it answers.   # LlmAgent only
sub_agents:
  - config_path: ./researcher.yaml
tools:
  - name: load_memory            # or load_artifacts, exit_loop
  - name: AgentTool
    args:
      agent:
        config_path: ./critic.yaml

A LoopAgent may have max_iterations. Code references (dotted tool names, callbacks, code)
are refused here: tell the user to add them to the files by hand. Ask what the agent
should do when it is not clear, write the files, and say in a sentence or two what you
changed. Saving happens in the builder, not here."""


class _Draft:
    """The draft folder a chat works on (see the module)."""

    def __init__(self, agents_dir: Path, tool_context: ToolContext) -> None:
        root = str(tool_context.state.get("root_directory") or "")
        parts = Path(root).parts
        if len(parts) != 3 or parts[1] != DRAFT or parts[0] != parts[2] or not APP_NAME.fullmatch(parts[0]):
            raise ValueError(f"root_directory {root!r} is not an app's draft (<app>/{DRAFT}/<app>)")
        self.app = parts[0]
        self.folder = agents_dir / self.app / DRAFT / self.app

    def path(self, name: str) -> Path:
        return self.folder / app_file_path(self.app, name)

    def files(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        return sorted(str(p.relative_to(self.folder)) for p in self.folder.rglob("*")
                      if p.is_file() and p.suffix.lower() in YAML_SUFFIXES)

    def problems(self) -> str | None:
        """Why the draft would not load as an app now (None: it would)."""
        root = self.folder / ROOT_AGENT_FILE
        if not root.is_file():
            return f"there is no {ROOT_AGENT_FILE} yet"
        try:
            load_agent_config(root, deny_blocked_keys=True)  # what the builder writes: google-adk's key denylist
        except AgentDefinitionError as exc:
            return str(exc).replace(str(self.folder) + "/", "")
        return None


def builder_assistant(agents_dir: str | Path) -> App:
    """The assistant (see the module) for the drafts of ``agents_dir``."""
    base = Path(agents_dir).resolve()

    def explore_project(tool_context: ToolContext) -> dict[str, Any]:
        """List the YAML files of the agent's draft."""
        try:
            draft = _Draft(base, tool_context)
        except ValueError as exc:
            return {"error": str(exc)}
        return {"app": draft.app, "files": draft.files()}

    def read_config_files(file_paths: list[str], tool_context: ToolContext) -> dict[str, Any]:
        """Read YAML files of the agent's draft (paths relative to it, e.g. root_agent.yaml)."""
        try:
            draft = _Draft(base, tool_context)
            found = {name: draft.path(name) for name in file_paths}
        except ValueError as exc:
            return {"error": str(exc)}
        return {"files": {name: path.read_text(encoding="utf-8") if path.is_file() else None
                          for name, path in found.items()}}

    def write_config_files(files: dict[str, str], tool_context: ToolContext) -> dict[str, Any]:
        """Write YAML agent files into the agent's draft: {relative path: YAML text}."""
        try:
            draft = _Draft(base, tool_context)
            checked: dict[Path, bytes] = {}
            for name, text in files.items():
                content = text.encode()
                check_builder_upload(name, content)
                agent_document(yaml.safe_load(content), name)
                checked[draft.path(name)] = content
        except (ValueError, AgentDefinitionError, yaml.YAMLError) as exc:
            return {"error": f"nothing was written: {exc}"}
        for path, content in checked.items():
            write_private(path, content)
        return {"written": sorted(files), "draft_problems": draft.problems()}

    def delete_files(file_paths: list[str], tool_context: ToolContext) -> dict[str, Any]:
        """Delete YAML files from the agent's draft."""
        try:
            draft = _Draft(base, tool_context)
            paths = [draft.path(name) for name in file_paths]
        except ValueError as exc:
            return {"error": str(exc)}
        deleted = []
        for name, path in zip(file_paths, paths, strict=True):
            if path.is_file():
                path.unlink()
                deleted.append(name)
        return {"deleted": deleted}

    agent = LlmAgent(name="agent_builder_assistant", model=BUILDER_MODEL, instruction=_INSTRUCTION,
                     description="Builds agents in the Agent Config YAML format with the user.",
                     tools=[explore_project, read_config_files, write_config_files, delete_files])
    return App(root_agent=agent)
