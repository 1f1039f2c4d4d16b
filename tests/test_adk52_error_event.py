"""The error event of a failed run, in process (``InMemoryRunner``), side by side with
google-adk 2.13 on one Gemini stand-in (the host's ``/run_sse``: tests/test_adk52_gaps.py).

google-adk's rule (its node runner, ``workflow/_node_runner.py``): when the run of the
node its Runner drives raises (a root ``LlmAgent``, or a ``Workflow``), that node's run
ends with an error event: ``author`` the agent, ``errorCode`` the exception's class name
(its ``status`` when a string), ``errorMessage`` its text, no content; the event is
streamed and stored, then the caller gets the exception. An exception of the agent's
callbacks and of the plugin hooks it runs (before_model, before_agent, before_tool)
makes one (a ``Workflow``'s: its failing node's, one only); a plugin hook of the runner's own (``on_user_message``, ``before_run``) does
not, nor does a root ``SequentialAgent`` or custom agent (its older, non-node path).
"""

from __future__ import annotations

from typing import Any

import pytest
from google_adk_harness import calls, gemini, rewritten, run_program, stand_in  # noqa: F401

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"), pytest.mark.timeout(300)]

PROGRAM = '''
from google.adk.agents import Agent, BaseAgent, SequentialAgent
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types


def refuse(*args, **kwargs):
    raise RuntimeError("the callback refused")


def lookup(key: str) -> dict:
    """Looks a record up."""
    return {"found": key}


class Refusing(BasePlugin):
    def __init__(self, hook):
        super().__init__(name="refusing")
        self.hook = hook

    async def on_user_message_callback(self, *, invocation_context, user_message):
        if self.hook == "on_user_message":
            raise ValueError("the plugin refused")

    async def before_run_callback(self, *, invocation_context):
        if self.hook == "before_run":
            raise ValueError("the plugin refused")

    async def before_model_callback(self, *, callback_context, llm_request):
        if self.hook == "before_model":
            raise ValueError("the plugin refused")

    async def before_tool_callback(self, *, tool, tool_args, tool_context):
        if self.hook == "before_tool":
            raise ValueError("the plugin refused")


class Denied(Exception):
    status = "PERMISSION_DENIED"  # an API's canonical status, as google-genai's errors carry


def deny(*args, **kwargs):
    raise Denied("no access")


def broken_node(node_input: str) -> str:
    raise RuntimeError("the node broke")


class Broken(BaseAgent):
    async def _run_async_impl(self, ctx):
        raise RuntimeError("the custom agent broke")
        yield


def agent_of(case):
    """The root agent and the plugins of ``case``."""
    if case.startswith("plugin "):
        return Agent(name="root", model="gemini-2.5-flash", instruction="Answer.", tools=[lookup]), \\
            [Refusing(case.split(" ", 1)[1])]
    if case == "sub-agent's callback":
        helper = Agent(name="helper", model="gemini-2.5-flash", instruction="Help.", before_model_callback=refuse)
        return Agent(name="root", model="gemini-2.5-flash", instruction="Hand over.", sub_agents=[helper]), []
    if case == "SequentialAgent root":
        step = Agent(name="step", model="gemini-2.5-flash", instruction="Answer.", before_model_callback=refuse)
        return SequentialAgent(name="root", sub_agents=[step]), []
    if case == "custom agent root":
        return Broken(name="root"), []
    if case == "Workflow root":
        from google.adk.workflow import Workflow
        return Workflow(name="root", edges=[("START", broken_node)]), []
    if case == "a status of the exception":
        return Agent(name="root", model="gemini-2.5-flash", instruction="Answer.", before_model_callback=deny), []
    hook = {"before_model": "before_model_callback", "after_model": "after_model_callback",
            "before_agent": "before_agent_callback", "after_agent": "after_agent_callback",
            "before_tool": "before_tool_callback"}[case.split(" ")[0]]
    return Agent(name="root", model="gemini-2.5-flash", instruction="Answer.", tools=[lookup],
                 **{hook: refuse}), []


async def main(case):
    agent, plugins = agent_of(case)
    runner = InMemoryRunner(agent=agent, app_name="e", plugins=plugins)
    session = await runner.session_service.create_session(app_name="e", user_id="ann")
    streamed, raised = [], None
    try:
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=types.Content(
                role="user", parts=[types.Part(text="go")])):
            streamed.append(event)
    except Exception as error:
        raised = (type(error).__name__, str(error))
    stored = await runner.session_service.get_session(app_name="e", user_id="ann", session_id=session.id)
    await runner.close()
    return streamed, stored.events, raised
'''

