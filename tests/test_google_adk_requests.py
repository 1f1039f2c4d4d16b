"""What google-adk agent code does to a model's request, done here the same way
(issue 38): few-shot examples (``ExampleTool``) in google-adk's words, a
``before_model`` callback changing the request in place, and memories in google-adk's
shape (``search_memory`` and the ``load_memory`` tool)."""

from __future__ import annotations

from typing import Any

import pytest
from engine_helpers import run, summary
from google.adk.examples import example_util
from google.adk.examples.example import Example as GoogleExample
from google.adk.memory.memory_entry import MemoryEntry as GoogleMemoryEntry
from google.adk.tools.load_memory_tool import LoadMemoryResponse
from google.genai import types as g

from adk_actors import AgentDefinitionError, Content, Event, LlmAgent, LlmRequest
from adk_actors.engine import CallbackError, InMemoryMemoryService
from adk_actors.examples import BaseExampleProvider, Example, examples_text
from adk_actors.models import ScriptedModel, call
from adk_actors.tools import ExampleTool, load_memory


def _google_examples() -> list[GoogleExample]:
    return [
        GoogleExample(input=g.UserContent(parts=[g.Part(text="Book a table for two.")]),
                      output=[g.ModelContent(parts=[g.Part(function_call=g.FunctionCall(
                          name="book", args={"people": 2, "place": "Chez Ann"}))]),
                          g.UserContent(parts=[g.Part(text="(booked)")]),
                          g.ModelContent(parts=[g.Part(text="Booked."), g.Part(text="Enjoy!")])]),
        GoogleExample(input=g.UserContent(parts=[g.Part(text="Hi"), g.Part(text="there")]),
                      output=[g.ModelContent(parts=[g.Part(text="Hello.")])]),
    ]


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "claude-sonnet-4", ""])
def test_examples_read_as_google_adk_writes_them(model: str) -> None:
    google = _google_examples()
    ours = [Example(input=e.input, output=e.output) for e in google]  # google.genai's contents taken as ours
    assert examples_text(ours, model) == example_util.build_example_si(google, "query", model or None)


class _ByTopic(BaseExampleProvider):
    def __init__(self) -> None:
        self.queries: list[str] = []

    def get_examples(self, query: str) -> list[Example]:
        self.queries.append(query)
        return [Example(input=Content.user(f"about {query}"), output=[Content.model("an answer")])]


def test_an_example_tool_puts_its_examples_last_in_the_instruction_and_declares_nothing() -> None:
    seen: list[LlmRequest] = []
    tool = ExampleTool([Example(input=Content.user("Flip a coin."), output=[Content.model("Heads.")])])

    def answer(request: LlmRequest) -> str:
        seen.append(request)
        return "ok"

    agent = LlmAgent(name="coin", model=ScriptedModel(fallback=answer), instruction="Play games.", tools=[tool])
    assert agent.tools == [] and agent.examples == tool.few_shot_examples
    assert summary(run(agent, "flip one"))[-1] == ("coin", "ok")
    instruction = seen[0].system_instruction
    assert instruction.startswith("Play games.")
    assert instruction.endswith("EXAMPLE 1:\nBegin example\n[user]\nFlip a coin.\n[model]\nHeads.\n"
                                "End example\n\nEnd few-shot\n<EXAMPLES>")
    assert seen[0].tools == []


def test_an_example_provider_is_asked_with_the_turns_text_and_not_without_text() -> None:
    provider = _ByTopic()
    seen: list[str] = []
    agent = LlmAgent(name="p", model=ScriptedModel(fallback=lambda r: seen.append(r.system_instruction) or "ok"),
                     tools=[ExampleTool(provider)])
    run(agent, Content(role="user", parts=({"text": "dice"}, {"text": "and cards"})))  # type: ignore[arg-type]
    assert provider.queries == ["dice and cards"] and "[user]\nabout dice and cards\n" in seen[0]
    run(agent, Content(role="user", parts=({"inline_data": {"mime_type": "image/png", "data": b"x"}},)))  # type: ignore[arg-type]
    assert provider.queries == ["dice and cards"] and "EXAMPLE" not in seen[1]


