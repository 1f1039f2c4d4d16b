"""google-adk's ``AgentEvaluator``: an agent evaluated in this process, for tests.

``await AgentEvaluator.evaluate("my_agent", "tests/fixtures")`` (or
``evaluate_eval_set(agent_module, eval_set, eval_config=...)``), in order:

1. the test files: the ``*.test.json`` files under a folder (recursively), or the one
   file named; each is an eval set in google-adk's format, or in its older one (a list
   of ``{"query", "expected_tool_use", "reference"}`` turns, one case); its criteria
   come from ``test_config.json`` in the same folder (see ``_config``), else the
   defaults (``tool_trajectory_avg_score`` 1.0, ``response_match_score`` 0.8);
2. the agent: ``agent_module`` is imported; its ``agent`` member (or the module itself
   when its name ends with ``.agent``) gives ``root_agent``, or ``get_agent_async()``;
   an ``app`` member that is an :class:`App` brings its plugins and policies;
   ``agent_name`` picks a sub-agent;
3. inference, ``num_runs`` times over every case: a session of the case's app and
   user (``session_input``; else ``EvaluationGenerator`` and ``test_user_id``), id
   ``adk-eval-session-<uuid>`` unless the case pins one, with the case's state; the
   case's user messages (or the user simulator's) sent one after the other by our in-process
   :class:`~adk_actors.runners.Runner` (each turn's events making one actual
   invocation, as google-adk makes them, with each agent's instructions and tools as
   its model calls were given them, ``app_details``: ``_app_details``; with the seconds the turn took and, of
   those, the seconds a model call and a tool were in flight: ``_timing``; the user
   simulator's own time is outside). A turn that raises fails that run of the
   case, which then has no metric results;
4. scoring, once all runs are in: each metric on each run's (actual, expected)
   invocations (``_metrics``: scores as google-adk's). A judge metric whose judge
   failed or gave no verdict is not evaluated;
5. the verdict per case and metric, across its runs: the mean of the per-invocation
   scores against the threshold, at or above it (at or below it for a custom metric
   whose per-invocation statuses all say lower is better: ``_higher_is_better``, as
   google-adk reads them) (the informational efficiency metrics, which
   google-adk adds to every evaluation, only report theirs); with ``print_detailed_results`` a summary and the
   expected against the actual, per invocation, are printed; with ``output_file``
   they are appended as CSV rows; with ``eval_set_results_manager`` (our
   :class:`EvalFiles`, or an object with google-adk's ``save_eval_set_result``) each
   set's results are saved;
6. every metric below its threshold (``"<metric> for <module> Failed. Expected <t>,
   but got <score>."``), not evaluated, or a case whose runs all failed, is a line of
   the :class:`EvalFailed` raised at the end (an ``AssertionError``, as google-adk's
   ``assert``).

Bad input is a ``ValueError`` as in google-adk (``num_runs`` < 1, no test file, an
empty set, a module without an agent), or an :class:`EvalError` (an unknown metric,
a criterion or simulator config that is not valid, a custom metric whose function
cannot be imported: ``_custom``), raised before any agent runs. A custom metric's
function that answers out of shape is a ``CustomMetricError`` once it is scored.
A ``conversation_scenario`` case is played by the user simulator google-adk's would
pick (``_simulator.provide_user_simulator``): the one registered for the type of the
eval config's ``user_simulator_config`` (the llm-backed one for a dict or none; a
``register_user_simulator`` simulator of the user's for a config object of its own
type); its invocations have no expected
ones, so the metrics that compare with them are not evaluated there (as in
google-adk).
"""

from __future__ import annotations

