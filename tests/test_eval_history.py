"""Eval history: ``adk-actors eval AGENT_DIR`` saves each eval set's results where
google-adk's ``adk eval`` saves its own (``AGENT_DIR/.adk/eval_history/<app>_<set>_<time>
.evalset_result.json``), in the same JSON; a host serving the folder (``adk-actors web
DIR``) lists and answers them on ``/dev/apps/<app>/eval_results``, with google-adk's and
an older host's, and keeps the results of its own runs there too.

Real processes: google-adk's ``adk`` console script and ours on the same agent (ours
with its imports rewritten), the Gemini REST stand-in of ``test_eval_in_process`` on
127.0.0.1 as their model, its key and endpoint given by the folder's ``.env``.

google-adk's ``adk eval`` (seconds of imports) runs once for the module
(``google_adks_eval``): on the sets ``mixed`` and ``passing:paris``, detailed; what it
printed is compared with ours case by case (``test_eval_in_process``'s cases passed and
failed alike), and the file it saved for ``mixed`` with ours.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import test_eval_in_process
from google_adk_harness import rewritten
from test_eval_in_process import (
    ADK,
    AGENT,
    PARIS,
    WRONG_TOOL,
    _environment,
    _folder,
    case_lines,
    eval_cli,
    sets,
)

from supervision.lowlevel import free_port
from supervision.testing import kill_marked_processes, process_marker, wait_until

ROOT = Path(__file__).resolve().parents[1]
stand_in_server = test_eval_in_process.stand_in_server  # its module-scoped Gemini stand-in, fixtures here too
stand_in = test_eval_in_process.stand_in
SAVED = re.compile(r"^weather_mixed_\d+\.\d+\.evalset_result\.json$")


def history(folder: Path) -> list[Path]:
    return sorted((folder / ".adk" / "eval_history").glob("*.evalset_result.json"))


def shapes(result: dict[str, Any]) -> dict[str, set[frozenset[str]]]:
    """The field names of each kind of object of the eval kit in a result file (not of
    the contents and events inside them, whose nulls google-genai writes and we omit)."""
    found: dict[str, set[frozenset[str]]] = {kind: set() for kind in (
        "result", "case", "metric", "details", "row", "invocation", "session")}
    found["result"].add(frozenset(result))
    for case in result["eval_case_results"]:
        found["case"].add(frozenset(case))
        found["session"].add(frozenset(case["session_details"]))
        metrics = list(case["overall_eval_metric_results"])
        for row in case["eval_metric_result_per_invocation"]:
            found["row"].add(frozenset(row))
            found["invocation"].update(frozenset(row[side]) for side in ("actual_invocation", "expected_invocation"))
            metrics.extend(row["eval_metric_results"])
        found["metric"].update(frozenset(metric) for metric in metrics)
        found["details"].update(frozenset(metric["details"]) for metric in metrics)
    return found


def statuses(result: dict[str, Any]) -> dict[str, int]:
    return {case["eval_id"]: case["final_eval_status"] for case in result["eval_case_results"]}


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory, stand_in: str,
              ) -> tuple[Path, subprocess.CompletedProcess[str], Path]:
    """``adk-actors eval AGENT_DIR mixed`` run once, on the agent with its imports
    rewritten, for the two tests that start from the result it saves: the agent folder
    it ran on, what it said, and a copy of that folder as the run left it (for the test
    that adds to it; the other adds google-adk's result to the first)."""
    root = tmp_path_factory.mktemp("evaluated")
    ours = _folder(root / "ran", rewritten(AGENT), stand_in)
    ran = eval_cli(ours, *sets(ours, "mixed"))
    shutil.copytree(root / "ran", root / "as-left")
    return ours, ran, root / "as-left" / "weather"


#: The sets google-adk's ``adk eval`` is run on (``google_adks_eval``), and ours to compare.
PICKS = ("mixed", "passing:paris")


@pytest.fixture(scope="module")
def google_adks_eval(tmp_path_factory: pytest.TempPathFactory, stand_in: str,
                     ) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """google-adk's ``adk eval AGENT_DIR`` on ``PICKS`` with ``--print_detailed_results``,
    run once for the module's two tests that compare with it (its imports take seconds):
    the agent folder it ran on (its own source, not rewritten), and what it said."""
    if not ADK.exists():
        pytest.skip("google-adk's adk console script is not installed")
    theirs = _folder(tmp_path_factory.mktemp("google-adk") / "theirs", AGENT, stand_in)
    done = subprocess.run([str(ADK), "eval", str(theirs), *sets(theirs, *PICKS), "--print_detailed_results"],
                          cwd=theirs.parent, env=_environment(), capture_output=True, text=True, timeout=180)
    return theirs, done


def test_google_adks_adk_eval_passes_and_fails_the_same_cases(
        tmp_path: Path, stand_in: str, google_adks_eval: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    """google-adk's ``adk eval`` and ours (``test_eval_in_process``'s folder, imports
    rewritten) on the same sets: the same cases pass and fail, the same exit code."""
    _, done = google_adks_eval
    found = dict(zip(re.findall(r"^Eval Set Id: (\S+)\nEval Id: (\S+)", done.stdout, re.M),
                     re.findall(r"^Overall Eval Status: (\w+)", done.stdout, re.M), strict=True))
    their_cases = {f"{eval_set}/{case}": "PASS" if status == "PASSED" else status
                   for (eval_set, case), status in found.items()}
    assert their_cases, done.stdout + done.stderr

    ours = _folder(tmp_path / "ours", rewritten(AGENT), stand_in)
    ran = eval_cli(ours, *sets(ours, *PICKS))
    assert case_lines(ran.stdout) == their_cases == {"mixed/paris": "PASS", "mixed/wrong_tool": "FAILED",
                                                     "mixed/hello_then_oslo": "PASS", "passing/paris": "PASS"}
    assert ran.returncode == done.returncode == 1


def test_ours_saves_the_file_google_adks_adk_eval_saves(
        tmp_path: Path, google_adks_eval: tuple[Path, subprocess.CompletedProcess[str]],
        evaluated: tuple[Path, subprocess.CompletedProcess[str], Path]) -> None:
    from google.adk.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager

    from adk_actors.evals import EvalFiles

    theirs, done = google_adks_eval
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]  # a case of "mixed" fails
    ours, ran, _ = evaluated  # ours: eval AGENT_DIR mixed
    assert ran.returncode == 1, ran.stdout + ran.stderr

    # google-adk saved a file for each set it ran (PICKS), ours one for its one set
    their_files, [our_file] = history(theirs), history(ours)
    assert sorted(re.sub(r"_\d+\.\d+\.evalset_result\.json$", "", p.name) for p in their_files) == [
        "weather_mixed", "weather_passing"], their_files
    [their_file] = [p for p in their_files if p.name.startswith("weather_mixed_")]
    assert SAVED.match(their_file.name) and SAVED.match(our_file.name), (their_file, our_file)
    assert f"eval results saved: {our_file}\n" in ran.stderr
    their_result, our_result = json.loads(their_file.read_text()), json.loads(our_file.read_text())
    assert our_result["eval_set_result_id"] == our_result["eval_set_result_name"] == our_file.name.split(".eval")[0]
    assert shapes(our_result) == shapes(their_result)
    assert statuses(our_result) == statuses(their_result) == {"paris": 1, "wrong_tool": 2, "hello_then_oslo": 1}
    sessions = [case["session_details"] for case in our_result["eval_case_results"]]
    assert [s["id"] for s in sessions] == [case["session_id"] for case in our_result["eval_case_results"]]
    assert [e["content"]["parts"][0]["text"] for e in sessions[0]["events"] if e["author"] == "user"] == [
        "What is the weather in Paris?"]

    # each side reads the other's history, through its own reader, as the folder's own
    mine = LocalEvalSetResultsManager(agents_dir=str(ours.parent))
    [listed] = mine.list_eval_set_results("weather")
    read = mine.get_eval_set_result("weather", listed)
    assert read.eval_set_id == "mixed" and [c.eval_id for c in read.eval_case_results] == list(statuses(our_result))
    shutil.copy(their_file, our_file.parent)
    files = EvalFiles(tmp_path / "unused", agents_dir=ours.parent)
    assert files.list_results("weather") == sorted(p.name.removesuffix(".evalset_result.json")
                                                   for p in (their_file, our_file))
    copied = files.get_result("weather", their_file.name.removesuffix(".evalset_result.json"))
    assert {c.eval_id: int(c.final_eval_status) for c in copied.eval_case_results} == statuses(their_result)


def test_a_result_that_cannot_be_saved_is_an_error_and_exit_1(tmp_path: Path, stand_in: str) -> None:
    ours = _folder(tmp_path / "ours", rewritten(AGENT), stand_in)
    (ours / ".adk").write_text("a file where the folder should be")
    ran = eval_cli(ours, *sets(ours, "passing"))
    assert "passing:\n  Tests passed: 2\n  Tests failed: 0\n" in ran.stdout
    assert ran.returncode == 1
    assert re.search(r"^error: the results of eval set passing were not saved in \S+/weather/\.adk/eval_history: ",
                     ran.stderr, re.M), ran.stderr
    assert "Traceback" not in ran.stderr


@contextmanager
def web(agents: Path, tmp_path: Path) -> Iterator[str]:
    """``adk-actors web AGENTS`` on free ports until it watches; then SIGTERM, and every
    process it started killed."""
    port, admin = free_port(), free_port()
    out, err = tmp_path / "web.out", tmp_path / "web.err"
    with process_marker(tmp_path) as (marker, fd), open(out, "w") as stdout, open(err, "w") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "adk_actors.cli", "web", str(agents), "--port", str(port),
                                    "--admin_port", str(admin)], cwd=tmp_path, stdout=stdout, stderr=stderr,
                                   pass_fds=(fd,), env={**_environment(), "PYTHONPATH": str(ROOT)})
    try:
        wait_until(lambda: "watching" in out.read_text() or process.poll() is not None, timeout=90)
        assert process.poll() is None, err.read_text()
        yield f"http://127.0.0.1:{port}"
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
        kill_marked_processes(marker, grace=15)


