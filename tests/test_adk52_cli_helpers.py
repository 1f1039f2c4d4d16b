"""google-adk's CLI helper modules that code and scripts call (issue 52), at google-adk's
paths under ``adk_actors.cli``: ``cli`` (``adk run``'s modes as functions, on
``adk-actors run``), ``cli_eval`` (on ``adk-actors eval``'s loading, parsing and
printing) and ``agent_graph`` (on the console's agent drawing). Each is driven side by
side with google-adk's own (installed in .venv) on the same agent folders and inputs, and
``agent_test_runner``'s helpers (replay test files, the replaying model, the runner, the
event normalizing) on this kit's scripted model and Runner:
the same transcript, the same files written, the same kinds of error; printing whose
wording is ours by rule (an eval result, a graph's DOT text) is compared by what it says."""

from __future__ import annotations

import asyncio
import builtins
import importlib
import importlib.util
import itertools
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent as GoogleLlmAgent
from google.adk.cli import agent_graph as g_graph
from google.adk.cli import agent_test_runner as g_runner
from google.adk.cli import cli as g_cli
from google.adk.cli import cli_eval as g_eval
from google.adk.evaluation.eval_result import EvalCaseResult as GoogleEvalCaseResult
from google.adk.sessions import InMemorySessionService as GoogleSessions

from adk_actors.agents import LlmAgent
from adk_actors.cli import agent_graph as o_graph
from adk_actors.cli import agent_test_runner as o_runner
from adk_actors.cli import cli as o_cli
from adk_actors.cli import cli_eval as o_eval
from adk_actors.evaluation.eval_result import EvalCaseResult
from adk_actors.sessions import InMemorySessionService

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

NAMES = {
    "cli.cli": ("InputFile", "run_cli", "run_interactively", "run_input_file", "run_once_cli"),
    "cli.cli_eval": ("get_root_agent", "get_app_or_root_agent", "try_get_reset_func", "parse_and_get_evals_to_run",
                     "pretty_print_eval_result", "get_eval_sets_manager"),
    "cli.agent_graph": ("build_graph", "get_agent_graph"),
    "cli.agent_test_runner": ("MockModel", "get_test_files", "make_sort_key", "normalize_events", "InMemoryRunner"),
}

GOOGLE_AGENT = '''
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.genai import types


class Echo(BaseLlm):
    model: str = "echo"

    async def generate_content_async(self, llm_request, stream=False):
        last = "".join(p.text or "" for p in llm_request.contents[-1].parts)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=f"echo: {last}")]))


root_agent = LlmAgent(name="greeter", model=Echo(), instruction="repeat")
'''

OUR_AGENT = '''
from adk_actors.agents import LlmAgent
from adk_actors.apps import App
from adk_actors.models import ScriptedModel


def _echo(request):
    return "echo: " + "".join(p.text or "" for p in request.contents[-1].parts)


root_agent = LlmAgent(name="greeter", model=ScriptedModel(fallback=_echo), instruction="repeat")
'''

_numbers = itertools.count()


def _folders(tmp_path: Path, extra: str = "") -> tuple[Path, Path]:
    """A google-adk agent folder and ours (the same agent, each kit's echoing model),
    named apart so that their packages never meet in ``sys.modules``; ``extra`` is
    added to both agent modules."""
    number = next(_numbers)
    made = []
    for side, source in (("g", GOOGLE_AGENT), ("o", OUR_AGENT)):
        folder = tmp_path / side / f"{side}_agent_{number}"
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text("from . import agent\n")
        (folder / "agent.py").write_text(source + extra)
        made.append(folder)
    return made[0], made[1]


