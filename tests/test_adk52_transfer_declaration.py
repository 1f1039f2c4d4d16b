"""``transfer_to_agent``'s declaration is the compiler's, on every path (issue 52).

google-adk 2.13 declares ``transfer_to_agent`` with a plain JSON schema under
``parameters_json_schema`` (pydantic's schema of its function's parameters, titles kept:
``transfer_to_agentParams``, ``Agent Name``; ``agent_name``'s enum the targets) and puts
it before the agent's own tools. The compiler declares it so (our short description
aside), so what reads the compiler's request gets it without a later step's help:

- a live conversation: the same program's agents on google-adk's ``run_live`` (in
  process, its Live API stand-in over TLS, as google-genai wants) and on our engine's
  live path (its own stand-in), and the ``setup`` messages' declarations compared, key
  by key as received, in order;
- a turn: the step's request declares what the live request declares, and the tool its
  ``tools_dict`` holds declares the same;
- the other providers (OpenAI chat and Responses, Anthropic, LiteLLM), which read one
  JSON schema of a tool's parameters: theirs is a valid JSON schema that takes a target
  and refuses a name that is none.
"""

from __future__ import annotations

import asyncio
import copy
import ssl
import sys
import types
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import trustme
from google_adk_harness import gemini_by_environment
from live_stub import LiveServer, live_server, live_server_in_thread

from adk_actors import Content, LlmAgent, RunConfig
from adk_actors._types import LiveRequest
from adk_actors.compiler import CompileContext, build_request
from adk_actors.engine import SessionView, run_live_invocation
from adk_actors.models import AnthropicModel, GeminiModel, OpenAIModel, ScriptedModel
from adk_actors.models._lite_llm import completion_args
from adk_actors.models._openai_responses_llm import OpenAIResponsesLlm

pytest.importorskip("google.adk")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

OUR_WORDS = "Hand the conversation to another agent that is better suited to answer it."

#: what google-adk 2.13 declares for an agent whose one target is ``helper``
GOOGLE_ADK_SCHEMA = {
    "properties": {"agent_name": {"title": "Agent Name", "type": "string", "enum": ["helper"]}},
    "required": ["agent_name"], "title": "transfer_to_agentParams", "type": "object"}

PROGRAM = '''
from google.adk.agents import Agent, LiveRequestQueue
from google.adk.agents.run_config import RunConfig
from google.adk.runners import InMemoryRunner
from google.genai import types


def ping() -> str:
    """Say hello."""
    return "pong"


helper = Agent(name="helper", model="gemini-live-2.5-flash", description="Helps.", instruction="Help.")
root_agent = Agent(name="desk", model="gemini-live-2.5-flash", instruction="Route.", tools=[ping],
                   sub_agents=[helper])


async def main():
    runner = InMemoryRunner(agent=root_agent, app_name="desk")
    session = await runner.session_service.create_session(app_name="desk", user_id="ann")
    queue = LiveRequestQueue()
    queue.send_content(types.Content(role="user", parts=[types.Part(text="hi")]))
    async for event in runner.run_live(user_id="ann", session_id=session.id, live_request_queue=queue,
                                       run_config=RunConfig(response_modalities=["TEXT"])):
        if event.turn_complete:
            queue.close()
            break
    await runner.close()
'''


def ping() -> str:
    """Say hello."""
    return "pong"


def desk(model: Any) -> LlmAgent:
    """Ours of the program's agents: the desk, its tool and its one sub-agent."""
    helper = LlmAgent(name="helper", model=model, description="Helps.", instruction="Help.")
    return LlmAgent(name="desk", model=model, instruction="Route.", tools=[ping], sub_agents=[helper])


def hello(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The Live API's side: a typed turn is answered in text, then the turn ends."""
    if "clientContent" in message or "client_content" in message:
        return [{"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": "Hi."}]}}},
                {"serverContent": {"turnComplete": True}}]
    return []


def run_google_adk(source: str) -> None:
    """``source``'s ``main()`` on google-adk, as a module of its own, within 30 s."""
    module = types.ModuleType("transfer_live_case")
    sys.modules[module.__name__] = module
    try:
        exec(compile(source, "<transfer live case>", "exec"), module.__dict__)
        asyncio.run(asyncio.wait_for(module.main(), timeout=30))
    finally:
        sys.modules.pop(module.__name__, None)


async def converse_live(agent: LlmAgent) -> SessionView:
    """One typed turn of a live conversation with ``agent`` on our engine, closed by its
    caller once the answer's turn is complete (within 30 s)."""
    session = SessionView()
    inputs: asyncio.Queue[LiveRequest] = asyncio.Queue()
    inputs.put_nowait(LiveRequest(content=Content.user("hi")))

    async def run() -> None:
        async for event in run_live_invocation(agent, session, inputs,
                                               run_config=RunConfig(response_modalities=("TEXT",))):
            if event.turn_complete:
                inputs.put_nowait(LiveRequest(close=True))

    await asyncio.wait_for(run(), timeout=30)
    return session


