"""Background jobs (Oban's semantics): agent runs and functions, enqueued now, later
or on a cron schedule, retried with backoff, kept in their store
(``adk_actors.store.JobStore``) and run by the host's ``jobs`` actor
(:mod:`adk_actors.runtime`); its message API is here too (``EnqueueJob`` ...). See
``docs/jobs.md``."""

from ._messages import CancelJob, DiscardJob, EnqueueJob, EnqueueJobs, GetJob, ListJobs, RetryJob
from ._model import (
    FINISHED,
    JOB_STATES,
    Backoff,
    CronEntry,
    Discard,
    Job,
    JobInfo,
    JobsConfig,
    JobSpec,
    Snooze,
    backoff_delay,
    cron_problem,
    cron_timing_problem,
    next_cron_time,
    resolve_function,
    validate_spec,
)

__all__ = [
    "FINISHED",
    "JOB_STATES",
    "Backoff",
    "CancelJob",
    "CronEntry",
    "Discard",
    "DiscardJob",
    "EnqueueJob",
    "EnqueueJobs",
    "GetJob",
    "Job",
    "JobInfo",
    "JobSpec",
    "JobsConfig",
    "ListJobs",
    "RetryJob",
    "Snooze",
    "backoff_delay",
    "cron_problem",
    "cron_timing_problem",
    "next_cron_time",
    "resolve_function",
    "validate_spec",
]
