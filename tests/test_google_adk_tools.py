"""google-adk's tools and toolsets run here with only their imports rewritten (issue 52).

Each case is a small google-adk program in the shapes of google-adk's tool docs: a
``BaseTool`` subclass with its own declaration (``_get_declaration`` / ``run_async``)
and one declaring nothing, a long-running one answered later by the client,
``get_user_choice``, a ``BaseToolset`` with a name prefix and a list filter beside one
with a predicate and a ``process_llm_request`` hook, a toolset that fails to list its
tools, an MCP server's tools through
``tools.mcp_tool`` (a real stdio server, tests/mcp_servers.py), ``AgentTool`` with
and without ``skip_summarization`` and over an agent with an output schema, ``load_artifacts`` after a tool saved an artifact,
and ``load_memory`` over what an earlier session put in memory. It runs twice, as
tests/test_google_adk_parity.py runs its programs (the shared harness,
tests/google_adk_harness.py): as written on google-adk 2.13, and with its imports
rewritten on ours, against one Gemini REST stand-in named by environment variables
only. Compared: the events the runner yielded (through google-adk's Event readers),
the final texts, the session's final state, what the program logged (its ``LOG``:
calls, listings, closes), and every request the model received (contents, and the
tools declared: names, descriptions, parameter schemas), by the harness's rules, and:

* the words of ``get_user_choice``', ``load_artifacts``' and ``load_memory``'s descriptions and of
  ``load_artifacts``' status line are our own (compared as present, not as worded);
* a memory's id and timestamp (random, and the clock's) are left out, and
  ``load_memory``'s response is compared as the model receives it (google-adk's event
  holds a pydantic object there, ours the dict it is sent as);
* google-adk 2.13 fences an MCP server's tool descriptions as untrusted text; ours
  sends them as the server gives them: compared without the fence.

Each case must also show its point on both sides (``SHOWN``), so two runs alike in
failing cannot pass. Then, ours only: a declaration that is not one is a typed error
before anything is sent; ``Runner.close()`` closes each toolset of the tree once, on
past one that fails.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import _plain, calls, event_rows, request_rows, rewritten, run_program

from adk_actors import Content
from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")
pytest.importorskip("mcp")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

# the stand-in and its environment (fixtures of the shared harness)
stand_in, gemini = harness.stand_in, harness.gemini

# The loop every program ends with: its turns through run_async (a turn is a text, or a
# function response to the call the program last saw marked long-running), the final
# texts, the session's state; LOG is what the program's own code noted on the way.
MAIN = '''
LOG = []

async def main(turns):
    runner = InMemoryRunner(agent=root_agent, app_name="tools_app")
    session = await runner.session_service.create_session(app_name="tools_app", user_id="ann")
    seen, finals, waiting = [], [], []
    for turn in turns:
        if isinstance(turn, str):
            parts = [types.Part(text=turn)]
        else:
            call = waiting.pop()
            parts = [types.Part(function_response=types.FunctionResponse(id=call.id, name=call.name,
                                                                         response=turn))]
        message = types.Content(role="user", parts=parts)
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
            waiting += [c for c in event.get_function_calls() if c.id in (event.long_running_tool_ids or ())]
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
    stored = await runner.session_service.get_session(app_name="tools_app", user_id="ann", session_id=session.id)
    await runner.close()
    return seen, finals, {"state": dict(stored.state), "log": LOG}
'''

HEAD = '''
from google.adk.agents import Agent, LlmAgent
from google.adk.runners import InMemoryRunner
from google.genai import types
'''

# -- the cases ------------------------------------------------------------------------------

BASE_TOOL = HEAD + '''
from google.adk.tools import BaseTool
from google.adk.tools.tool_context import ToolContext

class StockPriceTool(BaseTool):
    """A tool of one's own: its declaration written by hand."""

    def __init__(self):
        super().__init__(name="get_stock_price", description="The latest price of a stock, by its ticker.")

    def _get_declaration(self):
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema={
                "type": "object",
                "properties": {"ticker": {"type": "string", "description": "The stock's ticker, e.g. GOOG."}},
                "required": ["ticker"],
            },
        )

    async def run_async(self, *, args, tool_context: ToolContext):
        LOG.append(("run_async", self.name, dict(args), tool_context.function_call_id is not None))
        tool_context.state["last_ticker"] = args["ticker"]
        if args["ticker"] == "GOOG":
            return {"ticker": "GOOG", "price": 171.5}
        return "unknown ticker"

