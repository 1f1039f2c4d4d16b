"""Background jobs (issue 34), with Oban's meaning.

The store's rules with its clock passed in (scheduling, backoff, uniqueness, attempts,
snooze, cancel/retry/discard, pruning) and cron schedules across a DST change, exactly
and without sleeping; then the host's ``jobs`` actor: function and agent jobs, retries,
bad input refused with nothing stored, concurrency limits, timeouts, cancel, and
faults: kill -9 of an executor and of the jobs actor mid-job, and a host restart with
jobs pending and executing. The job functions (``job_functions``) write what they do to
a file outside the host, so each test counts executions and sees any overlap."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import runtime_agents
from conftest import ROOT, SharedHost, free_port, serving

from adk_actors import InvalidRequestError, NotFoundError
from adk_actors.jobs import (
    Backoff,
    CronEntry,
    EnqueueJob,
    JobsConfig,
    JobSpec,
    ListJobs,
    backoff_delay,
    next_cron_time,
    validate_spec,
)
from adk_actors.runtime import Host, HostConfig, Jobs
from adk_actors.store import JobStore
from supervision import call
from supervision.lowlevel import process_alive
from supervision.testing import ManualClock, kill_marked_processes, process_marker, wait_until

QUEUES = {"default"}


#: Where the store's clock (a ManualClock) starts in these tests: a date in 2027.
START = 1_800_000_000.0


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[JobStore, ManualClock]]:
    """The store's rules on both of its databases: a SQLite file, and PostgreSQL (a
    real server the tests own, a fresh database each)."""
    clock = ManualClock(START)
    location = str(tmp_path / "jobs.db") if request.param == "sqlite" else \
        request.getfixturevalue("postgres").new_database()
    jobs = JobStore(location, clock, random.Random(7))
    yield jobs, clock
    jobs.close()


def function(**fields: Any) -> JobSpec:
    return JobSpec(**{"kind": "function", "function": "job_functions:noop", "user_id": "ann", **fields})


EXACT = Backoff(base=10.0, max_delay=100.0, jitter=0.0)


# -- the store, on a clock passed in ------------------------------------------------------------


def test_a_job_scheduled_later_is_claimed_only_once_due(store: tuple[JobStore, ManualClock]) -> None:
    jobs, clock = store
    later, _ = jobs.insert(function(schedule_in=30.0), default_backoff=EXACT)
    at, _ = jobs.insert(function(scheduled_at=clock.current_time() + 60.0), default_backoff=EXACT)
    assert (later.state, at.state) == ("scheduled", "scheduled")
    assert jobs.claim("default", 10) == []
    clock.advance(30.0)
    assert [j.id for j in jobs.claim("default", 10)] == [later.id]
    clock.advance(30.0)
    claimed = jobs.claim("default", 10)
    assert [j.id for j in claimed] == [at.id] and claimed[0].attempt == 1 and claimed[0].state == "executing"
    assert claimed[0].lease_until == clock.current_time() + 300.0 and claimed[0].idempotency_key == f"{at.id}-1"


def test_priority_then_due_time_order_the_claims_and_the_limit_holds(store: tuple[JobStore, ManualClock]) -> None:
    jobs, clock = store
    low, _ = jobs.insert(function(priority=3), default_backoff=EXACT)
    clock.advance(1)
    high, _ = jobs.insert(function(priority=0), default_backoff=EXACT)
    clock.advance(1)
    high_later, _ = jobs.insert(function(priority=0), default_backoff=EXACT)
    assert [j.id for j in jobs.claim("default", 2)] == [high.id, high_later.id]
    assert [j.id for j in jobs.claim("default", 2)] == [low.id]


def test_failed_attempts_back_off_exponentially_then_the_job_is_discarded(store: tuple[JobStore, ManualClock]) -> None:
    jobs, clock = store
    job, _ = jobs.insert(function(max_attempts=3, backoff=EXACT), default_backoff=Backoff())
    for attempt, wait in ((1, 10.0), (2, 20.0)):
        [claimed] = jobs.claim("default", 1)
        assert claimed.attempt == attempt
        assert jobs.fail(job.id, attempt, f"boom {attempt}")
        stored = jobs.get(job.id)
        assert stored.state == "retryable" and stored.scheduled_at == clock.current_time() + wait
        assert jobs.claim("default", 1) == []  # not before its backoff
        clock.advance(wait)
    [last] = jobs.claim("default", 1)
    jobs.fail(job.id, last.attempt, "boom 3")
    done = jobs.get(job.id)
    assert done.state == "discarded" and [e["error"] for e in done.errors] == ["boom 1", "boom 2", "boom 3"]
    assert [e["attempt"] for e in done.errors] == [1, 2, 3]


def test_backoff_is_capped_and_jittered_within_its_bounds() -> None:
    backoff = Backoff(base=1.0, max_delay=60.0, jitter=0.2)
    rng = random.Random(3)
    delays = [backoff_delay(attempt, backoff, rng) for attempt in range(1, 12)]
    for attempt, delay in enumerate(delays, start=1):
        nominal = min(60.0, 2.0 ** (attempt - 1))
        assert nominal * 0.8 <= delay <= nominal * 1.2
    assert len({round(d, 6) for d in delays}) == len(delays)  # jittered, not in lockstep


def test_a_unique_key_returns_the_existing_job_within_its_period(store: tuple[JobStore, ManualClock]) -> None:
    jobs, clock = store
    first, inserted = jobs.insert(function(unique_key="nightly", unique_period=60.0), default_backoff=EXACT)
    again, inserted_again = jobs.insert(function(unique_key="nightly", unique_period=60.0), default_backoff=EXACT)
    assert inserted and not inserted_again and again.id == first.id
    clock.advance(61.0)
    later, inserted_later = jobs.insert(function(unique_key="nightly", unique_period=60.0), default_backoff=EXACT)
    assert inserted_later and later.id != first.id
    jobs.cancel(later.id)  # a cancelled job does not hold its key
    third, inserted_third = jobs.insert(function(unique_key="nightly", unique_period=60.0), default_backoff=EXACT)
    assert inserted_third and third.id not in (first.id, later.id)


def test_an_answer_about_an_earlier_attempt_changes_nothing(store: tuple[JobStore, ManualClock]) -> None:
    jobs, clock = store
    job, _ = jobs.insert(function(backoff=Backoff(base=1.0, jitter=0.0)), default_backoff=EXACT)
    jobs.claim("default", 1)
    jobs.fail(job.id, 1, "cut short")
    clock.advance(1.0)
    jobs.claim("default", 1)
    assert not jobs.complete(job.id, 1, "late answer of attempt 1")
    assert jobs.get(job.id).state == "executing"
    assert jobs.complete(job.id, 2, "attempt 2")
    assert (jobs.get(job.id).state, jobs.get(job.id).result) == ("completed", "attempt 2")


def test_snooze_cancel_retry_discard_and_prune(store: tuple[JobStore, ManualClock]) -> None:
    jobs, clock = store
    job, _ = jobs.insert(function(max_attempts=1), default_backoff=EXACT)
    jobs.claim("default", 1)
    assert jobs.snooze(job.id, 1, 5.0)
    snoozed = jobs.get(job.id)
    assert (snoozed.state, snoozed.max_attempts, snoozed.scheduled_at) == ("scheduled", 2, clock.current_time() + 5.0)
    assert jobs.cancel(job.id).state == "cancelled"
    assert jobs.retry(job.id).state == "available"
    assert jobs.discard(job.id).state == "discarded"
    with pytest.raises(NotFoundError):
        jobs.get(job.id, user_id="bob")  # another user's job is not found
    clock.advance(10.0)
    assert jobs.prune(older_than=5.0) == 1
    with pytest.raises(NotFoundError):
        jobs.get(job.id)


def test_cron_follows_the_wall_clock_of_its_time_zone_across_a_dst_change() -> None:
    start = dt.datetime(2026, 3, 27, 12, 0, tzinfo=dt.UTC).timestamp()
    due, times = start, []
    for _ in range(3):
        due = next_cron_time("0 9 * * *", due, "Europe/Oslo")
        times.append(dt.datetime.fromtimestamp(due, dt.UTC).strftime("%d %H:%M"))
    assert times == ["28 08:00", "29 07:00", "30 07:00"]  # 09:00 in Oslo, before and after the change
    with pytest.raises(InvalidRequestError, match="cron"):
        next_cron_time("61 * * * *", start)
    with pytest.raises(InvalidRequestError, match="time zone"):
        next_cron_time("0 9 * * *", start, "Mars/Olympus")


@pytest.mark.parametrize(("spec", "said"), [
    (JobSpec(kind="agent", app_name="nope", message="hi", user_id="ann"), "no app 'nope'"),
    (JobSpec(kind="agent", app_name="echo", message="", user_id="ann"), "needs a message"),
    (JobSpec(kind="function", function="no.such.module:fn", user_id="ann"), "cannot import"),
    (JobSpec(kind="function", function="job_functions", user_id="ann"), "package.module:function"),
    (JobSpec(kind="function", function="job_functions:noop", user_id="ann", args={"x": "y" * 70_000}), "over"),
    (JobSpec(kind="function", function="job_functions:noop", user_id="ann", args={"x": {1, 2}}), "JSON"),
    (JobSpec(kind="function", function="job_functions:noop", user_id="ann", args=[1, 2]),  # type: ignore[arg-type]
     "args are a JSON object"),
    (JobSpec(kind="function", function="job_functions:noop", user_id="../etc", queue="default"), "user id"),
    (JobSpec(kind="function", function="job_functions:noop", user_id="ann", queue="vip"), "no queue 'vip'"),
    (JobSpec(kind="function", function="job_functions:noop", user_id="ann", max_attempts=0), "max_attempts"),
])
def test_a_job_that_cannot_run_is_refused_by_name(spec: JobSpec, said: str) -> None:
    with pytest.raises(InvalidRequestError, match=said):
        validate_spec(spec, apps={"echo"}, queues=QUEUES)


# -- the host's jobs actor ------------------------------------------------------------------------


JOBS = JobsConfig(queues={"default": 3, "single": 1}, backoff=Backoff(base=0.05, max_delay=0.2, jitter=0.0), tick=0.2)


@pytest.fixture
def jobs_host(actor_system: Any, tmp_path: Path) -> Iterator[Host]:
    with Host(HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), jobs=JOBS),
              system=actor_system) as running:
        yield running


@pytest.fixture(scope="module")
def shared_jobs_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedHost]:
    hosts = SharedHost(tmp_path_factory.mktemp("jobs"),
                       lambda data: HostConfig(apps=runtime_agents.APPS, data_dir=str(data), jobs=JOBS))
    yield hosts
    hosts.close()


@pytest.fixture
def shared_jobs_host(shared_jobs_hosts: SharedHost) -> Host:
    """A host as ``jobs_host``'s, shared by the tests that neither kill, stop nor
    reconfigure it and look at their own jobs only (by id, or by a user of their own,
    ``user``); the one that compares the whole list before and after comes before any
    test that leaves a job to run later (``SharedHost``: a fresh one after a test that
    broke its tree)."""
    return shared_jobs_hosts.get()


_USERS = itertools.count(1)


@pytest.fixture
def user() -> str:
    """A user no other test of the module has (the shared host keeps every job)."""
    return f"ann{next(_USERS)}"


def lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def overlap(log: Path) -> int:
    """The most attempts running at once, from their start and end lines."""
    running = most = 0
    for line in lines(log):
        running += 1 if line.startswith("start") else -1
        most = max(most, running)
    return most


def finished(host: Host, job_id: str, timeout: float = 15.0) -> Any:
    wait_until(lambda: host.jobs.get(job_id).state in ("completed", "discarded", "cancelled"), timeout=timeout,
               message=f"job {job_id} finished")
    return host.jobs.get(job_id)


def test_function_and_agent_jobs_run_and_keep_their_results(shared_jobs_host: Host, user: str, tmp_path: Path) -> None:
    log = tmp_path / "log"
    job = shared_jobs_host.jobs.enqueue_function("job_functions:record", {"log": str(log), "value": 7})
    assert finished(shared_jobs_host, job.id).result == {"value": 7, "attempt": 1}
    run = shared_jobs_host.jobs.enqueue_run("echo", "hello jobs", user_id=user)
    done = finished(shared_jobs_host, run.id)
    assert done.result == {"session_id": run.id, "text": "echo: hello jobs (turn 1)"}
    runner = shared_jobs_host.runner("echo")
    runner.create_session(user, "mine")
    turn = shared_jobs_host.jobs.enqueue_run("echo", "into my session", user_id=user, session_id="mine")
    assert finished(shared_jobs_host, turn.id).result["session_id"] == "mine"
    events = runner.get_session(user, "mine").events
    assert [e.content.text for e in events if e.content] == ["into my session", "echo: into my session (turn 1)"]
    assert {j.id for j in shared_jobs_host.jobs.list()} >= {job.id, run.id, turn.id}
    assert shared_jobs_host.jobs.list(state="completed", limit=1)[0].state == "completed"


def test_failures_are_retried_with_backoff_snoozes_wait_and_discards_stop(shared_jobs_host: Host, tmp_path: Path) -> None:
    log = tmp_path / "log"
    flaky = shared_jobs_host.jobs.enqueue_function("job_functions:flaky", {"log": str(log), "fail_times": 2})
    done = finished(shared_jobs_host, flaky.id)
    assert (done.state, done.attempt, done.result) == ("completed", 3, "finally")
    assert [e["error"] for e in done.errors] == ["RuntimeError: attempt 1 failed on purpose",
                                                 "RuntimeError: attempt 2 failed on purpose"]
    hopeless = finished(shared_jobs_host, shared_jobs_host.jobs.enqueue_function("job_functions:hopeless").id)
    assert hopeless.state == "discarded" and hopeless.attempt == 1 and "nothing to do" in hopeless.errors[0]["error"]
    out_of_tries = finished(shared_jobs_host, shared_jobs_host.jobs.enqueue_function(
        "job_functions:flaky", {"log": str(tmp_path / "log2"), "fail_times": 5}, max_attempts=2).id)
    assert out_of_tries.state == "discarded" and out_of_tries.attempt == 2
    snoozed = finished(shared_jobs_host, shared_jobs_host.jobs.enqueue_function("job_functions:snoozing",
                                                                  {"log": str(tmp_path / "log3")}).id)
    assert (snoozed.state, snoozed.result, snoozed.errors) == ("completed", "awake", ())


def test_bad_input_is_a_typed_error_and_nothing_is_stored(shared_jobs_host: Host) -> None:
    before = shared_jobs_host.jobs.list()
    with pytest.raises(InvalidRequestError, match="no app"):
        shared_jobs_host.jobs.enqueue_run("nope", "hi")
    with pytest.raises(InvalidRequestError, match="cannot import"):
        shared_jobs_host.jobs.enqueue_function("no.such:fn")
    with pytest.raises(InvalidRequestError, match="over"):
        shared_jobs_host.jobs.enqueue_function("job_functions:noop", {"blob": "x" * 100_000})
    with pytest.raises(NotFoundError):
        shared_jobs_host.jobs.get("job-nope")
    assert shared_jobs_host.jobs.list() == before


def test_unique_jobs_a_users_view_and_cancel_retry(shared_jobs_host: Host, user: str, tmp_path: Path) -> None:
    first = shared_jobs_host.jobs.enqueue_function("job_functions:noop", unique_key="once", schedule_in=60.0)
    again = shared_jobs_host.jobs.enqueue_function("job_functions:noop", unique_key="once", schedule_in=60.0)
    assert again.id == first.id and first.state == "scheduled"
    ann = Jobs(shared_jobs_host, user_id=user)
    mine = ann.enqueue_function("job_functions:noop", schedule_in=60.0)
    assert mine.user_id == user and [j.id for j in ann.list()] == [mine.id]
    with pytest.raises(NotFoundError):
        ann.get(first.id)  # the operator's job: not ann's to see
    assert shared_jobs_host.jobs.cancel(first.id).state == "cancelled"
    retried = shared_jobs_host.jobs.retry(first.id)
    assert retried.state == "available"
    assert finished(shared_jobs_host, first.id).state == "completed"


def test_a_queues_concurrency_limit_holds_under_load(jobs_host: Host, tmp_path: Path) -> None:
    log = tmp_path / "log"
    ids = [jobs_host.jobs.enqueue_function("job_functions:slow", {"log": str(log), "seconds": 0.3}, queue="single").id
           for _ in range(3)]
    ids += [jobs_host.jobs.enqueue_function("job_functions:slow", {"log": str(tmp_path / "many"), "seconds": 0.3}).id
            for _ in range(7)]
    for job_id in ids:
        assert finished(jobs_host, job_id).state == "completed"
    assert overlap(log) == 1
    assert overlap(tmp_path / "many") == 3


def test_an_attempt_over_its_timeout_is_killed_and_failed(shared_jobs_host: Host, tmp_path: Path) -> None:
    log = tmp_path / "log"
    job = shared_jobs_host.jobs.enqueue_function("job_functions:slow", {"log": str(log), "seconds": 30}, timeout=0.5,
                                          max_attempts=1)
    done = finished(shared_jobs_host, job.id)
    assert done.state == "discarded" and "timed out after 0.5 s" in done.errors[0]["error"]
    assert lines(log) == [f"start {job.id} 1"]  # cut short: its process was killed
    after = finished(shared_jobs_host, shared_jobs_host.jobs.enqueue_function("job_functions:noop").id)
    assert after.state == "completed"  # a new executor took over


def test_cancelling_an_executing_job_stops_it(shared_jobs_host: Host, tmp_path: Path) -> None:
    log = tmp_path / "log"
    job = shared_jobs_host.jobs.enqueue_function("job_functions:slow", {"log": str(log), "seconds": 30})
    wait_until(lambda: lines(log) == [f"start {job.id} 1"], timeout=10)
    assert shared_jobs_host.jobs.cancel(job.id).state == "cancelled"
    time.sleep(0.5)
    assert shared_jobs_host.jobs.get(job.id).state == "cancelled" and lines(log) == [f"start {job.id} 1"]


def _executor_pids(host: Host) -> list[int]:
    jobs_pid = host.root.pids()["jobs"]  # type: ignore[union-attr]
    children = [int(p) for p in os.popen(f"pgrep -P {jobs_pid}").read().split()]
    return children


def test_kill_9_of_an_executor_mid_job_retries_it_never_twice_at_once(jobs_host: Host, tmp_path: Path) -> None:
    log = tmp_path / "log"
    job = jobs_host.jobs.enqueue_function("job_functions:slow", {"log": str(log), "seconds": 1.0})
    wait_until(lambda: lines(log) == [f"start {job.id} 1"], timeout=10)
    for pid in _executor_pids(jobs_host):
        os.kill(pid, signal.SIGKILL)
    done = finished(jobs_host, job.id)
    assert (done.state, done.attempt) == ("completed", 2)
    assert done.errors[0]["error"] == "the executor died during this attempt"
    assert lines(log) == [f"start {job.id} 1", f"start {job.id} 2", f"end {job.id} 2"]


def test_kill_9_of_the_jobs_actor_mid_job_retries_it_never_twice_at_once(jobs_host: Host, tmp_path: Path) -> None:
    log = tmp_path / "log"
    job = jobs_host.jobs.enqueue_function("job_functions:slow", {"log": str(log), "seconds": 1.0})
    agent = jobs_host.jobs.enqueue_run("sleepy", "sleep 1", user_id="ann")
    wait_until(lambda: lines(log) == [f"start {job.id} 1"], timeout=10)
    actor = jobs_host.root.pids()["jobs"]  # type: ignore[union-attr]
    assert actor is not None
    os.kill(actor, signal.SIGKILL)
    wait_until(lambda: not process_alive(actor), timeout=5)
    done = finished(jobs_host, job.id)
    assert (done.state, done.attempt) == ("completed", 2) and done.errors[0]["error"].startswith("interrupted")
    assert lines(log) == [f"start {job.id} 1", f"start {job.id} 2", f"end {job.id} 2"]  # the first died with it
    ran = finished(jobs_host, agent.id)
    assert ran.state == "completed"
    texts = [e.content.text for e in jobs_host.runner("sleepy").get_session("ann", agent.id).events
             if e.content and e.content.text]
    # each attempt at most one turn (the first may have been cut before its turn began), one after the other
    assert 1 <= texts.count("sleep 1") <= ran.attempt


def test_jobs_outlive_a_host_restart(tmp_path: Path) -> None:
    log = tmp_path / "log"
    data = str(tmp_path / "data")
    config = JobsConfig(backoff=Backoff(base=0.05, max_delay=0.2, jitter=0.0), tick=0.2)
    with Host(HostConfig(apps=runtime_agents.APPS, data_dir=data, port=free_port(), jobs=config)) as host:
        later = host.jobs.enqueue_function("job_functions:record", {"log": str(log), "value": "later"},
                                           schedule_in=1.5)
        cut = host.jobs.enqueue_function("job_functions:slow", {"log": str(log), "seconds": 30}, timeout=60)
        wait_until(lambda: f"start {cut.id} 1" in lines(log), timeout=10)
    assert f"end {cut.id} 1" not in lines(log)  # stopped with the host
    with Host(HostConfig(apps=runtime_agents.APPS, data_dir=data, port=free_port(), jobs=config)) as host:
        assert finished(host, later.id).result == {"value": "later", "attempt": 1}
        again = host.jobs.get(cut.id)
        cut_short = again.errors[0]["error"]  # its executor stopped with the host, or the jobs actor did
        assert cut_short.startswith(("interrupted", "the executor died")) and again.attempt >= 2
        host.jobs.cancel(cut.id)
    assert (Path(data) / "jobs.db").stat().st_mode & 0o777 == 0o600


def test_cron_schedules_enqueue_each_due_time_once(actor_system: Any, tmp_path: Path) -> None:
    log = tmp_path / "log"
    every_second = CronEntry("tick", "* * * * * *", function(function="job_functions:record",
                                                             args={"log": str(log)}))
    config = JobsConfig(tick=0.1, cron=(every_second,))
    with Host(HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), jobs=config),
              system=actor_system) as host:
        wait_until(lambda: len(host.jobs.list(state="completed")) >= 2, timeout=10)
        jobs = host.jobs.list()
    keys = [j.unique_key for j in jobs]
    assert len(keys) == len(set(keys)) and all(j.meta == {"cron": "tick"} for j in jobs)


def test_the_jobs_actor_answers_a_malformed_request_and_lives_on(shared_jobs_host: Host) -> None:
    pid = shared_jobs_host.root.pids()["jobs"]  # type: ignore[union-attr]
    before = shared_jobs_host.jobs.list()
    address = shared_jobs_host.root.child("jobs").address  # type: ignore[union-attr]
    with pytest.raises(Exception, match="does not handle"):
        call(shared_jobs_host.system, address, "what is this?")
    assert [j.id for j in shared_jobs_host.jobs.list()] == [j.id for j in before]  # it answers on, nothing stored
    assert shared_jobs_host.root.pids()["jobs"] == pid  # the same process: it did not die of it


# -- over HTTP and from the CLI --------------------------------------------------------------------

ANN, OPS = "ann-token-0123456789abcdef", "ops-token-0123456789abcdef"


def test_jobs_over_http_a_user_sees_only_theirs_and_functions_need_the_allow_list(tmp_path: Path) -> None:
    settings = (f'[http.tokens]\n"{ANN}" = "ann"\n"{OPS}" = "*"\n'
                '[jobs]\nqueues = { default = 2 }\nhttp_functions = ["job_functions:record"]\n')
    with serving(tmp_path, apps='echo = "runtime_agents:echo_agent"\n', more_toml=settings) as served:
        ann = httpx.Client(base_url=served["url"], headers={"Authorization": f"Bearer {ANN}"}, timeout=30)
        ops = httpx.Client(base_url=served["url"], headers={"Authorization": f"Bearer {OPS}"}, timeout=30)
        made = ann.post("/jobs", json={"appName": "echo", "message": "hello from a job"})
        assert made.status_code == 201 and made.json()["userId"] == "ann" and made.json()["state"] == "available"
        job_id = made.json()["id"]
        wait_until(lambda: ann.get(f"/jobs/{job_id}").json()["state"] == "completed", timeout=15)
        done = ann.get(f"/jobs/{job_id}").json()
        assert done["result"]["text"] == "echo: hello from a job (turn 1)" and done["idempotencyKey"] == f"{job_id}-1"
        session = ann.get(f"/apps/echo/users/ann/sessions/{job_id}")
        assert session.status_code == 200 and len(session.json()["events"]) == 2
        assert ann.post("/jobs", json={"appName": "echo", "message": "x", "userId": "bob"}).status_code == 403
        log = tmp_path / "log"
        refused = ann.post("/jobs", json={"kind": "function", "function": "os:system", "args": {"command": "id"}})
        assert refused.status_code == 403 and "http_functions" in refused.json()["detail"]
        allowed = ann.post("/jobs", json={"kind": "function", "function": "job_functions:record",
                                          "args": {"log": str(log), "value": 1}, "scheduleIn": 30})
        assert allowed.status_code == 201 and allowed.json()["state"] == "scheduled"
        bad = ann.post("/jobs", json={"appName": "nope", "message": "x"})
        assert bad.status_code == 400 and "no app 'nope'" in bad.json()["detail"]
        assert ann.post("/jobs", json={"appName": "echo", "message": "x", "queue": "vip"}).status_code == 400
        before = len(ann.get("/jobs").json())
        poisoned = [b'{"appName": "echo", "message": "lone \\ud800 surrogate"}',  # unencodable text
                    b'{"kind": "function", "function": "job_functions:record", "args": {"x": '
                    + b'{"y": ' * 60 + b'1' + b'}' * 60 + b'}}',  # deeper than the host's limit
                    b'{"kind": "function", "function": "job_functions:record", "args": [1, 2]}']  # no object
        for body in poisoned:
            refused = ann.post("/jobs", content=body, headers={"content-type": "application/json"})
            assert refused.status_code == 422, refused.text
        assert ann.get("/jobs/..%00odd").status_code == 404 and ann.post("/jobs/..%00odd/retry").status_code == 404
        assert len(ann.get("/jobs").json()) == before  # nothing of them stored
        assert ann.post("/jobs/" + allowed.json()["id"] + "/cancel").json()["state"] == "cancelled"
        assert ann.post("/jobs/" + allowed.json()["id"] + "/retry").json()["state"] == "available"
        wait_until(lambda: log.exists(), timeout=15)
        other = ops.post("/jobs", json={"appName": "echo", "message": "ops job", "userId": "ops"}).json()
        assert ann.get(f"/jobs/{other['id']}").status_code == 404  # not ann's
        assert {j["userId"] for j in ann.get("/jobs").json()} == {"ann"}
        assert {j["userId"] for j in ops.get("/jobs").json()} == {"ann", "ops"}
        assert httpx.get(f"{served['url']}/jobs", timeout=10).status_code == 401

        def cli(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "adk_actors.cli", "--config", str(served["config"]), "jobs",
                                   *args], capture_output=True, text=True, timeout=60, cwd=ROOT,
                                  env={**os.environ, "PYTHONPATH": str(ROOT / "tests")})

        listed = cli("list", "--json")
        assert listed.returncode == 0, listed.stderr
        assert {j["id"] for j in json.loads(listed.stdout)} >= {job_id, other["id"]}
        enqueued = cli("enqueue", "--app", "echo", "--user", "cli", "--message", "from the cli", "--in", "60")
        assert enqueued.returncode == 0, enqueued.stderr
        new_id = enqueued.stdout.split()[0]
        assert "scheduled" in cli("show", new_id).stdout
        assert "cancelled" in cli("cancel", new_id).stdout
        assert "available" in cli("retry", new_id).stdout
        wrong = cli("enqueue", "--app", "nope", "--user", "cli", "--message", "x")
        assert wrong.returncode == 1 and "no app 'nope'" in wrong.stderr and "Traceback" not in wrong.stderr
        stored = len(json.loads(cli("list", "--json").stdout))
        for bad_args, said in (("{not json", "not JSON"), ("[1, 2]", "a JSON object"), ('"x"', "a JSON object")):
            refused_args = cli("enqueue", "--function", "job_functions:record", "--args", bad_args)
            assert refused_args.returncode == 2 and "Traceback" not in refused_args.stderr, refused_args.stderr
            assert f"--args {bad_args!r}" in refused_args.stderr and said in refused_args.stderr
        assert len(json.loads(cli("list", "--json").stdout)) == stored  # nothing of them stored
        good_args = cli("enqueue", "--function", "job_functions:record", "--args", json.dumps({"log": str(log)}))
        assert good_args.returncode == 0, good_args.stderr


# -- telemetry ----------------------------------------------------------------------------------------


def test_each_attempt_emits_telemetry_and_becomes_an_opentelemetry_span(tmp_path: Path) -> None:
    """``[adk, job, start|stop|exception]`` from the jobs actor (a handler attached before
    the host starts is in every actor it forks; this one writes to a file), and the
    OpenTelemetry bridge's ``execute_job`` span for them."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from adk_actors import telemetry
    from adk_actors.otel import attach_opentelemetry, detach_opentelemetry

    seen = tmp_path / "telemetry"
    events = [("adk", "job", phase) for phase in ("start", "stop", "exception")]

    def note(event: tuple[str, ...], measurements: dict[str, Any], metadata: dict[str, Any]) -> None:
        with open(seen, "a") as out:
            out.write(json.dumps({"event": event[2], **measurements, **metadata}) + "\n")

    telemetry.attach("jobs-test", events, note)
    try:
        config = JobsConfig(backoff=Backoff(base=0.05, max_delay=0.2, jitter=0.0), tick=0.2)
        with Host(HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), port=free_port(),
                             jobs=config)) as host:
            good = finished(host, host.jobs.enqueue_function("job_functions:noop").id)
            bad = finished(host, host.jobs.enqueue_function("job_functions:flaky", {"log": str(tmp_path / "l"),
                                                                                    "fail_times": 1}).id)
    finally:
        telemetry.detach("jobs-test")
    records = [json.loads(line) for line in seen.read_text().splitlines()]
    mine = [r for r in records if r["job_id"] == good.id]
    assert [r["event"] for r in mine] == ["start", "stop"] and mine[1]["duration"] >= 0
    assert mine[0]["queue_time"] >= 0 and mine[0]["function"] == "job_functions:noop" and mine[0]["attempt"] == 1
    flaky = [(r["event"], r["attempt"], r.get("state")) for r in records if r["job_id"] == bad.id]
    assert flaky == [("start", 1, None), ("exception", 1, "retryable"), ("start", 2, None), ("stop", 2, None)]

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    attach_opentelemetry(provider.get_tracer("test"))
    try:
        for record in [r for r in records if r["job_id"] == bad.id]:
            phase = record.pop("event")
            telemetry.execute(("adk", "job", phase), {}, record)
    finally:
        detach_opentelemetry()
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["execute_job job_functions:flaky"] * 2
    assert spans[0].attributes["adk.job.attempt"] == 1 and not spans[0].status.is_ok
    assert spans[1].attributes["adk.job.id"] == bad.id and spans[1].status.is_ok


