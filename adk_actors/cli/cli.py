"""google-adk's ``cli.cli`` for code that calls it: ``adk run``'s modes as functions,
each one driving ``adk-actors run AGENT_DIR`` (``adk_actors._repl``): the same
transcript (``[user]: ``, ``[AUTHOR]: TEXT``), ``--replay`` files (:class:`InputFile`),
saved sessions and ``--save_session`` files.

* :func:`run_cli`: an agent folder run as ``adk-actors run`` runs it (``input_file`` is
  ``--replay``, ``saved_session_file`` ``--resume``), as google-adk's user ``test_user``;
  a bad option or file is the run's ConfigError (a ValueError), raised before anything runs.
* :func:`run_once_cli`: one QUERY (or a replay file's queries) of an agent folder; the
  exit code (0, 1 failed, 2 paused for input); a bad option is told on standard error
  as ``Error: ...`` and returns 1, as google-adk's does.
* :func:`run_input_file` / :func:`run_interactively`: a replay file's queries, or the
  REPL, on services and a session the caller made (the credential service is accepted
  and not used: credentials here are the host's credential service's).
"""

from __future__ import annotations

import sys
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .._exceptions import ConfigError
from .._repl import (
    FolderRun,
    _initial_state,
    _read,
    _replay_file,
    _Session,
    _Sessions,
    _TerminalApprovals,
    _TerminalRunner,
    replay_queries,
)
from .._repl import _run as _run_folder
from ..apps import App
from ..artifacts import BaseArtifactService
from ..engine import App as EngineApp
from ..memory import BaseMemoryService
from ..sessions import BaseSessionService, Session
from .service_registry import get_service_registry, load_services_module
from .utils.service_factory import (
    create_artifact_service_from_options,
    create_memory_service_from_options,
)

__all__ = ["InputFile", "run_cli", "run_input_file", "run_interactively", "run_once_cli"]

#: The user of google-adk's ``adk run`` sessions.
CLI_USER = "test_user"


class InputFile(BaseModel):
    """A ``--replay`` file: the new session's state and the queries sent in turn."""

    state: dict[str, object]
    queries: list[str]


def _as_app(agent_or_app: Any, app_name: str) -> EngineApp:
    """``agent_or_app`` as an App: an App as it is, an agent as the root of one named ``app_name``."""
    return agent_or_app if isinstance(agent_or_app, EngineApp) else App(name=app_name, root_agent=agent_or_app)


def _terminal_runner(app: EngineApp, app_name: str, session_service: BaseSessionService,
                     artifact_service: BaseArtifactService | None,
                     memory_service: BaseMemoryService | None) -> _TerminalRunner:
    """``adk-actors run``'s in-process Runner on the caller's services, approvals asked at the terminal."""
    runner = _TerminalRunner(app=app, app_name=app_name, session_service=session_service,
                             artifact_service=artifact_service, memory_service=memory_service)
    runner.approvals = _TerminalApprovals(_read)
    return runner


async def run_input_file(app_name: str, user_id: str, agent_or_app: Any, artifact_service: BaseArtifactService,
                         session_service: BaseSessionService, credential_service: Any, input_path: str,
                         memory_service: BaseMemoryService | None = None) -> Session:
    """The queries of replay file ``input_path`` run, in order: the file read (a
    ConfigError when it is not ``{"state": {...}, "queries": [...]}``); a new session of
    ``user_id`` made with its state and ``_time`` (now); each query printed as
    ``[user]: QUERY`` and run as ``adk-actors run --replay`` runs it, its events
    printed; the Runner closed. Returns the session as it was made."""
    state, queries = _replay_file(input_path)
    runner = _terminal_runner(_as_app(agent_or_app, app_name), app_name, session_service, artifact_service,
                              memory_service)
    try:
        session = await _Sessions(session_service).create(app_name, user_id, str(uuid.uuid4()),
                                                          {**state, "_time": datetime.now().isoformat()})
        await replay_queries(_Session(runner, session, FolderRun(agent_dir=".")), queries)
    finally:
        await runner.close()
    return session  # type: ignore[return-value]


async def run_interactively(root_agent_or_app: Any, artifact_service: BaseArtifactService, session: Session,
                            session_service: BaseSessionService, credential_service: Any,
                            memory_service: BaseMemoryService | None = None, timeout: str | None = None,
                            jsonl: bool = False) -> None:
    """``adk-actors run``'s REPL on ``session`` (``[user]: `` read until ``exit`` or the
    end of standard input; ``timeout`` bounds each turn, ``jsonl`` prints JSON lines),
    then the Runner closed. A bad ``timeout`` is a ConfigError before anything is read."""
    options = FolderRun(agent_dir=".", timeout=timeout, jsonl=jsonl)
    runner = _terminal_runner(_as_app(root_agent_or_app, session.app_name), session.app_name, session_service,
                              artifact_service, memory_service)
    try:
        await _Session(runner, session, options).repl()
    finally:
        await runner.close()