def test_a_served_folder_answers_every_saved_result_and_saves_its_runs_beside_them(
        tmp_path: Path, evaluated: tuple[Path, subprocess.CompletedProcess[str], Path]) -> None:
    from google.adk.evaluation.eval_result import EvalSetResult

    _, ran, as_left = evaluated  # eval AGENT_DIR mixed, run once by the module: its folder as it left it
    assert ran.returncode == 1, ran.stdout + ran.stderr
    ours = Path(shutil.copytree(as_left.parent, tmp_path / "ours")) / "weather"
    [cli_file] = history(ours)
    # an older host kept its sets and results under DIR/.adk-actors/evals/<app>/
    old = ours.parent / ".adk-actors" / "evals" / "weather"
    (old / "eval_history").mkdir(parents=True)
    (old / "eval_history" / "weather_old_1.evalset_result.json").write_text(json.dumps(
        {"eval_set_result_id": "weather_old_1", "eval_set_id": "old", "eval_case_results": []}))
    (old / "old.evalset.json").write_text(json.dumps({"eval_set_id": "old", "eval_cases": [PARIS]}))
    (ours / "kept.evalset.json").write_text(json.dumps({"eval_set_id": "kept", "eval_cases": [PARIS, WRONG_TOOL]}))

    cli_id = cli_file.name.removesuffix(".evalset_result.json")
    with web(ours.parent, tmp_path) as url, httpx.Client(base_url=url, timeout=60) as http:
        base = "/dev/apps/weather"
        assert http.get(f"{base}/eval_results").json() == sorted([cli_id, "weather_old_1"])
        assert http.get(f"{base}/eval-results").json() == {"evalResultIds": sorted([cli_id, "weather_old_1"])}
        from_cli = http.get(f"{base}/eval_results/{cli_id}")
        assert from_cli.status_code == 200, from_cli.text
        stored = EvalSetResult.model_validate(from_cli.json())
        assert stored.eval_set_id == "mixed" and len(stored.eval_case_results) == 3
        assert http.get(f"{base}/eval-results/weather_old_1").json()["evalSetId"] == "old"
        assert http.get(f"{base}/eval_results/weather_nope_1.5").status_code == 404
        assert http.get(f"{base}/eval_results/..").status_code in (400, 404)

        assert http.get(f"{base}/eval_sets").json() == ["kept", "old"]
        metrics = [{"metric_name": "tool_trajectory_avg_score", "threshold": 1.0}]
        run = http.post(f"{base}/eval-sets/kept/run", json={"eval_metrics": metrics})
        assert run.status_code == 200, run.text
        assert [r["finalEvalStatus"] for r in run.json()["runEvalResults"]] == [1, 2]
        made = http.post(f"{base}/eval-sets", json={"eval_set": {"eval_set_id": "from_console"}})
        assert made.status_code == 200, made.text
        listed = http.get(f"{base}/eval_results").json()

    # the host's run was saved in the agent folder, google-adk's file, the sessions in it
    [run_file] = [p for p in history(ours) if p != cli_file]
    assert re.match(r"^weather_kept_\d+\.\d+\.evalset_result\.json$", run_file.name), run_file.name
    assert run_file.name.removesuffix(".evalset_result.json") in listed and len(listed) == 3
    from_host = json.loads(run_file.read_text())
    assert statuses(from_host) == {"paris": 1, "wrong_tool": 2}
    assert shapes(from_host)["case"] == shapes(json.loads(cli_file.read_text()))["case"]
    assert all(case["session_details"]["events"] for case in from_host["eval_case_results"])
    assert not (old / ".adk").exists() and sorted(p.name for p in (old / "eval_history").iterdir()) == [
        "weather_old_1.evalset_result.json"]
    # ... and a set made in the console is a file of the agent folder, which `eval AGENT_DIR ID` names
    assert (ours / "from_console.evalset.json").is_file() and not (old / "from_console.evalset.json").exists()
    by_id = eval_cli(ours, "kept:paris")
    assert by_id.returncode == 0, by_id.stdout + by_id.stderr
    assert len(history(ours)) == 3
    assert os.stat(run_file).st_mode & 0o777 == 0o600


