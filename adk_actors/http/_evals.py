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
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any, TypeVar

from fastapi import FastAPI, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ..evals import (
    EvalCase,
    EvalError,
    EvalFiles,
    EvalMetric,
    EvalNotFound,
    EvalSet,
    case_from_session,
    metrics_info,
    run_eval_set,
)
from ._guard import require_operator

__all__ = ["add_eval_routes"]

_T = TypeVar("_T")


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


def add_eval_routes(api: FastAPI, files: EvalFiles, runner: Callable[[str], Any]) -> None:
    """Add the eval routes to ``api``; ``runner(app)`` gives an app's Runner (an unknown
    app: 404)."""

    def operator(request: Request, app: str) -> None:
        require_operator(request, "read or run eval sets")
        runner(app)  # an unknown app: 404

    def answer(work: Callable[[], _T], missing: int = 404) -> _T:
        try:
            return work()
        except EvalNotFound as exc:
            raise HTTPException(missing, str(exc)) from None
        except EvalError as exc:
            raise HTTPException(400, str(exc)) from None

    prefix = "/dev/apps/{app}"
    tags: list[str | Enum] = ["evaluation"]

    def add_listing(legacy: str, current: str, key: str, ids: Callable[[str], list[str]]) -> None:
        """google-adk's two forms of a list of ids: the legacy route answers the bare
        list, the current one ``{key: [...]}``."""

        def bare(app: str, request: Request) -> list[str]:
            operator(request, app)
            return answer(lambda: ids(app))

        def wrapped(app: str, request: Request) -> dict[str, Any]:
            return {key: bare(app, request)}

        api.get(prefix + legacy, tags=tags)(bare)
        api.get(prefix + current, tags=tags)(wrapped)

    add_listing("/eval_sets", "/eval-sets", "evalSetIds", files.list_sets)
    add_listing("/eval_results", "/eval-results", "evalResultIds", files.list_results)

    @api.post(prefix + "/eval-sets", tags=tags)
    def create_set(app: str, body: CreateEvalSetBody, request: Request) -> dict[str, Any]:
        operator(request, app)
        wanted = body.eval_set
        made = answer(lambda: files.create_set(app, wanted.eval_set_id, name=wanted.name,
                                               description=wanted.description))
        return made.wire()

    @api.post(prefix + "/eval_sets/{eval_set_id}", tags=tags)
    def create_set_legacy(app: str, eval_set_id: str, request: Request) -> None:
        operator(request, app)
        answer(lambda: files.create_set(app, eval_set_id))

    @api.get(prefix + "/eval-sets/{eval_set_id}", tags=tags)
    def get_set(app: str, eval_set_id: str, request: Request) -> dict[str, Any]:
        operator(request, app)
        return answer(lambda: files.get_set(app, eval_set_id)).wire()

    @api.delete(prefix + "/eval-sets/{eval_set_id}", tags=tags)
    def delete_set(app: str, eval_set_id: str, request: Request) -> None:
        operator(request, app)
        answer(lambda: files.delete_set(app, eval_set_id))

    @api.get(prefix + "/eval_sets/{eval_set_id}/evals", tags=tags)
    def list_cases(app: str, eval_set_id: str, request: Request) -> list[str]:
        operator(request, app)
        eval_set = answer(lambda: files.get_set(app, eval_set_id), missing=400)
        return sorted(case.eval_id for case in eval_set.eval_cases)

    @api.post(prefix + "/eval_sets/{eval_set_id}/add_session", tags=tags)
    @api.post(prefix + "/eval-sets/{eval_set_id}/add-session", tags=tags)
    def add_session(app: str, eval_set_id: str, body: AddSessionBody, request: Request) -> None:
        operator(request, app)
        session = runner(app).get_session(body.user_id, body.session_id)  # unknown: 404 (AdkError handler)
        case = case_from_session(body.eval_id, app, body.user_id, session.events)
        answer(lambda: files.add_case(app, eval_set_id, case))

    case_routes = (prefix + "/eval_sets/{eval_set_id}/evals/{eval_id}",
                   prefix + "/eval-sets/{eval_set_id}/eval-cases/{eval_id}")

    def get_case(app: str, eval_set_id: str, eval_id: str, request: Request) -> dict[str, Any]:
        operator(request, app)
        return answer(lambda: files.get_case(app, eval_set_id, eval_id)).wire()

    def put_case(app: str, eval_set_id: str, eval_id: str, case: EvalCase, request: Request) -> None:
        operator(request, app)
        if case.eval_id and case.eval_id != eval_id:
            raise HTTPException(400, "Eval id in EvalCase should match the eval id in the API route.")
        answer(lambda: files.replace_case(app, eval_set_id, case.model_copy(update={"eval_id": eval_id})))

    def delete_case(app: str, eval_set_id: str, eval_id: str, request: Request) -> None:
        operator(request, app)
        answer(lambda: files.delete_case(app, eval_set_id, eval_id))

    for route in case_routes:
        api.get(route, tags=tags)(get_case)
        api.put(route, tags=tags)(put_case)
        api.delete(route, tags=tags)(delete_case)

    def run(app: str, eval_set_id: str, body: RunEvalBody) -> list[dict[str, Any]]:
        eval_set = answer(lambda: files.get_set(app, eval_set_id), missing=400)
        result = answer(lambda: run_eval_set(runner(app), app, eval_set, body.eval_metrics,
                                             body.eval_case_ids or body.eval_ids))
        answer(lambda: files.save_result(app, result))
        return [{**case.wire(), "evalMetricResults": []} for case in result.eval_case_results]

    @api.post(prefix + "/eval-sets/{eval_set_id}/run", tags=tags)
    def run_eval(app: str, eval_set_id: str, body: RunEvalBody, request: Request) -> dict[str, Any]:
        operator(request, app)
        return {"runEvalResults": run(app, eval_set_id, body)}

    @api.post(prefix + "/eval_sets/{eval_set_id}/run_eval", tags=tags)
    def run_eval_legacy(app: str, eval_set_id: str, body: RunEvalBody, request: Request) -> list[dict[str, Any]]:
        operator(request, app)
        return run(app, eval_set_id, body)

    @api.get(prefix + "/eval_results/{result_id}", tags=tags)
    @api.get(prefix + "/eval-results/{result_id}", tags=tags)
    def get_result(app: str, result_id: str, request: Request) -> dict[str, Any]:
        operator(request, app)
        return answer(lambda: files.get_result(app, result_id)).wire()

    @api.get(prefix + "/metrics-info", tags=tags)
    def list_metrics(app: str, request: Request) -> dict[str, Any]:
        operator(request, app)
        return {"metricsInfo": [info.wire() for info in metrics_info()]}