def test_examples_from_several_tools_join_and_a_provider_cannot_join_them() -> None:
    one = Example(input=Content.user("a"), output=[Content.model("b")])
    agent = LlmAgent(name="j", examples=[one], tools=[ExampleTool([one, one])])
    assert agent.examples == [one, one, one]
    with pytest.raises(AgentDefinitionError, match="example provider cannot be combined"):
        LlmAgent(name="k", examples=[one], tools=[ExampleTool(_ByTopic())])
    with pytest.raises(Exception, match="input"):
        ExampleTool([{"output": []}])  # type: ignore[list-item]


def test_a_before_model_callback_changes_the_request_in_place() -> None:
    seen: list[LlmRequest] = []

    def rewrite(callback_context: Any, llm_request: LlmRequest) -> None:
        assert llm_request.config.temperature == 0.9 and llm_request.config.top_k is None
        llm_request.config.system_instruction = g.Content(parts=[g.Part(text="Rule one."), g.Part(text="Rule two.")])
        llm_request.config.temperature = None  # unset
        llm_request.config.max_output_tokens = 64
        llm_request.append_instructions(["Rule three."])
        llm_request.contents.append(g.UserContent(parts=[g.Part(text="(briefly)")]))

    agent = LlmAgent(name="r", model=ScriptedModel(fallback=lambda r: seen.append(r) or "done"),
                     generate_config={"temperature": 0.9}, before_model_callback=rewrite)
    assert summary(run(agent, "hello"))[-1] == ("r", "done")
    request = seen[0]
    assert request.system_instruction == "Rule one.\nRule two.\n\nRule three."
    assert dict(request.config) == {"max_output_tokens": 64}
    assert [c.text for c in request.contents] == ["hello", "(briefly)"]
    assert all(isinstance(c, Content) for c in request.contents)
    assert agent.generate_config == {"temperature": 0.9}  # the definition is untouched


def test_a_callback_that_puts_garbage_in_the_request_is_a_callback_error() -> None:
    def spoil(callback_context: Any, llm_request: LlmRequest) -> None:
        llm_request.contents.append(42)  # type: ignore[arg-type]

    model = ScriptedModel(["never sent"])
    with pytest.raises(CallbackError, match="agent 's': a before_model callback left a request"):
        run(LlmAgent(name="s", model=model, before_model_callback=spoil), "hi")
    assert model.requests == []


def _remembering() -> InMemoryMemoryService:
    memory = InMemoryMemoryService()
    memory.add_session("app", "user", "old", [Event(author="user", content=Content.user("my cat is called Miso"))])
    return memory


def test_search_memory_answers_in_google_adks_shape() -> None:
    found: list[Any] = []

    async def recall(query: str, tool_context: Any) -> dict[str, Any]:
        """Search memories.

        Args:
            query: what to find.
        """
        response = await tool_context.search_memory(query)
        found.extend(response.memories)
        return {"texts": [m.content.parts[0].text for m in response.memories]}

    model = ScriptedModel([call("recall", query="cat"), "Miso."])
    events = run(LlmAgent(name="m", model=model, tools=[recall]), "my cat?", memory=_remembering())
    assert summary(events)[2] == ("m", "result:recall={'texts': ['my cat is called Miso']}")
    assert [(m.author, m.content.role) for m in found] == [("user", "user")]


def test_the_load_memory_tool_answers_as_google_adks() -> None:
    model = ScriptedModel([call("load_memory", query="cat"), "Miso."])
    events = run(LlmAgent(name="m", model=model, tools=[load_memory]), "my cat?", memory=_remembering())
    result = next(p.function_response.response for e in events if e.content
                  for p in e.content.parts if p.function_response is not None)
    entry = result["result"]["memories"][0]
    google = LoadMemoryResponse(memories=[GoogleMemoryEntry(
        content=g.Content.model_validate(entry["content"]), id=entry["id"], author=entry["author"],
        timestamp=entry["timestamp"])])
    assert result == {"result": google.model_dump(mode="json", exclude_none=True)}
    assert entry["content"] == {"role": "user", "parts": [{"text": "my cat is called Miso"}]}


def test_a_memory_added_again_replaces_that_sessions_entries() -> None:
    memory = _remembering()
    memory.add_session("app", "user", "old", [Event(author="user", content=Content.user("my cat is called Rex"))])
    assert [m.text for m in memory.search("app", "user", "cat")] == ["my cat is called Rex"]
