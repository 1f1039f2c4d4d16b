"""google-adk's eval routes (``/dev/apps/{app}/eval...``), on the kit's eval sets
(``adk_actors.evals``): the files under the host's ``data/evals``, runs through the
app's Runner.

Both of google-adk's spellings are served (``eval_sets`` and ``eval-sets``...), with
its shapes: the legacy routes answer bare lists, the newer ones objects. Eval sets
hold conversations copied from sessions and a run makes sessions for any user, so
every route here needs the operator (on loopback without tokens, anyone: as
``adk web``). Errors: an unknown set, case or result is a 404 (a set that is not
there is a 400 on the routes where google-adk answers 400); a bad id or an unknown
metric a 400.

The routes are included on their first request (``_lazy``): importing the eval kit is
most of what they cost the server's start. The host's eval folder is opened then, as
one :class:`~adk_actors.evals.EvalFiles` for the process: an app of the agents folder
(``adk-actors web DIR``) keeps its sets and results in its own folder, as google-adk
does (``DIR/<app>/<set>.evalset.json``, ``DIR/<app>/.adk/eval_history/``), so the
results ``adk-actors eval DIR/<app>`` and google-adk's ``adk eval`` save are listed
here; any other app under ``data/evals/<app>/``. Files an older host kept under
``data/evals`` are still read.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from .._exceptions import AdkError
from ..evals import (
    EvalCase,
    EvalError,
    EvalFiles,
    EvalMetric,
    EvalNotFound,
    EvalSet,
    EvalSetResult,
    case_from_session,
    instruction_keys_state,
    metrics_info,
    run_eval_set,
)
from ..evals._files import new_result_id
from ._deps import Api, HostApi
from ._guard import require_operator

__all__ = ["router"]

router = APIRouter(prefix="/dev/apps/{app}", tags=["evaluation"])

_T = TypeVar("_T")

#: One EvalFiles per (eval folder, agents folder) in this process: its lock orders the changes of a set.
_opened: dict[tuple[str, str | None], EvalFiles] = {}
_opening = threading.Lock()


class _Body(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class CreateEvalSetBody(_Body):
    eval_set: EvalSet


class AddSessionBody(_Body):
    eval_id: str
    session_id: str
    user_id: str


class RunEvalBody(_Body):
    eval_ids: list[str] = Field(default_factory=list)  # google-adk's older name of eval_case_ids
    eval_case_ids: list[str] = Field(default_factory=list)
    eval_metrics: list[EvalMetric]


def _files(api: HostApi, request: Request, app: str) -> EvalFiles:
    """The host's eval files, for the operator only (403), for an app the host runs (404)."""
    require_operator(request, "read or run eval sets")
    api.runner(app)  # an unknown app: 404
    if api.evals_dir is None:
        raise HTTPException(404, "this host keeps no eval sets")
    agents_dir = api.apps.agents_dir
    with _opening:
        files = _opened.get((api.evals_dir, agents_dir))
        if files is None:
            files = _opened[(api.evals_dir, agents_dir)] = EvalFiles(api.evals_dir, agents_dir)
    return files


def _answer(work: Callable[[], _T], missing: int = 404) -> _T:
    try:
        return work()
    except EvalNotFound as exc:
        raise HTTPException(missing, str(exc)) from None
    except EvalError as exc:
        raise HTTPException(400, str(exc)) from None


def _add_listing(legacy: str, current: str, key: str, ids: Callable[[EvalFiles, str], list[str]]) -> None:
    """google-adk's two forms of a list of ids: the legacy route answers the bare list,
    the current one ``{key: [...]}``."""

    def bare(app: str, request: Request, api: Api) -> list[str]:
        files = _files(api, request, app)
        return _answer(lambda: ids(files, app))

    def wrapped(app: str, request: Request, api: Api) -> dict[str, Any]:
        return {key: bare(app, request, api)}

    router.get(legacy)(bare)
    router.get(current)(wrapped)


_add_listing("/eval_sets", "/eval-sets", "evalSetIds", EvalFiles.list_sets)
_add_listing("/eval_results", "/eval-results", "evalResultIds", EvalFiles.list_results)


@router.post("/eval-sets")
def create_set(app: str, body: CreateEvalSetBody, request: Request, api: Api) -> dict[str, Any]:
    files = _files(api, request, app)
    wanted = body.eval_set
    made = _answer(lambda: files.create_set(app, wanted.eval_set_id, name=wanted.name,
                                            description=wanted.description))
    return made.wire()


@router.post("/eval_sets/{eval_set_id}")
def create_set_legacy(app: str, eval_set_id: str, request: Request, api: Api) -> None:
    files = _files(api, request, app)
    _answer(lambda: files.create_set(app, eval_set_id))


