"""What a soak found: its :class:`SoakReport` (counts, problems, ``passed``, the
rendered lines), and why a turn a kill ended was not completed by its resumes
(:class:`UnfinishedResume`, :func:`describe_unfinished`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .._exceptions import AdkError
from .._types import Event
from ..runtime import Runner
from ..store._base import invocation_of


@dataclass
class SoakReport:
    sessions: int
    duration: float
    turns: int = 0
    turns_ok: int = 0
    acknowledged_events: int = 0
    lost: int = 0
    hung: int = 0
    typed_failures: dict[str, int] = field(default_factory=dict)  # by reason (or error code)
    untyped_failures: dict[str, int] = field(default_factory=dict)  # by exception type
    kills: dict[str, int] = field(default_factory=dict)  # by kind
    stops: dict[str, int] = field(default_factory=dict)  # by kind: actors stopped (SIGSTOP) instead of killed
    restarts: dict[str, int] = field(default_factory=dict)  # by kind: an actor seen again with a new pid
    host_alive: bool = True
    tree_restored: bool = False
    restore_seconds: float | None = None
    next_turn_valid: int = 0
    orphans: int = 0
    failed_sessions: int = 0  # sessions that crashed beyond their intensity (reset before the next turn)
    stopped_left: int = 0  # stopped actors still there at the end: no health check found them
    jobs: int = 0  # background jobs enqueued during the faults
    jobs_completed: int = 0
    jobs_discarded: int = 0
    jobs_unfinished: int = 0  # neither completed nor discarded once the tree was restored
    jobs_unfinished_states: dict[str, int] = field(default_factory=dict)  # what the unfinished ones were
    jobs_overlaps: int = 0  # attempts that found another attempt of their job running
    jobs_attempts: int = 0  # attempts that ran to their end (several per job when faults cut some short)
    resumed: int | None = None  # --resume: runs a kill ended that the soak resumed (None: no resuming)
    resumed_completed: int = 0  # ... of which ended well after their resumes
    resume_attempts: int = 0  # resumes made (one run may need several: killed again)
    results_twice: int = 0  # tool calls whose result was committed twice in a session (must be 0)
    nodes_twice: int = 0  # graph node runs whose output was committed twice in one run (must be 0)
    faults_by_host: dict[str, int] = field(default_factory=dict)  # --cluster: the faults dealt on each host
    problems: list[str] = field(default_factory=list)  # what failed the soak, in words (a few of each kind)

    @property
    def passed(self) -> bool:
        return (self.host_alive and self.tree_restored and self.lost == 0 and self.hung == 0
                and not self.untyped_failures and self.next_turn_valid == self.sessions and self.orphans == 0
                and self.stopped_left == 0 and self.jobs_unfinished == 0 and self.jobs_overlaps == 0
                and self.results_twice == 0 and self.nodes_twice == 0
                and (self.resumed is None or self.resumed_completed == self.resumed))

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "passed": self.passed}

    def render(self) -> str:
        def counts(found: dict[str, int]) -> str:
            return ", ".join(f"{k} {v}" for k, v in sorted(found.items())) or "none"

        restored = (f"yes, in {self.restore_seconds:.2f} s" if self.tree_restored and self.restore_seconds is not None
                    else "NO")
        lines = [
            f"sessions {self.sessions}, {self.duration:g} s of kills",
            f"turns              {self.turns} ({self.turns_ok} ended well)",
            f"acknowledged       {self.acknowledged_events} events",
            f"LOST               {self.lost}",
            f"HUNG               {self.hung}",
            f"typed failures     {counts(self.typed_failures)}",
            f"untyped failures   {counts(self.untyped_failures)}",
            f"kills              {counts(self.kills)}",
            *([f"faults per host    {counts(self.faults_by_host)}"] if self.faults_by_host else []),
            f"stops (SIGSTOP)    {counts(self.stops)}; left stopped: {self.stopped_left}",
            f"restarts           {counts(self.restarts)}",
            f"host alive         {'yes' if self.host_alive else 'NO'}",
            f"tree restored      {restored}",
            f"failed sessions    {self.failed_sessions} (reset before the next turn)",
            f"next turn valid    {self.next_turn_valid}/{self.sessions}",
            f"orphans            {self.orphans}",
            *([f"jobs               {self.jobs}: {self.jobs_completed} completed, {self.jobs_discarded} discarded, "
               f"{self.jobs_unfinished} unfinished ({counts(self.jobs_unfinished_states)}); "
               f"{self.jobs_attempts} attempts ran to their end",
               f"jobs at once       {self.jobs_overlaps} (two attempts of one job running together)"]
              if self.jobs else []),
            *([f"resumed            {self.resumed} runs a kill ended: {self.resumed_completed} completed after "
               f"{self.resume_attempts} resumes"] if self.resumed is not None else []),
            f"results twice      {self.results_twice} (a tool call's result committed twice)",
            *([f"nodes twice        {self.nodes_twice} (a graph node run's output committed twice in one run)"]
              if self.nodes_twice else []),
            f"result             {'PASSED' if self.passed else 'FAILED'}",
            *(f"  problem: {problem}" for problem in self.problems),
        ]
        return "\n".join(lines)


@dataclass(frozen=True)
class UnfinishedResume:
    """A turn a kill ended (``first``) that its resumes did not complete: in session
    ``session``, the last resume (run ``attempt``, resuming run ``resumed``) ended so
    (``failure``, in words: refused, failed, or killed again at the last attempt)."""

    session: str
    first: str
    resumed: str
    attempt: str
    failure: str


def describe_unfinished(runner: Runner, user: str, unfinished: UnfinishedResume,
                        events: list[Event] | None = None) -> str:
    """Why a turn a kill ended was not completed by its resumes, in words, in order: the
    turn, the run its last resume continued and how that resume ended; the session's
    latest run as the store holds it now (its id, status, the run it resumes, its
    attempt; which of the two runs it is); the turn's invocation as committed (how many
    events, its last one: author and what it is, and the calls left without a
    result). ``events``: the session's events, when read already. A store that cannot
    be asked is said so, in place of what it holds."""
    said = [f"the turn {unfinished.first} of session {unfinished.session}, killed, was not completed by its "
            f"resumes: the last resume ({unfinished.attempt}, of {unfinished.resumed}) ended {unfinished.failure}"]
    try:
        last = runner.last_run(user, unfinished.session)
    except AdkError as exc:
        said.append(f"its latest run could not be read: {type(exc).__name__}: {exc}")
    else:
        role = {unfinished.attempt: " (the last resume)", unfinished.resumed: " (the run it resumed)"}
        said.append("the store has no run of it" if last is None else
                    f"the store's latest run of it: {last.run_id}{role.get(last.run_id, '')}, {last.status}, "
                    f"resuming {last.resumes or 'nothing'}, attempt {last.attempt}")
    try:
        if events is None:
            events = runner.get_session(user, unfinished.session).events
    except AdkError as exc:
        said.append(f"its events could not be read: {type(exc).__name__}: {exc}")
    else:
        invocation = invocation_of(unfinished.first)
        own = [e for e in events if e.invocation_id == invocation]
        answered = {r.id for e in own if e.content is not None for r in e.content.function_responses}
        pending = [f"{c.name} ({e.author})" for e in own if e.content is not None
                   for c in e.content.function_calls if c.id not in answered]
        said.append(f"its invocation {invocation} has {len(own)} committed events"
                    + (f", the last {_event_words(own[-1])}" if own else "")
                    + (f"; calls without a result: {', '.join(pending)}" if pending else ""))
    return "; ".join(said)


def _event_words(event: Event) -> str:
    """An event in a few words: its author and what it holds (an error, calls, results, text)."""
    content = event.content
    if event.error_code:
        what = f"the error {event.error_code}: {event.error_message}"
    elif content is not None and content.function_calls:
        what = "calls of " + ", ".join(c.name for c in content.function_calls)
    elif content is not None and content.function_responses:
        what = "results of " + ", ".join(r.name or "?" for r in content.function_responses)
    elif content is not None and content.text:
        what = f"the text {content.text[:60]!r}"
    else:
        what = "no content"
    return f"by {event.author}: {what}{' (final)' if event.is_final_response() else ''}"