def test_other_actors_enqueue_through_the_message_api(shared_jobs_host: Host, user: str, tmp_path: Path) -> None:
    """The ``jobs`` actor, found in the host's registry, answers the request messages of
    ``adk_actors.jobs`` (what another actor sends): a job, or ``invalid_request``."""
    from supervision import CallError
    from supervision.lowlevel import whereis

    registry = shared_jobs_host.root.child("registry").address  # type: ignore[union-attr]
    with shared_jobs_host.system.private() as endpoint:
        jobs_actor = whereis(endpoint, registry, "jobs")
        job = call(endpoint, jobs_actor, EnqueueJob(function(function="job_functions:record",
                                                             args={"log": str(tmp_path / "log"), "value": "m"}, user_id=user)))
        assert job.state == "available" and job.user_id == user
        with pytest.raises(CallError) as refused:
            call(endpoint, jobs_actor, EnqueueJob(function(function="no.such:thing")))
        assert refused.value.code == "invalid_request" and "cannot import" in refused.value.detail
        assert [j.id for j in call(endpoint, jobs_actor, ListJobs(user_id=user))] == [job.id]
    assert finished(shared_jobs_host, job.id).result == {"value": "m", "attempt": 1}


def test_a_queue_may_have_a_backoff_of_its_own(actor_system: Any, tmp_path: Path) -> None:
    config = JobsConfig(queues={"default": 1, "patient": 1}, backoff=Backoff(base=0.05, jitter=0.0),
                        queue_backoff={"patient": Backoff(base=600.0, jitter=0.0)})
    with Host(HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), jobs=config),
              system=actor_system) as host:
        quick = host.jobs.enqueue_function("job_functions:flaky", {"log": str(tmp_path / "a"), "fail_times": 1})
        slow = host.jobs.enqueue_function("job_functions:flaky", {"log": str(tmp_path / "b"), "fail_times": 1},
                                          queue="patient")
        assert finished(host, quick.id).attempt == 2
        wait_until(lambda: host.jobs.get(slow.id).state == "retryable", timeout=10)
        waiting = host.jobs.get(slow.id)
        assert 590 < waiting.scheduled_at - waiting.errors[0]["at"] < 610


