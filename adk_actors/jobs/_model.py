"""What a background job is, and the rules of its schedule (Oban's meaning).

A job is an agent run (``kind="agent"``: an app, a user, a message, an existing
session or a new one, a state delta) or a function named by its import path
(``kind="function"``: ``"package.module:function"``, called with the job's JSON
``args`` as keyword arguments). It lives in a named queue, with a priority (0 runs
first), ``max_attempts`` and a state, as Oban's:

``scheduled`` (due later) -> ``available`` -> ``executing`` -> ``completed``; a failed
attempt -> ``retryable`` (due again after :func:`backoff_delay`) or, at its last
attempt, ``discarded``; ``cancelled`` by a caller. Each attempt has its number and
an idempotency key (``<job id>-<attempt>``): the contract is at-least-once (an
attempt cut short by a crash is attempted again), never two attempts at once.

:func:`validate_spec` checks a job before anything is stored (a typed
:class:`InvalidRequestError` naming the problem); :func:`next_cron_time` reads cron
schedules with ``croniter``, in a time zone (``zoneinfo``), so a DST change moves the
wall-clock hour as the zone does.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib
import json
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterError, croniter

from .._exceptions import ConfigError, InvalidRequestError
from .._names import name_problem

__all__ = [
    "FINISHED",
    "JOB_STATES",
    "Backoff",
    "CronEntry",
    "Discard",
    "Job",
    "JobInfo",
    "JobSpec",
    "JobsConfig",
    "Snooze",
    "backoff_delay",
    "cron_problem",
    "cron_timing_problem",
    "next_cron_time",
    "resolve_function",
    "validate_spec",
]

JobState = Literal["scheduled", "available", "executing", "retryable", "completed", "discarded", "cancelled"]
JOB_STATES: tuple[str, ...] = ("scheduled", "available", "executing", "retryable", "completed", "discarded",
                               "cancelled")
#: states a job leaves only by a caller's retry
FINISHED = frozenset({"completed", "discarded", "cancelled"})
#: a job's args, as JSON, may not be larger (a typed error at enqueue)
MAX_ARGS_BYTES = 64 * 1024


@dataclass(frozen=True)
class Backoff:
    """How long a failed attempt waits before the next: ``base * 2 ** (attempt - 1)``
    seconds, at most ``max_delay``, each moved by up to ``jitter`` of itself either
    way (so that jobs failing together do not all come back together)."""

    base: float = 15.0
    max_delay: float = 3600.0
    jitter: float = 0.1


def backoff_delay(attempt: int, backoff: Backoff, rng: random.Random | None = None) -> float:
    """Seconds before attempt ``attempt + 1`` (see :class:`Backoff`); ``rng`` for tests."""
    delay = min(backoff.max_delay, backoff.base * 2.0 ** max(attempt - 1, 0))
    spread = delay * backoff.jitter
    offset = rng.uniform(-spread, spread) if rng is not None else random.uniform(-spread, spread)
    return max(0.0, delay + offset)


@dataclass(frozen=True)
class JobSpec:
    """What a caller enqueues (see the module). ``scheduled_at`` (epoch seconds) or
    ``schedule_in`` (seconds from now) delay it; ``unique_key`` with ``unique_period``
    (seconds) makes an enqueue that finds a job of that key inserted within the period
    (and not discarded or cancelled) return that job instead; ``timeout`` bounds one
    attempt (its lease)."""

    kind: Literal["agent", "function"]
    user_id: str
    queue: str = "default"
    app_name: str = ""
    message: str = ""
    session_id: str | None = None
    state_delta: dict[str, Any] | None = None
    function: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    priority: int = 0
    max_attempts: int = 20
    scheduled_at: float | None = None
    schedule_in: float | None = None
    unique_key: str | None = None
    unique_period: float = 60.0
    timeout: float = 300.0
    backoff: Backoff | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Job:
    """A stored job (see the module). ``errors``: one entry per failed attempt
    (``attempt``, ``at``, ``error``); ``result``: what a completed attempt returned."""

    id: str
    queue: str
    kind: str
    user_id: str
    state: str
    attempt: int
    max_attempts: int
    priority: int
    scheduled_at: float
    inserted_at: float
    payload: dict[str, Any]
    timeout: float
    attempted_at: float | None = None
    finished_at: float | None = None
    lease_until: float | None = None
    errors: tuple[dict[str, Any], ...] = ()
    result: Any = None
    unique_key: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    node: str | None = None  # the host that claimed its current (or last) attempt

    @property
    def idempotency_key(self) -> str:
        """The same for every delivery of one attempt, different for each attempt."""
        return f"{self.id}-{self.attempt}"

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["errors"] = list(self.errors)
        data["idempotency_key"] = self.idempotency_key
        return data


@dataclass(frozen=True)
class JobInfo:
    """What a job's function may ask of its job (a parameter named ``job``)."""

    id: str
    attempt: int
    max_attempts: int
    idempotency_key: str
    queue: str
    user_id: str


