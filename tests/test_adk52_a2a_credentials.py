"""Issue 52: ``RemoteA2aAgent`` never relays credential material to its peer, as
google-adk 2.13's drops it (``a2a/agent/_remote_a2a_agent.py``:
``_without_credential_parts``, applied to each event before the history becomes the
A2A message).

Side by side with google-adk itself: the same session events given to google-adk's
history builder (``RemoteA2aAgent._construct_message_parts_from_session``) and to
ours (``RemoteA2aAgent._history``), compared part by part (another agent's turn is
quoted after each side's own preamble sentence, the one difference meant); and each
part's verdict compared with google-adk's ``_is_credential_part``.
"""

from __future__ import annotations

import json
import types
from typing import Any

import pytest
from a2a.types import Message

from adk_actors import Event
from adk_actors.agents._a2a_credentials import is_credential_part, without_credential_parts
from adk_actors.agents._a2a_parts import content_of
from adk_actors.agents._fencing import OTHER_AGENT_CONTEXT_PREAMBLE
from adk_actors.agents.remote_a2a_agent import RemoteA2aAgent

pytest.importorskip("google.adk")
from google.adk.a2a.agent._remote_a2a_agent import RemoteA2aAgent as TheirRemoteA2aAgent
from google.adk.a2a.agent._remote_a2a_agent import _is_credential_part
from google.adk.events.event import Event as AdkEvent
from google.adk.flows.llm_flows.context import _fencing as adk_fencing

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")]

CARD = "http://127.0.0.1:9/.well-known/agent-card.json"
SECRETS = ("S3CRET", "T0KEN", "K3Y", "PASSW0RD", "SCHEME-X")

#: a serialized AuthConfig (as google-adk's flow writes it: camelCase)
AUTH_CONFIG = {"authScheme": {"type": "oauth2"},
               "rawAuthCredential": {"authType": "oauth2", "oauth2": {"clientId": "app", "clientSecret": "S3CRET"}}}


def _event(author: str, role: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"author": author, "content": {"role": role, "parts": list(parts)}}


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"function_call": {"id": call_id, "name": name, "args": args}}


def _result(call_id: str, name: str, response: dict[str, Any]) -> dict[str, Any]:
    return {"function_response": {"id": call_id, "name": name, "response": response}}


#: a session in which another agent asked the client for a credential and got it, then
#: used tools that take or return auth-shaped values, before the remote agent is reached
HISTORY = [
    _event("user", "user", {"text": "Read my calendar."}),
    _event("helper", "model", {"text": "I need your consent first."},
           _call("c1", "adk_request_credential", {"functionCallId": "t1", "authConfig": AUTH_CONFIG})),
    _event("user", "user", _result("c1", "adk_request_credential",
                                   {**AUTH_CONFIG, "exchangedAuthCredential": {"oauth2": {"accessToken": "T0KEN"}}})),
    # an ordinary call whose own argument is named auth_scheme: kept
    _event("helper", "model", _call("c2", "fetch", {"auth_scheme": "basic", "day": "monday"})),
    # a result shaped as an AuthConfig under "result": dropped
    _event("helper", "user", _result("c2", "fetch", {"result": {"auth_scheme": {"type": "SCHEME-X"}}})),
    # a call of another name carrying an AuthConfig as its auth_config argument: dropped
    _event("helper", "model", _call("c3", "connect", {"auth_config": {"exchanged_auth_credential": {"key": "K3Y"}}})),
    _event("helper", "user", _result("c3", "connect", {"result": "connected"})),
    # the user's answer to a peer's auth-required request: dropped
    _event("user", "user", _result("c4", "mock_function_call_for_required_user_auth", {"result": "PASSW0RD"})),
    # an event whose only part carries credentials: nothing of it is sent
    _event("helper", "model", _call("c5", "adk_request_credential", {"authConfig": AUTH_CONFIG})),
    _event("user", "user", {"text": "Now ask the calendar agent."}),
]


def _texts(parts: list[Any]) -> list[str]:
    """Each A2A part's text (a data part as its JSON), another agent's turn preamble in
    our words (the one difference meant, see tests/test_adk52_fencing.py)."""
    texts = [content_of(Message(parts=[part])).text for part in parts]
    return [text.replace(adk_fencing.OTHER_AGENT_CONTEXT_PREAMBLE, OTHER_AGENT_CONTEXT_PREAMBLE) for text in texts]


def _theirs(rows: list[dict[str, Any]]) -> list[str]:
    agent = TheirRemoteA2aAgent(name="peer", agent_card=CARD)
    ctx = types.SimpleNamespace(session=types.SimpleNamespace(
        events=[AdkEvent.model_validate({**row, "invocation_id": "i"}) for row in rows]))
    parts, _ = agent._construct_message_parts_from_session(ctx)  # type: ignore[arg-type]
    return _texts(parts)


def _ours(rows: list[dict[str, Any]]) -> list[str]:
    agent = RemoteA2aAgent(name="peer", agent_card=CARD)
    parts, _, _ = agent._history([Event.model_validate(row) for row in rows])
    return _texts(parts)


def test_a_remote_agent_sends_no_credential_material_as_google_adk() -> None:
    theirs = _theirs(HISTORY)
    assert not [text for text in theirs for secret in SECRETS if secret in text]  # the case holds secrets to drop
    ours = _ours(HISTORY)
    assert ours == theirs
    assert not [text for text in ours for secret in SECRETS if secret in text]
    # what is kept: the user's texts, the helper's words, the ordinary call and result
    assert ours[0] == "Read my calendar." and ours[-1] == "Now ask the calendar agent."
    assert any("I need your consent first." in text for text in ours)
    assert any("'auth_scheme': 'basic'" in text for text in ours)
    assert any("connected" in text for text in ours)


@pytest.mark.parametrize("index", range(len(HISTORY)))
def test_each_part_is_judged_as_google_adk_judges_it(index: int) -> None:
    row = HISTORY[index]
    theirs = AdkEvent.model_validate({**row, "invocation_id": "i"})
    ours = Event.model_validate(row)
    assert theirs.content is not None and ours.content is not None
    assert [is_credential_part(p) for p in ours.content.parts] == [_is_credential_part(p)
                                                                   for p in theirs.content.parts or []]


def test_dropping_parts_never_changes_the_session_event() -> None:
    event = Event.model_validate(HISTORY[1])
    before = json.dumps(event.model_dump(mode="json"), sort_keys=True)
    relayed = without_credential_parts(event)
    assert relayed is not event and relayed.content is not None
    assert [p.text for p in relayed.content.parts] == ["I need your consent first."]
    assert json.dumps(event.model_dump(mode="json"), sort_keys=True) == before
    plain = Event.model_validate(HISTORY[0])
    assert without_credential_parts(plain) is plain
    only_secret = without_credential_parts(Event.model_validate(HISTORY[8]))
    assert only_secret.content is not None and only_secret.content.parts == []