def test_the_jobs_section_of_the_config(tmp_path: Path) -> None:
    from adk_actors.config import ConfigError, load_settings

    good = tmp_path / "good.toml"
    good.write_text('[jobs]\nqueues = { default = 2, nightly = 1 }\nhttp_functions = ["job_functions:noop"]\n'
                    '[jobs.queue_backoff.nightly]\nbase = 60\n'
                    '[[jobs.cron]]\nname = "brief"\nschedule = "0 7 * * 1-5"\ntimezone = "Europe/Oslo"\n'
                    'app = "weather_bot"\nmessage = "Brief me."\nuser = "ops"\n')
    config = load_settings(good).jobs.jobs_config()
    assert config is not None and config.queues == {"default": 2, "nightly": 1}
    assert config.backoff_of("nightly").base == 60 and config.backoff_of("default").base == 15
    [brief] = config.cron
    assert (brief.name, brief.timezone, brief.spec.kind, brief.spec.user_id) == ("brief", "Europe/Oslo", "agent", "ops")
    for bad, said in (('[[jobs.cron]]\nname = "x"\nschedule = "61 * * * *"\napp = "a"\nmessage = "m"\n', "cron"),
                      ('[[jobs.cron]]\nname = "x"\nschedule = "0 7 * * *"\ntimezone = "Mars/Base"\napp = "a"\n',
                       "time zone"),
                      ('[jobs]\nqueues = { default = 0 }\n', "at least 1"),
                      ('[[jobs.cron]]\nname = "x"\nschedule = "0 7 * * *"\n', "an app and a message, or a function")):
        path = tmp_path / "bad.toml"
        path.write_text(bad)
        with pytest.raises(ConfigError, match=said):
            load_settings(path)
    off = tmp_path / "off.toml"
    off.write_text("[jobs]\nenabled = false\n")
    assert load_settings(off).jobs.jobs_config() is None


