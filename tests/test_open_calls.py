"""A long-running call still open goes to Anthropic and OpenAI answered, to Gemini as it is.

google-adk (and so our compiler, issue 52) sends a long-running tool's call whose
result has not come yet with no response after it; Gemini takes that, Anthropic's
Messages API and OpenAI's chat completions and Responses API refuse a request with a
call left unanswered (HTTP 400). These tests build each provider's request body from
the contents of that case (two long-running calls, one answered, then the user's next
words) and check the providers' rule: every call is answered before the conversation
goes on (the open one with ``NO_RESULT_YET``), the answer that came kept as it was.
"""

from __future__ import annotations

import json
from typing import Any

from adk_actors import Content, FunctionCall, FunctionResponse, LlmRequest, Part
from adk_actors.models._anthropic import _messages as anthropic_messages
from adk_actors.models._open_calls import NO_RESULT_YET, with_open_calls_answered
from adk_actors.models._openai import _messages as openai_messages
from adk_actors.models._openai_responses_llm import OpenAIResponsesLlm


def open_call_contents() -> list[Content]:
    return [
        Content.user("book both trips"),
        Content(role="model", parts=(Part(function_call=FunctionCall(id="c-a", name="book", args={"to": "Oslo"})),
                                     Part(function_call=FunctionCall(id="c-b", name="book", args={"to": "Rome"})))),
        Content(role="user", parts=(Part(function_response=FunctionResponse(id="c-a", name="book",
                                                                            response={"status": "booked"})),)),
        Content.user("and what about Rome?"),
    ]


def test_anthropic_gets_every_tool_use_answered_in_the_next_message() -> None:
    messages = anthropic_messages(LlmRequest(contents=open_call_contents()))
    uses = [(i, b["id"]) for i, m in enumerate(messages) for b in m["content"] if b["type"] == "tool_use"]
    assert [u for _, u in uses] == ["c-a", "c-b"]
    after = messages[uses[0][0] + 1]
    results = {b["tool_use_id"]: b for b in after["content"] if b["type"] == "tool_result"}
    assert after["role"] == "user" and set(results) == {"c-a", "c-b"}
    assert json.loads(results["c-a"]["content"]) == {"status": "booked"}
    assert NO_RESULT_YET in results["c-b"]["content"] and not results["c-b"].get("is_error")
    assert after["content"][-1] == {"type": "text", "text": "and what about Rome?"}  # the user's words after


def test_openai_chat_gets_a_tool_message_for_every_call_before_the_users_words() -> None:
    messages = openai_messages(LlmRequest(contents=open_call_contents()))
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "tool", "tool", "user"]
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ["c-a", "c-b"]
    assert NO_RESULT_YET in messages[3]["content"]


def test_the_responses_api_gets_an_output_for_every_function_call() -> None:
    body: dict[str, Any] = OpenAIResponsesLlm(api_key="k").request_body(LlmRequest(contents=open_call_contents()),
                                                                        stream=False)
    items = body["input"]
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    assert len(calls) == 2 and sorted(outputs) == sorted(calls)
    last_output = max(n for n, i in enumerate(items) if i.get("type") == "function_call_output")
    assert items[-1].get("role") == "user" and last_output < len(items) - 1  # answered before the user's words


def test_a_history_with_no_open_call_is_sent_as_it_is() -> None:
    contents = open_call_contents()
    contents[2] = Content(role="user", parts=(*contents[2].parts, Part(function_response=FunctionResponse(
        id="c-b", name="book", response={"status": "booked"}))))
    assert with_open_calls_answered(contents) == contents
    ends_open = open_call_contents()[:2]  # the request ends with the calls: both answered at the end
    healed = with_open_calls_answered(ends_open)
    assert healed[:2] == ends_open and [p.function_response.id for p in healed[2].parts
                                        if p.function_response is not None] == ["c-a", "c-b"]
