"""``eval``: eval sets run on an app of a host or (an agent folder) in this process,
scored, printed a line per case and a summary per set."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from .._exceptions import (
    ConfigError,
)
from ._common import paint, say_line
from ._talk import runner_for

__all__ = ["cmd_eval", "eval_differences"]


def _metrics(specs: list[str]) -> list[Any]:
    """``name[=threshold]`` options as EvalMetrics; none given: google-adk's defaults."""
    from ..evals import DEFAULT_THRESHOLDS, EvalMetric

    if not specs:
        return [EvalMetric(metric_name=name, threshold=threshold) for name, threshold in DEFAULT_THRESHOLDS.items()]
    metrics = []
    for spec in specs:
        name, _, threshold = spec.partition("=")
        try:
            metrics.append(EvalMetric(metric_name=name, threshold=float(threshold) if threshold else None))
        except ValueError:
            raise ConfigError(f"--metric {spec!r}: the threshold must be a number") from None
    return metrics


def _config_metrics(path: str) -> list[Any]:
    """The metrics of a google-adk eval config file; a missing or invalid one is a ConfigError."""
    from ..evals import EvalError, get_eval_metrics_from_config, get_evaluation_criteria_or_default

    if not Path(path).is_file():
        raise ConfigError(f"--config_file_path {path}: no such file")
    try:
        return get_eval_metrics_from_config(get_evaluation_criteria_or_default(path))
    except EvalError as exc:
        raise ConfigError(str(exc)) from None


def cmd_eval(args: argparse.Namespace) -> int:
    """Run eval sets (google-adk's ``*.evalset.json``; ``FILE:CASE,CASE`` picks cases)
    and print one line per case (its status and each scored metric), what a failed
    case got wrong, a summary per set; exit 1 if a case did not pass. An AGENT_DIR
    (a folder, and no ``--url`` or ``--port``) is evaluated in this process
    (:func:`_eval_folder`); an APP on the host. Before anything runs, a bad option, a
    metric not offered (a custom metric's function is imported, the working folder on
    the import path), a file that is no eval set or a case it lacks is a ConfigError
    (exit 2)."""
    if args.config_file_path and args.metric:
        raise ConfigError("give --metric or --config_file_path, not both")
    if Path(args.app).is_dir() and not args.url and not args.port:
        return _eval_folder(args)
    from ..evals import (
        EvalError,
        check_cases,
        check_metrics,
        parse_eval_targets,
        read_eval_set_file,
        run_eval_set,
    )

    metrics = _config_metrics(args.config_file_path) if args.config_file_path else _metrics(args.metric)
    picked = []
    try:
        if os.getcwd() not in sys.path:  # a custom metric's module is named from where the command runs
            sys.path.insert(0, os.getcwd())
        check_metrics(metrics)  # an unknown metric, a custom metric whose function does not import
        for target, case_ids in parse_eval_targets(args.files).items():
            eval_set = read_eval_set_file(target)
            check_cases(eval_set, case_ids, target)
            picked.append((eval_set, case_ids))
    except EvalError as exc:
        raise ConfigError(str(exc)) from None
    runner, close = runner_for(args)
    results = []
    try:
        for eval_set, case_ids in picked:
            result = run_eval_set(runner, args.app, eval_set, metrics, case_ids)
            results.append(result)
            _print_eval_set(result, {}, args.json, args.print_detailed_results)
    finally:
        close()
    return _eval_summary(results, args.json)


def _eval_folder(args: argparse.Namespace) -> int:
    """``eval AGENT_DIR EVAL_SET[:CASE,...]...``, google-adk's ``adk eval``, in this
    process (``evals._folder``), in order: the folder loaded as ``run AGENT_DIR`` loads
    it (its ``.env`` first); every eval set read (a file, or the id of a set in
    AGENT_DIR) and its picked cases checked; the metrics (``--metric``, else the eval
    config: ``--config_file_path``, else ``test_config.json`` beside the one file
    named, else the defaults) checked; then each set's cases run once and scored, and
    printed as they are done; each set's result is saved where google-adk's ``adk eval``
    saves it, ``AGENT_DIR/.adk/eval_history/<app>_<set>_<time>.evalset_result.json``
    (its path said on standard error). Any failure before the run is a ConfigError
    (exit 2); a result that cannot be saved is an error line, and the exit code is 1."""
    import asyncio

    from .._repl import load_agent_folder
    from ..evals import (
        EvalError,
        check_cases,
        check_metrics,
        check_simulator,
        eval_config_for,
        eval_set_for,
        evaluate_app,
        get_eval_metrics_from_config,
        parse_eval_targets,
    )
    from ..evals._files import HISTORY_DIR, save_result_file

    app, _app_name, folder = load_agent_folder(args.app)
    targets = parse_eval_targets(args.files)
    try:
        picked = []
        for target, case_ids in targets.items():
            eval_set = eval_set_for(target, folder)
            check_cases(eval_set, case_ids, target)
            picked.append((eval_set, case_ids))
        simulated: dict[str, Any] | None = None
        if args.metric:
            metrics = _metrics(args.metric)
        else:
            config = eval_config_for(args.config_file_path, list(targets))
            metrics, simulated = get_eval_metrics_from_config(config), config.user_simulator_config
        check_metrics(metrics)
        check_simulator([eval_set for eval_set, _ in picked], simulated)
    except EvalError as exc:
        raise ConfigError(str(exc)) from None

    unsaved: list[str] = []

    async def evaluate_all() -> list[Any]:
        done = []
        for eval_set, case_ids in picked:
            ran = await evaluate_app(app, eval_set, metrics, case_ids, simulated, result_prefix=folder.name)
            _print_eval_set(ran.result, ran.errors, args.json, args.print_detailed_results)
            try:
                saved = save_result_file(folder, ran.result, ran.sessions)
                print(f"eval results saved: {saved}", file=sys.stderr, flush=True)
            except (OSError, EvalError) as exc:
                unsaved.append(eval_set.eval_set_id)
                say_line(f"the results of eval set {eval_set.eval_set_id} were not saved in "
                     f"{folder / HISTORY_DIR}: {exc}", True)
            done.append(ran.result)
        return done

    verdict = _eval_summary(asyncio.run(evaluate_all()), args.json)
    return 1 if unsaved else verdict