import csv
import importlib
import json
import logging
import os
import statistics
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from .._exceptions import AdkError
from .._types import Content, Event, FunctionCall, Part
from ..engine import App
from ..runners import Runner
from ..sessions import InMemorySessionService
from ._app_details import AppDetailsRecorder
from ._config import EvalConfig, get_eval_metrics_from_config, get_evaluation_criteria_or_default
from ._custom import CustomMetricError
from ._files import EvalFiles
from ._judge import joined_text
from ._metrics import RESPONSE_MATCH, TOOL_TRAJECTORY, check_metric, score_async, unscored
from ._models import (
    EvalCase,
    EvalCaseResult,
    EvalMetric,
    EvalMetricResult,
    EvalMetricResultPerInvocation,
    EvalSet,
    EvalSetResult,
    EvalStatus,
    IntermediateData,
    Invocation,
    SessionInput,
)
from ._run import invocation_from, said_by_user
from ._simulator import Status, provide_user_simulator, user_simulator_config_of
from ._timing import busy_intervals

__all__ = ["NUM_RUNS", "AgentEvaluator", "EvalFailed"]

logger = logging.getLogger(__name__)

#: google-adk's default number of runs of every case
NUM_RUNS = 2
EVAL_SESSION_ID_PREFIX = "adk-eval-session-"
_OLD_FORMAT_CRITERIA = (TOOL_TRAJECTORY, "response_evaluation_score", RESPONSE_MATCH, "safety_v1")


class EvalFailed(AssertionError):
    """Cases of an evaluation did not pass; the message has a line per failure."""


@dataclass
class _Row:
    """One metric's result on one invocation of one run."""

    result: EvalMetricResult
    actual: Invocation
    expected: Invocation | None


@dataclass
class _Run:
    case: EvalCase
    session_id: str
    user_id: str
    actual: list[Invocation] | None = None
    error: str = ""
    results: list[EvalCaseResult] = field(default_factory=list)


def _text(content: Content | None) -> str:
    return joined_text(content) or ""


def _calls_text(invocation: Invocation | None) -> str:
    if invocation is None:
        return ""
    return "\n".join(f"{call.name}({json.dumps(dict(call.args), sort_keys=True, default=str)})"
                     for call in invocation.tool_calls())