@pytest.fixture
def typed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Lines ``input()`` returns in turn (its end: EOFError)."""
    lines: list[str] = []

    def read(prompt: str = "") -> str:
        print(prompt, end="")
        if not lines:
            raise EOFError
        return lines.pop(0)

    monkeypatch.setattr(builtins, "input", read)
    yield lines


def _root_agent(folder: Path) -> Any:
    """The root agent of ``folder``'s ``agent.py``, imported under a name of its own."""
    spec = importlib.util.spec_from_file_location(f"{folder.name}_direct", folder / "agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.root_agent


def _fresh(module: Any) -> Any:
    """``module``; for google-adk's ``cli_eval``, its ``agent`` package forgotten first
    (it imports every folder under that one name, and would keep the first one's
    ``agent.agent``)."""
    if module is g_eval:
        for name in [name for name in sys.modules if name == "agent" or name.startswith("agent.")]:
            del sys.modules[name]
    return module


def _run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_every_name_resolves_at_google_adks_path() -> None:
    for module, names in NAMES.items():
        ours = importlib.import_module(f"adk_actors.{module}")
        google = importlib.import_module(f"google.adk.{module}")
        for name in names:
            assert hasattr(google, name), (module, name)
            assert callable(getattr(ours, name)), (module, name)


# -- cli ----------------------------------------------------------------------------


def _transcript(text: str) -> list[str]:
    """The printed lines, without the saved file's path (each side's own folder)."""
    return [line for line in text.splitlines() if not line.startswith("Session saved to")]


def _saved(path: Path) -> dict[str, Any]:
    """What a saved session file holds, ids and times left out."""
    found = json.loads(path.read_text())
    return {"keys": sorted(found), "userId": found["userId"], "state": sorted(found["state"]),
            "events": [(e["author"], [p.get("text") for p in e["content"]["parts"]]) for e in found["events"]]}


def test_run_cli_replay_prints_the_same_transcript_and_saves_the_same_session(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    g_folder, o_folder = _folders(tmp_path)
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps({"state": {"k": 1}, "queries": ["hi", "there"]}))
    printed = []
    for module, folder in ((g_cli, g_folder), (o_cli, o_folder)):
        _run(module.run_cli(agent_parent_dir=str(folder.parent), agent_folder_name=folder.name,
                            input_file=str(replay), save_session=True, session_id="saved", in_memory=True))
        printed.append(capsys.readouterr().out)
    assert _transcript(printed[0]) == _transcript(printed[1]) == [
        "[user]: hi", "[greeter]: echo: hi", "[user]: there", "[greeter]: echo: there"]
    assert _saved(g_folder / "saved.session.json") == _saved(o_folder / "saved.session.json")
    assert f"Session saved to {o_folder / 'saved.session.json'}" in printed[1]


def test_run_cli_resumes_a_session_google_adk_saved_then_reads_turns(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], typed: list[str]) -> None:
    g_folder, o_folder = _folders(tmp_path)
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps({"state": {}, "queries": ["first"]}))
    _run(g_cli.run_cli(agent_parent_dir=str(g_folder.parent), agent_folder_name=g_folder.name, input_file=str(replay),
                       save_session=True, session_id="one", in_memory=True))
    capsys.readouterr()
    printed = []
    for module, folder in ((g_cli, g_folder), (o_cli, o_folder)):
        typed[:] = ["second", "", "exit"]
        _run(module.run_cli(agent_parent_dir=str(folder.parent), agent_folder_name=folder.name,
                            saved_session_file=str(g_folder / "one.session.json"), save_session=False,
                            in_memory=True))
        printed.append(capsys.readouterr().out)
    assert printed[0] == printed[1]
    assert "[greeter]: echo: first" in printed[1] and "[greeter]: echo: second" in printed[1]


def test_run_interactively_on_the_callers_session(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  typed: list[str]) -> None:
    printed = []
    for module, agent_class, sessions, folder in ((g_cli, GoogleLlmAgent, GoogleSessions(), "g"),
                                                  (o_cli, LlmAgent, InMemorySessionService(), "o")):
        g_folder, o_folder = _folders(tmp_path / folder)
        agent = _root_agent(g_folder if folder == "g" else o_folder)
        session = _run(sessions.create_session(app_name="echo_app", user_id="u1"))
        typed[:] = ["hello", "   ", "again", "exit"]
        _run(module.run_interactively(agent, None, session, sessions, None))
        printed.append(capsys.readouterr().out)
        assert isinstance(agent, agent_class)
        stored = _run(sessions.get_session(app_name="echo_app", user_id="u1", session_id=session.id))
        assert [e.author for e in stored.events] == ["user", "greeter", "user", "greeter"]
    assert printed[0] == printed[1]
    assert "[greeter]: echo: again" in printed[1]


def test_run_input_file_returns_the_new_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps({"state": {"lang": "fr"}, "queries": ["bonjour"]}))
    made = []
    for module, sessions, side in ((g_cli, GoogleSessions(), "g"), (o_cli, InMemorySessionService(), "o")):
        folders = _folders(tmp_path / side)
        agent = _root_agent(folders[0 if side == "g" else 1])
        session = _run(module.run_input_file(app_name="echo_app", user_id="u2", agent_or_app=agent,
                                             artifact_service=None, session_service=sessions,
                                             credential_service=None, input_path=str(replay)))
        stored = _run(sessions.get_session(app_name="echo_app", user_id="u2", session_id=session.id))
        made.append((capsys.readouterr().out, session.user_id, sorted(session.state), stored.state["lang"],
                     len(stored.events)))
    assert made[0] == made[1] == ("[user]: bonjour\n[greeter]: echo: bonjour\n", "u2", ["_time", "lang"], "fr", 2)


