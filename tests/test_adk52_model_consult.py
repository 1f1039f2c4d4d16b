"""google-adk 2.13's ``google.adk.tools.model_consult`` (issue 52): ``ModelConsultTool``
and ``ModelConsultObservabilityPlugin`` side by side with google-adk's.

One program runs in process on google-adk and on ours (imports rewritten) against one
Gemini stand-in, the advisor a model by name (``gemini-3.1-pro-preview``) that both
sides resolve to that stand-in through their model registries: an executor reads a
file, consults the advisor, asks again past its turn budget, then answers; a second
turn consults once more and asks with an empty question. Compared: the events (the
tool's results key by key; their ``latency_ms`` and the wording of their messages
aside), the stored state (the session counter kept, the turn counter not), what the
model received (the executor's declarations, the policy placed where google-adk
places its own, the advisor's request without tools, with the thinking level, and
the session handed over line by line), and the plugin's reports.
Then what each side refuses, with google-adk's exception types.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from google_adk_harness import _contents, calls, gemini, rewritten, run_program, stand_in  # noqa: F401
from pydantic import ValidationError

from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.apps import App
from google.adk.plugins import ModelConsultObservabilityPlugin
from google.adk.runners import InMemoryRunner
from google.adk.tools import ModelConsultTool
from google.adk.tools.model_consult import ModelConsultContextConfig
from google.genai import types


def look(path: str) -> dict:
    """Read a file of the repository."""
    return {"path": path, "text": "def add(a, b): return a - b"}


reports = []
consult = ModelConsultTool(max_uses=1, session_max_uses=3,
                           context_config=ModelConsultContextConfig(max_part_chars=500))
plugin = ModelConsultObservabilityPlugin(prices={"gemini-test": (1.0, 4.0)}, on_report=reports.append)
root_agent = Agent(name="fixer", model="gemini-2.5-flash", instruction="Fix the bug in {file}.",
                   tools=[look, consult])


async def main(turns):
    runner = InMemoryRunner(app=App(name="repo", root_agent=root_agent, plugins=[plugin]))
    session = await runner.session_service.create_session(app_name="repo", user_id="u", state={"file": "add.py"})
    events = []
    for text in turns:
        async for event in runner.run_async(user_id="u", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            events.append(event)
    stored = await runner.session_service.get_session(app_name="repo", user_id="u", session_id=session.id)
    await runner.close()
    return events, dict(stored.state), [r.to_dict() for r in reports], plugin.stats.to_dict(), plugin.summary()
'''

GUIDANCE = "1. Diagnosis: add subtracts.\n2. Plan: use +.\n3. Watch out: negative numbers."

SCRIPT = [
    # turn 1: read, consult, ask again past the turn budget, answer
    calls(("look", {"path": "add.py"})),
    calls(("model_consult", {"question": "Is the minus sign the bug?", "context": "The tests expect 2+2=4."})),
    gemini_response(GUIDANCE),
    calls(("model_consult", {"question": "Anything else?"})),
    gemini_response("Fixed: add now returns a + b."),
    # turn 2: a new turn's budget, one consult, then an empty question
    calls(("model_consult", {"question": "Should I add a test?"})),
    gemini_response("Yes: one test for 2+2."),
    calls(("model_consult", {"question": "   "})),
    gemini_response("Done."),
]

TURNS = ["add.py is broken, fix it.", "Anything to add?"]


def _plain_events(events: list[Any]) -> list[dict[str, Any]]:
    """What a user reads of each event; a consult result's ``latency_ms`` as a number's
    kind and its ``message`` as present (their values are timing and wording)."""
    rows = []
    for event in events:
        responses = []
        for response in event.get_function_responses():
            body = copy.deepcopy(dict(response.response or {}))
            if "latency_ms" in body:
                assert isinstance(body["latency_ms"], float) and body["latency_ms"] >= 0
                body["latency_ms"] = "ms"
            if "message" in body:
                assert isinstance(body["message"], str) and body["message"]
                body["message"] = "..."
            responses.append((response.name, body))
        content = event.content
        rows.append({"author": event.author, "final": event.is_final_response(),
                     "calls": [(c.name, dict(c.args or {})) for c in event.get_function_calls()],
                     "responses": responses,
                     "text": "".join(p.text for p in (content.parts if content and content.parts else [])
                                     if p.text and not p.thought),
                     "state_delta": {k: v for k, v in event.actions.state_delta.items()}})
    return rows


def _plain_report(report: dict[str, Any]) -> dict[str, Any]:
    report = copy.deepcopy(report)
    assert report["stats"]["wall_clock_ms"] > 0 and report["stats"]["advisor_latency_ms"] >= 0
    report["stats"]["wall_clock_ms"] = report["stats"]["advisor_latency_ms"] = "ms"
    report["invocation_id"] = report["session_id"] = "id"
    return report


def _run(server: StubServer, source: str) -> dict[str, Any]:
    _, (events, state, reports, totals, summary) = run_program(source, SCRIPT, server, TURNS)
    assert not server.responses, "the script is used"
    totals = dict(totals, wall_clock_ms="ms", advisor_latency_ms="ms")
    return {"events": _plain_events(events), "state": state, "reports": [_plain_report(r) for r in reports],
            "totals": totals, "requests": [(r.path.split("?")[0], r.body) for r in server.requests],
            "summary_lines": [line.split(":")[0] for line in summary.splitlines()]}


def _same(contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The contents without call ids, a consult result's timing and message wording."""
    contents = _contents(contents)
    for content in contents:
        for part in content.get("parts", []):
            body = part.get("functionResponse", {}).get("response", {})
            if "latency_ms" in body:
                body["latency_ms"] = "ms"
            if "message" in body:
                body["message"] = "..."
    return contents


