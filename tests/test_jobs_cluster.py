"""Background jobs on a queue several hosts share: the PostgreSQL store (a real server
the tests own), Oban's multi-node semantics.

Two hosts claiming at once never claim one job twice; a host's restart fails only its
own attempts; the attempts of a host that died are given up once their lease ran out
and retried by another; one unique key (a cron occurrence) enqueued by two hosts at
once is stored once; and end to end, a host killed with kill -9 mid-job leaves every
job to be completed by the survivor, each attempt counted outside the hosts.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import runtime_agents
from conftest import serving
from test_jobs import START, function, lines

from adk_actors.jobs import Backoff, CronEntry, JobsConfig
from adk_actors.runtime import Host, HostConfig
from adk_actors.store import JobStore
from supervision.lowlevel import free_port
from supervision.testing import ManualClock, kill_marked_processes, wait_until

EXACT = Backoff(base=10.0, max_delay=100.0, jitter=0.0)


def two_nodes(postgres: Any, clock: ManualClock) -> tuple[JobStore, JobStore]:
    url = postgres.new_database()
    return (JobStore(url, clock, random.Random(1), node="host-a"),
            JobStore(url, clock, random.Random(2), node="host-b"))


def test_two_hosts_claiming_at_once_never_claim_one_job_twice(postgres: Any) -> None:
    a, b = two_nodes(postgres, ManualClock(START))
    try:
        a.insert_many([function(args={"n": n}) for n in range(300)], backoff_of=lambda _: EXACT)
        claimed: dict[str, list[str]] = {"host-a": [], "host-b": []}
        gate = threading.Barrier(2)

        def drain(store: JobStore) -> None:
            gate.wait()
            while jobs := store.claim("default", 7):
                for job in jobs:
                    claimed[store.node].append(job.id)
                    store.complete(job.id, job.attempt, "done")

        threads = [threading.Thread(target=drain, args=(store,)) for store in (a, b)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        every = claimed["host-a"] + claimed["host-b"]
        assert len(every) == 300 and len(set(every)) == 300  # each job claimed once, by one host
        assert claimed["host-a"] and claimed["host-b"]  # both took a share
        assert {job.node for job in a.list(limit=1000)} == {"host-a", "host-b"}
    finally:
        a.close()
        b.close()


def test_a_restart_fails_only_its_own_attempts_and_a_dead_hosts_are_retried_after_their_lease(
        postgres: Any) -> None:
    clock = ManualClock(START)
    a, b = two_nodes(postgres, clock)
    try:
        first = a.insert(function(timeout=30.0, backoff=EXACT), default_backoff=EXACT)[0]
        second = a.insert(function(timeout=30.0, backoff=EXACT), default_backoff=EXACT)[0]
        [on_a] = a.claim("default", 1)
        [on_b] = b.claim("default", 1)
        assert {on_a.id, on_b.id} == {first.id, second.id} and on_a.node == "host-a"
        assert [job.id for job in b.executing()] == [on_b.id]  # b restarted: only its own attempt
        assert b.abandoned(grace=5) == []  # a's attempt is within its lease: a may be alive
        clock.advance(30 + 4)
        assert b.abandoned(grace=5) == []
        clock.advance(2)  # a's lease ran out over 5 s ago: a died during the attempt
        [given_up] = b.abandoned(grace=5)
        assert given_up.id == on_a.id and given_up.node == "host-a"
        assert b.fail(given_up.id, given_up.attempt, "interrupted: its host (host-a) stopped")
        assert not a.complete(on_a.id, on_a.attempt, "late")  # a's late answer changes nothing
        clock.advance(10)  # its backoff
        [again] = b.claim("default", 1)
        assert (again.id, again.attempt, again.node) == (on_a.id, 2, "host-b")
    finally:
        a.close()
        b.close()


def test_one_unique_key_enqueued_by_two_hosts_at_once_is_stored_once(postgres: Any) -> None:
    a, b = two_nodes(postgres, ManualClock(START))
    try:
        results: list[Any] = []
        gate = threading.Barrier(2)

        def enqueue(store: JobStore) -> None:
            gate.wait()
            for n in range(20):
                results.append(store.insert(function(unique_key=f"cron:tick:{n}"), default_backoff=EXACT))

        threads = [threading.Thread(target=enqueue, args=(store,)) for store in (a, b)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        stored = a.list(limit=1000)
        assert len(stored) == 20 and len({job.unique_key for job in stored}) == 20
        assert sum(1 for _, inserted in results if inserted) == 20
    finally:
        a.close()
        b.close()


def test_a_host_killed_mid_job_leaves_every_job_to_the_survivor(actor_system: Any, tmp_path: Path,
                                                                 postgres: Any) -> None:
    url = postgres.new_database()
    log = tmp_path / "log"
    store_toml = f'[store]\nurl = "{url}"\n[jobs]\ntick = 0.2\nbackoff_base = 0.1\nbackoff_max = 0.5\n'
    (tmp_path / "a").mkdir()
    with serving(tmp_path / "a", more_toml=store_toml, apps='echo = "runtime_agents:echo_agent"\n') as first:
        config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "b"), store_url=url,
                            port=free_port(), jobs=JobsConfig(tick=0.2, backoff=Backoff(0.1, 0.5, 0.0)))
        with Host(config, system=actor_system) as second:
            # 3 s of work: the first host is still in the middle of its attempt when it is
            # killed, however slowly the look at the jobs before the kill goes on a loaded machine
            jobs = [second.jobs.enqueue_function("job_functions:slow", {"log": str(log), "seconds": 3.0},
                                                 timeout=6.0) for _ in range(10)]
            a_name = f"127.0.0.1:{first['port']}"
            wait_until(lambda: any(j.node == a_name and j.state == "executing" for j in second.jobs.list()),
                       timeout=20, message="the first host took a job")
            kill_marked_processes(first["marker"], grace=0)  # kill -9 of the whole first host
            for job in jobs:
                wait_until(lambda job=job: second.jobs.get(job.id).state == "completed", timeout=40,
                           message=f"job {job.id} completed")
            done = [second.jobs.get(job.id) for job in jobs]
    ended = Counter(line.split()[1] for line in lines(log) if line.startswith("end"))
    assert all(ended[job.id] >= 1 for job in jobs)  # every job's work was done (at least once)
    cut = [job for job in done if any("stopped during this attempt" in e["error"] for e in job.errors)]
    assert cut, "the killed host's attempts were given up and retried"
    assert all(job.node != a_name for job in cut)  # retried and completed by the survivor


def test_two_hosts_with_one_cron_schedule_enqueue_each_occurrence_once(actor_system: Any, tmp_path: Path,
                                                                        postgres: Any) -> None:
    url = postgres.new_database()
    log = tmp_path / "log"
    every_second = CronEntry("tick", "* * * * * *", function(function="job_functions:record",
                                                             args={"log": str(log)}))
    cron_toml = (f'[store]\nurl = "{url}"\n[jobs]\ntick = 0.1\n[[jobs.cron]]\nname = "tick"\n'
                 f'schedule = "* * * * * *"\nfunction = "job_functions:record"\nargs = {{log = "{log}"}}\n'
                 'user = "ann"\n')
    (tmp_path / "a").mkdir()
    with serving(tmp_path / "a", more_toml=cron_toml, apps='echo = "runtime_agents:echo_agent"\n'):
        config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "b"), store_url=url,
                            port=free_port(), jobs=JobsConfig(tick=0.1, cron=(every_second,)))
        with Host(config, system=actor_system) as second:
            wait_until(lambda: len(second.jobs.list(state="completed")) >= 4, timeout=20)
            jobs = second.jobs.list()
    keys = [job.unique_key for job in jobs]
    assert len(keys) == len(set(keys)), Counter(keys).most_common(3)  # each occurrence once, for both hosts