def test_input_file_is_google_adks_model() -> None:
    shape = {"state": {"a": 1}, "queries": ["x"]}
    assert o_cli.InputFile.model_validate(shape).model_dump() == g_cli.InputFile.model_validate(shape).model_dump()
    with pytest.raises(ValueError):
        o_cli.InputFile.model_validate({"state": {}})


def test_run_once_cli_runs_one_query_and_refuses_bad_options_the_same_way(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    g_folder, o_folder = _folders(tmp_path)
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps({"state": {}, "queries": ["x"]}))
    for module, folder in ((g_cli, g_folder), (o_cli, o_folder)):
        where = {"agent_parent_dir": str(folder.parent), "agent_folder_name": folder.name, "in_memory": True}
        assert _run(module.run_once_cli(query="ping", session_id="s9", **where)) == 0
        found = capsys.readouterr()
        assert found.out == "[greeter]: echo: ping\n"
        assert "Session ID: s9" in found.err
        assert _run(module.run_once_cli(query="ping", replay=str(replay), **where)) == 1
        assert capsys.readouterr().err.startswith("Error: ")
        assert _run(module.run_once_cli(query="ping", state_str="{not json", **where)) == 1
        assert capsys.readouterr().err.startswith("Error: ")
        stored = {"agent_parent_dir": str(folder.parent), "agent_folder_name": folder.name}
        assert _run(module.run_once_cli(query="pong", use_local_storage=False, **stored)) == 0
        assert capsys.readouterr().out == "[greeter]: echo: pong\n"
        assert sorted(p.name for p in folder.parent.iterdir()) == [folder.name]  # nothing stored on disk


def test_run_cli_bad_state_and_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _g_folder, o_folder = _folders(tmp_path)
    with pytest.raises(ValueError):  # google-adk: the folder is not found either way
        _run(o_cli.run_cli(agent_parent_dir=str(tmp_path), agent_folder_name="nowhere", save_session=False))
    with pytest.raises(ValueError):
        _run(g_cli.run_cli(agent_parent_dir=str(tmp_path), agent_folder_name="nowhere", save_session=False))
    with pytest.raises(ValueError, match="--state"):  # ours: refused before the REPL (google-adk prints it)
        _run(o_cli.run_cli(agent_parent_dir=str(o_folder.parent), agent_folder_name=o_folder.name,
                           save_session=False, state_str="[", in_memory=True))


# -- cli_eval -----------------------------------------------------------------------


def test_get_app_or_root_agent_and_the_reset_function(tmp_path: Path) -> None:
    extra = "\n\ndef reset_data():\n    return 'reset'\n"
    for module, folder in zip((g_eval, o_eval), _folders(tmp_path, extra), strict=True):
        app, root = _run(_fresh(module).get_app_or_root_agent(str(folder)))
        assert app is None and root.name == "greeter"
        assert _run(_fresh(module).get_root_agent(str(folder))).name == "greeter"
        assert _fresh(module).try_get_reset_func(str(folder))() == "reset"
    with_app = "\n\napp = App(name='echo_app', root_agent=root_agent)\n"
    for module, folder in zip((g_eval, o_eval), _folders(tmp_path / "apps", with_app), strict=True):
        app, root = _run(_fresh(module).get_app_or_root_agent(str(folder)))
        assert app is not None and app.name == "echo_app" and app.root_agent is root
        assert _fresh(module).try_get_reset_func(str(folder)) is None


def test_an_agent_module_without_a_root_agent_is_a_value_error(tmp_path: Path) -> None:
    for module, folder in zip((g_eval, o_eval), _folders(tmp_path, "\n\ndel root_agent\n"), strict=True):
        with pytest.raises(ValueError):
            _run(_fresh(module).get_app_or_root_agent(str(folder)))


def test_parse_and_get_evals_to_run_reads_the_same_targets() -> None:
    for arguments in (["a.evalset.json:c1,c2", "b.evalset.json", "a.evalset.json:c3"], ["set_id:x, ,y"],
                      ["only.evalset.json"], ["dir/s.evalset.json:", "dir/s.evalset.json:z"]):
        assert o_eval.parse_and_get_evals_to_run(arguments) == g_eval.parse_and_get_evals_to_run(arguments)


