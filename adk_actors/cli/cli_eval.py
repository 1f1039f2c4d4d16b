"""google-adk's ``cli.cli_eval`` for code that calls it, on ``adk-actors eval``'s parts:

* :func:`get_app_or_root_agent` / :func:`get_root_agent` / :func:`try_get_reset_func`:
  an agent folder loaded as ``adk-actors run`` and ``eval`` load it
  (``_repl.load_agent_folder``: its ``.env``, then ``app`` or ``root_agent`` of its
  ``agent.py``, else ``root_agent.yaml``); a folder that holds no agent is a
  ConfigError or AgentDefinitionError (both ValueErrors, as google-adk's is).
* :func:`parse_and_get_evals_to_run`: ``adk-actors eval``'s reading of
  ``FILE_OR_ID[:CASE,CASE...]`` arguments (``evals.parse_eval_targets``).
* :func:`pretty_print_eval_result`: one case's result printed as ``adk-actors eval
  --print_detailed_results`` prints it (our wording: a status line, each metric, every
  invocation).
* :func:`get_eval_sets_manager`: the eval sets of an agents folder
  (``evaluation.LocalEvalSetsManager``); a storage URI (google-adk's GCS managers) is
  refused with a ConfigError: no Google Cloud client here.
"""

from __future__ import annotations

import sys
from typing import Any

from .._exceptions import ConfigError
from .._repl import load_agent_folder
from ..engine import App
from ..evals import (
    DEFAULT_THRESHOLDS,
    EVAL_SESSION_PREFIX,
    EvalCaseResult,
    EvalSetResult,
    parse_eval_targets,
)
from ..evals._metrics import RESPONSE_MATCH, TOOL_TRAJECTORY
from ..evaluation.eval_sets_manager import EvalSetsManager
from ..evaluation.local_eval_sets_manager import LocalEvalSetsManager
from ._eval import _print_eval_set

__all__ = ["DEFAULT_CRITERIA", "EVAL_SESSION_ID_PREFIX", "RESPONSE_MATCH_SCORE_KEY", "TOOL_TRAJECTORY_SCORE_KEY",
           "get_app_or_root_agent", "get_eval_sets_manager", "get_root_agent", "parse_and_get_evals_to_run",
           "pretty_print_eval_result", "try_get_reset_func"]

TOOL_TRAJECTORY_SCORE_KEY = TOOL_TRAJECTORY
RESPONSE_MATCH_SCORE_KEY = RESPONSE_MATCH
#: The metrics and thresholds an eval uses when none are configured.
DEFAULT_CRITERIA = dict(DEFAULT_THRESHOLDS)
EVAL_SESSION_ID_PREFIX = EVAL_SESSION_PREFIX


def _agent_module(folder_name: str) -> Any:
    """The module the folder's agent was defined in: its package's ``agent`` module,
    else the package itself (None for a YAML agent)."""
    package = sys.modules.get(folder_name)
    return getattr(package, "agent", package)


async def get_app_or_root_agent(agent_module_file_path: str) -> tuple[App | None, Any]:
    """(the App the folder's agent module defines as ``app``, or None; the root agent),
    the folder loaded as the module says (its errors raised as they are)."""
    app, _app_name, folder = load_agent_folder(agent_module_file_path)
    defined = getattr(_agent_module(folder.name), "app", None)
    return (app if defined is app else None), app.root_agent


async def get_root_agent(agent_module_file_path: str) -> Any:
    """The root agent of the folder (see :func:`get_app_or_root_agent`)."""
    _app, root_agent = await get_app_or_root_agent(agent_module_file_path)
    return root_agent


def try_get_reset_func(agent_module_file_path: str) -> Any:
    """The folder's agent module's ``reset_data`` (None when it has none), the folder
    loaded as :func:`get_app_or_root_agent` loads it."""
    _app, _app_name, folder = load_agent_folder(agent_module_file_path)
    return getattr(_agent_module(folder.name), "reset_data", None)


def parse_and_get_evals_to_run(evals_to_run_info: list[str]) -> dict[str, list[str]]:
    """{eval set file or id: the case ids picked (none: every case)} of
    ``FILE_OR_ID[:CASE,CASE...]`` arguments, in the order given, as ``adk-actors eval`` reads them."""
    return parse_eval_targets(evals_to_run_info)


def pretty_print_eval_result(eval_result: EvalCaseResult) -> None:
    """Print one case's result as ``adk-actors eval --print_detailed_results`` prints it:
    ``PASS SET/CASE: METRIC SCORE, ...`` (another status in its name), each metric with
    its status, score and threshold, then every invocation (the user's message, the
    expected and actual tools and response, each metric's status)."""
    one_case = EvalSetResult(eval_set_result_id=eval_result.eval_set_id, eval_set_id=eval_result.eval_set_id,
                             eval_case_results=[eval_result])
    _print_eval_set(one_case, {}, False, True)


def get_eval_sets_manager(eval_storage_uri: str | None, agents_dir: str) -> EvalSetsManager:
    """The eval sets kept in ``agents_dir`` (``APP/*.evalset.json``); a storage URI is a ConfigError."""
    if eval_storage_uri:
        raise ConfigError(f"eval storage {eval_storage_uri!r}: only eval sets in the agents folder are kept here "
                          "(google-adk's GCS eval managers need a Google Cloud client)")
    return LocalEvalSetsManager(agents_dir=agents_dir)
