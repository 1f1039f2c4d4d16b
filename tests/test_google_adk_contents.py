"""A ``Content`` with a role other than ``user`` or ``model`` (``system``), side by side
with google-adk 2.13 (issue 52).

google.genai's ``Content.role`` is any string. What google-adk does with one, and so
what ours must do:

* a ``new_message`` of any role is the user's turn: the runner stores and sends it
  as ``role: user`` (the caller's object is left as it was);
* a content that reaches the session with its role (a plugin's replacement of the
  user's message, an agent callback's answer) keeps it: the model request carries it
  at its place in the contents, ``role: system``;
* another agent's such content is quoted to the agent as context, as any of its
  messages.

Each case runs as a google-adk program, then with its imports rewritten on ours,
against one Gemini REST stand-in (tests/google_adk_harness.py): the same events,
final texts, state (here also each stored event's author and role) and requests. A
request whose contents end with a role other than ``user`` gets a user turn after them
that asks the model to go on (google-adk's ``_maybe_append_user_content``); its words
are each side's own, so it is compared as that turn's place (ours must be
:data:`adk_actors.models._gemini.GO_ON`).
"""

from __future__ import annotations

from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import rewritten, run_case

from adk_actors.models._gemini import GO_ON
from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

HEAD = '''
from google.adk.agents import Agent, SequentialAgent
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types
'''

MAIN = '''
async def main(turns):
    runner = InMemoryRunner(agent=root_agent, app_name="contents", plugins=PLUGINS)
    session = await runner.session_service.create_session(app_name="contents", user_id="ann")
    seen, finals, given = [], [], []
    for text in turns:
        message = types.Content(role=ROLE, parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
            if event.is_final_response() and event.content and event.content.parts:
                finals.append(event.content.parts[0].text)
        given.append(message.role)
    stored = await runner.session_service.get_session(app_name="contents", user_id="ann", session_id=session.id)
    await runner.close()
    roles = [[e.author, e.content.role if e.content else None] for e in stored.events]
    return seen, finals, {**stored.state, "stored roles": roles, "messages' own roles": given}
'''

CASES = {
    # the user's message with role "system": the user's turn, sent and stored as "user"
    "new_message_with_system_role": ('''
ROLE = "system"
PLUGINS = []
root_agent = Agent(name="helper", model="gemini-2.5-flash", instruction="Help.")
''', [gemini_response("One."), gemini_response("Two.")], ["Be brief.", "And now?"]),
    # a plugin replaces the user's message with a system-role content: kept as it is, in
    # the session and at its place in this turn's and the next turn's requests
    "plugin_replaces_the_message_with_a_system_content": ('''
ROLE = "user"

class Framing(BasePlugin):
    def __init__(self):
        super().__init__(name="framing")

    async def on_user_message_callback(self, *, invocation_context, user_message):
        return types.Content(role="system", parts=[types.Part(text="Operator: " + user_message.parts[0].text)])

PLUGINS = [Framing()]
root_agent = Agent(name="helper", model="gemini-2.5-flash", instruction="Help.")
''', [gemini_response("Noted."), gemini_response("Still noted.")], ["Keep it short.", "Again."]),
    # an agent callback answers with a system-role content (the model is skipped); the
    # agent's next turn sends it back as its own message, role kept
    "before_agent_answers_with_a_system_content": ('''
ROLE = "user"
PLUGINS = []

def first_time_only(callback_context):
    if not callback_context.state.get("greeted"):
        callback_context.state["greeted"] = True
        return types.Content(role="system", parts=[types.Part(text="Session opened.")])
    return None

root_agent = Agent(name="helper", model="gemini-2.5-flash", instruction="Help.",
                   before_agent_callback=first_time_only)
''', [gemini_response("Hello again.")], ["Hi.", "Hi again."]),
    # another agent's system-role content: quoted to the next agent as context
    "another_agents_system_content_is_quoted": ('''
ROLE = "user"
PLUGINS = []

def announce(callback_context):
    return types.Content(role="system", parts=[types.Part(text="Maintenance at noon.")])

herald = Agent(name="herald", model="gemini-2.5-flash", instruction="Announce.", before_agent_callback=announce)
writer = Agent(name="writer", model="gemini-2.5-flash", instruction="Answer the user.")
root_agent = SequentialAgent(name="pipeline", sub_agents=[herald, writer])
''', [gemini_response("Understood.")], ["When is maintenance?"]),
}


def _go_on_marked(run: dict[str, Any], turns: list[str], ours: bool) -> dict[str, Any]:
    """``run`` with the go-on turn that ends a request's contents (a user turn of one
    text, none of the ``turns``, after a content of another role) as
    ``{"go on": True}``; on our side that turn must be GO_ON."""
    for request in run["requests"]:
        contents = request["contents"]
        if len(contents) >= 2 and contents[-2].get("role") != "user" and contents[-1].get("role") == "user" \
                and len(contents[-1].get("parts", [])) == 1 and "text" in contents[-1]["parts"][0] \
                and contents[-1]["parts"][0]["text"] not in turns:
            if ours:
                assert contents[-1]["parts"][0]["text"] == GO_ON
            contents[-1] = {"go on": True}
    return run


def assert_alike(source: str, answers: list[Any], turns: list[str], server: StubServer) -> dict[str, Any]:
    """As the harness's ``assert_alike``, with the go-on turn compared by its place."""
    theirs = _go_on_marked(run_case(source, answers, turns, server), turns, ours=False)
    assert theirs["unused_answers"] == 0 and theirs["finals"], "the case must use its script on google-adk"
    ours = _go_on_marked(run_case(rewritten(source), answers, turns, server), turns, ours=True)
    assert "google" not in rewritten(source)
    for key in ("events", "finals", "state", "requests"):
        assert ours[key] == theirs[key], key
    assert ours["unused_answers"] == 0
    return ours


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_system_role_content_goes_where_google_adk_puts_it(case: str, gemini: StubServer) -> None:
    body, answers, turns = CASES[case]
    assert_alike(HEAD + body + MAIN, answers, turns, gemini)


def test_the_requests_carry_the_system_role_where_the_session_has_it(gemini: StubServer) -> None:
    """What the cases compare, spelled out for the plugin's case: the replaced message
    is sent with role ``system``, in turn and in the next turn's history, each request
    then ending with the go-on user turn."""
    body, answers, turns = CASES["plugin_replaces_the_message_with_a_system_content"]
    ours = run_case(rewritten(HEAD + body + MAIN), answers, turns, gemini)
    roles = [[(c["role"], c["parts"][0]["text"]) for c in request["contents"]] for request in ours["requests"]]
    assert roles == [[("system", "Operator: Keep it short."), ("user", GO_ON)],
                     [("system", "Operator: Keep it short."), ("model", "Noted."), ("system", "Operator: Again."),
                      ("user", GO_ON)]]
    assert ours["state"]["stored roles"] == [["user", "system"], ["helper", "model"]] * 2


def test_a_system_role_content_is_kept_through_the_wire_form_and_a_store() -> None:
    """As google.genai's, our Content takes any role and keeps it: through its JSON
    form and through a session store's round trip."""
    from adk_actors import Content, Event, Part
    from adk_actors.store import in_memory_store

    content = Content(role="system", parts=[Part(text="Be brief.")])
    assert Content.model_validate_json(content.to_json()) == content
    store = in_memory_store()
    store.create_session("app", "ann", "s1", None)
    store.append_event("app", "ann", "s1", Event(author="user", content=content))
    assert [e.content.role for e in store.get_session("app", "ann", "s1").events if e.content] == ["system"]