TALKS = gemini_response("Hello.")
CALLS = calls(("lookup", {"key": "k1"}))
HANDS_OVER = calls(("transfer_to_agent", {"agent_name": "helper"}))

#: case -> (the model's answers, the exception the caller gets: google-adk's words,
#: the error event's code and text, or None where google-adk makes no event)
CASES: dict[str, tuple[list[StubResponse], tuple[str, str], tuple[str, str] | None]] = {
    "before_model callback": ([], ("RuntimeError", "the callback refused"), ("RuntimeError", "the callback refused")),
    "after_model callback": ([TALKS], ("RuntimeError", "the callback refused"),
                             ("RuntimeError", "the callback refused")),
    "before_agent callback": ([], ("RuntimeError", "the callback refused"), ("RuntimeError", "the callback refused")),
    "after_agent callback": ([TALKS], ("RuntimeError", "the callback refused"),
                             ("RuntimeError", "the callback refused")),
    "before_tool callback": ([CALLS], ("RuntimeError", "the callback refused"),
                             ("RuntimeError", "the callback refused")),
    "sub-agent's callback": ([HANDS_OVER], ("RuntimeError", "the callback refused"),
                             ("RuntimeError", "the callback refused")),
    "plugin before_model": ([], ("RuntimeError", "Error in plugin 'refusing' during 'before_model_callback' "
                                                 "callback: the plugin refused"),
                            ("RuntimeError", "Error in plugin 'refusing' during 'before_model_callback' "
                                             "callback: the plugin refused")),
    "plugin before_tool": ([CALLS], ("RuntimeError", "Error in plugin 'refusing' during 'before_tool_callback' "
                                                     "callback: the plugin refused"),
                           ("RuntimeError", "Error in plugin 'refusing' during 'before_tool_callback' "
                                            "callback: the plugin refused")),
    "plugin before_run": ([], ("RuntimeError", "Error in plugin 'refusing' during 'before_run_callback' "
                                               "callback: the plugin refused"), None),
    "plugin on_user_message": ([], ("RuntimeError", "Error in plugin 'refusing' during 'on_user_message_callback' "
                                                    "callback: the plugin refused"), None),
    "SequentialAgent root": ([], ("RuntimeError", "the callback refused"), None),
    "custom agent root": ([], ("RuntimeError", "the custom agent broke"), None),
    "Workflow root": ([], ("RuntimeError", "the node broke"), ("RuntimeError", "the node broke")),
    "a status of the exception": ([], ("Denied", "no access"), ("PERMISSION_DENIED", "no access")),
}


def _errors(events: list[Any]) -> list[dict[str, Any]]:
    return [{"author": e.author, "error_code": e.error_code, "error_message": e.error_message,
             "content": e.content is not None} for e in events if e.error_code]


@pytest.mark.parametrize("case", list(CASES))
def test_a_failed_run_streams_and_stores_google_adks_error_event_or_none(gemini: StubServer,  # noqa: F811
                                                                         case: str) -> None:
    answers, exception, event = CASES[case]
    seen = {}
    for side, source in (("theirs", PROGRAM), ("ours", rewritten(PROGRAM))):
        _, (streamed, stored, raised) = run_program(source, answers, gemini, case)
        assert len(gemini.responses) == 0, f"{side}: the case must use its script"
        seen[side] = {"streamed": _errors(streamed), "stored": _errors(stored), "last": streamed[-1].error_code
                      if streamed else None, "raised": raised}
    expected = [] if event is None else [{"author": "root", "error_code": event[0], "error_message": event[1],
                                          "content": False}]
    theirs, ours = seen["theirs"], seen["ours"]
    assert theirs["streamed"] == theirs["stored"] == expected  # google-adk, as observed
    assert ours["streamed"] == ours["stored"] == expected
    # the event is the stream's last; then the caller gets the exception (its type our own
    # for a plugin's: a RuntimeError by the name PluginError, with google-adk's words)
    if event is not None:
        assert theirs["last"] == ours["last"] == event[0]
    assert theirs["raised"] == exception
    assert ours["raised"] is not None and ours["raised"][1] == exception[1]
    assert ours["raised"][0] in {exception[0], "PluginError"}