CRON = '[[jobs.cron]]\nname = "{name}"\nschedule = "{schedule}"\n'


@pytest.mark.parametrize(("entry", "said"), [
    (CRON.format(name="x", schedule="0 0 31 2 *") + 'app = "echo"\nmessage = "m"\n',
     "cron 'x': schedule: the cron expression '0 0 31 2 \\*' names no time to come"),
    (CRON.format(name="x", schedule="0 7 * * *") + 'app = "echo"\n', "cron 'x': message: an agent job needs a message"),
    (CRON.format(name="x", schedule="0 7 * * *") + 'app = "echo"\nmessage = "m"\nqueue = "vip"\n',
     "cron 'x': queue: no queue 'vip'"),
    (CRON.format(name="x", schedule="0 7 * * *") + 'app = "echo"\nmessage = "m"\n'
     + CRON.format(name="x", schedule="0 8 * * *") + 'app = "echo"\nmessage = "n"\n', "two schedules share"),
])
def test_a_cron_entry_the_file_alone_shows_wrong_is_refused_when_it_is_read(
        tmp_path: Path, entry: str, said: str) -> None:
    from adk_actors.config import ConfigError, load_settings

    path = tmp_path / "bad.toml"
    path.write_text('[apps]\necho = "runtime_agents:echo_agent"\n' + entry)
    with pytest.raises(ConfigError, match=f"^{path}: jobs.*{said}"):
        load_settings(path)