def _print_eval_set(result: Any, errors: dict[str, str], as_json: bool, detailed: bool) -> None:
    """One set's results: ``--json``, the result as google-adk serves it; else a line per
    case (``PASS``, or its status in red, then each metric's score but the
    informational ones), the error that stopped its turns, and what it got wrong (with
    ``detailed``, every invocation and metric, passed ones too)."""
    from ..evals import EvalStatus

    if as_json:
        print(json.dumps(result.wire()), flush=True)
        return
    for case in result.eval_case_results:
        ok = case.final_eval_status == EvalStatus.PASSED
        scores = ", ".join(f"{m.metric_name} {m.score:.2f}" if m.score is not None else f"{m.metric_name} -"
                           for m in case.overall_eval_metric_results if m.eval_status != EvalStatus.INFORMATIONAL)
        status = paint("32", "PASS") if ok else paint("31", case.final_eval_status.name)
        print(f"{status} {result.eval_set_id}/{case.eval_id}: {scores or '(no metric results)'}", flush=True)
        if case.eval_id in errors:
            print(f"  error: {errors[case.eval_id]}", flush=True)
        if detailed:
            for metric in case.overall_eval_metric_results:
                print(f"  metric {metric.metric_name}: {metric.eval_status.name}, score {_number(metric.score)}, "
                      f"threshold {_number(metric.threshold)}", flush=True)
        for line in eval_differences(case, every=True) if detailed else [] if ok else eval_differences(case):
            print(line, flush=True)


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _eval_summary(results: list[Any], as_json: bool) -> int:
    """google-adk's ``Eval Run Summary`` (cases passed and failed per set; not with
    ``--json``); 0 when every case passed, else 1."""
    from ..evals import EvalStatus

    counts: dict[str, list[int]] = {}
    for result in results:
        for case in result.eval_case_results:
            count = counts.setdefault(result.eval_set_id, [0, 0])
            count[0 if case.final_eval_status == EvalStatus.PASSED else 1] += 1
    if not as_json:
        print("Eval Run Summary", flush=True)
        for eval_set_id, (passed, failed) in counts.items():
            print(f"{eval_set_id}:\n  Tests passed: {passed}\n  Tests failed: {failed}", flush=True)
    return 0 if counts and not any(failed for _, failed in counts.values()) else 1


def eval_differences(case: Any, *, every: bool = False) -> list[str]:
    """What a case that did not pass got wrong, invocation by invocation: the user's
    message, then each metric that failed there, and the expected against the actual
    tool calls and final response. ``every`` (``--print_detailed_results``): every
    invocation, those that passed too."""
    from ..evals import EvalStatus

    lines = []
    for number, row in enumerate(case.eval_metric_result_per_invocation, 1):
        failed = [m for m in row.eval_metric_results if m.eval_status == EvalStatus.FAILED]
        if not failed and row.eval_metric_results and not every:
            continue
        actual, expected = row.actual_invocation, row.expected_invocation
        lines.append(f"  invocation {number}: {_content_text(actual.user_content)!r}"
                     + "".join(f"; {m.metric_name} {m.score:.2f} < {m.threshold}" if m.score is not None
                               and m.threshold is not None else f"; {m.metric_name} failed" for m in failed))
        if expected is not None:
            lines.append(f"    expected tools:    {_calls_text(expected.tool_calls())}")
        lines.append(f"    actual tools:      {_calls_text(actual.tool_calls())}")
        if expected is not None:
            lines.append(f"    expected response: {_content_text(expected.final_response)!r}")
        lines.append(f"    actual response:   {_content_text(actual.final_response)!r}")
        if every:
            lines.append("    metrics:           " + (", ".join(
                f"{m.metric_name} {m.eval_status.name} {_number(m.score)}" for m in row.eval_metric_results)
                or "(none)"))
    return lines


def _content_text(content: Any) -> str:
    return "".join(part.text for part in content.parts if part.text) if content is not None else ""


def _calls_text(calls: list[Any]) -> str:
    return ", ".join(f"{call.name}({json.dumps(call.args, default=str)})" for call in calls) or "(none)"