def test_an_older_hosts_files_stay_readable_and_move_home_when_changed(tmp_path: Path) -> None:
    """EvalFiles on their own: a set an older host kept under ``data/evals/<app>`` is read
    there, and written to the agent folder once changed; google-adk's older result files
    (the JSON double-encoded) are read; a result id is checked before it names a path."""
    from adk_actors.evals import EvalCase, EvalError, EvalFiles, EvalNotFound

    agents, data = tmp_path / "agents", tmp_path / "data" / "evals"
    (agents / "weather").mkdir(parents=True)
    (data / "weather").mkdir(parents=True)
    (data / "weather" / "old.evalset.json").write_text(json.dumps({"eval_set_id": "old", "eval_cases": []}))
    files = EvalFiles(data, agents_dir=agents)
    assert files.home("weather") == agents / "weather" and files.home("configured") == data / "configured"
    assert files.list_sets("weather") == ["old"] and files.get_set("weather", "old").eval_cases == []
    files.add_case("weather", "old", EvalCase.model_validate(PARIS))
    assert not (data / "weather" / "old.evalset.json").exists()
    assert [c.eval_id for c in files.get_set("weather", "old").eval_cases] == ["paris"]
    assert json.loads((agents / "weather" / "old.evalset.json").read_text())["eval_cases"][0]["eval_id"] == "paris"

    history_dir = agents / "weather" / ".adk" / "eval_history"
    history_dir.mkdir(parents=True)
    encoded = json.dumps(json.dumps({"eval_set_result_id": "weather_old_2.5", "eval_set_id": "old",
                                     "eval_case_results": []}))
    (history_dir / "weather_old_2.5.evalset_result.json").write_text(encoded)
    assert files.list_results("weather") == ["weather_old_2.5"]
    assert files.get_result("weather", "weather_old_2.5").eval_set_id == "old"
    for bad in ("..", "a/b", "../weather_old_2.5"):
        with pytest.raises(EvalError, match="is not valid"):
            files.get_result("weather", bad)
    with pytest.raises(EvalNotFound):
        files.get_result("weather", "weather_old_3.5")
    (history_dir / "broken.evalset_result.json").write_text("{not json")
    with pytest.raises(EvalError, match="'broken' of 'weather' is not a valid eval set result"):
        files.get_result("weather", "broken")