@pytest.mark.parametrize(("entry", "said"), [
    ('app = "nope"\nmessage = "m"\n', "jobs.cron.0.app: cron 'brief': no app 'nope' on this host (apps: echo)"),
    ('function = "no_such_module:fn"\n', "jobs.cron.0.function: cron 'brief': cannot import the job's function "
                                         "'no_such_module:fn'"),
    ('function = "job_functions:missing"\n', "jobs.cron.0.function: cron 'brief': cannot import"),
    ('function = "job_functions"\n', "jobs.cron.0.function: cron 'brief': a job's function is named "
                                     "'package.module:function'"),
])
def test_serve_refuses_a_cron_job_that_could_never_run_at_start(tmp_path: Path, entry: str, said: str) -> None:
    """A ``[[jobs.cron]]`` entry naming an app the host does not serve, or a function
    it cannot import, stops ``serve`` at start: exit code 2, the file, the entry and the
    key, no traceback, and nothing started (no jobs store made)."""
    port = free_port()
    config = tmp_path / "host.toml"
    config.write_text(f'[host]\nport = {port}\ndata_dir = "{tmp_path / "data"}"\n[http]\nenabled = false\n'
                      '[apps]\necho = "runtime_agents:echo_agent"\n'
                      + CRON.format(name="brief", schedule="0 7 * * *") + entry)
    with process_marker(tmp_path) as (marker, fd):
        serve = subprocess.Popen([sys.executable, "-m", "adk_actors.cli", "serve", "--config", str(config)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, pass_fds=(fd,),
                                 env={**os.environ, "PYTHONPATH": str(ROOT / "tests")})
    try:
        out, err = serve.communicate(timeout=60)
    finally:  # a host that started after all is stopped, with every process it made
        if serve.poll() is None:
            serve.kill()
            serve.communicate()
        kill_marked_processes(marker, grace=5)
    assert serve.returncode == 2, err
    assert f"error: {config}: {said}" in err and "Traceback" not in err
    assert "listening" not in out and not (tmp_path / "data" / "jobs.db").exists()


def test_a_python_host_config_with_a_cron_job_that_could_never_run_fails_at_start(tmp_path: Path) -> None:
    """From Python: a cron entry with a bad expression or time zone fails where it is
    made; one whose app is not served or whose function cannot be imported fails the
    host's start, before anything starts (no actor system, no data folder); each a
    ConfigError naming the entry and the key."""
    from adk_actors.config import ConfigError

    noop = function(function="job_functions:noop", user_id="ops")
    with pytest.raises(ConfigError, match=re.escape("cron 'x': expression: not a cron expression: '61 * * * *'")):
        CronEntry("x", "61 * * * *", noop)
    with pytest.raises(ConfigError, match=r"cron 'x': expression: .* names no time to come"):
        CronEntry("x", "0 0 31 2 *", noop)
    with pytest.raises(ConfigError, match="cron 'x': timezone: unknown time zone 'Mars/Base'"):
        CronEntry("x", "0 9 * * *", noop, "Mars/Base")
    agent = JobSpec(kind="agent", app_name="nope", message="hi", user_id="ops")
    for entry, said in ((CronEntry("brief", "0 7 * * *", agent), "cron 'brief': app: no app 'nope' on this host"),
                        (CronEntry("nightly", "0 2 * * *", function(function="no_such_module:fn")),
                         "cron 'nightly': function: cannot import the job's function 'no_such_module:fn'"),
                        (CronEntry("vip", "0 2 * * *", function(queue="vip")), "cron 'vip': queue: no queue 'vip'")):
        data = tmp_path / "data"
        host = Host(HostConfig(apps=runtime_agents.APPS, data_dir=str(data), port=free_port(),
                               jobs=JobsConfig(cron=(entry,))))
        with pytest.raises(ConfigError, match=said):
            host.start()
        assert host.system is None and not data.exists()


def test_the_client_rides_out_a_restart_of_the_jobs_actor_and_says_when_there_is_none(
        jobs_host: Host, tmp_path: Path) -> None:
    """A call made while the jobs actor is being restarted waits for the new one (no
    supervision exception reaches the caller); a host without jobs says so at once."""
    actor = jobs_host.root.pids()["jobs"]  # type: ignore[union-attr]
    assert actor is not None
    jobs_host.jobs.list()  # the client knows the old address
    os.kill(actor, signal.SIGKILL)
    job = jobs_host.jobs.enqueue_function("job_functions:noop")  # sent to the old address first
    assert finished(jobs_host, job.id).state == "completed"
    assert jobs_host.root.pids()["jobs"] != actor  # type: ignore[union-attr]


def test_a_host_without_jobs_refuses_at_once(actor_system: Any, tmp_path: Path) -> None:
    from adk_actors import HostError

    with Host(HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), jobs=None),
              system=actor_system) as host:
        began = time.monotonic()
        with pytest.raises(HostError, match="runs no jobs actor"):
            host.jobs.list()
        assert time.monotonic() - began < 2


