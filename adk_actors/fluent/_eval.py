"""``E``: evaluations of a builder's agent, adk-fluent's names, on our eval kit.

``await E.suite(agent).case("What is 2+2?", expect="4").criteria(E.trajectory() |
E.response_match()).run()`` runs each case ``num_runs`` times (2) on an embedded
engine with ``adk_actors.evals.run_eval_set`` and gives an :class:`EvalReport`:

1. the cases become an eval set of google-adk's shape (``to_eval_set``; ``to_file``
   writes it as google-adk's ``.evalset.json``), each case one user message with its
   expected answer (``expect``) and tool calls (``tools``: ``[(name, args), ...]``);
2. every run of a case is a new session; the kit's metrics score it
   (``tool_trajectory_avg_score`` with the trajectory's ``match``,
   ``response_match_score``: ROUGE-1), ``E.custom`` metrics call their function with
   (actual, expected) invocations, and a case's ``state`` is checked against the
   session's state when the run ends (``final_session_state_match``: 1.0 when every
   key given has that value);
3. a metric's score is its mean over the cases and runs that could score it; it
   passes at its threshold; the report is ``ok`` when every metric passed.

``E.compare(a, b, ...)`` runs the same cases on each agent (a
:class:`ComparisonReport`). Reports save and compare baselines
(``assert_no_regression``). The metrics that need a judge model (``semantic_match``,
``hallucination``, ``safety``, ``rubric``, ``tool_rubric``) are not offered:
each raises :class:`~adk_actors.evals.EvalError` saying so, as do personas and
scenarios (user simulation) and ``E.gate``.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._types import Content, Event, FunctionCall, Part
from ..evals import (
    RESPONSE_MATCH,
    TOOL_TRAJECTORY,
    EvalCase,
    EvalError,
    EvalMetric,
    EvalSet,
    EvalSetResult,
    IntermediateData,
    Invocation,
    SessionInput,
    run_eval_set,
)
from ..runners import InMemoryRunner

__all__ = ["STATE_MATCH", "ComparisonReport", "ComparisonSuite", "E", "ECase", "EComposite", "ECriterion",
           "EvalReport", "EvalSuite", "MetricDelta", "RegressionError", "RegressionResult"]

#: the metric a case's expected ``state`` is scored by
STATE_MATCH = "final_session_state_match"
_MATCHES = {"exact": "EXACT", "in_order": "IN_ORDER", "any_order": "ANY_ORDER"}
_EVAL_USER = "eval_user"


@dataclass(frozen=True)
class ECriterion:
    """One metric: its name, the score it must reach, and (a kit metric) its criterion
    or (``E.custom``) the function that scores an (actual, expected) invocation."""

    metric_name: str
    threshold: float = 1.0
    criterion: dict[str, Any] | None = None
    fn: Callable[[Invocation, Invocation], float] | None = None


class EComposite:
    """Criteria, in order; ``a | b`` joins them."""

    def __init__(self, criteria: list[ECriterion] | None = None) -> None:
        self._items = list(criteria or [])

    def __or__(self, other: EComposite) -> EComposite:
        return EComposite([*self._items, *other._items])

    @property
    def criteria(self) -> list[ECriterion]:
        return list(self._items)

    def __iter__(self) -> Iterator[ECriterion]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"EComposite({[c.metric_name for c in self._items]})"


@dataclass
class ECase:
    """One case: a user message, what is expected of the answer (``expect``), of the
    tool calls (``tools``) and of the state afterwards (``state``)."""

    prompt: str
    expect: str | None = None
    tools: list[tuple[str, dict[str, Any]]] | None = None
    rubrics: list[str] | None = None
    state: dict[str, Any] | None = None
    eval_id: str = ""

    def __post_init__(self) -> None:
        if not self.eval_id:
            self.eval_id = str(uuid.uuid4())
        if self.rubrics:
            raise EvalError("rubrics need a judge model, which this kit does not offer")

    def to_eval_case(self) -> EvalCase:
        """The case in google-adk's shape."""
        expected = Content(role="model", parts=(Part(text=self.expect),)) if self.expect is not None else None
        calls = [FunctionCall(name=name, args=args) for name, args in self.tools or []]
        invocation = Invocation(invocation_id=str(uuid.uuid4()), user_content=Content.user(self.prompt),
                                final_response=expected, intermediate_data=IntermediateData(tool_uses=calls),
                                creation_timestamp=time.time())
        return EvalCase(eval_id=self.eval_id, conversation=[invocation], final_session_state=self.state,
                        session_input=SessionInput(app_name="", user_id=_EVAL_USER), creation_timestamp=time.time())


