"""google-adk's names and lookups that its agent files rely on (issue 38, first part):
``Agent`` is an LlmAgent, ``BaseAgent`` the base class, and an agent without a model
uses its nearest ancestor's (the engine; a host runs the same engine)."""

from __future__ import annotations

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