def setup_declarations(server: LiveServer) -> list[dict[str, Any]]:
    """The function declarations of the ``setup`` message ``server`` received."""
    setup = server.received[0]["setup"]
    return [d for tool in setup.get("tools", []) for d in tool.get("functionDeclarations", [])]


def test_a_live_conversation_declares_transfer_to_agent_as_google_adks_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    authority = trustme.CA()  # google-genai reaches the Live API only over TLS
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(tls)
    authority.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    theirs = LiveServer(hello)
    with live_server_in_thread(theirs, tls) as url, gemini_by_environment(url):
        monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
        run_google_adk(PROGRAM)
    ours = LiveServer(hello)

    async def ours_live() -> None:
        async with live_server(ours) as base_url:
            await converse_live(desk(GeminiModel("gemini-live-2.5-flash", base_url=base_url,
                                                 api_key="test-key-not-a-secret")))

    asyncio.run(ours_live())
    their_declarations, our_declarations = setup_declarations(theirs), setup_declarations(ours)
    assert [d["name"] for d in their_declarations] == ["transfer_to_agent", "ping"]
    assert [d["name"] for d in our_declarations] == ["transfer_to_agent", "ping"]
    assert their_declarations[0]["parameters_json_schema"] == GOOGLE_ADK_SCHEMA
    assert "parameters" not in our_declarations[0]
    assert our_declarations[0]["description"] == OUR_WORDS  # our words, not google-adk's docstring
    their_declarations[0].pop("description"), our_declarations[0].pop("description")
    assert our_declarations == their_declarations


def test_a_turn_and_a_live_conversation_declare_the_same_transfer_tool() -> None:
    """On our engine, with the scripted model: the declarations a turn's request and a
    live conversation's request carry are the same, the transfer tool first; the tool a
    turn's ``tools_dict`` holds under ``transfer_to_agent`` declares what the request does."""
    from adk_actors.runners import InMemoryRunner

    seen: list[Any] = []

    def look(callback_context: Any, llm_request: Any) -> None:
        seen.append((copy.deepcopy(llm_request.tools), llm_request.tools_dict["transfer_to_agent"]._get_declaration()))

    turn_model = ScriptedModel(fallback="Hi.")
    agent = desk(turn_model)
    agent.before_model_callback = look

    async def turn() -> None:
        runner = InMemoryRunner(agent, app_name="desk")
        session = await runner.session_service.create_session(app_name="desk", user_id="ann")
        async for _ in runner.run_async(user_id="ann", session_id=session.id, new_message=Content.user("hi")):
            pass
        await runner.close()

    asyncio.run(asyncio.wait_for(turn(), timeout=30))
    live_model = ScriptedModel(["Hi."])
    asyncio.run(converse_live(desk(live_model)))
    [(turn_tools, in_the_map)] = seen
    live_tools = list(live_model.requests[0].tools)
    assert [d.name for d in turn_tools] == [d.name for d in live_tools] == ["transfer_to_agent", "ping"]
    assert turn_tools == live_tools
    assert live_tools[0].parameters is None and live_tools[0].parameters_json_schema == GOOGLE_ADK_SCHEMA
    assert live_tools[0].description == OUR_WORDS
    assert in_the_map == turn_tools[0]


def _schemas_sent() -> dict[str, dict[str, Any]]:
    """The JSON schema of ``transfer_to_agent``'s parameters each provider would send for
    the desk's request, as the compiler makes it."""
    request = build_request(desk("gpt-4o"), CompileContext())
    openai = OpenAIModel("gpt-test", base_url="http://127.0.0.1:9/v1", api_key="sk-test").payload(request, False)
    anthropic = AnthropicModel("claude-test", base_url="http://127.0.0.1:9", api_key="ak-test").payload(request, False)
    responses = OpenAIResponsesLlm(model="gpt-5", api_key="sk-test").request_body(request, False)
    sent = {
        "openai": next(t["function"] for t in openai["tools"] if t["function"]["name"] == "transfer_to_agent"),
        "anthropic": next(t for t in anthropic["tools"] if t["name"] == "transfer_to_agent"),
        "openai responses": next(t for t in responses["tools"] if t["name"] == "transfer_to_agent"),
    }
    for model in ("openai/gpt-4o", "anthropic/claude-sonnet-4-5"):
        args = completion_args(request, model, {}, stream=False)
        sent[f"litellm {model}"] = next(t["function"] for t in args["tools"]
                                        if t["function"]["name"] == "transfer_to_agent")
    return {provider: tool.get("input_schema", tool.get("parameters")) for provider, tool in sent.items()}


@pytest.mark.parametrize("provider", ["openai", "anthropic", "openai responses", "litellm openai/gpt-4o",
                                      "litellm anthropic/claude-sonnet-4-5"])
def test_other_providers_send_a_valid_schema_that_offers_only_the_targets(provider: str) -> None:
    schema = _schemas_sent()[provider]
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)  # a JSON schema, as each provider's tool takes one
    assert schema["type"] == "object" and schema["required"] == ["agent_name"]
    assert validator(schema).is_valid({"agent_name": "helper"})
    assert not validator(schema).is_valid({"agent_name": "nobody"})
    assert not validator(schema).is_valid({})
