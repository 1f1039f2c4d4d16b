"""``transfer_to_agent`` in ``LlmRequest.tools_dict`` (issue 52): google-adk puts its
transfer tool there when the agent can transfer (to a sub-agent, its parent, a peer),
so a ``before_model_callback`` finds it by name beside the agent's own tools. Side by
side with google-adk 2.13, as tests/test_google_adk_parity.py runs programs (the
program on google-adk as written, then on ours with its imports rewritten, against one
Gemini REST stand-in named by environment variables only): what the callback saw of
the map at each model call (its names; the transfer tool's name, its declaration's
name and agent names, that it is a ``BaseTool``), and the run's events and requests.
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
from google.adk.tools.base_tool import BaseTool
from google.genai import types

SEEN = []


def look(callback_context, llm_request):
    tools = llm_request.tools_dict
    transfer = tools.get("transfer_to_agent")
    row = {"agent": callback_context.agent_name, "names": sorted(tools)}
    if transfer is not None:
        declaration = transfer._get_declaration()
        parameters = declaration.parameters_json_schema  # both declare it by a plain JSON schema
        row["transfer"] = {"name": transfer.name, "is_tool": isinstance(transfer, BaseTool),
                           "declared": declaration.name, "by_schema": declaration.parameters is None,
                           "agents": parameters["properties"]["agent_name"]["enum"]}
    SEEN.append(row)
    return None


def balance(account: str) -> dict:
    """The balance of an account."""
    return {"balance": 10}


bank = Agent(name="bank", model="gemini-2.5-flash", description="Banking.", instruction="Answer about money.",
             tools=[balance], before_model_callback=look)
shop = Agent(name="shop", model="gemini-2.5-flash", description="Shopping.", instruction="Sell.",
             before_model_callback=look)
lone = Agent(name="lone", model="gemini-2.5-flash", instruction="Alone.", tools=[balance], before_model_callback=look)
root_agent = Agent(name="root", model="gemini-2.5-flash", instruction="Route.", tools=[balance],
                   sub_agents=[bank, shop], before_model_callback=look)
AGENT = root_agent


async def main(texts):
    runner = InMemoryRunner(agent=AGENT, app_name="tools")
    session = await runner.session_service.create_session(app_name="tools", user_id="ann")
    events = []
    for text in texts:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            events.append(event)
    await runner.close()
    return {"seen": list(SEEN), "events": events}
'''


def both(script: list[StubResponse], server: StubServer, *, agent: str = "root_agent",
         texts: tuple[str, ...] = ("hello",)) -> tuple[dict[str, Any], dict[str, Any]]:
    source = PROGRAM.replace("AGENT = root_agent", f"AGENT = {agent}")
    results = []
    for text in (source, rewritten(source)):
        _, result = run_program(text, script, server, list(texts))
        results.append({"seen": result["seen"], "events": event_rows(result["events"]),
                        "requests": request_rows(server), "unused": len(server.responses)})
    theirs, ours = results
    assert theirs["unused"] == 0, "the case must use its script on google-adk"
    return theirs, ours


def test_the_root_with_sub_agents_finds_transfer_to_agent_beside_its_tools(gemini: StubServer) -> None:
    theirs, ours = both([gemini_response("Hi.")], gemini)
    assert theirs["seen"] == [{"agent": "root", "names": ["balance", "transfer_to_agent"],
                               "transfer": {"name": "transfer_to_agent", "is_tool": True,
                                            "declared": "transfer_to_agent", "by_schema": True,
                                            "agents": ["bank", "shop"]}}]
    assert ours == theirs


def test_after_a_transfer_the_sub_agent_can_transfer_back_and_to_its_peer(gemini: StubServer) -> None:
    script = [calls(("transfer_to_agent", {"agent_name": "bank"})), gemini_response("Ten."),
              gemini_response("Still ten.")]
    theirs, ours = both(script, gemini, texts=("my balance?", "again?"))
    assert [row["agent"] for row in theirs["seen"]] == ["root", "bank", "bank"]
    assert theirs["seen"][1]["names"] == ["balance", "transfer_to_agent"]
    assert sorted(theirs["seen"][1]["transfer"]["agents"]) == ["root", "shop"]
    assert ours == theirs


def test_an_agent_that_cannot_transfer_has_no_transfer_tool(gemini: StubServer) -> None:
    theirs, ours = both([gemini_response("Alone.")], gemini, agent="lone")
    assert theirs["seen"] == [{"agent": "lone", "names": ["balance"]}]
    assert ours == theirs


def test_the_tool_itself_is_google_adks() -> None:
    """``google.adk.tools.TransferToAgentTool`` / ``transfer_to_agent`` at our path: the
    tool's name, the agent names its declaration allows, and its run recording the
    transfer on the call's actions."""
    import asyncio
    from types import SimpleNamespace

    from google.adk.tools import TransferToAgentTool as Theirs
    from google.adk.tools import transfer_to_agent as their_function

    from adk_actors.tools import ToolContext, TransferToAgentTool, transfer_to_agent

    assert transfer_to_agent.__name__ == their_function.__name__
    theirs, ours = Theirs(["bank", "shop"]), TransferToAgentTool(["bank", "shop"])
    assert ours.name == theirs.name == "transfer_to_agent" and ours.is_long_running is theirs.is_long_running
    for reason in (False, True):  # the whole schema (titles, enum, the optional reason), as google-adk's
        their_schema = Theirs(["bank", "shop"], include_transfer_reason=reason)._get_declaration().parameters_json_schema
        our_schema = TransferToAgentTool(["bank", "shop"], include_transfer_reason=reason)._get_declaration(
        ).parameters_json_schema
        assert our_schema == their_schema and ("transfer_reason" in our_schema["properties"]) is reason
    assert ours._get_declaration().parameters_json_schema["required"] == ["agent_name"]
    context = ToolContext(SimpleNamespace(session=SimpleNamespace(state={})), "call-1")
    assert asyncio.run(ours.run_async(args={"agent_name": "shop"}, tool_context=context)) is None
    assert context.actions.transfer_to_agent == "shop"
