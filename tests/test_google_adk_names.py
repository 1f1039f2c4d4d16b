"""google-adk's names and lookups that its agent files rely on (issue 38, first part):
``Agent`` is an LlmAgent, ``BaseAgent`` the base class, and an agent without a model
uses its nearest ancestor's (the engine; a host runs the same engine)."""

from __future__ import annotations

import asyncio
from typing import Any

from engine_helpers import run, summary

from adk_actors import Agent, BaseAgent, LlmAgent, LlmRequest, SequentialAgent
from adk_actors.agents import AgentLike
from adk_actors.models import ScriptedModel, call


def _speaker(target: str) -> Any:
    """The root transfers to ``target``; any other agent says who it is (from its
    instruction, "You are NAME.")."""

    def script(request: LlmRequest) -> Any:
        if "You are root." in request.system_instruction:
            return call("transfer_to_agent", agent_name=target)
        return f"answered for: {request.system_instruction.split('You are ')[-1].split('.')[0]}"

    return script


def test_agent_is_an_llm_agent_and_base_agent_the_base_of_every_agent() -> None:
    agent = Agent(name="greeter", model=ScriptedModel(["hello there"]), instruction="You are greeter.")
    assert isinstance(agent, LlmAgent) and isinstance(agent, BaseAgent) and isinstance(agent, AgentLike)
    assert summary(run(agent, "hi"))[-1] == ("greeter", "hello there")


def test_a_sub_agent_without_a_model_uses_its_nearest_ancestors() -> None:
    helper = Agent(name="helper", instruction="You are helper.")
    root = Agent(name="root", model=ScriptedModel(fallback=_speaker("helper")), instruction="You are root.",
                 sub_agents=[helper])
    assert helper.model == ""  # nothing is copied into the definition
    assert summary(run(root, "help me"))[-1] == ("helper", "answered for: helper")


def test_an_agent_in_a_workflow_inherits_through_the_workflow() -> None:
    inner = Agent(name="inner", instruction="You are inner.")
    steps = SequentialAgent(name="steps", sub_agents=[inner])
    root = Agent(name="root", model=ScriptedModel(fallback=_speaker("steps")), instruction="You are root.",
                 sub_agents=[steps])
    # the root's model serves ``inner`` two levels down (the workflow between has none)
    assert summary(run(root, "go"))[-1] == ("inner", "answered for: inner")


def test_with_no_model_anywhere_the_run_says_so() -> None:
    lonely = Agent(name="lonely", instruction="You are lonely.")
    assert summary(run(lonely, "hi"))[-1] == ("lonely", "error:no_model")


def test_generate_content_config_and_a_planner_reach_geminis_request() -> None:
    from adk_actors import types
    from adk_actors.models import GeminiModel
    from adk_actors.planners import BuiltInPlanner

    agent = Agent(name="tuned", model="gemini-2.5-flash", planner=BuiltInPlanner(
        thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_budget=256)),
        generate_content_config=types.GenerateContentConfig(
            temperature=0.2, top_k=5, stop_sequences=["END"], safety_settings=[types.SafetySetting(
                category=types.HarmCategory.HARM_CATEGORY_HARASSMENT, threshold=types.HarmBlockThreshold.BLOCK_NONE)]))
    payload = GeminiModel("gemini-2.5-flash", base_url="http://127.0.0.1:9", api_key="k").payload(
        LlmRequest(contents=(types.UserContent("hi"),), config=agent.generate_config), stream=False)
    assert payload["generationConfig"] == {"temperature": 0.2, "topK": 5, "stopSequences": ["END"],
                                           "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 256}}
    assert payload["safetySettings"] == [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}]


def test_definitions_google_adk_has_and_we_do_not_are_refused_by_name() -> None:
    import pytest

    from adk_actors import AgentDefinitionError, types

    with pytest.raises(AgentDefinitionError, match="not both"):
        Agent(name="x", generate_config={"temperature": 1}, generate_content_config={"temperature": 0})
    with pytest.raises(AgentDefinitionError, match="response_modalities"):
        Agent(name="x", generate_content_config={"response_modalities": ["AUDIO"]})
    assert types.ModelContent(["a", types.Part(text="b")]).parts[1].text == "b"


def test_in_memory_runner_runs_sync_and_a_missing_session_is_typed() -> None:
    import pytest

    from adk_actors import InMemoryRunner, SessionNotFoundError, types

    runner = InMemoryRunner(Agent(name="echo", model=ScriptedModel(["one", "two"])), app_name="echo")
    with pytest.raises(SessionNotFoundError):
        list(runner.run(user_id="ann", session_id="nope", new_message=types.UserContent("hi")))
    session = asyncio.run(runner.session_service.create_session(app_name="echo", user_id="ann", state={"k": 1}))
    texts = [e.content.text for e in runner.run(user_id="ann", session_id=session.id,
                                                new_message=types.UserContent("hi")) if e.content]
    assert texts == ["one"]  # the user's own message is stored, not yielded (google-adk's rule)
    stored = asyncio.run(runner.session_service.get_session(app_name="echo", user_id="ann", session_id=session.id))
    assert stored is not None and stored.state == {"k": 1} and len(stored.events) == 2