def test_the_root_restarts_jobs_killed_while_the_restart_of_the_child_after_it_keeps_failing(
        actor_system: Any, tmp_path: Path) -> None:
    """Issue 53: the root's last child (where ``http`` sits: a stand-in that fails to
    start while a flag file exists, retried at once as ``http`` is) keeps failing its
    restart; meanwhile the jobs actor is killed. The jobs actor runs again, in a new
    process, and serves jobs while the other still fails; that one runs once it can."""
    from supervision import ChildSpec
    from supervision.testing import Probe, probe_args, read_events

    flag, events = tmp_path / "http-fails", tmp_path / "http-events"
    stand_in = ChildSpec(id="http", start=Probe, args=probe_args("http", events, fail_flag=flag, init_delay=0.1))
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), root_intensity=1000,
                        jobs=JobsConfig(tick=0.2), clients=(stand_in,))
    with Host(config, system=actor_system) as host:
        root = host.root
        assert root is not None
        before = root.pids()

        def failed_starts() -> int:
            return sum(1 for e in read_events(events) if e[0] == "init_failed")

        flag.write_text("on")
        os.kill(before["http"], signal.SIGKILL)  # type: ignore[arg-type]
        wait_until(lambda: failed_starts() >= 2, timeout=15, message="the stand-in's restart fails, retried")
        os.kill(before["jobs"], signal.SIGKILL)  # type: ignore[arg-type]
        wait_until(lambda: root.child("jobs").status == "running" and root.child("jobs").pid != before["jobs"],
                   timeout=15, message="jobs restarted while the stand-in's restart still fails")
        assert root.child("http").status == "restarting"
        job = host.jobs.enqueue_function("job_functions:noop")
        assert finished(host, job.id).state == "completed"
        flag.unlink()
        wait_until(lambda: root.child("http").status == "running", timeout=15, message="the stand-in runs again")
        assert root.child("jobs").status == "running" and host.jobs.get(job.id).state == "completed"


