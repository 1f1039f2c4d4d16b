"""Three plugin behaviours of google-adk 2.13, run side by side (issue 52, plugins).

Each program runs twice in this process (the shared harness, tests/google_adk_harness.py):
as written on google-adk, then rewritten on ours, against one Gemini REST stand-in.
Compared: what the program's plugins wrote down (``LOG``) and what it returned.

The cases: ``on_agent_error_callback`` is told, with the agent, its callback context
and the error, of an error that leaves each agent on its way out (the innermost
first), and the error still ends the run; a ``before_run_callback`` that answers with
something other than Content stops the chain (the next plugin is not asked) but not
the run; an ``AgentTool``'s child run has the caller's plugins unless
``include_plugins=False``.
"""

from __future__ import annotations

from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, rewritten, run_program

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini


def both(source: str, server: StubServer, answers: list[StubResponse], *args: Any) -> tuple[Any, Any]:
    """(LOG, result) of ``source``'s ``main(*args)`` on google-adk, then on ours."""
    sides = []
    for program in (source, rewritten(source)):
        namespace, result = run_program(program, list(answers), server, *args)
        sides.append((namespace["LOG"], result))
    assert "google" not in rewritten(source)
    return sides[0], sides[1]


AGENT_ERROR = '''
from google.adk.agents import BaseAgent, SequentialAgent
from google.adk.plugins import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

class Explodes(BaseAgent):
    async def _run_async_impl(self, ctx):
        raise ValueError("no such city: Paris")
        yield

class Watcher(BasePlugin):
    async def on_agent_error_callback(self, *, agent, callback_context, error):
        LOG.append((self.name, agent.name, callback_context.agent_name, type(error).__name__, str(error)))

class Broken(BasePlugin):
    async def on_agent_error_callback(self, *, agent, callback_context, error):
        LOG.append((self.name, agent.name))
        raise RuntimeError("the watcher broke")

inner = Explodes(name="inner")
root = SequentialAgent(name="outer", sub_agents=[inner])
runner = InMemoryRunner(agent=root, app_name="app", plugins=[Broken(name="broken"), Watcher(name="watcher")])

async def main():
    session = await runner.session_service.create_session(app_name="app", user_id="ann")
    message = types.Content(role="user", parts=[types.Part(text="Paris?")])
    try:
        async for _ in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            pass
    except ValueError as error:
        return ("raised", str(error))
    return "finished"
'''


def test_on_agent_error_callback_is_told_by_each_agent_the_error_leaves(gemini: StubServer) -> None:
    theirs, ours = both(AGENT_ERROR, gemini, [])
    assert theirs == ([("broken", "inner"), ("watcher", "inner", "inner", "ValueError", "no such city: Paris"),
                       ("broken", "outer"), ("watcher", "outer", "outer", "ValueError", "no such city: Paris")],
                      ("raised", "no such city: Paris"))
    assert ours == theirs


BEFORE_RUN = '''
from google.adk.agents import Agent
from google.adk.plugins import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []

class Answers(BasePlugin):
    async def before_run_callback(self, *, invocation_context):
        LOG.append((self.name, "before_run"))
        return ANSWER

class Second(BasePlugin):
    async def before_run_callback(self, *, invocation_context):
        LOG.append((self.name, "before_run"))

    async def before_agent_callback(self, *, agent, callback_context):
        LOG.append((self.name, "before_agent", agent.name))

agent = Agent(name="bot", model="gemini-2.5-flash", instruction="Answer.")
runner = InMemoryRunner(agent=agent, app_name="app", plugins=[Answers(name="answers"), Second(name="second")])

async def main(answer):
    global ANSWER
    ANSWER = answer
    session = await runner.session_service.create_session(app_name="app", user_id="ann")
    message = types.Content(role="user", parts=[types.Part(text="Hello?")])
    texts = []
    async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
        if event.content and event.content.parts and event.content.parts[0].text:
            texts.append((event.author, event.content.parts[0].text))
    return texts
'''


@pytest.mark.parametrize("answer", [{"skip": True}, "not content", 0])
def test_a_before_run_answer_that_is_not_content_ends_the_chain_not_the_run(gemini: StubServer,
                                                                             answer: Any) -> None:
    theirs, ours = both(BEFORE_RUN, gemini, [gemini_response(text="Hi.")], answer)
    assert theirs == ([("answers", "before_run"), ("second", "before_agent", "bot")], [("bot", "Hi.")])
    assert ours == theirs


AGENT_TOOL = '''
from google.adk.agents import Agent
from google.adk.plugins import BasePlugin
from google.adk.runners import InMemoryRunner
from google.adk.tools.agent_tool import AgentTool
from google.genai import types

LOG = []

class Watcher(BasePlugin):
    async def before_run_callback(self, *, invocation_context):
        LOG.append(("before_run", invocation_context.agent.name))

    async def before_agent_callback(self, *, agent, callback_context):
        LOG.append(("before_agent", agent.name))

    async def before_model_callback(self, *, callback_context, llm_request):
        LOG.append(("before_model", callback_context.agent_name))

    async def after_run_callback(self, *, invocation_context):
        LOG.append(("after_run", invocation_context.agent.name))

    async def close(self):
        LOG.append(("closed",))

async def main(include):
    helper = Agent(name="helper", model="gemini-2.5-flash", instruction="Help.", description="Helps.")
    if include is None:
        tool = AgentTool(agent=helper)
    else:
        tool = AgentTool(agent=helper, include_plugins=include)
    root = Agent(name="root", model="gemini-2.5-flash", instruction="Use helper.", tools=[tool])
    runner = InMemoryRunner(agent=root, app_name="app", plugins=[Watcher(name="watcher")])
    session = await runner.session_service.create_session(app_name="app", user_id="ann")
    message = types.Content(role="user", parts=[types.Part(text="Go.")])
    finals = []
    async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
        if event.is_final_response() and event.content and event.content.parts:
            finals.append(event.content.parts[0].text)
    await runner.close()
    return finals
'''


@pytest.mark.parametrize("include", [None, True, False])
def test_an_agent_tool_runs_its_agent_with_the_callers_plugins_unless_told_not_to(gemini: StubServer,
                                                                                  include: bool | None) -> None:
    answers = [calls(("helper", {"request": "help"})), gemini_response(text="Helped."),
               gemini_response(text="Done.")]
    theirs, ours = both(AGENT_TOOL, gemini, answers, include)
    child = [("before_run", "helper"), ("before_agent", "helper"), ("before_model", "helper"),
             ("after_run", "helper")]
    assert theirs == ([("before_run", "root"), ("before_agent", "root"), ("before_model", "root"),
                       *(child if include is not False else []),
                       ("before_model", "root"), ("after_run", "root"), ("closed",)], ["Done."])
    assert ours == theirs
