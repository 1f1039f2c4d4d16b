"""google.genai's live enums (``Behavior``, ``FunctionResponseScheduling``) and the fields
that carry them, ``BaseTool``'s live settings and ``Event(message=...)``, next to
google-genai's and google-adk 2.13's own (issue 52)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("google.adk")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

from google.adk.events import Event as TheirEvent  # noqa: E402
from google.adk.tools import BaseTool as TheirBaseTool  # noqa: E402
from google.genai import types as genai  # noqa: E402

from adk_actors import types  # noqa: E402
from adk_actors._types import Event, LlmRequest  # noqa: E402
from adk_actors.models import GeminiModel  # noqa: E402
from adk_actors.models._gemini_wire import gemini_parts  # noqa: E402
from adk_actors.tools import BaseTool  # noqa: E402


@pytest.mark.parametrize("name", ["Behavior", "FunctionResponseScheduling"])
def test_the_live_enums_have_google_genais_members(name: str) -> None:
    ours, theirs = getattr(types, name), getattr(genai, name)
    assert [(m.name, m.value) for m in ours] == [(m.name, m.value) for m in theirs]
    for member in theirs:  # google.genai's member, or its name in any case, is ours
        assert ours(member) is ours[member.name] == member
        assert ours(member.name.lower()) is ours[member.name]


def test_a_declaration_and_a_response_take_google_genais_objects_with_their_settings() -> None:
    declared = types.ours(genai.FunctionDeclaration(name="f", behavior="NON_BLOCKING"), types.FunctionDeclaration)
    assert declared.behavior is types.Behavior.NON_BLOCKING
    answered = types.ours(genai.FunctionResponse(name="f", response={}, scheduling="SILENT"), types.FunctionResponse)
    assert answered.scheduling is types.FunctionResponseScheduling.SILENT
    with pytest.raises(ValueError):
        types.FunctionDeclaration(name="f", behavior="SOMETIMES")


def test_gemini_gets_behavior_and_scheduling_as_google_genai_writes_them() -> None:
    genai_declaration = genai.FunctionDeclaration(name="f", description="F.", behavior=genai.Behavior.NON_BLOCKING)
    request = LlmRequest(tools=[types.ours(genai_declaration, types.FunctionDeclaration)])
    body = GeminiModel("gemini-2.5-flash", base_url="http://127.0.0.1:9", api_key="k").payload(request, False)
    assert body["tools"][0]["functionDeclarations"] == [genai_declaration.model_dump(mode="json", exclude_none=True)]

    response = genai.FunctionResponse(id="c1", name="f", response={"ok": 1},
                                      scheduling=genai.FunctionResponseScheduling.INTERRUPT)
    content = types.Content(role="user", parts=[types.Part(function_response=types.ours(response,
                                                                                         types.FunctionResponse))])
    assert gemini_parts(content) == [{"functionResponse": response.model_dump(mode="json", exclude_none=True)}]
    plain = types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(name="f"))])
    assert "scheduling" not in gemini_parts(plain)[0]["functionResponse"]


class _Probe:
    """A BaseTool subclass of each side, made with the same arguments."""

    @staticmethod
    def make(base: type[Any], **settings: Any) -> Any:
        class Tool(base):  # type: ignore[misc, valid-type]
            pass

        return Tool(name="t", description="T.", **settings)


def test_base_tool_keeps_its_live_settings_as_google_adks_does() -> None:
    for settings in ({}, {"behavior": "NON_BLOCKING"}, {"response_scheduling": "WHEN_IDLE"},
                     {"behavior": "BLOCKING", "response_scheduling": "SILENT"}):
        theirs = _Probe.make(TheirBaseTool, **{key: (genai.Behavior if key == "behavior"
                                                      else genai.FunctionResponseScheduling)(value)
                                                for key, value in settings.items()})
        ours = _Probe.make(BaseTool, **{key: (types.Behavior if key == "behavior"
                                              else types.FunctionResponseScheduling)(value)
                                        for key, value in settings.items()})
        assert (ours.behavior, ours.response_scheduling) == (theirs.behavior, theirs.response_scheduling), settings
    with pytest.raises(TypeError):
        _Probe.make(BaseTool, streaming=True)  # google-adk's BaseTool takes no other setting either
    with pytest.raises(TypeError):
        _Probe.make(TheirBaseTool, streaming=True)


@pytest.mark.parametrize("message", [
    "hello",
    genai.Part(text="a part"),
    genai.Part(function_call=genai.FunctionCall(name="f", args={"x": 1})),
    ["two", genai.Part(text="parts")],
    genai.Content(role="model", parts=[genai.Part(text="a content")]),
    {"role": "user", "parts": [{"text": "a dict"}]},
])
def test_event_message_makes_the_content_google_adks_event_makes(message: Any) -> None:
    theirs = TheirEvent(author="a", message=message)
    ours = Event(author="a", message=message)
    assert theirs.content is not None and ours.content is not None
    assert ours.content.model_dump(exclude_none=True) == theirs.content.model_dump(exclude_none=True)
    assert ours.message == ours.content


def test_event_message_with_content_or_of_another_type_is_refused_as_by_google_adk() -> None:
    for kwargs in ({"message": "x", "content": genai.Content(role="user", parts=[genai.Part(text="y")])},
                   {"message": 5}):
        with pytest.raises(ValueError):
            TheirEvent(author="a", **kwargs)
        with pytest.raises(ValueError):
            Event(author="a", **kwargs)
    event = Event(author="a")
    event.message = "set later"
    assert event.content is not None and event.content.role == "user" and event.content.parts[0].text == "set later"