class RegressionError(AssertionError):
    """:meth:`EvalReport.assert_no_regression` found a metric that dropped (``.result``)."""

    def __init__(self, message: str, result: RegressionResult) -> None:
        super().__init__(message)
        self.result = result


@dataclass(frozen=True)
class MetricDelta:
    """One metric, baseline against now (None: absent on that side)."""

    metric: str
    baseline: float | None
    current: float | None
    tolerance: float = 0.0

    @property
    def delta(self) -> float | None:
        return None if self.baseline is None or self.current is None else self.current - self.baseline

    @property
    def regressed(self) -> bool:
        """Dropped by more than ``tolerance``, or gone from the report."""
        if self.baseline is not None and self.current is None:
            return True
        return self.delta is not None and self.delta < -self.tolerance - 1e-9

    def describe(self) -> str:
        if self.baseline is not None and self.current is None:
            return f"{self.metric}: MISSING (baseline={self.baseline:.3f}, dropped from report)"
        if self.baseline is None:
            return f"{self.metric}: NEW (current={self.current:.3f})"
        assert self.current is not None and self.delta is not None
        verdict = "regressed" if self.regressed else ("improved" if self.delta > 0 else "stable")
        return (f"{self.metric}: {self.baseline:.3f} -> {self.current:.3f} "
                f"(delta={self.delta:+.3f}, tol={self.tolerance}) [{verdict}]")


@dataclass(frozen=True)
class RegressionResult:
    deltas: tuple[MetricDelta, ...]
    tolerance: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.regressions

    @property
    def regressions(self) -> tuple[MetricDelta, ...]:
        return tuple(d for d in self.deltas if d.regressed)

    def summary(self) -> str:
        lines = ["Regression Report", "=" * 50, *(f"  {d.describe()}" for d in self.deltas), "=" * 50]
        lines.append("Overall: NO REGRESSION" if self.ok else
                     f"Overall: REGRESSION DETECTED ({', '.join(d.metric for d in self.regressions)})")
        return "\n".join(lines)


