"""The host's background jobs over HTTP, under ``/jobs`` (the same guard as the rest).

A token's user sees, enqueues and manages only its own jobs (another's is 404); the
operator (or anyone on loopback with no tokens) sees every user's. In order:

* ``GET /jobs?queue=&state=&limit=``: jobs, newest first;
* ``POST /jobs``: enqueue (201): an agent run (``{"appName", "message", "userId",
  "sessionId"?, "stateDelta"?}``) or a function (``{"function", "args"}``), with
  ``queue``, ``priority``, ``maxAttempts``, ``scheduleIn`` or ``scheduledAt``,
  ``uniqueKey`` and ``uniquePeriod``, ``timeout``. A function may be enqueued over
  HTTP only if the host's ``[jobs] http_functions`` lists it (an import path named in
  a request is code run on the host: never by default). A job that cannot run is a
  422 naming the problem, and nothing is stored;
* ``GET /jobs/{id}``; ``POST /jobs/{id}/cancel``, ``/retry``, ``/discard``.

A job is sent as JSON in camelCase (``id``, ``state``, ``attempt``, ``maxAttempts``,
``scheduledAt`` ... ``errors``, ``result``, ``idempotencyKey``).
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ..jobs import Job, JobSpec
from ..runtime import Jobs
from ._deps import Api, HostApi
from ._guard import acts_for_anyone

__all__ = ["EnqueueBody", "job_json", "router"]

router = APIRouter(tags=["jobs"])


class EnqueueBody(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    kind: Literal["agent", "function"] = "agent"
    app_name: str = ""
    message: str = ""
    user_id: str | None = None
    session_id: str | None = None
    state_delta: dict[str, Any] | None = None
    function: str = ""
    args: dict[str, Any] = Field(default_factory=dict)
    queue: str = "default"
    priority: int = 0
    max_attempts: int = 20
    schedule_in: float | None = None
    scheduled_at: float | None = None
    unique_key: str | None = None
    unique_period: float = 60.0
    timeout: float = 300.0


def job_json(job: Job) -> dict[str, Any]:
    """A job as the API sends it (see the module)."""
    return {to_camel(key): value for key, value in job.to_dict().items()}


def _jobs(request: Request, api: HostApi) -> Jobs:
    principal = request.state.principal
    return Jobs(api.host, user_id=None if acts_for_anyone(principal) else principal)


@router.get("/jobs")
def list_jobs(request: Request, api: Api, queue: str | None = None, state: str | None = None,
              limit: int = 100) -> list[dict[str, Any]]:
    return [job_json(job) for job in _jobs(request, api).list(queue=queue, state=state, limit=limit)]


@router.post("/jobs", status_code=201)
def enqueue(body: EnqueueBody, request: Request, api: Api) -> dict[str, Any]:
    principal = request.state.principal
    user = body.user_id or ("operator" if acts_for_anyone(principal) else principal)
    api.allowed(request, user, body.app_name or "jobs")
    if body.kind == "function" and body.function not in api.http_functions:
        raise HTTPException(403, f"the function {body.function!r} may not be enqueued over HTTP "
                                 "(the host's [jobs] http_functions lists those that may)")
    spec = JobSpec(kind=body.kind, user_id=user, queue=body.queue, app_name=body.app_name, message=body.message,
                   session_id=body.session_id, state_delta=body.state_delta, function=body.function,
                   args=body.args, priority=body.priority, max_attempts=body.max_attempts,
                   scheduled_at=body.scheduled_at, schedule_in=body.schedule_in, unique_key=body.unique_key,
                   unique_period=body.unique_period, timeout=body.timeout)
    return job_json(_jobs(request, api).enqueue(spec))


@router.get("/jobs/{job_id}")
def get_job(job_id: str, request: Request, api: Api) -> dict[str, Any]:
    return job_json(_jobs(request, api).get(job_id))


@router.post("/jobs/{job_id}/{action}")
def act_on_job(job_id: str, action: Literal["cancel", "retry", "discard"], request: Request,
               api: Api) -> dict[str, Any]:
    jobs = _jobs(request, api)
    acted = {"cancel": jobs.cancel, "retry": jobs.retry, "discard": jobs.discard}[action](job_id)
    return job_json(acted)
