"""A tool that returns media (an image ``Part``, or a dict or list holding parts),
side by side with google-adk 2.13 (issue 52).

google-adk's flow takes the media parts out of a tool's result into the function
response's own ``parts`` and keeps the rest as the response. Each case is a small
google-adk program, run as written on google-adk and with only its imports rewritten
on ours, both in process against one Gemini REST stand-in (tests/google_adk_harness.py,
through tests/test_builtin_plugins.py's runner of a case): the same log, events, final
texts, state and model requests (the ``functionResponse`` with its ``parts``, as the
stand-in received it), and the media each event's function responses carry, read
through google-adk's Event readers. Before this, ours failed building the next
request (``Object of type Part is not JSON serializable``).
"""

from __future__ import annotations

import base64
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls
from test_builtin_plugins import MAIN, assert_same_on_both, run_builtin_case

from adk_actors import types
from adk_actors.engine._flow_tools import take_media
from adk_actors.models._anthropic import _blocks
from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

#: bytes whose base64 differs in its standard and URL-safe alphabets (google-genai
#: sends the URL-safe one)
PNG = b"\x89PNG\r\n\x1a\n-not-really-an-image\xfb\xff"

CHART = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types

LOG = []
PNG = b"\\x89PNG\\r\\n\\x1a\\n-not-really-an-image\\xfb\\xff"

def draw_chart(title: str):
    """Draws a chart of the sales."""
    LOG.append(("draw_chart ran", title))
    return RESULT

def media_of(events):
    """Each function response's media, as the Event readers show it."""
    out = []
    for e in events:
        for r in e.get_function_responses():
            for p in r.parts or []:
                if p.inline_data is not None:
                    out.append((r.name, "inline", p.inline_data.mime_type, len(p.inline_data.data)))
                if p.file_data is not None:
                    out.append((r.name, "file", p.file_data.mime_type, p.file_data.file_uri))
    return out

agent = Agent(name="charts", model="gemini-2.5-flash", instruction="Draw what the user asks.",
              tools=[draw_chart])
runner = InMemoryRunner(agent=agent, app_name="charts_app")
''' + MAIN.replace("async def main(", "async def turns_of(") + '''
async def main(turns):
    seen, finals, state = await turns_of(turns)
    LOG.append(("media", media_of(seen)))
    return seen, finals, state