@dataclass
class EvalReport:
    """Per metric: its score (mean over cases and runs), threshold and whether it
    passed; ``details``: each case's failures; ``raw_results``: the kit's results."""

    scores: dict[str, float] = field(default_factory=dict)
    thresholds: dict[str, float] = field(default_factory=dict)
    passed: dict[str, bool] = field(default_factory=dict)
    details: list[Any] = field(default_factory=list)
    raw_results: list[EvalSetResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.passed) and all(self.passed.values())

    def summary(self) -> str:
        lines = ["Eval Report", "=" * 40]
        for metric, value in self.scores.items():
            status = "PASS" if self.passed.get(metric) else "FAIL"
            lines.append(f"  {metric}: {value:.3f} (threshold: {self.thresholds.get(metric, 'N/A')}) [{status}]")
        lines += ["=" * 40, f"Overall: {'PASSED' if self.ok else 'FAILED'}"]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"scores": dict(self.scores), "thresholds": dict(self.thresholds), "passed": dict(self.passed),
                "details": [str(d) for d in self.details]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvalReport:
        return cls(scores={k: float(v) for k, v in (data.get("scores") or {}).items()},
                   thresholds={k: float(v) for k, v in (data.get("thresholds") or {}).items()},
                   passed={k: bool(v) for k, v in (data.get("passed") or {}).items()},
                   details=list(data.get("details") or []))

    def to_file(self, path: str) -> EvalReport:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2))
        return self

    save_baseline = to_file

    @classmethod
    def load_baseline(cls, path: str) -> EvalReport:
        return cls.from_dict(json.loads(Path(path).read_text()))

    def compare_to_baseline(self, baseline: EvalReport | dict[str, Any] | str, *,
                            tolerance: float = 0.0) -> RegressionResult:
        """Each metric of either report against the baseline's (a report, its dict, a file)."""
        if tolerance < 0:
            raise ValueError(f"tolerance must be >= 0, got {tolerance}")
        base = (baseline if isinstance(baseline, EvalReport) else
                EvalReport.from_dict(baseline) if isinstance(baseline, dict) else EvalReport.load_baseline(baseline))
        metrics = list(dict.fromkeys([*base.scores, *self.scores]))
        return RegressionResult(tuple(MetricDelta(m, base.scores.get(m), self.scores.get(m), tolerance)
                                      for m in metrics), tolerance)

    def assert_no_regression(self, baseline: EvalReport | dict[str, Any] | str, *,
                             tolerance: float = 0.0) -> RegressionResult:
        """:class:`RegressionError` when a metric dropped by more than ``tolerance``."""
        result = self.compare_to_baseline(baseline, tolerance=tolerance)
        if not result.ok:
            raise RegressionError(result.summary(), result)
        return result


@dataclass
class ComparisonReport:
    agent_reports: dict[str, EvalReport] = field(default_factory=dict)

    def ranked(self) -> list[tuple[str, float]]:
        """(agent, mean of its metric scores), best first."""
        means = [(name, statistics.fmean(r.scores.values()) if r.scores else 0.0)
                 for name, r in self.agent_reports.items()]
        return sorted(means, key=lambda pair: pair[1], reverse=True)

    @property
    def winner(self) -> str | None:
        ranking = self.ranked()
        return ranking[0][0] if ranking else None

    def summary(self) -> str:
        lines = ["Comparison Report", "=" * 50]
        for name, mean in self.ranked():
            report = self.agent_reports[name]
            lines.append(f"  {name}: avg={mean:.3f} [{'PASS' if report.ok else 'FAIL'}]")
            lines += [f"    {metric}: {value:.3f}" for metric, value in report.scores.items()]
        lines.append("=" * 50)
        return "\n".join(lines)


class _EmbeddedTurns:
    """The eval kit's turn runner on an embedded engine (called from a worker thread)."""

    def __init__(self, runner: InMemoryRunner) -> None:
        self.runner = runner

    def create_session(self, user_id: str, session_id: str | None = None, state: dict[str, Any] | None = None) -> Any:
        return asyncio.run(self.runner.session_service.create_session(
            app_name=self.runner.app_name, user_id=user_id, session_id=session_id, state=state))

    def run(self, user_id: str, session_id: str, message: str | Content) -> Iterator[Event]:
        content = message if isinstance(message, Content) else Content.user(message)

        async def turn() -> list[Event]:
            return [event async for event in self.runner.run_async(user_id=user_id, session_id=session_id,
                                                                    new_message=content)]

        return iter(asyncio.run(turn()))

    def state(self, user_id: str, session_id: str) -> dict[str, Any]:
        session = asyncio.run(self.runner.session_service.get_session(
            app_name=self.runner.app_name, user_id=user_id, session_id=session_id))
        return {} if session is None else dict(session.state)