class AuditTool(BaseTool):
    """Declares nothing (the model is not told of it)."""

    def __init__(self):
        super().__init__(name="audit", description="Not for the model.")

root_agent = Agent(name="broker", model="gemini-2.5-flash", instruction="Quote stock prices with your tool.",
                   tools=[StockPriceTool(), AuditTool()])
''' + MAIN

LONG_RUNNING = HEAD + '''
from google.adk.tools.base_tool import BaseTool

class ReimbursementTool(BaseTool):
    """A long-running tool: it files the request and answers later."""

    def __init__(self):
        super().__init__(name="ask_for_approval", description="Ask a manager to approve a reimbursement.",
                         is_long_running=True)

    def _get_declaration(self):
        return types.FunctionDeclaration(
            name=self.name, description=self.description,
            parameters_json_schema={"type": "object",
                                    "properties": {"purpose": {"type": "string"}, "amount": {"type": "number"}},
                                    "required": ["purpose", "amount"]})

    async def run_async(self, *, args, tool_context):
        LOG.append(("filed", args["purpose"], args["amount"]))
        tool_context.state["ticket"] = "R-1"
        return None

root_agent = Agent(name="reimbursements", model="gemini-2.5-flash",
                   instruction="File reimbursements with ask_for_approval; report the manager's decision.",
                   tools=[ReimbursementTool()])
''' + MAIN

TOOLSET = HEAD + '''
from google.adk.tools import FunctionTool
from google.adk.tools.base_toolset import BaseToolset

def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b

def subtract(a: int, b: int) -> int:
    """Subtracts b from a."""
    return a - b

def multiply(a: int, b: int) -> int:
    """Multiplies two numbers."""
    return a * b

class ArithmeticToolset(BaseToolset):
    def __init__(self, *, tool_filter=None, tool_name_prefix=None):
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        self._tools = [FunctionTool(add), FunctionTool(subtract), FunctionTool(multiply)]

    async def get_tools(self, readonly_context=None):
        LOG.append(("get_tools", readonly_context is not None and readonly_context.agent_name))
        return [tool for tool in self._tools if self._is_tool_selected(tool, readonly_context)]

    async def close(self):
        LOG.append(("closed", sorted(tool.name for tool in self._tools)))  # its own tools keep their names

    async def process_llm_request(self, *, tool_context, llm_request):
        LOG.append(("request", self.tool_name_prefix, len(llm_request.contents), llm_request.contents[-1].role))

by_name = ArithmeticToolset(tool_filter=["add", "multiply"], tool_name_prefix="math")
by_rule = ArithmeticToolset(tool_filter=lambda tool, ctx: tool.name == "subtract")

root_agent = Agent(name="calculator", model="gemini-2.5-flash", instruction="Compute with your tools.",
                   tools=[by_name, by_rule])
''' + MAIN

AGENT_TOOL = HEAD + '''
from google.adk.tools.agent_tool import AgentTool

def count_words(text: str) -> dict:
    """Counts the words of a text."""
    return {"words": len(text.split())}

summarizer = LlmAgent(name="summarizer", model="gemini-2.5-flash", description="Summarizes a text in a sentence.",
                      instruction="Summarize the text you are given in one sentence.", tools=[count_words],
                      output_key="last_summary")

root_agent = LlmAgent(name="editor", model="gemini-2.5-flash",
                      instruction="Use the summarizer for long texts, then answer the user.",
                      tools=[AgentTool(agent=summarizer, skip_summarization=SKIP)])
'''

ARTIFACTS = HEAD + '''
from google.adk.tools import load_artifacts
from google.adk.tools.tool_context import ToolContext

