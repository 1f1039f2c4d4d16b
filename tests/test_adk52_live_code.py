"""An agent's ``code_executor`` in a live run, side by side with google-adk 2.13 (issue 52).

google-adk's live flow runs its code-execution processors as a turn does, on each
response of the live connection that is not a streamed piece:

* ``UnsafeLocalCodeExecutor`` (an executor of the conversation's process): a text
  answer, once whole (at the end of its turn), is searched for code; the code runs and
  its two events (the answer cut after the code, then the result, with the executor's
  state) stand in for the answer. The model is not told the result (it hears function
  responses only) and is not asked again;
* ``BuiltInCodeExecutor`` (the model runs the code): the setup declares Gemini's code
  execution tool; the code the model ran and its result are committed as they come,
  and each committed answer with content is preceded by the executor's step event (no
  content).

Each side talks to its own Live API stand-in; compared are the agent's events in order,
the session, what the model received (setup and messages).
"""

from __future__ import annotations

import ssl
from typing import Any

import pytest
from live_stub import snake
from test_adk52_live_tools import both, live, received, tls, turns_then_close, typed  # noqa: F401

pytest.importorskip("google.adk")
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"), pytest.mark.timeout(120)]


def local_model(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The model answers a question with code in its text, in two pieces."""
    if typed(message) is None:
        return []
    return [{"serverContent": {"modelTurn": {"role": "model", "parts": [
                {"text": "Let me compute.\n```python\nprint(6 * 7)\n```\n"}]}}},
            {"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": "Done."}]}}},
            {"serverContent": {"turnComplete": True}}]


def builtin_model(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The model runs code itself: a word, its code, the code's result, its answer."""
    if typed(message) is None:
        return []
    return [{"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": "Computing. "}]}}},
            {"serverContent": {"modelTurn": {"role": "model", "parts": [
                {"executableCode": {"language": "PYTHON", "code": "print(6*7)"}}]}}},
            {"serverContent": {"modelTurn": {"role": "model", "parts": [
                {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "42\n"}}]}}},
            {"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": "It is 42."}]}}},
            {"serverContent": {"turnComplete": True}}]


def executor(side: str, kind: str) -> Any:
    if side == "theirs":
        from google.adk import code_executors
    else:
        from adk_actors import code_executors  # type: ignore[no-redef]
    return getattr(code_executors, kind)()


def test_code_in_a_live_answer_runs_on_the_local_executor_and_the_model_is_not_asked_again(
        tls: ssl.SSLContext) -> None:  # noqa: F811
    seen = both(tls, local_model, lambda side, url: live(side)(
        url, [], turns_then_close(1), executor=executor(side, "UnsafeLocalCodeExecutor"), first="6 times 7?"))
    theirs, ours = seen["theirs"], seen["ours"]
    assert ours["streamed"] == theirs["streamed"]
    assert ours["stored"] == theirs["stored"]
    assert ours["state"] == theirs["state"] == {"_code_execution_context": {}}
    assert ours["received"] == theirs["received"] == ["6 times 7?"]  # the result is not sent to the model
    committed = [r[2] for r in theirs["streamed"] if not r[0] and r[2]]
    # the answer cut after its code, then what the code printed; the whole answer is not committed
    assert committed == [("Let me compute.\n", ("code", "print(6 * 7)")),
                         (("output", "Code execution result:\n42\n\n"),)]
    assert [r[2] for r in theirs["streamed"] if r[0]] == [("Let me compute.\n```python\nprint(6 * 7)\n```\n",),
                                                         ("Done.",)]


def test_without_an_executor_the_same_answer_is_committed_as_said(tls: ssl.SSLContext) -> None:  # noqa: F811
    seen = both(tls, local_model, lambda side, url: live(side)(url, [], turns_then_close(1), first="6 times 7?"))
    assert seen["ours"]["streamed"] == seen["theirs"]["streamed"]
    committed = [r[2] for r in seen["ours"]["streamed"] if not r[0] and r[2]]
    assert committed == [("Let me compute.\n```python\nprint(6 * 7)\n```\nDone.",)]
    assert seen["ours"]["state"] == {}


def test_code_the_model_runs_itself_is_declared_and_committed_with_the_executors_steps(
        tls: ssl.SSLContext) -> None:  # noqa: F811
    seen = both(tls, builtin_model, lambda side, url: live(side)(
        url, [], turns_then_close(1), executor=executor(side, "BuiltInCodeExecutor"), first="6 times 7?"))
    theirs, ours = seen["theirs"], seen["ours"]
    for side in ("theirs", "ours"):
        assert seen[side]["setup"]["tools"] == [{"code_execution": {}}], side
    assert ours["streamed"] == theirs["streamed"]
    assert ours["stored"] == theirs["stored"]
    assert ours["received"] == theirs["received"] == ["6 times 7?"]
    committed = [r[2] for r in theirs["streamed"] if not r[0] and not r[3]]
    empty: tuple[Any, ...] = ()  # the executor's step event: no content
    assert committed == [empty, ("Computing. ",), empty, (("code", "print(6*7)"),), empty,
                         (("output", "42\n"),), empty, ("It is 42.",)]


def test_a_live_setup_without_a_builtin_executor_declares_no_code_tool(tls: ssl.SSLContext) -> None:  # noqa: F811
    seen = both(tls, local_model, lambda side, url: live(side)(
        url, [], turns_then_close(1), executor=executor(side, "UnsafeLocalCodeExecutor"), first="6 times 7?"))
    for side in ("theirs", "ours"):
        assert "tools" not in snake(seen[side]["setup"]), side