class EvalSuite:
    """See the module."""

    def __init__(self, agent: Any) -> None:
        self._agent = agent
        self._cases: list[ECase] = []
        self._criteria = EComposite()
        self._num_runs = 2
        self._name = ""
        self._description = ""

    def case(self, prompt: str, *, expect: str | None = None, tools: list[tuple[str, dict[str, Any]]] | None = None,
             rubrics: list[str] | None = None, state: dict[str, Any] | None = None, eval_id: str = "") -> EvalSuite:
        self._cases.append(ECase(prompt, expect, tools, rubrics, state, eval_id))
        return self

    def criteria(self, composite: EComposite) -> EvalSuite:
        self._criteria = composite
        return self

    def threshold(self, metric: str, value: float) -> EvalSuite:
        """``metric``'s threshold set to ``value`` (added with it when not among the criteria)."""
        items = [ECriterion(c.metric_name, value, c.criterion, c.fn) if c.metric_name == metric else c
                 for c in self._criteria]
        if not any(c.metric_name == metric for c in self._criteria):
            items.append(ECriterion(metric, value))
        self._criteria = EComposite(items)
        return self

    def num_runs(self, n: int) -> EvalSuite:
        if n < 1:
            raise ValueError(f"num_runs is at least 1, got {n}")
        self._num_runs = n
        return self

    def name(self, suite_name: str) -> EvalSuite:
        self._name = suite_name
        return self

    def description(self, text: str) -> EvalSuite:
        self._description = text
        return self

    def to_eval_set(self) -> EvalSet:
        return EvalSet(eval_set_id=str(uuid.uuid4()), name=self._name or f"{_name_of(self._agent)}_eval_suite",
                       description=self._description, eval_cases=[c.to_eval_case() for c in self._cases],
                       creation_timestamp=time.time())

    def to_file(self, path: str) -> EvalSuite:
        """The eval set as google-adk writes one (snake_case JSON)."""
        Path(path).write_text(json.dumps(self.to_eval_set().model_dump(mode="json"), indent=2))
        return self

    async def run(self) -> EvalReport:
        """See the module. EvalError (before any case runs) for a metric not offered."""
        return await asyncio.to_thread(self._run)

    def _run(self) -> EvalReport:
        agent = self._agent
        root, plugins = (agent.build(), agent.plugins()) if hasattr(agent, "plugins") else (agent, ())
        turns = _EmbeddedTurns(InMemoryRunner(root, app_name=f"_eval_{root.name}", plugins=plugins))
        kit = [EvalMetric(metric_name=c.metric_name, threshold=c.threshold, criterion=c.criterion)
               for c in self._criteria if c.fn is None and c.metric_name != STATE_MATCH]
        custom = [c for c in self._criteria if c.fn is not None]
        eval_set = self.to_eval_set()
        values: dict[str, list[float]] = {c.metric_name: [] for c in self._criteria}
        report = EvalReport(thresholds={c.metric_name: c.threshold for c in self._criteria})
        by_id = {case.eval_id: case for case in self._cases}
        for _ in range(self._num_runs):
            result = run_eval_set(turns, turns.runner.app_name, eval_set, kit)
            report.raw_results.append(result)
            for case in result.eval_case_results:
                for outcome in case.overall_eval_metric_results:
                    if outcome.score is not None:
                        values[outcome.metric_name].append(outcome.score)
                    if outcome.details.get("error"):
                        report.details.append(f"{case.eval_id}: {outcome.details['error']}")
                for criterion in custom:
                    assert criterion.fn is not None
                    values[criterion.metric_name] += [float(criterion.fn(row.actual_invocation, row.expected_invocation))
                                                      for row in case.eval_metric_result_per_invocation
                                                      if row.expected_invocation is not None]
                expected_state = by_id[case.eval_id].state
                if expected_state is not None:
                    state = turns.state(case.user_id or _EVAL_USER, case.session_id)
                    matched = all(state.get(k) == v for k, v in expected_state.items())
                    values.setdefault(STATE_MATCH, []).append(1.0 if matched else 0.0)
                    report.thresholds.setdefault(STATE_MATCH, 1.0)
        for metric, scores in values.items():
            if scores:
                report.scores[metric] = statistics.fmean(scores)
                report.passed[metric] = report.scores[metric] >= report.thresholds[metric]
        return report