def test_a_cron_job_whose_app_went_away_is_skipped_and_the_jobs_actor_lives_on(
        actor_system: Any, tmp_path: Path) -> None:
    """A cron entry naming a YAML app of the agents folder passes the start's check;
    once that app's folder is gone, each tick skips the entry (an error in the log,
    once), stores none of its jobs, and goes on: the other entries still run, in the
    same jobs actor."""
    import shutil

    agents, log, ticks = tmp_path / "agents", tmp_path / "logs" / "actors.log", tmp_path / "ticks"  # the system's log
    (agents / "gone").mkdir(parents=True)
    (agents / "gone" / "root_agent.yaml").write_text("name: gone\ninstruction: say hi\n")
    gone = CronEntry("gone", "* * * * * *", JobSpec(kind="agent", app_name="gone", message="hi", user_id="ops",
                                                    max_attempts=1))
    tick = CronEntry("tick", "* * * * * *", function(function="job_functions:record", args={"log": str(ticks)}))
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), agents_dir=str(agents),
                        jobs=JobsConfig(tick=0.1, cron=(gone, tick)))
    with Host(config, system=actor_system) as host:
        def of(name: str) -> list[Any]:
            return [j for j in host.jobs.list(limit=1000) if j.meta == {"cron": name}]

        wait_until(lambda: of("gone"), timeout=10, message="the YAML app's cron job is enqueued")
        actor = host.root.pids()["jobs"]  # type: ignore[union-attr]
        shutil.rmtree(agents / "gone")
        wait_until(lambda: "cron 'gone' is skipped" in log.read_text(), timeout=10)
        stored = len(of("gone"))
        ran = len(lines(ticks))
        wait_until(lambda: len(lines(ticks)) >= ran + 4, timeout=10, message="the other entry runs on")
        assert len(of("gone")) == stored  # none of the gone app's jobs stored since
        assert host.root.pids()["jobs"] == actor  # type: ignore[union-attr]
        assert log.read_text().count("cron 'gone' is skipped") == 1