def _folder_run(agent_parent_dir: str, agent_folder_name: str, use_local_storage: bool,
                default_llm_model: str | None, **flags: Any) -> FolderRun:
    """The ``adk-actors run`` options of google-adk's keyword arguments, in order: a
    ``default_llm_model`` refused (ConfigError: agents here name their model); the
    folder's ``services.py`` / ``services.yaml`` loaded; the registry's factories given
    for the service URIs (as ``adk-actors run`` gives them); ``use_local_storage=False``
    with no session URI keeps the sessions in memory (``memory://``)."""
    if default_llm_model:
        raise ConfigError("default_llm_model: not supported here; name the model on the agent")
    agent_dir = Path(agent_parent_dir).resolve() / agent_folder_name
    if agent_dir.is_dir():
        load_services_module(str(agent_dir))
    if not use_local_storage and not flags.get("session_service_uri") and not flags.get("in_memory"):
        flags["session_service_uri"] = "memory://"
    return FolderRun(
        agent_dir=str(agent_dir), user_id=CLI_USER,
        session_factory=lambda uri, where: get_service_registry().create_session_service(uri, agents_dir=where),
        artifact_factory=lambda uri, where: create_artifact_service_from_options(base_dir=where,
                                                                                 artifact_service_uri=uri),
        memory_factory=lambda uri, where: create_memory_service_from_options(base_dir=where, memory_service_uri=uri),
        **flags)


async def run_cli(*, agent_parent_dir: str, agent_folder_name: str, input_file: str | None = None,
                  saved_session_file: str | None = None, save_session: bool, session_id: str | None = None,
                  state_str: str | None = None, timeout: str | None = None, in_memory: bool = False,
                  jsonl: bool = False, session_service_uri: str | None = None,
                  artifact_service_uri: str | None = None, memory_service_uri: str | None = None,
                  use_local_storage: bool = True, default_llm_model: str | None = None) -> None:
    """Agent folder ``agent_parent_dir/agent_folder_name`` run as ``adk-actors run`` runs
    it (see the module): a replay file's queries, a saved session then the REPL, or the
    REPL; then, with ``save_session``, the session written to
    ``AGENT_FOLDER/ID.session.json`` (ID asked for unless ``session_id``). ConfigError
    for a bad folder, option or file, before anything runs."""
    options = _folder_run(agent_parent_dir, agent_folder_name, use_local_storage, default_llm_model,
                          replay=input_file, resume=saved_session_file, save_session=save_session,
                          session_id=session_id, state=state_str, timeout=timeout, in_memory=in_memory, jsonl=jsonl,
                          session_service_uri=session_service_uri, artifact_service_uri=artifact_service_uri,
                          memory_service_uri=memory_service_uri)
    await _run_folder(options)


async def run_once_cli(*, agent_parent_dir: str, agent_folder_name: str, query: str | None = None,
                       state_str: str | None = None, session_id: str | None = None, replay: str | None = None,
                       timeout: str | None = None, in_memory: bool = False, jsonl: bool = False,
                       session_service_uri: str | None = None, artifact_service_uri: str | None = None,
                       memory_service_uri: str | None = None, use_local_storage: bool = True,
                       default_llm_model: str | None = None) -> int:
    """One QUERY of an agent folder (``adk-actors run AGENT_DIR QUERY``: its session
    named on standard error, a paused session's answer taken from QUERY), or with
    ``replay`` that file's queries; neither given, QUERY is read from standard input
    when it is no terminal. Returns the exit code (0, 1 when a turn failed, 2 when it
    paused for input); a bad option (QUERY and ``replay`` both, no QUERY, bad state
    JSON) is told as ``Error: ...`` on standard error and returns 1. A folder that does
    not load raises as ``adk-actors run`` does."""
    if query and replay:
        return _refused("a query and a replay file cannot be given together")
    if not query and not replay:
        if sys.stdin.isatty():
            return _refused("give a query, or pipe one on standard input")
        query = sys.stdin.read().strip()
    options = _folder_run(agent_parent_dir, agent_folder_name, use_local_storage, default_llm_model,
                          query=query or None, replay=replay, session_id=session_id, state=state_str,
                          timeout=timeout, in_memory=in_memory, jsonl=jsonl, session_service_uri=session_service_uri,
                          artifact_service_uri=artifact_service_uri, memory_service_uri=memory_service_uri)
    try:
        _initial_state(options)
    except ConfigError as exc:
        return _refused(str(exc))
    return await _run_folder(options)


def _refused(why: str) -> int:
    print(f"Error: {why}", file=sys.stderr, flush=True)
    return 1