class Snooze(Exception):
    """Raised by a job's function: try again in ``seconds``, without counting this
    attempt as a failure (its ``max_attempts`` grows by one)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"snoozed for {seconds} s")
        self.seconds = float(seconds)


class Discard(Exception):
    """Raised by a job's function: do not try again; the job ends ``discarded``."""


@dataclass(frozen=True)
class CronEntry:
    """A job enqueued on a cron schedule (``expression``: five fields, or croniter's
    ``@hourly`` ...), in time zone ``timezone``; ``name`` keeps two schedules of one
    job apart, and makes each due time enqueue it once (also across restarts)."""

    name: str
    expression: str
    spec: JobSpec
    timezone: str = "UTC"

    def __post_init__(self) -> None:
        """Check what the entry says by itself, in order: its name, its time zone, its
        expression (one that names a time: ``0 0 31 2 *`` never comes), its job's
        kind; :class:`ConfigError` naming the entry and the key. What it needs the
        host for (its app, its function, its queue) :meth:`JobsConfig.check` checks."""
        problem = name_problem(self.name, "cron name")
        if problem is not None:
            raise ConfigError(f"cron {self.name!r}: name: {problem}")
        if not isinstance(self.timezone, str):
            raise ConfigError(f"cron {self.name!r}: timezone: a zone name such as 'Europe/Oslo', "
                              f"not {self.timezone!r}")
        if not isinstance(self.expression, str):
            raise ConfigError(f"cron {self.name!r}: expression: a cron expression, not {self.expression!r}")
        problem = cron_timing_problem(self.expression, self.timezone)
        if problem is not None:
            raise ConfigError(f"cron {self.name!r}: {problem}")
        if not isinstance(self.spec, JobSpec) or self.spec.kind not in ("agent", "function"):
            raise ConfigError(f"cron {self.name!r}: spec: a JobSpec of kind 'agent' or 'function', "
                              f"not {self.spec!r}")


@dataclass(frozen=True)
class JobsConfig:
    """The ``[jobs]`` section: queues and their concurrency, the backoff of failed
    attempts (a job's own, else its queue's in ``queue_backoff``, else ``backoff``), how
    often the queue ticks, how long finished jobs are kept, and cron schedules."""

    queues: dict[str, int] = field(default_factory=lambda: {"default": 4})
    backoff: Backoff = field(default_factory=Backoff)
    queue_backoff: dict[str, Backoff] = field(default_factory=dict)
    tick: float = 1.0
    prune_after: float = 7 * 24 * 3600.0
    cron: tuple[CronEntry, ...] = ()

    def backoff_of(self, queue: str) -> Backoff:
        """The backoff of a job of ``queue`` that has none of its own."""
        return self.queue_backoff.get(queue, self.backoff)

    def check(self, apps: Iterable[str]) -> None:
        """Check each cron entry against a host serving ``apps``, in order (each entry's
        own fields were checked when it was made): no two share a name, its queue is
        one of :attr:`queues`, and its job can run there (:func:`cron_problem`).
        :class:`ConfigError` for the first entry that fails, naming it and the key."""
        names: set[str] = set()
        known = set(apps)
        for entry in self.cron:
            if entry.name in names:
                raise ConfigError(f"cron {entry.name!r}: name: two schedules share it (each needs its own)")
            names.add(entry.name)
            problem = cron_problem(entry, apps=known, queues=set(self.queues))
            if problem is not None:
                raise ConfigError(f"cron {entry.name!r}: {problem}")


def next_cron_time(expression: str, after: float, timezone: str = "UTC") -> float:
    """The first time after ``after`` (epoch seconds) that ``expression`` names, read
    on the wall clock of ``timezone``. :class:`InvalidRequestError` for a bad
    expression or an unknown zone."""
    zone = _zone(timezone)
    if not croniter.is_valid(expression):
        raise InvalidRequestError(f"not a cron expression: {expression!r}")
    start = dt.datetime.fromtimestamp(after, zone)
    try:
        return float(croniter(expression, start).get_next(float))
    except CroniterError as exc:  # valid fields that name no date (``0 0 31 2 *``)
        raise InvalidRequestError(f"the cron expression {expression!r} names no time to come ({exc})") from None


def cron_timing_problem(expression: str, timezone: str, expression_key: str = "expression") -> str | None:
    """What is wrong with a cron schedule, as ``"<key>: <what>"``, or None: in order,
    its time zone (a zone name), then its expression (one that names a time that
    comes: ``0 0 31 2 *`` never does)."""
    try:
        _zone(timezone)
    except InvalidRequestError as exc:
        return f"timezone: {exc}"
    try:
        next_cron_time(expression, time.time(), timezone)
    except InvalidRequestError as exc:
        return f"{expression_key}: {exc}"
    return None