class AgentEvaluator:
    """Evaluates an agent module against eval sets, in this process (see the module)."""

    @staticmethod
    def find_config_for_test_file(test_file: str) -> EvalConfig:
        """The ``test_config.json`` beside ``test_file``, or the default criteria."""
        return get_evaluation_criteria_or_default(os.path.join(os.path.dirname(test_file), "test_config.json"))

    @staticmethod
    async def evaluate(agent_module: str, eval_dataset_file_path_or_dir: str, num_runs: int = NUM_RUNS,
                       agent_name: str | None = None, initial_session_file: str | None = None,
                       print_detailed_results: bool = True, artifact_service: Any = None,
                       output_file: str | None = None, app_name: str | None = None,
                       eval_set_results_manager: Any = None) -> None:
        """Evaluate the agent of ``agent_module`` on a test file, or on every
        ``*.test.json`` under a folder, each with the config beside it (see the module).
        ``initial_session_file``: the session state (JSON) of an older-format file's case."""
        if num_runs < 1:
            raise ValueError(f"num_runs must be at least 1, got {num_runs}")
        if eval_set_results_manager is not None and not app_name:
            raise ValueError("app_name is required when eval_set_results_manager is given")
        if os.path.isdir(eval_dataset_file_path_or_dir):
            test_files = sorted(str(path) for path in Path(eval_dataset_file_path_or_dir).rglob("*.test.json"))
        else:
            test_files = [eval_dataset_file_path_or_dir]
        if not test_files:
            raise ValueError(f"no *.test.json eval files in {eval_dataset_file_path_or_dir}: nothing to evaluate")
        initial_session = AgentEvaluator._initial_session(initial_session_file)
        for test_file in test_files:
            eval_config = AgentEvaluator.find_config_for_test_file(test_file)
            eval_set = AgentEvaluator._load_eval_set_from_file(test_file, eval_config, initial_session)
            await AgentEvaluator.evaluate_eval_set(
                agent_module=agent_module, eval_set=eval_set, eval_config=eval_config, num_runs=num_runs,
                agent_name=agent_name, print_detailed_results=print_detailed_results,
                artifact_service=artifact_service, output_file=output_file, app_name=app_name,
                eval_set_results_manager=eval_set_results_manager)

    @staticmethod
    async def evaluate_eval_set(agent_module: str, eval_set: EvalSet, criteria: dict[str, float] | None = None,
                                eval_config: EvalConfig | None = None, num_runs: int = NUM_RUNS,
                                agent_name: str | None = None, print_detailed_results: bool = True,
                                artifact_service: Any = None, output_file: str | None = None,
                                app_name: str | None = None, eval_set_results_manager: Any = None) -> None:
        """Evaluate the agent of ``agent_module`` on ``eval_set`` with ``eval_config``
        (``criteria``, metric name to threshold, is google-adk's older way to give
        one); see the module for the steps. Raises EvalFailed when a case fails."""
        if num_runs < 1:
            raise ValueError(f"num_runs must be at least 1, got {num_runs}")
        if eval_set_results_manager is not None and not app_name:
            raise ValueError("app_name is required when eval_set_results_manager is given")
        if not eval_set or not eval_set.eval_cases:
            raise ValueError("the eval set has no eval cases: there is nothing to report a pass or a failure for")
        if criteria:
            logger.warning("criteria is deprecated (as in google-adk): give an eval_config")
            eval_config = EvalConfig(criteria=dict(criteria))
        if eval_config is None:
            raise ValueError("eval_config is required")
        metrics = get_eval_metrics_from_config(eval_config)
        for metric in metrics:
            check_metric(metric)  # an unknown metric, a bad criterion: EvalError before any agent runs
        for case in eval_set.eval_cases:
            if (case.conversation is None) == (case.conversation_scenario is None):
                raise ValueError(f"eval case {case.eval_id!r} must have exactly one of conversation and "
                                 f"conversation_scenario")
        simulated = user_simulator_config_of(eval_config.user_simulator_config) if any(
            case.conversation_scenario is not None for case in eval_set.eval_cases) else None
        agent, app = await AgentEvaluator._get_agent_for_eval(agent_module, agent_name)
        sessions = InMemorySessionService()
        runs = [await AgentEvaluator._infer(agent, app, case, sessions, artifact_service, simulated)
                for _ in range(num_runs) for case in eval_set.eval_cases]
        for run in runs:
            run.results.append(await AgentEvaluator._score(eval_set.eval_set_id, run, metrics))
        if eval_set_results_manager is not None:
            AgentEvaluator._save(eval_set_results_manager, str(app_name), eval_set.eval_set_id,
                                 [run.results[0] for run in runs])
        failures: list[str] = []
        rows_out: list[dict[str, Any]] = []
        for case in eval_set.eval_cases:
            results = [run.results[0] for run in runs if run.case is case]
            by_metric = AgentEvaluator._rows_by_metric(results)
            failures += AgentEvaluator._failures(by_metric, print_detailed_results, agent_module)
            failed_runs = [r for r in results if r.final_eval_status == EvalStatus.FAILED
                           and not any(row.eval_metric_results for row in r.eval_metric_result_per_invocation)]
            if failed_runs:
                why = "; ".join(sorted({run.error for run in runs if run.case is case and run.error}))
                failures.append(f"{case.eval_id} for {agent_module} Failed. {len(failed_runs)} of {len(results)} "
                                f"runs were recorded as failed without producing any metric results."
                                + (f" ({why})" if why else ""))
            if output_file:
                rows_out += AgentEvaluator._csv_rows(eval_set.eval_set_id, case.eval_id, by_metric)
        if output_file:
            AgentEvaluator._write_csv(rows_out, output_file)
        if failures:
            message = "Following are all the test failures."
            if not print_detailed_results:
                message += (" If you looking to get more details on the failures, then please re-run this test with "
                            "`print_detailed_results` set to `True`.")
            raise EvalFailed(message + "\n" + "\n".join(failures))

    @staticmethod
    def migrate_eval_data_to_new_schema(old_eval_data_file: str, new_eval_data_file: str,
                                        initial_session_file: str | None = None) -> None:
        """Write an older-format test file as an eval set file (google-adk's format)."""
        if not old_eval_data_file or not new_eval_data_file:
            raise ValueError("one of old_eval_data_file or new_eval_data_file is empty")
        eval_config = AgentEvaluator.find_config_for_test_file(old_eval_data_file)
        eval_set = AgentEvaluator._old_format(old_eval_data_file, eval_config,
                                              AgentEvaluator._initial_session(initial_session_file))
        Path(new_eval_data_file).write_text(eval_set.model_dump_json(indent=2, exclude_none=True), encoding="utf-8")

    # -- files --------------------------------------------------------------------------------

    @staticmethod
    def _initial_session(path: str | None) -> dict[str, Any]:
        if not path:
            return {}
        loaded = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(loaded, dict):
            raise ValueError(f"initial session file {path} must hold a JSON object")
        return loaded

    @staticmethod
    def _load_eval_set_from_file(path: str, eval_config: EvalConfig, initial_session: dict[str, Any]) -> EvalSet:
        """An eval set file, or an older-format one (see the module, step 1)."""
        if not os.path.isfile(path):
            raise ValueError(f"input path {path} is invalid")
        text = Path(path).read_text(encoding="utf-8")
        try:
            eval_set = EvalSet.model_validate_json(text)
        except ValidationError:
            logger.warning("%s is in google-adk's older test file format", path)
            return AgentEvaluator._old_format(path, eval_config, initial_session)
        if initial_session:
            raise ValueError("the initial session goes in the eval set file; an initial session file is only "
                             "for test files in the older format")
        return eval_set

    @staticmethod
    def _old_format(path: str, eval_config: EvalConfig, initial_session: dict[str, Any]) -> EvalSet:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, list) or not data or not all(isinstance(turn, dict) for turn in data):
            raise ValueError(f"{path} must contain a list of dictionaries")
        for key in eval_config.criteria:
            if key not in _OLD_FORMAT_CRITERIA:
                raise ValueError(f"Invalid criteria key: {key}. Expected one of {list(_OLD_FORMAT_CRITERIA)}.")
        first = data[0]
        needed = {TOOL_TRAJECTORY: ("query", "expected_tool_use"), RESPONSE_MATCH: ("query", "reference"),
                  "response_evaluation_score": ("query",)}
        for key, columns in needed.items():
            if key in eval_config.criteria and any(column not in first for column in columns):
                raise ValueError(f"Samples for {key} must include {' and '.join(map(repr, columns))} keys.")
        conversation = []
        for turn in data:
            calls = [FunctionCall(name=use["tool_name"], args=use.get("tool_input") or {})
                     for use in turn.get("expected_tool_use", [])]
            between = [(said["author"], [Part(text=said["text"])])
                       for said in turn.get("expected_intermediate_agent_responses", [])]
            conversation.append(Invocation(
                invocation_id=str(uuid.uuid4()), user_content=Content.user(str(turn["query"])),
                final_response=Content.model(str(turn.get("reference", ""))),
                intermediate_data=IntermediateData(tool_uses=calls, intermediate_responses=between),
                creation_timestamp=time.time()))
        session = None
        if initial_session:
            session = SessionInput(app_name=initial_session.get("app_name", ""),
                                   user_id=initial_session.get("user_id", ""), state=initial_session.get("state", {}))
        case = EvalCase(eval_id=path, conversation=conversation, session_input=session, creation_timestamp=time.time())
        return EvalSet(eval_set_id=str(uuid.uuid4()), eval_cases=[case], creation_timestamp=time.time())

    # -- the agent ------------------------------------------------------------------------------

    @staticmethod
    async def _get_agent_for_eval(module_name: str, agent_name: str | None = None) -> tuple[Any, App | None]:
        """The agent to evaluate and the module's app, if it has one (step 2)."""
        module = importlib.import_module(module_name)
        if not (hasattr(module, "agent") or module_name.endswith(".agent")):
            raise ValueError(f"Module {module_name} does not have a member named `agent` or the name should end "
                             f"with `.agent`.")
        holder = getattr(module, "agent", module)
        root = getattr(holder, "root_agent", None)
        if root is None:
            factory = getattr(holder, "get_agent_async", None)
            if not callable(factory):
                raise ValueError(f"Module {module_name} does not have a root_agent or get_agent_async method.")
            root, _ = await factory()
        app = getattr(holder, "app", None)
        agent = root
        if agent_name:
            agent = root.find_agent(agent_name)
            if agent is None:
                raise ValueError(f"Sub-Agent {agent_name!r} not found.")
        return agent, app if isinstance(app, App) else None

    @staticmethod
    async def _infer(agent: Any, app: App | None, case: EvalCase, sessions: InMemorySessionService,
                     artifact_service: Any, simulated: BaseModel | None = None,
                     *, quiet: bool = False) -> _Run:
        """One run of ``case`` (step 3). Its user is the simulator google-adk's would
        pick (``_simulator.provide_user_simulator``): its conversation's user messages
        replayed, or, for a ``conversation_scenario`` case, the simulator registered
        for the type of ``simulated`` (the eval's simulator config, as
        ``user_simulator_config_of`` reads it; None: the llm-backed defaults). Turn by
        turn, the simulator is given a copy of the conversation's events so far (each
        user message as an event of author ``user``, then the agent's events) and its
        ``SUCCESS`` message is sent; any other status ends the run. A failure (the
        simulator's or the agent's) is kept in the run's ``error`` and logged (an
        error with its traceback; ``quiet``, for a caller that reports ``error``
        itself: at debug level)."""
        given = case.session_input
        app_name = given.app_name if given and given.app_name else "EvaluationGenerator"
        user_id = given.user_id if given and given.user_id else "test_user_id"
        session_id = given.session_id if given and given.session_id else f"{EVAL_SESSION_ID_PREFIX}{uuid.uuid4()}"
        run = _Run(case=case, session_id=session_id, user_id=user_id)
        try:
            if await sessions.get_session(app_name=app_name, user_id=user_id, session_id=session_id) is None:
                await sessions.create_session(app_name=app_name, user_id=user_id, session_id=session_id,
                                              state=dict(given.state) if given else {})
            recorder = AppDetailsRecorder()  # each turn's agents' instructions and tools (_app_details)
            if app is not None:
                # the app as it is (its plugins, policies, context cache), its root the agent evaluated
                plugins: tuple[Any, ...] = (*app.plugins, recorder)  # a google-adk plugin is one too (as_plugin)
                runner = Runner(app=replace(app, root_agent=agent, plugins=plugins),
                                app_name=app_name, session_service=sessions, artifact_service=artifact_service)
            else:
                runner = Runner(agent=agent, app_name=app_name, session_service=sessions,
                                artifact_service=artifact_service, plugins=[recorder])
            simulator = provide_user_simulator(simulated, case)
            said: list[Event] = []
            actual = []
            async with runner:
                while True:
                    answer = await simulator.get_next_user_message([e.model_copy(deep=True) for e in said])
                    if answer.status != Status.SUCCESS or answer.user_message is None:
                        break
                    message = answer.user_message
                    began = time.time()
                    made: list[Event] = []
                    with busy_intervals() as busy:  # the turn's model and tool time (_timing)
                        started = busy.clock()
                        async for event in runner.run_async(user_id=user_id, session_id=session_id,
                                                            new_message=message):
                            if not event.partial and not said_by_user(event):
                                made.append(event)
                        took = busy.clock() - started
                    invocation_id = made[0].invocation_id if made else f"e-{uuid.uuid4()}"
                    actual.append(invocation_from(invocation_id, message, began, made).model_copy(update={
                        "duration": round(took, 3), "model_duration": round(busy.model_seconds(), 3),
                        "tool_duration": round(busy.tool_seconds(), 3),
                        "app_details": recorder.details_of(invocation_id)}))
                    said += [Event(author="user", invocation_id=invocation_id, content=message), *made]
            run.actual = actual
        except Exception as exc:  # the agent's code may raise anything: the run fails, the others go on
            logger.log(logging.DEBUG if quiet else logging.ERROR, "inference failed for eval case %r: %s",
                       case.eval_id, exc, exc_info=True)
            run.error = f"{type(exc).__name__}: {exc}"
        return run

    # -- scoring --------------------------------------------------------------------------------

    @staticmethod
    async def _score(eval_set_id: str, run: _Run, metrics: list[EvalMetric]) -> EvalCaseResult:
        """The run's case result (step 4)."""
        def result(status: EvalStatus, overall: list[EvalMetricResult],
                   rows: list[EvalMetricResultPerInvocation]) -> EvalCaseResult:
            return EvalCaseResult(eval_set_file=eval_set_id, eval_set_id=eval_set_id, eval_id=run.case.eval_id,
                                  final_eval_status=status, overall_eval_metric_results=overall,
                                  eval_metric_result_per_invocation=rows, session_id=run.session_id,
                                  user_id=run.user_id)

        if run.actual is None:
            return result(EvalStatus.FAILED, [], [])
        expected: list[Invocation | None] = (list(run.case.conversation) if run.case.conversation is not None
                                             else [None] * len(run.actual))
        # the case's and each expected invocation's rubrics go with the actual one, as in google-adk's results
        actual = []
        for made, wanted in zip(run.actual, expected, strict=True):
            rubrics = {r.rubric_id: r for r in [*(run.case.rubrics or []), *((wanted.rubrics or []) if wanted else [])]}
            actual.append(made.model_copy(update={"rubrics": list(rubrics.values())}) if rubrics else made)
        pairs = list(zip(actual, expected, strict=True))
        rows = [EvalMetricResultPerInvocation(actual_invocation=a, expected_invocation=e) for a, e in pairs]
        overall: list[EvalMetricResult] = []
        for metric in metrics:
            try:
                total, each = await score_async(metric, pairs, case=run.case)
            except CustomMetricError:
                raise  # a custom metric's function that answered out of shape: the user's bug, said now
            except (AdkError, OSError, ValueError) as exc:  # the judge could not be had: not evaluated
                total, each = unscored(metric, len(pairs), f"{type(exc).__name__}: {exc}")
            overall.append(total)
            for row, one in zip(rows, each, strict=True):
                row.eval_metric_results.append(one)
        status = EvalStatus.NOT_EVALUATED
        for one in overall:
            if one.eval_status == EvalStatus.FAILED:
                status = EvalStatus.FAILED
                break
            if one.eval_status == EvalStatus.PASSED:
                status = EvalStatus.PASSED
        return result(status, overall, rows)

    @staticmethod
    def _rows_by_metric(results: list[EvalCaseResult]) -> dict[str, list[_Row]]:
        by_metric: dict[str, list[_Row]] = {}
        for case_result in results:
            for row in case_result.eval_metric_result_per_invocation:
                for one in row.eval_metric_results:
                    by_metric.setdefault(one.metric_name, []).append(
                        _Row(one, row.actual_invocation, row.expected_invocation))
        return by_metric

    @staticmethod
    def _failures(by_metric: dict[str, list[_Row]], print_detailed_results: bool, agent_module: str) -> list[str]:
        """A line per metric of one case that did not pass over its runs (step 5-6)."""
        failures = []
        for name, rows in by_metric.items():
            scores = [row.result.score for row in rows if row.result.score is not None]
            overall = statistics.mean(scores) if scores else None
            first = rows[0].result
            if first.eval_status == EvalStatus.INFORMATIONAL or (first.criterion is None and first.threshold is None):
                if print_detailed_results:  # a value, never a failure
                    AgentEvaluator._print_details(rows, EvalStatus.INFORMATIONAL, overall, name, None)
                continue
            threshold = first.threshold if first.threshold is not None else 0.0
            higher_is_better = AgentEvaluator._higher_is_better(rows, threshold)
            status = (EvalStatus.NOT_EVALUATED if overall is None else
                      EvalStatus.PASSED if (overall >= threshold if higher_is_better else overall <= threshold)
                      else EvalStatus.FAILED)
            if status == EvalStatus.NOT_EVALUATED:
                reasons = sorted({str(row.result.details.get("error")) for row in rows if row.result.details})
                failures.append(f"{name} for {agent_module} was not evaluated. No score was produced, so the "
                                f"threshold of {threshold} was never checked and this is not a score regression."
                                + (f" Why: {'; '.join(reasons)}" if reasons else ""))
            elif status == EvalStatus.FAILED:
                failures.append(f"{name} for {agent_module} Failed. Expected {threshold}, but got {overall}.")
            if print_detailed_results:
                AgentEvaluator._print_details(rows, status, overall, name, threshold)
        return failures

    @staticmethod
    def _higher_is_better(rows: list[_Row], threshold: float) -> bool:
        """Whether a metric passes at or above ``threshold`` (else at or below it), as
        google-adk reads it off the per-invocation results: every scored invocation
        off the threshold whose status is PASSED or FAILED says one way (a score above
        it that passed, or below it that failed: higher is better); when they all say
        the same, that; otherwise (none, or they disagree) higher is better. Only a
        custom metric's function can say lower is better (a cost, a latency)."""
        ways = {(row.result.score > threshold) == (row.result.eval_status == EvalStatus.PASSED)
                for row in rows if row.result.score is not None and row.result.score != threshold
                and row.result.eval_status in (EvalStatus.PASSED, EvalStatus.FAILED)}
        return ways.pop() if len(ways) == 1 else True

    @staticmethod
    def _print_details(rows: list[_Row], status: EvalStatus, overall: float | None, name: str,
                       threshold: float | None) -> None:
        print(f"Summary: `EvalStatus.{status.name}` for Metric: `{name}`. Expected threshold: `{threshold}`, "
              f"actual value: `{overall}`.")
        for number, row in enumerate(rows, 1):
            prompt = row.expected.user_content if row.expected is not None else row.actual.user_content
            print(f"  {number}. {row.result.eval_status.name} score={row.result.score} threshold={threshold}")
            print(f"     prompt:              {_text(prompt)!r}")
            if row.expected is not None:
                print(f"     expected_response:   {_text(row.expected.final_response)!r}")
            print(f"     actual_response:     {_text(row.actual.final_response)!r}")
            if row.expected is not None:
                print(f"     expected_tool_calls: {_calls_text(row.expected) or '(none)'}")
            print(f"     actual_tool_calls:   {_calls_text(row.actual) or '(none)'}")
        print("\n")

    # -- results out ----------------------------------------------------------------------------

    @staticmethod
    def _csv_rows(eval_set_id: str, eval_id: str, by_metric: dict[str, list[_Row]]) -> list[dict[str, Any]]:
        return [{"eval_set_id": eval_set_id, "eval_id": eval_id, "metric_name": name,
                 "threshold": row.result.threshold, "score": row.result.score,
                 "eval_status": row.result.eval_status.name,
                 "prompt": _text(row.expected.user_content if row.expected else row.actual.user_content),
                 "expected_response": _text(row.expected.final_response) if row.expected else "",
                 "actual_response": _text(row.actual.final_response),
                 "expected_tool_calls": _calls_text(row.expected), "actual_tool_calls": _calls_text(row.actual)}
                for name, rows in by_metric.items() for row in rows]

    @staticmethod
    def _write_csv(rows: list[dict[str, Any]], output_file: str) -> None:
        """Append ``rows`` to ``output_file`` (its folder made; the header once)."""
        if not rows:
            return
        Path(output_file).parent.mkdir(parents=True, exist_ok=True)
        fresh = not os.path.isfile(output_file)
        with open(output_file, "a", newline="", encoding="utf-8") as out:
            writer = csv.DictWriter(out, fieldnames=list(rows[0]))
            if fresh:
                writer.writeheader()
            writer.writerows(rows)

    @staticmethod
    def _save(manager: Any, app_name: str, eval_set_id: str, results: list[EvalCaseResult]) -> None:
        if isinstance(manager, EvalFiles):
            began = time.time()
            result_id = f"{app_name}_{eval_set_id}_{began:.6f}".replace(".", "_")
            manager.save_result(app_name, EvalSetResult(eval_set_result_id=result_id, eval_set_result_name=result_id,
                                                        eval_set_id=eval_set_id, eval_case_results=results,
                                                        creation_timestamp=began))
        else:
            manager.save_eval_set_result(app_name=app_name, eval_set_id=eval_set_id, eval_case_results=results)