def _lines(parts: list[str]) -> list[str]:
    """The session lines of a handover, a consult result's timing and message aside."""
    lines = [t for t in parts if t.startswith("[")]
    lines = [re.sub(r'"latency_ms": [0-9.e-]+', '"latency_ms": 0', line) for line in lines]
    return [re.sub(r'"message": "[^"]*"', '"message": "..."', line) for line in lines]


def _upper_types(schema: dict[str, Any]) -> None:
    schema["type"] = schema["type"].upper()
    for field in schema.get("properties", {}).values():
        _upper_types(field)


def _instruction(body: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts", []))


@pytest.fixture(scope="module")
def runs(stand_in: StubServer) -> tuple[dict[str, Any], dict[str, Any]]:  # noqa: F811
    monkeypatch = pytest.MonkeyPatch()
    try:
        from google_adk_harness import on_stand_in

        on_stand_in(stand_in.url, monkeypatch)
        return _run(stand_in, PROGRAM), _run(stand_in, rewritten(PROGRAM))
    finally:
        monkeypatch.undo()


def test_the_events_results_and_state_are_google_adks(runs: tuple[dict[str, Any], dict[str, Any]]) -> None:
    theirs, ours = runs
    assert ours["events"] == theirs["events"]
    results = [body for row in theirs["events"] for name, body in row["responses"] if name == "model_consult"]
    assert [r["status"] for r in results] == ["ok", "limit_reached", "ok", "invalid_request"]
    assert results[0]["guidance"] == GUIDANCE and results[0]["advisor_model"] == "gemini-test"
    assert results[0]["consults"] == {"used_this_turn": 1, "max_uses": 1, "used_this_session": 1,
                                      "session_max_uses": 3, "remaining": 0}
    assert results[2]["consults"]["used_this_session"] == 2 and results[2]["consults"]["used_this_turn"] == 1
    assert ours["state"] == theirs["state"]
    assert theirs["state"] == {"file": "add.py", "model_consult:model_consult:session_uses": 2}


def test_the_model_receives_what_google_adk_sends(runs: tuple[dict[str, Any], dict[str, Any]]) -> None:
    theirs, ours = runs
    assert [p for p, _ in ours["requests"]] == [p for p, _ in theirs["requests"]]
    advisor_at = [i for i, (p, _) in enumerate(theirs["requests"]) if "gemini-3.1-pro-preview" in p]
    assert advisor_at == [2, 6]
    from google.adk.tools.model_consult import _prompts as their_words

    from adk_actors.tools.model_consult import _prompts as our_words

    for index, ((_, their_body), (_, our_body)) in enumerate(zip(theirs["requests"], ours["requests"], strict=True)):
        if index in advisor_at:
            continue
        # the executor: the same declarations (the tool's own words aside), the policy last
        their_tools = their_body["tools"][0]["functionDeclarations"]
        our_tools = our_body["tools"][0]["functionDeclarations"]
        for declared in (*their_tools, *our_tools):
            if declared["name"] == "model_consult":
                declared.pop("description")
                for field in declared["parameters"]["properties"].values():
                    field.pop("description")
                # google.genai sends Gemini's upper-case type names; ours is a plain JSON
                # schema (every provider reads it), which Gemini reads the same
                _upper_types(declared["parameters"])
        assert our_tools == their_tools
        assert _instruction(their_body).endswith("\n\n" + their_words.EXECUTOR_INSTRUCTION)
        assert _instruction(our_body).endswith("\n\n" + our_words.EXECUTOR_INSTRUCTION)
        # the agent's own instruction first (the identity sentence is worded differently
        # here, as in every agent, see google_adk_harness.request_rows)
        assert (_instruction(our_body).split("\n\nYou are ")[0]
                == _instruction(their_body).split("\n\nYou are ")[0] == "Fix the bug in add.py.")
        assert _same(our_body["contents"]) == _same(their_body["contents"])
    for index in advisor_at:
        their_body, our_body = theirs["requests"][index][1], ours["requests"][index][1]
        assert "tools" not in their_body and "tools" not in our_body
        assert "toolConfig" not in our_body
        # the same level; google.genai spells the field thinking_level on the Gemini API
        # (protobuf JSON, which Gemini reads, takes either spelling), ours thinkingLevel
        assert our_body["generationConfig"] == {"thinkingConfig": {"thinkingLevel": "HIGH"}}
        assert their_body["generationConfig"] in ({"thinkingConfig": {"thinkingLevel": "HIGH"}},
                                                  {"thinkingConfig": {"thinking_level": "HIGH"}})
        assert _instruction(their_body) == their_words.ADVISOR_SYSTEM_INSTRUCTION
        assert _instruction(our_body) == our_words.ADVISOR_INSTRUCTION
        assert len(their_body["contents"]) == len(our_body["contents"]) == 1
        their_parts = [p["text"] for p in their_body["contents"][0]["parts"]]
        our_parts = [p["text"] for p in our_body["contents"][0]["parts"]]
        # the session handed over, line by line, as google-adk renders it
        assert _lines(our_parts) == _lines(their_parts)
        assert len(our_parts) == len(their_parts)
        # the agent's instruction (state filled, no policy), its other tools, the question
        for parts in (their_parts, our_parts):
            assert "Fix the bug in add.py." in parts[0] and "model_consult`" not in parts[0]
            assert parts[1].endswith("\n\n- look: Read a file of the repository.")
        assert "Is the minus sign the bug?" in their_parts[-1] if index == 2 else True
    first_their, first_our = (theirs["requests"][2][1]["contents"][0]["parts"],
                              ours["requests"][2][1]["contents"][0]["parts"])
    assert [p["text"] for p in first_our][2:-1] == [
        "[user] add.py is broken, fix it.", '[tool_call] look({"path": "add.py"})',
        '[tool_result] look -> {"path": "add.py", "text": "def add(a, b): return a - b"}']
    for parts in (first_their, first_our):
        assert "Is the minus sign the bug?" in parts[-1]["text"] and "The tests expect 2+2=4." in parts[-1]["text"]
        assert "(fixer)" in parts[-1]["text"]


def test_the_observability_reports_are_google_adks(runs: tuple[dict[str, Any], dict[str, Any]]) -> None:
    theirs, ours = runs
    assert ours["reports"] == theirs["reports"]
    first, second = theirs["reports"]
    assert first["agent_name"] == "fixer" and first["app_name"] == "repo" and first["error_type"] is None
    stats = first["stats"]
    assert (stats["tool_calls"], stats["successful_consults"], stats["limited_consults"]) == (2, 1, 1)
    assert stats["executor_usage"]["gemini-test"]["calls"] == 4 and stats["advisor_usage"]["gemini-test"]["calls"] == 1
    assert second["stats"]["invalid_consults"] == 1
    assert first["estimated_cost_usd"] is not None and first["estimated_cost_usd"] > 0
    assert ours["totals"] == theirs["totals"]
    assert ours["summary_lines"] == theirs["summary_lines"]


def _refusals(adk: Any, genai_types: Any) -> list[tuple[str, type[BaseException] | None]]:
    """What each side refuses: the exception type of each bad argument (None: taken)."""
    tool, config, plugin = adk.ModelConsultTool, adk.ModelConsultContextConfig, adk.ModelConsultObservabilityPlugin
    cases: dict[str, Any] = {
        "max_uses=0": lambda: tool(max_uses=0),
        "session_max_uses=-1": lambda: tool(session_max_uses=-1),
        "max_output_tokens=0": lambda: tool(max_output_tokens=0),
        "conflicting caps": lambda: tool(max_output_tokens=10,
                                         generate_content_config=genai_types.GenerateContentConfig(max_output_tokens=20)),
        "same caps": lambda: tool(max_output_tokens=10,
                                  generate_content_config=genai_types.GenerateContentConfig(max_output_tokens=10)),
        "timeout_seconds=0": lambda: tool(timeout_seconds=0),
        "thinking_level='extreme'": lambda: tool(thinking_level="extreme"),
        "thinking_level=3": lambda: tool(thinking_level=3),
        "thinking_level='OFF'": lambda: tool(thinking_level="OFF"),
        "model=''": lambda: tool(model=""),
        "model=42": lambda: tool(model=42),
        "model='nothing-serves-this'": lambda: tool(model="nothing-serves-this"),
        "max_events=0": lambda: config(max_events=0),
        "max_chars=0": lambda: config(max_chars=0),
        "unknown field": lambda: config(budget=3),
        "plugin name ' '": lambda: plugin(name=" "),
        "price not a pair": lambda: plugin(prices={"gemini": (1.0,)}),
        "negative price": lambda: plugin(prices={"gemini": (1.0, -2.0)}),
        "blank price key": lambda: plugin(prices={"": (1.0, 2.0)}),
    }
    found: list[tuple[str, type[BaseException] | None]] = []
    for name, make in cases.items():
        try:
            make()
        except Exception as exc:  # the type is what is compared
            found.append((name, ValidationError if type(exc).__name__ == "ValidationError" else type(exc)))
        else:
            found.append((name, None))
    return found


def test_bad_arguments_are_refused_with_google_adks_exception_types(gemini: StubServer) -> None:  # noqa: F811
    from google.adk.plugins import ModelConsultObservabilityPlugin as TheirPlugin
    from google.adk.tools import model_consult as their_consult
    from google.genai import types as genai_types

    from adk_actors import types as our_types
    from adk_actors.plugins import ModelConsultObservabilityPlugin as OurPlugin
    from adk_actors.tools import model_consult as our_consult

    assert TheirPlugin is their_consult.ModelConsultObservabilityPlugin
    assert OurPlugin is our_consult.ModelConsultObservabilityPlugin
    theirs = _refusals(their_consult, genai_types)
    ours = _refusals(our_consult, our_types)
    assert ours == theirs
    assert dict(theirs)["same caps"] is None and dict(theirs)["thinking_level='OFF'"] is None
    assert dict(theirs)["max_uses=0"] is ValueError


FAILING = PROGRAM.replace("ModelConsultTool(max_uses=1, session_max_uses=3,",
                          'ModelConsultTool(max_uses=3, thinking_level="low", timeout_seconds=30,')

ADVICE = "Use +, then run the tests."


def _refused(message: str) -> Any:
    from adk_actors.testing import StubResponse

    return StubResponse(status=400, json={"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})


FAILING_SCRIPT = [
    calls(("model_consult", {"question": "A?"})),
    _refused("thinking_level is not supported for this model."),  # asked again without thinking
    gemini_response(ADVICE),
    calls(("model_consult", {"question": "B?"})),
    _refused("Request contains an invalid argument."),  # the consult fails
    calls(("model_consult", {"question": "C?"}), ("model_consult", {"question": "D?"})),  # in parallel
    gemini_response(ADVICE),
    gemini_response(ADVICE),
    calls(("model_consult", {"question": "E?"})),  # the turn's three are used
    gemini_response("Done."),
]


def _failing_run(server: StubServer, source: str) -> dict[str, Any]:
    _, (events, state, reports, _, _) = run_program(source, FAILING_SCRIPT, server, TURNS[:1])
    assert not server.responses, "the script is used"
    rows = _plain_events(events)
    for row in rows:
        for _, body in row["responses"]:
            if body.get("status") == "error":
                assert "gemini-3.1-pro-preview" in body["error"]
                body["error"] = "..."
        row["responses"].sort(key=lambda r: str(r))
    advisor = [r.body for r in server.requests if "gemini-3.1-pro-preview" in r.path]
    return {"events": rows, "state": state, "reports": [_plain_report(r) for r in reports],
            "thinking": [b.get("generationConfig") for b in advisor]}


def test_a_refused_thinking_level_a_failed_advisor_and_parallel_consults_as_on_google_adk(
        gemini: StubServer) -> None:  # noqa: F811
    """A model refusing the thinking level is asked once more without it; a failed
    advisor gives an ``error`` result that counts no use; two consults in one answer
    both run within the budget and the next is refused: as on google-adk."""
    theirs = _failing_run(gemini, FAILING)
    ours = _failing_run(gemini, rewritten(FAILING))
    assert ours["events"] == theirs["events"]
    assert ours["state"] == theirs["state"] == {"file": "add.py", "model_consult:model_consult:session_uses": 3}
    statuses = [body["status"] for row in theirs["events"] for name, body in row["responses"]]
    assert statuses == ["ok", "error", "ok", "ok", "limit_reached"]
    assert ours["reports"] == theirs["reports"]
    stats = theirs["reports"][0]["stats"]
    assert (stats["successful_consults"], stats["failed_consults"], stats["limited_consults"]) == (3, 1, 1)
    # the first try with the level, the retry without; then the level again
    assert ours["thinking"][0] == {"thinkingConfig": {"thinkingLevel": "LOW"}}
    assert ours["thinking"][1] is None and not theirs["thinking"][1]  # google.genai sends an empty one
    assert ours["thinking"][2:] == [{"thinkingConfig": {"thinkingLevel": "LOW"}}] * 3
    assert len(theirs["thinking"]) == len(ours["thinking"]) == 5


def _handover_events() -> list[Any]:
    from google.adk.events.event import Event
    from google.genai import types as t

    def event(author: str, *parts: Any) -> Any:
        return Event(author=author, invocation_id="i1",
                     content=t.Content(role="user" if author == "user" else "model", parts=list(parts)))

    return [
        event("user", t.Part(text="task " + "x" * 300)),
        event("a", t.Part(text="thinking...", thought=True),
              t.Part(function_call=t.FunctionCall(name="f", args={"q": "y" * 900}, id="c1"))),
        event("a", t.Part(function_response=t.FunctionResponse(name="f", response={"r": "z" * 2000}, id="c1"))),
        event("a", t.Part(inline_data=t.Blob(mime_type="image/png", data=b"\x89PNG" * 100))),
        event("a", t.Part(executable_code=t.ExecutableCode(code="print(1)", language=t.Language.PYTHON)),
              t.Part(code_execution_result=t.CodeExecutionResult(outcome=t.Outcome.OUTCOME_OK, output="1"))),
        event("a", t.Part(file_data=t.FileData(file_uri="gs://b/f", mime_type="text/plain"))),
        event("a", t.Part(text="   ")),
        event("a", t.Part(function_call=t.FunctionCall(name="model_consult", args={"question": "?"}, id="c9"))),
        event("user", t.Part(text="latest " + "w" * 700)),
    ]


def _handed_over(contents: list[Any]) -> list[tuple[Any, ...]]:
    return [(p.text, p.inline_data.mime_type if p.inline_data else None, p.file_data.file_uri if p.file_data else None)
            for content in contents for p in content.parts]


@pytest.mark.parametrize("config", [
    {}, {"max_chars": 50}, {"max_chars": 300}, {"max_chars": 1500}, {"max_chars": 3000}, {"max_part_chars": 20},
    {"max_events": 3}, {"include_media": False}, {"include_thoughts": True, "max_part_chars": 5},
    {"include_session": False}, {"max_chars": 1, "max_part_chars": 1}, {"max_chars": 120, "include_media": False}])
def test_the_session_is_handed_over_as_google_adk_renders_it(config: dict[str, Any]) -> None:
    """The same session under each context config: the same lines, cuts, omission
    notes and media as google-adk's handover, with one call left out or another."""
    from google.adk.tools.model_consult._context import ModelConsultContextConfig as TheirConfig
    from google.adk.tools.model_consult._context import build_advisor_contents as theirs

    from adk_actors._types import Event
    from adk_actors.tools.model_consult._context import (
        ModelConsultContextConfig,
        build_advisor_contents,
    )

    their_events = _handover_events()
    our_events = [Event.model_validate(e.model_dump(exclude_none=True)) for e in their_events]
    for skipped in ((), ("c9",), ("c1",)):
        expected = _handed_over(theirs(their_events, config=TheirConfig(**config), skip_function_call_ids=skipped))
        got = _handed_over(build_advisor_contents(our_events, config=ModelConsultContextConfig(**config),
                                                  skip_function_call_ids=skipped))
        assert got == expected, skipped


def test_cost_totals_and_reset_as_on_google_adk() -> None:
    """The longest matching price key wins, thoughts bill at the output price, a model
    with no price adds nothing; ``reset`` hands over the totals and starts anew."""
    from google.adk.tools import model_consult as theirs

    from adk_actors.tools import model_consult as ours

    found = []
    for module in (theirs, ours):
        plugin = module.ModelConsultObservabilityPlugin(prices={"gemini": (1.0, 2.0), "gemini-3": (3.0, 5.0)})
        usage = module.ModelConsultUsage(calls=2, prompt_tokens=1_000, output_tokens=200, thoughts_tokens=50,
                                         cached_tokens=100, total_tokens=1_250)
        stats = module.ModelConsultStats(invocations=1, successful_consults=1,
                                         advisor_usage={"gemini-3-pro": usage},
                                         executor_usage={"gemini-2.5-flash": usage, "claude-x": usage})
        cleared = plugin.reset()
        found.append((plugin.estimate_cost(stats), stats.to_dict(), cleared.to_dict(), plugin.estimate_cost(),
                      module.ModelConsultObservabilityPlugin().estimate_cost(stats)))
    assert found[1] == found[0]
    cost, as_dict, cleared, empty_cost, unpriced = found[0]
    assert cost == pytest.approx((1_000 * 3 + 250 * 5 + 1_000 * 1 + 250 * 2) / 1_000_000)
    assert as_dict["escalation_rate"] == 0.25 and as_dict["total_tokens"] == 3_750
    assert cleared["invocations"] == 0 and empty_cost is None and unpriced is None