async def write_report(title: str, body: str, tool_context: ToolContext) -> dict:
    """Writes a report and saves it as a text file."""
    version = await tool_context.save_artifact(f"{title}.txt",
                                               types.Part.from_bytes(data=body.encode(), mime_type="text/plain"))
    LOG.append(("saved", f"{title}.txt", version))
    return {"saved": f"{title}.txt", "version": version}

root_agent = Agent(name="writer", model="gemini-2.5-flash", instruction="Write reports; read them back when asked.",
                   tools=[write_report, load_artifacts])
''' + MAIN

MEMORY = HEAD + '''
from google.adk.tools import load_memory
from google.adk.tools.tool_context import ToolContext

LOG = []

async def remember_this_conversation(tool_context: ToolContext) -> dict:
    """Keeps this conversation in the user's memory for later conversations."""
    await tool_context.add_session_to_memory()
    return {"status": "remembered"}

root_agent = Agent(name="companion", model="gemini-2.5-flash",
                   instruction="Remember conversations when asked; look things up in memory with load_memory.",
                   tools=[remember_this_conversation, load_memory])

async def main(turns):
    runner = InMemoryRunner(agent=root_agent, app_name="tools_app")
    seen, finals, states = [], [], {}
    for session_id, text in turns:  # each turn in the session it names, made on first use
        if session_id not in states:
            await runner.session_service.create_session(app_name="tools_app", user_id="ann", session_id=session_id)
            states[session_id] = None
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session_id, new_message=message):
            seen.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
    for session_id in states:
        stored = await runner.session_service.get_session(app_name="tools_app", user_id="ann", session_id=session_id)
        states[session_id] = dict(stored.state)
    await runner.close()
    return seen, finals, {"state": states, "log": LOG}
'''

BROKEN_TOOLSET = HEAD + '''
from google.adk.tools.base_toolset import BaseToolset

class UnreachableToolset(BaseToolset):
    async def get_tools(self, readonly_context=None):
        LOG.append("listing")
        raise ConnectionError("the tool server is down")

def ping() -> dict:
    """Checks that the assistant is alive."""
    return {"pong": True}

root_agent = Agent(name="assistant", model="gemini-2.5-flash", instruction="Help.",
                   tools=[UnreachableToolset(), ping])
''' + MAIN

MCP = HEAD + '''
import sys
from google.adk.tools.mcp_tool import McpToolset, StdioConnectionParams
from mcp import StdioServerParameters

server = McpToolset(
    connection_params=StdioConnectionParams(
        server_params=StdioServerParameters(command=sys.executable, args=[SERVER, "stdio"]), timeout=30),
    tool_filter=["add", "shout"], tool_name_prefix="calc")

root_agent = Agent(name="calculator", model="gemini-2.5-flash", instruction="Use your tools.", tools=[server])
'''.replace("SERVER", repr(str(Path(__file__).with_name("mcp_servers.py")))) + MAIN

AGENT_TOOL_SCHEMA = HEAD + '''
from pydantic import BaseModel
from google.adk.tools.agent_tool import AgentTool

class Verdict(BaseModel):
    valid: bool
    reason: str

checker = LlmAgent(name="checker", model="gemini-2.5-flash", description="Checks whether a claim holds.",
                   instruction="Check the claim; answer as the schema says.", output_schema=Verdict)

root_agent = LlmAgent(name="desk", model="gemini-2.5-flash", instruction="Check claims with the checker.",
                      tools=[AgentTool(checker)])
''' + MAIN

USER_CHOICE = HEAD + '''
from google.adk.tools import get_user_choice

root_agent = Agent(name="ice_cream", model="gemini-2.5-flash", instruction="Let the user choose a flavor.",
                   tools=[get_user_choice])
''' + MAIN

AGENT_TOOL_ARTIFACT = HEAD + '''
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools import load_artifacts

async def draw_chart(title: str, tool_context) -> dict:
    """Draws a chart and saves it as an SVG file."""
    version = await tool_context.save_artifact(f"{title}.svg", types.Part.from_bytes(
        data=b"<svg><text>" + title.encode() + b"</text></svg>", mime_type="image/svg+xml"))
    LOG.append(("drawn", f"{title}.svg", version, sorted(await tool_context.list_artifacts())))
    return {"file": f"{title}.svg"}

