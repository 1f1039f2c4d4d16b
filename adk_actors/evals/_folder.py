"""Eval sets run in this process on an agent folder's app: google-adk's ``adk eval
AGENT_DIR EVAL_SET[:CASE,...]...`` (the CLI's ``eval AGENT_DIR``; the folder is loaded
by ``run AGENT_DIR``'s loader, which reads its ``.env``).

The steps, in the order the CLI takes them; every check comes before any case runs:

1. :func:`parse_eval_targets`: each argument split at its first ``:`` into an eval
   set (a file, or an id) and the cases picked from it (a comma-separated list; none
   given: every case); a set named twice gets the picks of both;
2. :func:`eval_set_for`: a target that is a file is read (:func:`read_eval_set_file`),
   else it is the id of a set kept in the agent folder (``AGENT_DIR/ID.evalset.json``,
   where google-adk's ``adk web`` keeps them); a file that cannot be read or is not an
   eval set, or an id with no set, is an :class:`EvalError` naming it;
   :func:`check_cases`: a picked case the set does not have is an EvalError too;
3. :func:`eval_config_for`: the eval config, google-adk's way: the file given, else
   ``test_config.json`` beside the one eval set file named, else the default criteria
   (``tool_trajectory_avg_score`` 1.0, ``response_match_score`` 0.8); the metrics
   also carry the informational efficiency ones;
4. :func:`evaluate_app`: each picked case of a set runs once (google-adk's ``adk eval``
   runs each once), one after the other, in a session of its own in memory (the
   in-process Runner of ``AgentEvaluator``, the app's plugins and policies applied;
   a ``conversation_scenario`` case played by the user simulator), then is scored
   with the same metrics as a host's eval runs (a judge or simulator model resolved by
   the model registry, as the agent's own model is). A case whose turn raised fails
   without metric results; the error is returned beside the result, and so is each
   case's session. The result's id is google-adk's (``<app>_<eval set>_<time>``);
5. :func:`._files.save_result_file`: the CLI saves each set's result where
   google-adk's ``adk eval`` saves its own, ``AGENT_DIR/.adk/eval_history/<id>.evalset_result.json``,
   in its JSON (the sessions as ``session_details``), so ``adk web`` and a host
   serving the folder (``/dev/apps/<app>/eval_results``) list it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..sessions import InMemorySessionService
from ._agent_evaluator import AgentEvaluator
from ._config import EvalConfig, get_evaluation_criteria_or_default
from ._errors import EvalError
from ._files import new_result_id
from ._metrics import check_metric
from ._models import EvalCaseResult, EvalMetric, EvalSet, EvalSetResult
from ._simulator import simulator_config

__all__ = ["AppEvalResult", "check_cases", "check_metrics", "check_simulator", "eval_config_for", "eval_set_for", "evaluate_app", "parse_eval_targets",
           "read_eval_set_file"]

_SET_SUFFIX = ".evalset.json"


@dataclass
class AppEvalResult:
    """One eval set's run: its result, per case id the error that stopped a case's turns,
    and per case id its session."""

    result: EvalSetResult
    errors: dict[str, str] = field(default_factory=dict)
    #: per case id, the session its turns ran in (the result file's ``session_details``)
    sessions: dict[str, Any] = field(default_factory=dict)


def parse_eval_targets(arguments: Sequence[str]) -> dict[str, list[str]]:
    """``PATH_OR_ID[:CASE,CASE...]`` arguments as {eval set: picked case ids}, in the
    order given (see the module, step 1). Blank names in a list are skipped."""
    targets: dict[str, list[str]] = {}
    for argument in arguments:
        target, colon, picked = argument.partition(":")
        cases = [case.strip() for case in picked.split(",") if case.strip()] if colon else []
        chosen = targets.setdefault(target, [])
        chosen.extend(case for case in cases if case not in chosen)
    return targets


def read_eval_set_file(path: str | Path) -> EvalSet:
    """The eval set in the file at ``path`` (google-adk's JSON, snake_case or camelCase).
    EvalError when it cannot be read or is not an eval set (the first problem's place
    and message, not the file's content)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise EvalError(f"{path}: cannot read it: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise EvalError(f"{path}: not an eval set (not UTF-8 text)") from None
    try:
        return EvalSet.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the file"
        raise EvalError(f"{path}: not an eval set ({where}: {first['msg']})") from None


def eval_set_for(target: str, agent_dir: str | Path) -> EvalSet:
    """The eval set ``target`` names: a file, else a set of ``agent_dir`` by its id
    (see the module, step 2)."""
    if Path(target).is_file():
        return read_eval_set_file(target)
    kept = Path(agent_dir) / f"{target}{_SET_SUFFIX}"
    if "/" not in target and target not in ("", ".", "..") and kept.is_file():
        return read_eval_set_file(kept)
    raise EvalError(f"{target}: no such eval set file, and no eval set of that id in {agent_dir} "
                    f"({target}{_SET_SUFFIX})")


def check_cases(eval_set: EvalSet, case_ids: Sequence[str], named: str) -> None:
    """EvalError when ``eval_set`` (given as ``named``) has no case at all, lacks a case
    of ``case_ids``, or a picked case has neither or both of a conversation and a scenario."""
    if not eval_set.eval_cases:
        raise EvalError(f"{named}: the eval set has no eval cases")
    known = [case.eval_id for case in eval_set.eval_cases]
    missing = [case for case in case_ids if case not in known]
    if missing:
        raise EvalError(f"{named}: no eval case {', '.join(map(repr, missing))} in eval set "
                        f"{eval_set.eval_set_id!r} (it has {', '.join(map(repr, known))})")
    for case in eval_set.eval_cases:
        if (not case_ids or case.eval_id in case_ids) and (case.conversation is None) == (
                case.conversation_scenario is None):
            raise EvalError(f"{named}: eval case {case.eval_id!r} must have exactly one of conversation and "
                            f"conversation_scenario")


def eval_config_for(config_file_path: str | None, targets: Sequence[str]) -> EvalConfig:
    """The eval config (see the module, step 3). EvalError for a file given that is not
    there, or a config that is not valid."""
    if config_file_path:
        if not Path(config_file_path).is_file():
            raise EvalError(f"--config_file_path {config_file_path}: no such file")
        return get_evaluation_criteria_or_default(config_file_path)
    if len(targets) == 1 and Path(targets[0]).is_file():
        return get_evaluation_criteria_or_default(Path(targets[0]).parent / "test_config.json")
    return get_evaluation_criteria_or_default(None)


def check_metrics(metrics: Sequence[EvalMetric]) -> None:
    """EvalError for a metric not offered here or a criterion that is not valid."""
    for metric in metrics:
        check_metric(metric)


def check_simulator(eval_sets: Sequence[EvalSet], user_simulator_config: dict[str, Any] | None) -> None:
    """EvalError for a user simulator config that is not valid, when a case of
    ``eval_sets`` is a ``conversation_scenario`` (played by the simulator)."""
    if any(case.conversation_scenario is not None for eval_set in eval_sets for case in eval_set.eval_cases):
        simulator_config(user_simulator_config)


async def evaluate_app(app: Any, eval_set: EvalSet, metrics: list[EvalMetric], case_ids: Sequence[str] = (),
                       user_simulator_config: dict[str, Any] | None = None,
                       result_prefix: str = "") -> AppEvalResult:
    """Run the picked cases of ``eval_set`` (all when ``case_ids`` is empty) on ``app``
    once each and score them (see the module, step 4); the result's id is
    ``<result_prefix>_<eval set id>_<time the last case ended>`` (google-adk's, with the
    app's name). Raises EvalError for a picked case the set lacks, a metric or simulator
    config that is not valid, or a case with neither or both of a conversation and a
    scenario, before any case runs."""
    check_cases(eval_set, case_ids, eval_set.eval_set_id)
    check_metrics(metrics)
    cases = [case for case in eval_set.eval_cases if not case_ids or case.eval_id in case_ids]
    simulated = simulator_config(user_simulator_config) if any(
        case.conversation_scenario is not None for case in cases) else None
    sessions = InMemorySessionService()
    results: list[EvalCaseResult] = []
    errors: dict[str, str] = {}
    made: dict[str, Any] = {}
    for case in cases:
        run = await AgentEvaluator._infer(app.root_agent, app, case, sessions, None, simulated, quiet=True)
        if run.error:
            errors[case.eval_id] = run.error
        results.append(await AgentEvaluator._score(eval_set.eval_set_id, run, metrics))
        given = case.session_input  # the session the case ran in, under _infer's names
        session = await sessions.get_session(app_name=given.app_name if given and given.app_name
                                             else "EvaluationGenerator", user_id=run.user_id,
                                             session_id=run.session_id)
        if session is not None:
            made[case.eval_id] = session
    done = time.time()
    result_id = new_result_id(result_prefix or "eval", eval_set.eval_set_id, done)
    return AppEvalResult(EvalSetResult(eval_set_result_id=result_id, eval_set_result_name=result_id,
                                       eval_set_id=eval_set.eval_set_id, eval_case_results=results,
                                       creation_timestamp=done), errors, made)