CASE = {"evalSetId": "set1", "evalId": "case1", "finalEvalStatus": 2, "sessionId": "s",
        "overallEvalMetricResults": [{"metricName": "response_match_score", "threshold": 0.8, "score": 0.25,
                                      "evalStatus": 2}],
        "evalMetricResultPerInvocation": [{
            "actualInvocation": {"invocationId": "i", "userContent": {"role": "user", "parts": [{"text": "hi"}]},
                                 "finalResponse": {"role": "model", "parts": [{"text": "hello"}]}},
            "expectedInvocation": {"invocationId": "e", "userContent": {"role": "user", "parts": [{"text": "hi"}]},
                                   "finalResponse": {"role": "model", "parts": [{"text": "good day"}]}},
            "evalMetricResults": [{"metricName": "response_match_score", "threshold": 0.8, "score": 0.25,
                                   "evalStatus": 2}]}]}


def test_pretty_print_eval_result_tells_the_same_result(capsys: pytest.CaptureFixture[str]) -> None:
    g_eval.pretty_print_eval_result(GoogleEvalCaseResult.model_validate(CASE))
    google = capsys.readouterr().out
    o_eval.pretty_print_eval_result(EvalCaseResult.model_validate(CASE))
    ours = capsys.readouterr().out
    # the wording is ours (adk-actors eval --print_detailed_results); what it says is the same
    for said in ("set1", "case1", "FAILED", "response_match_score", "0.25", "0.8", "hi", "hello", "good day"):
        assert said in google and said in ours, said


def test_get_eval_sets_manager_reads_the_agents_folders_sets(tmp_path: Path) -> None:
    app = tmp_path / "echo_app"
    app.mkdir()
    (app / "first.evalset.json").write_text(json.dumps({"eval_set_id": "first", "eval_cases": []}))
    for module in (g_eval, o_eval):
        manager = module.get_eval_sets_manager(None, str(tmp_path))
        assert manager.list_eval_sets("echo_app") == ["first"]
        assert manager.get_eval_set("echo_app", "first").eval_set_id == "first"
    with pytest.raises(ValueError, match="gs://bucket"):  # google-adk's GCS managers: no Google Cloud client here
        o_eval.get_eval_sets_manager("gs://bucket", str(tmp_path))


# -- agent_graph --------------------------------------------------------------------


def get_weather(city: str) -> str:
    """The weather in a city."""
    return "sunny"


def _tree(agent_class: Any) -> Any:
    model = "gemini-2.0-flash"
    return agent_class(name="root", model=model, tools=[get_weather],
                       sub_agents=[agent_class(name="a", model=model), agent_class(name="b", model=model)])


def _edges(source: str) -> set[tuple[str, str]]:
    """(from, to) of each edge statement, quotes dropped; ours names a tool's node
    ``AGENT/TOOL`` (its own rule), read as the tool's name."""
    found = re.findall(r'^\s*"?([\w/]+)"?\s*->\s*"?([\w/]+)"?', source, re.MULTILINE)
    return {(a, b.rsplit("/", 1)[-1]) for a, b in found}


def test_get_agent_graph_draws_the_same_tree_with_the_highlighted_edge() -> None:
    google = _run(g_graph.get_agent_graph(_tree(GoogleLlmAgent), [("root", "a")], dark_mode=False))
    ours = _run(o_graph.get_agent_graph(_tree(LlmAgent), [("root", "a")], dark_mode=False))
    assert type(ours) is type(google)  # a graphviz Digraph, strict, left to right
    assert ours.strict and "rankdir=LR" in ours.source and 'bgcolor="#ffffff"' in ours.source
    assert _edges(ours.source) == _edges(google.source) == {("root", "a"), ("root", "b"), ("root", "get_weather")}
    highlighted = [line for line in ours.source.splitlines() if "->" in line and "#0F5223" in line]
    assert len(highlighted) == 1 and '"root" -> "a"' in highlighted[0]


def test_build_graph_adds_to_the_callers_graph() -> None:
    import graphviz

    google, ours = graphviz.Digraph(strict=True), graphviz.Digraph(strict=True)
    _run(g_graph.build_graph(google, _tree(GoogleLlmAgent), None))
    _run(o_graph.build_graph(ours, _tree(LlmAgent), [("b", "root")]))
    assert _edges(ours.source) == _edges(google.source)
    assert any("dir=back" in line and '"root" -> "b"' in line for line in ours.source.splitlines())


# -- agent_test_runner --------------------------------------------------------------


def _test_folders(tmp_path: Path) -> Path:
    """An agents folder: two agents with replay test files (one ``_xfail``), one folder
    that is no agent, a JSON file outside ``tests/``."""
    for name, files in (("alpha", ("one.json", "two_xfail.json")), ("beta", ("only.json",))):
        (tmp_path / name / "tests").mkdir(parents=True)
        (tmp_path / name / "agent.py").write_text("root_agent = None\n")
        for file in files:
            (tmp_path / name / "tests" / file).write_text("{}")
    (tmp_path / "not_agent" / "tests").mkdir(parents=True)
    (tmp_path / "not_agent" / "tests" / "x.json").write_text("{}")
    (tmp_path / "alpha" / "other.json").write_text("{}")
    return tmp_path