'''

IMAGE = 'types.Part(inline_data=types.Blob(mime_type="image/png", data=PNG))'
FILE = 'types.Part(file_data=types.FileData(file_uri="gs://bucket/chart.pdf", mime_type="application/pdf"))'

CASES: dict[str, tuple[str, list[tuple[str, str, str, Any]]]] = {
    "a bare image part": (IMAGE, [("draw_chart", "inline", "image/png", len(PNG))]),
    "a dict with a caption and an image": (
        '{"caption": "Sales by month", "image": ' + IMAGE + '}',
        [("draw_chart", "inline", "image/png", len(PNG))]),
    "a list of an image, a file and a text": (
        '[' + IMAGE + ', ' + FILE + ', "done"]',
        [("draw_chart", "inline", "image/png", len(PNG)),
         ("draw_chart", "file", "application/pdf", "gs://bucket/chart.pdf")]),
    "a dict holding a list of images (one level down)": (
        '{"images": [' + IMAGE + ', ' + IMAGE + '], "count": 2}',
        [("draw_chart", "inline", "image/png", len(PNG))] * 2),
    "a dict whose only entry is a list of images": (
        '{"images": [' + IMAGE + ']}', [("draw_chart", "inline", "image/png", len(PNG))]),
    "a text part is not media and stays in the response": (
        '{"note": "plain", "count": 1}', []),
}


def _answers() -> list[StubResponse]:
    return [calls(("draw_chart", {"title": "sales"})), gemini_response("Here is your chart.")]


@pytest.mark.parametrize("name", list(CASES))
def test_tool_media_results_as_on_google_adk(name: str, gemini: StubServer) -> None:
    result, media = CASES[name]
    _, ours = assert_same_on_both(CHART.replace("RESULT", result), "main", _answers(), ["Chart the sales"],
                                       gemini)
    assert ["media", [list(m) for m in media]] in ours["log"]
    assert ours["finals"] == ["Here is your chart."]
    second = ours["requests"][1]["contents"]
    response = next(p["functionResponse"] for c in second for p in c.get("parts", []) if "functionResponse" in p)
    if media:
        sent = response["parts"]
        assert len(sent) == len(media)
        inline = [p for p in sent if "inline_data" in p or "inlineData" in p]
        for part in inline:
            blob = part.get("inline_data") or part.get("inlineData")
            assert base64.urlsafe_b64decode(blob["data"]) == PNG
    else:
        assert "parts" not in response


def test_parts_that_are_not_taken_out_are_sent_as_google_genai_sends_them(gemini: StubServer) -> None:
    """A text part, and an image deeper than media is looked for, stay in the response:
    the next request carries them in google-genai's JSON (ours raised "Object of type
    Part is not JSON serializable" building it). The requests and the log are compared
    (the events hold google.genai's objects there, their JSON form here)."""
    result = ('{"note": types.Part(text="hi"), "image": ' + IMAGE + ', "deep": {"x": [' + IMAGE + ']}}')
    source = CHART.replace("RESULT", result)
    theirs = run_builtin_case(source, "main", _answers(), ["Chart the sales"], gemini)
    ours = run_builtin_case(harness.rewritten(source), "main", _answers(), ["Chart the sales"], gemini)
    assert ours["requests"] == theirs["requests"] and ours["log"] == theirs["log"]
    assert ours["finals"] == theirs["finals"] == ["Here is your chart."]
    response = ours["requests"][1]["contents"][2]["parts"][0]["functionResponse"]
    assert response["response"]["note"] == {"text": "hi"}
    assert len(response["parts"]) == 1  # the image one level down only


def test_what_is_left_of_a_result_is_google_adks() -> None:
    """The same rules as google-adk's flow, on its own function, value by value."""
    from google.adk.flows.llm_flows.tools._caller import _extract_multimodal_parts
    from google.genai import types as genai

    def image(module: Any) -> Any:
        return module.Part(inline_data=module.Blob(mime_type="image/png", data=PNG))

    def shapes(module: Any) -> list[Any]:
        text = module.Part(text="hi")
        return [image(module), {"a": 1, "img": image(module)}, [image(module), "x"], [[image(module)]],
                {"deep": {"deeper": [1]}, "img": image(module)}, [text], {"only": [image(module)]},
                (image(module), 3), {"x": {"y": {"z": 1}}}, "plain", 5, None]

    for theirs_value, ours_value in zip(shapes(genai), shapes(types), strict=True):
        their_rest, their_parts = _extract_multimodal_parts(theirs_value)
        our_rest, our_parts = take_media(ours_value)
        assert (their_parts is None) == (our_parts is None)
        assert len(their_parts or []) == len(our_parts or [])
        if their_parts is None:
            assert our_rest is ours_value
        else:
            assert harness._plain(our_rest) == harness._plain(their_rest)


def test_a_function_response_keeps_its_media_in_json() -> None:
    """``FunctionResponse.parts`` survives a store's round trip (camelCase JSON, bytes
    as base64), and google.genai's ``FunctionResponsePart`` is taken as ours."""
    from google.genai import types as genai

    part = types.Part.from_function_response(name="draw_chart", response={"caption": "c"}, parts=[
        types.FunctionResponsePart.from_bytes(data=PNG, mime_type="image/png"),
        types.FunctionResponsePart.from_uri(file_uri="gs://b/c.pdf", mime_type="application/pdf")])
    data = part.to_dict()
    blob = data["functionResponse"]["parts"][0]["inlineData"]
    assert blob["mimeType"] == "image/png" and base64.urlsafe_b64decode(blob["data"]) == PNG
    assert data["functionResponse"]["parts"][1] == {"fileData": {"fileUri": "gs://b/c.pdf",
                                                                 "mimeType": "application/pdf"}}
    assert types.Part.model_validate_json(part.to_json()) == part
    theirs = genai.FunctionResponsePart.from_bytes(data=PNG, mime_type="image/png")
    assert types.FunctionResponsePart.model_validate(theirs).inline_data == types.Blob(mime_type="image/png",
                                                                                      data=PNG)


def test_anthropic_gets_the_image_inside_its_tool_result() -> None:
    """Anthropic's ``tool_result`` carries the response's text and its images."""
    content = types.Content(role="user", parts=[types.Part.from_function_response(
        name="draw_chart", response={"caption": "c"},
        parts=[types.FunctionResponsePart.from_bytes(data=PNG, mime_type="image/png")])])
    content.parts[0].function_response.id = "call-1"  # type: ignore[union-attr]
    block = _blocks(content)[0]
    assert block["type"] == "tool_result" and block["tool_use_id"] == "call-1"
    assert block["content"][0] == {"type": "text", "text": '{"caption": "c"}'}
    assert block["content"][1] == {"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()}}


def _answered(module: Any, text: str | None = "and this") -> Any:
    """A user content answering call ``call-1`` with an image, a file URI and a caption
    (and ``text`` after it), built with ``module``'s types."""
    answer = module.Part.from_function_response(name="draw_chart", response={"caption": "c"}, parts=[
        module.FunctionResponsePart.from_bytes(data=PNG, mime_type="image/png"),
        module.FunctionResponsePart.from_uri(file_uri="gs://b/c.pdf", mime_type="application/pdf")])
    answer.function_response.id = "call-1"
    return module.Content(role="user", parts=[answer, *([module.Part(text=text)] if text else [])])


@pytest.mark.parametrize("text", ["and this", None])
def test_lite_llm_sends_a_tools_media_as_google_adks_lite_llm(text: str | None) -> None:
    """google-adk's LiteLlm: the tool message (text only), then the inline media in a
    user message with the content's other parts (the file URI is not sent)."""
    pytest.importorskip("litellm")
    import asyncio

    from google.adk.models.lite_llm import _content_to_message_param
    from google.genai import types as genai

    from adk_actors.models._lite_llm import _message

    theirs = asyncio.run(_content_to_message_param(_answered(genai, text), provider="openai", model="openai/gpt-4o"))
    ours = _message(_answered(types, text), "openai")
    assert harness._plain(ours) == harness._plain(theirs if isinstance(theirs, list) else [theirs])
    assert ours[0] == {"role": "tool", "tool_call_id": "call-1", "content": '{"caption": "c"}'}
    assert ours[1]["content"][0]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()


def test_openai_chat_sends_a_tools_media_after_its_tool_message() -> None:
    """OpenAI's ``tool`` message takes text only: the image follows it in a user
    message, as google-adk's LiteLlm sends it."""
    from adk_actors.models._openai import _messages
    from adk_actors.models.llm_request import LlmRequest

    messages = _messages(LlmRequest(contents=[_answered(types)]))
    assert messages[0] == {"role": "tool", "tool_call_id": "call-1", "content": '{"caption": "c"}'}
    assert messages[1] == {"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()}},
        {"type": "text", "text": "and this"}]}
    assert len(messages) == 2
