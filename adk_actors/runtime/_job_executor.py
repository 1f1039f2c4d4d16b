"""A jobs actor's executors: the processes that call function jobs.

The jobs actor (``_jobs``) forks an executor with a direct line to itself
(``_link.fork_linked``) and sends it ``Init`` with :class:`ExecutorArgs`. In order,
the executor then: closes the queue's ends of the lines it inherited; adopts its own
end; starts one thread that calls the jobs it is given (:class:`Execute`), one at a
time. For each job the thread resolves its function, passes it ``job``
(:class:`~adk_actors.jobs.JobInfo`) if it takes one, calls it (an awaitable result is
run to its end on an event loop of its own) and rings a pipe; the executor's main
thread then sends what came of it (:class:`Finished`: completed with its result made
JSON-safe, snoozed, discarded, or failed with the exception's type and text) on the
line, or through Thespian when the line does not take it. An executor never writes
the store: the jobs actor is its one writer. Killing the process is how an attempt is
stopped (a thread cannot be).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import queue
import threading
from dataclasses import dataclass
from typing import Any

from supervision import GenServer
from supervision.protocol import Cast

from ..jobs import Discard, Job, JobInfo, Snooze, resolve_function
from ._link import RunLink

__all__ = ["Execute", "ExecutorArgs", "Finished", "JobExecutor"]


@dataclass(frozen=True)
class Execute:
    job: Job


@dataclass(frozen=True)
class Finished:
    """What came of an attempt: ``outcome`` "completed" (``value``: its result),
    "failed" (``value``: the error), "discarded" (the same) or "snoozed" (``value``: s)."""

    job_id: str
    attempt: int
    outcome: str
    value: Any = None


@dataclass(frozen=True)
class ExecutorArgs:
    link_fd: int  # the executor's end of its line to the queue
    inherited_fds: tuple[int, ...]  # the queue's ends, closed in the executor


class JobExecutor(GenServer):
    """Runs function jobs one at a time on a thread of its own (so that it answers its
    parent while a job runs), and tells its parent what came of each (``Finished``) on
    their direct line (through Thespian if the line does not take it). The thread
    rings a pipe when a job is over. The parent alone writes the store: one writer, no
    lock to wait for (an outcome lost with the parent is an attempt cut short, attempted
    again)."""

    def init(self, args: ExecutorArgs) -> None:
        for fd in args.inherited_fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.link = RunLink.adopt(args.link_fd)
        self.bell_read, self.bell_write = os.pipe()
        self.watch_fds([self.bell_read, self.link.fd])
        self.done: list[Finished] = []
        self.jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        threading.Thread(target=self._work, name="job-executor", daemon=True).start()

    def handle_cast(self, request: Any) -> None:
        if isinstance(request, Execute):
            self.jobs.put(request.job)
        else:
            super().handle_cast(request)

    def _work(self) -> None:
        while True:
            self.done.append(_perform(self.jobs.get()))
            os.write(self.bell_write, b"!")

    def handle_watch(self, ready: list[int]) -> None:
        if self.link.fd in ready:
            for message in self.link.receive():
                self.handle_cast(message)
        if self.bell_read in ready:
            os.read(self.bell_read, 4096)
            while self.done:
                finished = self.done.pop(0)
                if not self.link.send(finished):
                    self.send(self.supervisor, Cast(finished))


def _perform(job: Job) -> Finished:
    """Call the job's function: what came of it."""
    try:
        function = resolve_function(job.payload["function"])
        args = dict(job.payload.get("args") or {})
        if "job" in inspect.signature(function).parameters:
            args["job"] = JobInfo(job.id, job.attempt, job.max_attempts, job.idempotency_key, job.queue, job.user_id)
        result = function(**args)
        if inspect.isawaitable(result):
            result = asyncio.run(_awaited(result))
        return Finished(job.id, job.attempt, "completed", _json_safe(result))
    except Snooze as snooze:
        return Finished(job.id, job.attempt, "snoozed", snooze.seconds)
    except Discard as discard:
        return Finished(job.id, job.attempt, "discarded", f"discarded: {discard}")
    except BaseException as exc:  # any failure of the job's code is the attempt's
        return Finished(job.id, job.attempt, "failed", f"{type(exc).__name__}: {exc}")


def _json_safe(value: Any) -> Any:
    """``value`` as JSON can hold it (what is not JSON, as its text)."""
    return json.loads(json.dumps(value, default=str))


async def _awaited(value: Any) -> Any:
    return await value