def _params(found: list[Any]) -> list[tuple[Any, ...]]:
    return sorted((p.id, p.values, tuple(m.name for m in p.marks)) for p in found)


def test_get_test_files_finds_the_same_replay_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _test_folders(tmp_path)
    assert _params(o_runner.get_test_files(str(folder))) == _params(g_runner.get_test_files(str(folder)))
    assert [p.id for p in sorted(o_runner.get_test_files(str(folder)), key=lambda p: p.id)] == [
        "alpha/one.json", "alpha/two_xfail.json", "beta/only.json"]
    monkeypatch.setenv("ADK_TEST_FOLDER", str(folder))
    assert _params(o_runner.get_test_files()) == _params(g_runner.get_test_files())
    monkeypatch.delenv("ADK_TEST_FOLDER")
    assert o_runner.get_test_files() == g_runner.get_test_files() == []
    assert o_runner.get_test_files(str(tmp_path / "nowhere")) == g_runner.get_test_files(str(tmp_path / "nowhere")) == []


def test_mock_model_replays_its_responses_in_an_in_memory_runner() -> None:
    from google.genai import types as g_types

    from adk_actors import types as o_types

    made = []
    for module, agent_class, types in ((g_runner, GoogleLlmAgent, g_types), (o_runner, LlmAgent, o_types)):
        model = module.MockModel.create([types.Content(role="model", parts=[types.Part(text="hi back")])])
        assert model.response_index == -1 and module.MockModel.supported_models() == ["mock"]
        runner = module.InMemoryRunner(root_agent=agent_class(name="helper", model=model))
        assert runner.app_name == "test_app"
        events = runner.run("hello")
        normalized = module.normalize_events(events)
        for found in normalized:  # google-adk's node path (with its run's id) is its own
            found.pop("nodeInfo", None)
        with pytest.raises(Exception) as raised:  # a request past the last response
            runner.run("again")
        session = runner.session
        made.append((normalized, model.response_index, len(model.requests), session.user_id, len(session.events)))
        assert "IndexError" in f"{raised.type.__name__}: {raised.value}"  # ours: told by the turn's ModelRaised
    assert made[0] == made[1]
    from google.adk.apps import App as GoogleApp

    from adk_actors.apps import App

    for module, app_class, agent_class in ((g_runner, GoogleApp, GoogleLlmAgent), (o_runner, App, LlmAgent)):
        app = app_class(name="my_app", root_agent=agent_class(name="helper", model=module.MockModel.create([])))
        named = module.InMemoryRunner(app=app)
        assert named.app_name == "my_app" and named.session is not None and named.session.app_name == "my_app"
    assert made[1][0] == [{"author": "helper", "content": {"role": "model", "parts": [{"text": "hi back"}]}}]


RECORDED = [
    {"id": "e1", "timestamp": 1.0, "invocationId": "i", "author": "user", "usageMetadata": {"x": 1},
     "content": {"role": "user", "parts": [{"text": "go", "thoughtSignature": "c2ln"}]},
     "actions": {"stateDelta": {"a": 1, "node_join_state": {}}, "artifactDelta": {}}, "branch": None},
    {"id": "e2", "author": "asker", "longRunningToolIds": ["b", "a"], "nodeInfo": {"path": "asker@1"},
     "content": {"role": "model", "parts": [{"functionCall": {"id": "a", "name": "adk_request_input", "args": {}}}]},
     "actions": {"stateDelta": {}}},
    {"id": "e3", "author": "asker", "longRunningToolIds": [], "finishReason": "STOP",
     "content": {"role": "model", "parts": [{"text": "done"}]}},
]


def test_normalize_events_and_make_sort_key_read_recorded_events_the_same() -> None:
    import copy

    ours = o_runner.normalize_events(copy.deepcopy(RECORDED), is_json=True)
    assert ours == g_runner.normalize_events(copy.deepcopy(RECORDED), is_json=True)
    assert ours[1]["longRunningToolIds"] == ["a", "b"] and "role" not in ours[1]["content"]
    assert sorted(ours, key=o_runner.make_sort_key) == sorted(ours, key=g_runner.make_sort_key)
    assert [o_runner.make_sort_key(d)[:2] for d in ours] == [g_runner.make_sort_key(d)[:2] for d in ours]