artist = LlmAgent(name="artist", model="gemini-2.5-flash", description="Draws charts.",
                  instruction="Draw what you are asked for.", tools=[draw_chart])

root_agent = LlmAgent(name="reporter", model="gemini-2.5-flash", instruction="Have charts drawn, then show them.",
                      tools=[AgentTool(artist), load_artifacts])
''' + MAIN

# name: (source, the model's answers in order, the user's turns)
CASES: dict[str, tuple[str, list[StubResponse], list[Any]]] = {
    "a BaseTool subclass with its own declaration, and one declaring nothing": (BASE_TOOL, [
        calls(("get_stock_price", {"ticker": "GOOG"})), gemini_response("GOOG trades at 171.5."),
        calls(("get_stock_price", {"ticker": "XYZ"})), gemini_response("I do not know XYZ."),
    ], ["Price of GOOG?", "And XYZ?"]),
    "a long-running BaseTool answered later by the client": (LONG_RUNNING, [
        calls(("ask_for_approval", {"purpose": "conference", "amount": 450})),
        gemini_response("Your manager approved the 450 for the conference."),
    ], ["Reimburse 450 for the conference.", {"status": "approved", "approver": "Mia"}]),
    "get_user_choice: the choice comes back as the call's answer": (USER_CHOICE, [
        calls(("get_user_choice", {"options": ["vanilla", "pistachio"]})),
        gemini_response("One pistachio cone coming up."),
    ], ["I want ice cream.", {"result": "pistachio"}]),
    "a BaseToolset with a name prefix and a list filter, another with a predicate filter": (TOOLSET, [
        calls(("math_add", {"a": 2, "b": 3}), ("subtract", {"a": 10, "b": 4})),
        calls(("math_multiply", {"a": 5, "b": 6})),
        gemini_response("2 + 3 = 5, 10 - 4 = 6, and 5 * 6 = 30."),
    ], ["2+3, 10-4, then 5*6?"]),
    "a toolset that fails to list its tools is left out of the step": (BROKEN_TOOLSET, [
        calls(("ping", {})), gemini_response("I am alive."),
    ], ["Are you there?"]),
    "an MCP server's tools through tools.mcp_tool, filtered and prefixed": (MCP, [
        calls(("calc_add", {"a": 2, "b": 3}), ("calc_shout", {"text": "hi"})), gemini_response("5, and HI."),
    ], ["2+3, and shout hi"]),
    "AgentTool: the agent's answer summarized by the caller's model": (AGENT_TOOL.replace("SKIP", "False") + MAIN, [
        calls(("summarizer", {"request": "The fox jumps over the dog, again and again."})),
        calls(("count_words", {"text": "The fox jumps over the dog, again and again."})),
        gemini_response("A fox keeps jumping over a dog."),
        gemini_response("Summary: a fox keeps jumping over a dog."),
    ], ["Summarize: The fox jumps over the dog, again and again."]),
    "AgentTool(skip_summarization=True): the agent's answer ends the turn": (
        AGENT_TOOL.replace("SKIP", "True") + MAIN, [
            calls(("summarizer", {"request": "Rain all week, sun on Sunday."})),
            gemini_response("Rainy week, sunny Sunday."),
            gemini_response("You are welcome."),
        ], ["Summarize: Rain all week, sun on Sunday.", "Thanks!"]),
    "AgentTool over an agent with an output schema answers its fields": (AGENT_TOOL_SCHEMA, [
        calls(("checker", {"request": "Water boils at 100 C at sea level."})),
        gemini_response('{"valid": true, "reason": "Standard pressure."}'),
        gemini_response("The claim holds: standard pressure."),
    ], ["Is it true that water boils at 100 C at sea level?"]),
    "AgentTool: what the agent saves is the caller's artifact": (AGENT_TOOL_ARTIFACT, [
        calls(("artist", {"request": "a chart of sales"})),
        calls(("draw_chart", {"title": "sales"})), gemini_response("Drew sales.svg."),
        calls(("load_artifacts", {"artifact_names": ["sales.svg"]})),
        gemini_response("Here is the sales chart."),
    ], ["Draw a chart of sales and show it to me."]),
    "load_artifacts after a tool saved one through tool_context.save_artifact": (ARTIFACTS, [
        calls(("write_report", {"title": "q3", "body": "Sales grew 12% in Q3."})), gemini_response("Saved q3.txt."),
        calls(("load_artifacts", {"artifact_names": ["q3.txt", "missing.txt"]})),
        gemini_response("The Q3 report says sales grew 12%."),
    ], ["Write the Q3 report: sales grew 12%.", "What does the Q3 report say?"]),
    "load_memory finds what an earlier session put in memory": (MEMORY, [
        calls(("remember_this_conversation", {})), gemini_response("Noted: your cat is called Miso."),
        calls(("load_memory", {"query": "Miso"})), gemini_response("Your cat is called Miso."),
    ], [("first", "Remember: my cat is called Miso."), ("second", "What is my cat called?")]),
}

# google-adk's built-in tools whose words (their description, a status line of their
# result) are our own: compared by what they declare and answer, not how they word it
OWN_WORDS = {"get_user_choice", "load_artifacts", "load_memory"}


def _memory(response: dict[str, Any]) -> None:
    """A memory's id (random) and timestamp (the clock's; google-adk writes it without
    its time zone) left out of a ``load_memory`` response."""
    for memory in (response.get("result") or {}).get("memories", []):
        memory.pop("id", None)
        memory.pop("timestamp", None)


_UNTRUSTED = re.compile(r"^<<<BEGIN_UNTRUSTED_TOOL_DESCRIPTION>>>\n(.*)\n<<<END_UNTRUSTED_TOOL_DESCRIPTION>>>$", re.S)


def _own_words(rows: list[dict[str, Any]], requests: list[dict[str, Any]]) -> None:
    """What the harness compares, less what differs by nature or by wording: see
    OWN_WORDS and _memory. google-adk's ``load_memory`` event holds a pydantic object
    (``{"result": LoadMemoryResponse}``, ours the dict it is sent as): that response
    is compared as the model receives it, in the requests."""
    for row in rows:
        row["responses"] = [(i, n, "<in the requests>" if n == "load_memory"
                             else {k: ("<own words>" if k == "status" and n in OWN_WORDS else v)
                                   for k, v in r.items()} if isinstance(r, dict) else r)
                            for i, n, r in row["responses"]]
    for request in requests:
        for tool in request["tools"]:
            if tool["name"] in OWN_WORDS:
                tool["description"] = "<own words>"
            # google-adk 2.13 fences an MCP server's tool descriptions as untrusted; ours
            # sends them as the server gives them (docs/design.md, google-adk's tools)
            tool["description"] = _UNTRUSTED.sub(r"\1", tool["description"])
        for content in request["contents"]:
            for part in content.get("parts", []):
                response = part.get("functionResponse")
                if response and response["name"] in OWN_WORDS and "status" in response["response"]:
                    response["response"]["status"] = "<own words>"
                if response and response["name"] == "load_memory":
                    _memory(response["response"])


def run_both(source: str, answers: list[StubResponse], turns: list[Any], server: StubServer
             ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The program run on google-adk, then with its imports rewritten on ours."""
    results = []
    for text in (source, rewritten(source)):
        _, (events, finals, extra) = run_program(text, answers, server, turns)
        rows, requests = event_rows(events), request_rows(server)
        _own_words(rows, requests)
        results.append({"events": rows, "finals": _plain(finals), "state": _plain(extra["state"]),
                        "log": _plain(extra["log"]), "requests": requests, "unused_answers": len(server.responses)})
    assert "google" not in rewritten(source)
    return results[0], results[1]


# What each case must show on both sides (so that two runs alike in failing to do the
# thing do not pass): words that must be in the requests the model received, or in the
# program's LOG.
SHOWN: dict[str, list[str]] = {
    "a BaseTool subclass": ['"get_stock_price"', "The stock's ticker, e.g. GOOG.", '"price": 171.5',
                            '"result": "unknown ticker"'],
    "a long-running BaseTool": ['"approver": "Mia"'],
    "get_user_choice": ['"pistachio"]', '"result": "pistachio"'],
    "a BaseToolset": ['["request", "math", 3, "user"]', '"math_add"', '"math_multiply"', '"subtract"', '"result": 30', '["closed", ["add"'],
    "a toolset that fails": ['"pong": true', '"listing"'],
    "an MCP server's tools": ['"calc_add"', '"calc_shout"', '"structuredContent": {"result": 5}', '"HI"'],
    "AgentTool: the agent's answer summarized": ['"result": "A fox keeps jumping over a dog."', '"words": 9'],
    "AgentTool(skip_summarization=True)": ['"result": "Rainy week, sunny Sunday."'],
    "AgentTool over an agent with an output schema": ['"functionResponse": {"name": "checker", "response": {"valid": true, "reason": "Standard pressure."}}'],
    "AgentTool: what the agent saves": ['"Artifact sales.svg is:"', '<svg><text>sales</text></svg>',
                                          '["drawn", "sales.svg", 0, ["sales.svg"]]'],
    "load_artifacts": ['"Artifact q3.txt is:"', '"Sales grew 12% in Q3."'],
    "load_memory": ['"Remember: my cat is called Miso."'],
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_google_adk_tool_program_runs_here_with_its_imports_rewritten(name: str, gemini: StubServer) -> None:
    source, answers, turns = CASES[name]
    theirs, ours = run_both(source, answers, turns, gemini)
    assert theirs["unused_answers"] == 0 and theirs["events"], "the case must use its script on google-adk"
    seen = json.dumps([theirs["requests"], theirs["log"]])
    wanted = next(words for start, words in SHOWN.items() if name.startswith(start))
    assert all(word in seen for word in wanted), [word for word in wanted if word not in seen]
    assert ours["events"] == theirs["events"]
    assert ours["finals"] == theirs["finals"]
    assert ours["state"] == theirs["state"]
    assert ours["log"] == theirs["log"]
    assert ours["requests"] == theirs["requests"]
    assert ours["unused_answers"] == 0


# -- ours only: what google-adk leaves to chance ----------------------------------------------

def test_a_declaration_that_is_not_one_is_a_typed_error_naming_it(gemini: StubServer) -> None:
    from adk_actors import AdkError, Agent
    from adk_actors.runners import InMemoryRunner
    from adk_actors.tools import BaseTool

    class Garbled(BaseTool):
        def _get_declaration(self) -> Any:
            return {"name": "garbled", "parameters": "not a schema"}

    agent = Agent(name="bot", model="gemini-2.5-flash", tools=[Garbled(name="garbled", description="?")])
    with gemini._lock:
        gemini.requests.clear()

    async def turn() -> None:
        runner = InMemoryRunner(agent=agent, app_name="a")
        await runner.session_service.create_session(app_name="a", user_id="u", session_id="s")
        async for _ in runner.run_async(user_id="u", session_id="s", new_message=Content.user("hi")):
            pass

    with pytest.raises(AdkError, match="FunctionDeclaration"):
        asyncio.run(asyncio.wait_for(turn(), 30))
    assert not gemini.requests  # nothing was sent


def test_runner_close_closes_each_toolset_once_even_when_one_fails() -> None:
    from adk_actors import Agent
    from adk_actors.runners import InMemoryRunner
    from adk_actors.tools import BaseToolset

    closed: list[str] = []

    class Named(BaseToolset):
        def __init__(self, name: str, fails: bool = False) -> None:
            super().__init__()
            self.name, self.fails = name, fails

        async def get_tools(self, readonly_context: Any = None) -> list[Any]:
            return []

        async def close(self) -> None:
            closed.append(self.name)
            if self.fails:
                raise RuntimeError("cannot close")

    shared = Named("shared")
    child = Agent(name="child", model="gemini-2.5-flash", tools=[shared, Named("child's")])
    root = Agent(name="root", model="gemini-2.5-flash", tools=[Named("broken", fails=True), shared],
                 sub_agents=[child])
    asyncio.run(InMemoryRunner(agent=root, app_name="a").close())
    assert closed == ["broken", "shared", "child's"]