def cron_problem(entry: CronEntry, *, apps: set[str] | None, queues: set[str]) -> str | None:
    """What keeps ``entry``'s job from ever running on a host serving ``apps`` (None:
    not checked) with ``queues``, as ``"<key>: <what>"`` (the keys of a ``[[jobs.cron]]``
    entry), or None. In order: its queue, its user, its attempts and timeout, then an
    agent job's app and message, or a function job's function (importable here), then
    its args (JSON, within ``MAX_ARGS_BYTES``)."""
    spec = entry.spec
    if spec.queue not in queues:
        return f"queue: no queue {spec.queue!r} (queues: {', '.join(sorted(queues))})"
    for value, key, what in ((spec.user_id, "user", "user id"), (spec.session_id, "session", "session id")):
        problem = name_problem(value, what) if value is not None else None
        if problem is not None:
            return f"{key}: {problem}"
    if spec.max_attempts < 1 or spec.timeout <= 0:
        return "max_attempts: a job needs max_attempts >= 1 and a timeout > 0"
    if spec.kind == "agent":
        if apps is not None and spec.app_name not in apps:
            return f"app: no app {spec.app_name!r} on this host (apps: {', '.join(sorted(apps)) or 'none'})"
        if not spec.message:
            return "message: an agent job needs a message"
    else:
        try:
            resolve_function(spec.function)
        except InvalidRequestError as exc:
            return f"function: {exc}"
    try:
        validate_spec(spec, apps=apps, queues=queues)  # all but its args passed above
    except InvalidRequestError as exc:
        return f"args: {exc}"
    return None


def _shown(value: Any) -> str:
    """``value`` for an error message, shortened."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidRequestError(f"unknown time zone {name!r}") from None


def resolve_function(path: str) -> Callable[..., Any]:
    """The function at ``"package.module:name"``; :class:`InvalidRequestError` when it
    cannot be imported or is not callable."""
    module_name, colon, name = path.partition(":")
    if not colon or not module_name or not name:
        raise InvalidRequestError(f"a job's function is named 'package.module:function', not {path!r}")
    try:
        target = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise InvalidRequestError(f"cannot import the job's function {path!r}: {exc}") from None
    if not callable(target):
        raise InvalidRequestError(f"the job's function {path!r} is not callable")
    return target  # type: ignore[no-any-return]


def validate_spec(spec: JobSpec, *, apps: set[str] | None, queues: set[str]) -> None:
    """Raise :class:`InvalidRequestError` for a job that cannot be run: an unknown queue
    or app (``apps`` None: not checked here), a bad user or session name, no message,
    a function that cannot be imported, args that are not a JSON object (keyword
    arguments: string keys) or over ``MAX_ARGS_BYTES``, attempts < 1, a timeout <= 0."""
    if spec.kind not in ("agent", "function"):
        raise InvalidRequestError(f"a job is an 'agent' run or a 'function', not {spec.kind!r}")
    if spec.queue not in queues:
        raise InvalidRequestError(f"no queue {spec.queue!r} (queues: {', '.join(sorted(queues))})")
    for value, what in ((spec.user_id, "user id"), (spec.session_id, "session id")):
        problem = name_problem(value, what) if value is not None else None
        if problem is not None:
            raise InvalidRequestError(problem)
    if spec.max_attempts < 1 or spec.timeout <= 0:
        raise InvalidRequestError("a job needs max_attempts >= 1 and a timeout > 0")
    if spec.kind == "agent":
        if apps is not None and spec.app_name not in apps:
            raise InvalidRequestError(f"no app {spec.app_name!r} on this host")
        if not spec.message:
            raise InvalidRequestError("an agent job needs a message")
    else:
        resolve_function(spec.function)
    if not isinstance(spec.args, dict) or not all(isinstance(key, str) for key in spec.args):
        raise InvalidRequestError(f"a job's args are a JSON object (its function's keyword arguments), "
                                  f"not {type(spec.args).__name__} {_shown(spec.args)}")
    if spec.state_delta is not None and not isinstance(spec.state_delta, dict):
        raise InvalidRequestError(f"a job's state delta is a JSON object, not {type(spec.state_delta).__name__}")
    try:
        size = len(json.dumps({"args": spec.args, "state_delta": spec.state_delta, "meta": spec.meta},
                              ensure_ascii=False).encode("utf-8"))
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        raise InvalidRequestError(f"a job's args must be JSON: {exc}") from None
    if size > MAX_ARGS_BYTES:
        raise InvalidRequestError(f"a job's args are {size} bytes, over {MAX_ARGS_BYTES}")
