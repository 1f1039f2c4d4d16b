"""google-adk's ``LlmRequest`` as before-model callbacks use it (issue 52), side by side
with google-adk 2.13: ``tools_dict`` (the step's tools by name), ``append_tools`` (a tool
declared and callable in this step only), ``set_output_schema``.

As tests/test_google_adk_parity.py: one google-adk program run as written on google-adk,
then with its imports rewritten on ours, against one Gemini REST stand-in named by
environment variables only; compared: what the callback read, the events (through
google-adk's readers), and the model requests (contents, tools, generation config).

Both ``tools_dict`` also hold the ``transfer_to_agent`` tool (a ``TransferToAgentTool``)
when the agent can transfer (tests/test_adk52_transfer_tools_dict.py has more of it).
"""

from __future__ import annotations

from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, event_rows, request_rows, rewritten, run_program

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

PROGRAM = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.adk.tools import AgentTool
from google.adk.tools.base_tool import BaseTool
from google.genai import types
from pydantic import BaseModel

SEEN = []


class Answer(BaseModel):
    city: str
    rainy: bool


def lookup(city: str) -> dict:
    """Looks up a city."""
    return {"city": city}


class Clock(BaseTool):
    def __init__(self):
        super().__init__(name="clock", description="Tells the time.")

    def _get_declaration(self):
        return types.FunctionDeclaration(name="clock", description="Tells the time.")

    async def run_async(self, *, args, tool_context):
        return {"time": "noon"}


def before(callback_context, llm_request):
    SEEN.append(sorted((name, type(tool).__name__) for name, tool in llm_request.tools_dict.items()
                       if name != "transfer_to_agent"))
    SEEN.append("transfer_to_agent" in llm_request.tools_dict)
    if len(SEEN) == 2:
        llm_request.append_tools([Clock()])
        SEEN.append(sorted(n for n in llm_request.tools_dict if n != "transfer_to_agent"))
    if SCHEMA and len(SEEN) > 3:
        llm_request.set_output_schema(Answer)
    return None


SCHEMA = False
SUBS = []
expert = Agent(name="expert", model="gemini-2.5-flash", description="Knows.")
root_agent = Agent(name="root", model="gemini-2.5-flash", instruction="Be brief.",
                   tools=[lookup, AgentTool(expert)], sub_agents=SUBS, before_model_callback=before)


async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="td")
    session = await runner.session_service.create_session(app_name="td", user_id="ann")
    events = []
    message = types.Content(role="user", parts=[types.Part(text="time?")])
    async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
        events.append(event)
    await runner.close()
    return events, SEEN
'''


def _run(source: str, answers: list[StubResponse], server: StubServer) -> dict[str, Any]:
    _, (events, seen) = run_program(source, answers, server)
    return {"events": event_rows(events), "seen": seen, "requests": request_rows(server),
            "config": [r.body.get("generationConfig") or {} for r in server.requests],  # none sent is {}
            "unused_answers": len(server.responses)}


def both(answers: list[StubResponse], server: StubServer, *, schema: bool = False, subs: bool = False
         ) -> tuple[dict[str, Any], dict[str, Any]]:
    source = PROGRAM.replace("SCHEMA = False", f"SCHEMA = {schema}")
    if subs:
        source = source.replace("SUBS = []", 'SUBS = [Agent(name="helper", model="gemini-2.5-flash", description="Helps.")]')
    theirs = _run(source, answers, server)
    assert theirs["unused_answers"] == 0, "the case must use its script on google-adk"
    return theirs, _run(rewritten(source), answers, server)


def test_tools_dict_and_a_tool_appended_by_a_callback(gemini: StubServer) -> None:
    theirs, ours = both([calls(("clock", {})), gemini_response("Noon.")], gemini)
    assert theirs["seen"][:3] == [[("expert", "AgentTool"), ("lookup", "FunctionTool")], False,
                                  ["clock", "expert", "lookup"]]
    assert theirs["events"][1]["responses"][0][1:] == ("clock", {"time": "noon"})  # the appended tool ran
    for key in ("events", "seen", "requests", "config", "unused_answers"):
        assert ours[key] == theirs[key], key


def test_tools_dict_with_transfer_targets(gemini: StubServer) -> None:
    theirs, ours = both([calls(("clock", {})), gemini_response("Noon.")], gemini, subs=True)
    assert theirs["seen"][1] is True
    for key in ("events", "seen", "requests", "unused_answers"):
        assert ours[key] == theirs[key], key


def test_set_output_schema_in_a_callback(gemini: StubServer) -> None:
    answer = '{"city": "Oslo", "rainy": true}'
    theirs, ours = both([calls(("clock", {})), gemini_response(answer)], gemini, schema=True)
    assert theirs["config"][1]["responseMimeType"] == "application/json"
    assert theirs["config"][1]["responseSchema"]["required"] == ["city", "rainy"]
    for key in ("events", "seen", "requests", "unused_answers"):
        assert ours[key] == theirs[key], key
    for mine, their in zip(ours["config"], theirs["config"], strict=True):
        assert (mine or {}).get("responseMimeType") == (their or {}).get("responseMimeType")
        assert _props(mine) == _props(their)


def _props(config: dict[str, Any] | None) -> Any:
    schema = (config or {}).get("responseSchema") or {}
    return {k: str(v.get("type", "")).lower() for k, v in schema.get("properties", {}).items()}, schema.get("required")


def test_bad_set_output_schema_calls() -> None:
    from google.adk.models.llm_request import LlmRequest as Theirs

    from adk_actors.models.llm_request import LlmRequest

    with pytest.raises(ValueError):
        Theirs().set_output_schema()
    with pytest.raises(ValueError):
        LlmRequest().set_output_schema()


def test_tools_dict_is_never_dumped_copied_deep_or_pickled() -> None:
    import copy
    import pickle

    from adk_actors.models.llm_request import LlmRequest
    from adk_actors.tools import FunctionTool

    def probe(x: int) -> int:
        """Doubles."""
        return 2 * x

    request = LlmRequest(model="m")
    tool = FunctionTool(probe)
    request.append_tools([tool])
    assert [d.name for d in request.tools] == ["probe"] and request.tools_dict["probe"] is tool
    assert "tools_dict" not in request.model_dump() and "toolsDict" not in request.model_dump_json()
    assert copy.deepcopy(request).tools_dict["probe"] is tool  # shared, never copied
    assert pickle.loads(pickle.dumps(request)).tools_dict == {}