@router.get("/eval-sets/{eval_set_id}")
def get_set(app: str, eval_set_id: str, request: Request, api: Api) -> dict[str, Any]:
    files = _files(api, request, app)
    return _answer(lambda: files.get_set(app, eval_set_id)).wire()


@router.delete("/eval-sets/{eval_set_id}")
def delete_set(app: str, eval_set_id: str, request: Request, api: Api) -> None:
    files = _files(api, request, app)
    _answer(lambda: files.delete_set(app, eval_set_id))


@router.get("/eval_sets/{eval_set_id}/evals")
def list_cases(app: str, eval_set_id: str, request: Request, api: Api) -> list[str]:
    files = _files(api, request, app)
    eval_set = _answer(lambda: files.get_set(app, eval_set_id), missing=400)
    return sorted(case.eval_id for case in eval_set.eval_cases)


@router.post("/eval_sets/{eval_set_id}/add_session")
@router.post("/eval-sets/{eval_set_id}/add-session")
def add_session(app: str, eval_set_id: str, body: AddSessionBody, request: Request, api: Api) -> None:
    files = _files(api, request, app)
    session = api.runner(app).get_session(body.user_id, body.session_id)  # unknown: 404 (AdkError handler)
    case = case_from_session(body.eval_id, app, body.user_id, session.events,
                             instruction_keys_state(api.root_agent_of(app)))  # google-adk's initial state
    _answer(lambda: files.add_case(app, eval_set_id, case))


def get_case(app: str, eval_set_id: str, eval_id: str, request: Request, api: Api) -> dict[str, Any]:
    files = _files(api, request, app)
    return _answer(lambda: files.get_case(app, eval_set_id, eval_id)).wire()


def put_case(app: str, eval_set_id: str, eval_id: str, case: EvalCase, request: Request, api: Api) -> None:
    files = _files(api, request, app)
    if case.eval_id and case.eval_id != eval_id:
        raise HTTPException(400, "Eval id in EvalCase should match the eval id in the API route.")
    _answer(lambda: files.replace_case(app, eval_set_id, case.model_copy(update={"eval_id": eval_id})))


def delete_case(app: str, eval_set_id: str, eval_id: str, request: Request, api: Api) -> None:
    files = _files(api, request, app)
    _answer(lambda: files.delete_case(app, eval_set_id, eval_id))


for _route in ("/eval_sets/{eval_set_id}/evals/{eval_id}", "/eval-sets/{eval_set_id}/eval-cases/{eval_id}"):
    router.get(_route)(get_case)
    router.put(_route)(put_case)
    router.delete(_route)(delete_case)


def _sessions(runner: Any, result: EvalSetResult) -> dict[str, Any]:
    """Per case id, the session its run made (None-less: a session not found is left out)."""
    found: dict[str, Any] = {}
    for case in result.eval_case_results:
        try:
            found[case.eval_id] = runner.get_session(case.user_id or "", case.session_id)
        except AdkError:
            continue
    return found


def _run(api: HostApi, files: EvalFiles, app: str, eval_set_id: str, body: RunEvalBody) -> list[dict[str, Any]]:
    """Run the set's picked cases, save the result (google-adk's file and id, each case's
    session in it) in the app's ``.adk/eval_history``, and answer the case results."""
    eval_set = _answer(lambda: files.get_set(app, eval_set_id), missing=400)
    runner = api.runner(app)
    ran = _answer(lambda: run_eval_set(runner, app, eval_set, body.eval_metrics,
                                       body.eval_case_ids or body.eval_ids))
    named = new_result_id(app, eval_set_id, ran.creation_timestamp)  # as google-adk names its results
    result = ran.model_copy(update={"eval_set_result_id": named, "eval_set_result_name": named})
    sessions = _sessions(runner, result)
    _answer(lambda: files.save_result(app, result, sessions))
    return [{**case.wire(), "evalMetricResults": []} for case in result.eval_case_results]


@router.post("/eval-sets/{eval_set_id}/run")
def run_eval(app: str, eval_set_id: str, body: RunEvalBody, request: Request, api: Api) -> dict[str, Any]:
    return {"runEvalResults": _run(api, _files(api, request, app), app, eval_set_id, body)}


@router.post("/eval_sets/{eval_set_id}/run_eval")
def run_eval_legacy(app: str, eval_set_id: str, body: RunEvalBody, request: Request, api: Api) -> list[dict[str, Any]]:
    return _run(api, _files(api, request, app), app, eval_set_id, body)


@router.get("/eval_results/{result_id}")
@router.get("/eval-results/{result_id}")
def get_result(app: str, result_id: str, request: Request, api: Api) -> dict[str, Any]:
    files = _files(api, request, app)
    return _answer(lambda: files.get_result(app, result_id)).wire()


@router.get("/metrics-info")
def list_metrics(app: str, request: Request, api: Api) -> dict[str, Any]:
    _files(api, request, app)
    return {"metricsInfo": [info.wire() for info in metrics_info()]}