class ComparisonSuite:
    """The same cases and criteria on each agent."""

    def __init__(self, agents: list[Any]) -> None:
        self._suites = [EvalSuite(agent) for agent in agents]

    def case(self, prompt: str, **expected: Any) -> ComparisonSuite:
        for suite in self._suites:
            suite.case(prompt, **expected)
        return self

    def criteria(self, composite: EComposite) -> ComparisonSuite:
        for suite in self._suites:
            suite.criteria(composite)
        return self

    def num_runs(self, n: int) -> ComparisonSuite:
        for suite in self._suites:
            suite.num_runs(n)
        return self

    async def run(self) -> ComparisonReport:
        return ComparisonReport({_name_of(s._agent): await s.run() for s in self._suites})


def _name_of(agent: Any) -> str:
    return str(getattr(agent, "name", agent))


def _judged(name: str) -> Callable[..., EComposite]:
    def refuse(*args: Any, **kwargs: Any) -> EComposite:
        raise EvalError(f"E.{name} needs a judge model, which this kit does not offer; its metrics are "
                        f"{TOOL_TRAJECTORY}, {RESPONSE_MATCH}, {STATE_MATCH} and E.custom ones")
    return refuse


class E:
    """Eval factories (adk-fluent's ``E``)."""

    @staticmethod
    def trajectory(threshold: float = 1.0, *, match: str = "exact") -> EComposite:
        """The tool calls: ``exact`` (the same, in order), ``in_order`` (the expected ones,
        in order, among others) or ``any_order`` (the expected ones among others)."""
        if match not in _MATCHES:
            raise ValueError(f"E.trajectory: match is one of {', '.join(_MATCHES)}, got {match!r}")
        return EComposite([ECriterion(TOOL_TRAJECTORY, threshold, {"match_type": _MATCHES[match]})])

    @staticmethod
    def response_match(threshold: float = 0.8) -> EComposite:
        """ROUGE-1 F1 of the final answer against the expected one."""
        return EComposite([ECriterion(RESPONSE_MATCH, threshold)])

    @staticmethod
    def custom(name: str, fn: Callable[[Invocation, Invocation], float], *, threshold: float = 0.5) -> EComposite:
        """``fn(actual, expected)`` (invocations: ``final_response``, ``tool_calls()``) scores each run."""
        return EComposite([ECriterion(name, threshold, fn=fn)])

    semantic_match = staticmethod(_judged("semantic_match"))
    hallucination = staticmethod(_judged("hallucination"))
    safety = staticmethod(_judged("safety"))
    rubric = staticmethod(_judged("rubric"))
    tool_rubric = staticmethod(_judged("tool_rubric"))
    gate = staticmethod(_judged("gate"))

    @staticmethod
    def case(prompt: str, *, expect: str | None = None, tools: list[tuple[str, dict[str, Any]]] | None = None,
             rubrics: list[str] | None = None, state: dict[str, Any] | None = None) -> ECase:
        return ECase(prompt, expect, tools, rubrics, state)

    @staticmethod
    def suite(agent: Any) -> EvalSuite:
        return EvalSuite(agent)

    @staticmethod
    def compare(*agents: Any) -> ComparisonSuite:
        if len(agents) < 2:
            raise ValueError("E.compare needs at least two agents")
        return ComparisonSuite(list(agents))

    @staticmethod
    def from_file(path: str) -> EvalSet:
        """An eval set file of google-adk's (``.evalset.json``, ``.test.json``)."""
        return EvalSet.model_validate(json.loads(Path(path).read_text()))

    @staticmethod
    def from_dir(path: str) -> list[EvalSet]:
        return [E.from_file(str(file)) for file in sorted(Path(path).iterdir()) if file.name.endswith(".json")]
