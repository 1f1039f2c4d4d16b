"""Memory: ranking and isolation in the store, the memory actor, load_memory and preload through a host."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import run

from adk_actors import Content, Event, LlmAgent
from adk_actors.engine import InMemoryMemoryService
from adk_actors.models import ScriptedModel
from adk_actors.runtime import Host
from adk_actors.store._memory import MemoryStore
from adk_actors.tools.preload_memory_tool import preload_memory
from supervision.testing import kill_child


def said(author: str, text: str, at: float) -> Event:
    return Event(author=author, content=Content.user(text) if author == "user" else Content.model(text), timestamp=at)


def test_ranking_phrase_first_then_overlap_newest_first_and_isolation(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory.db")
    store.add_session("app", "ann", "s1", [
        said("user", "my cat is called Miso", 1.0),
        said("bot", "Miso is a lovely name for a cat", 2.0),
        said("user", "the weather is nice", 3.0),
        said("user", "called the vet about the cat", 4.0),
    ])
    store.add_session("app", "bob", "s9", [said("user", "my cat is called Rex", 5.0)])
    store.add_session("other", "ann", "s1", [said("user", "my cat is called Zorro", 6.0)])
    found = store.search("app", "ann", "cat is called")
    # phrase match (5 + 3/3), then 2/3 of the words (the newer first), then 1/3 ("is")
    assert [m.text for m in found] == ["my cat is called Miso", "called the vet about the cat",
                                       "Miso is a lovely name for a cat", "the weather is nice"]
    assert found[0].author == "user" and found[0].timestamp == 1.0
    assert [m.text for m in store.search("app", "ann", "weather", limit=5)] == ["the weather is nice"]
    assert store.search("app", "ann", "zebra") == [] and store.search("app", "carol", "cat") == []
    store.add_session("app", "ann", "s1", [said("user", "only this now", 7.0)])  # re-indexing replaces
    assert store.search("app", "ann", "cat") == []


@pytest.mark.parametrize("how", ["flag", "google-adk's tool"])
def test_preload_memory_puts_memories_in_the_instruction(how: str) -> None:
    memory = InMemoryMemoryService()
    memory.add_session("app", "user", "old", [said("user", "I am allergic to peanuts", 1.0)])
    model = ScriptedModel(["noted"])
    if how == "flag":
        agent = LlmAgent(name="chef", model=model, instruction="Suggest recipes.", preload_memory=True)
    else:
        agent = LlmAgent(name="chef", model=model, instruction="Suggest recipes.", tools=[preload_memory])
        assert agent.tools == [] and agent.preload_memory
    run(agent, "any peanuts recipe?", memory=memory)
    assert "Relevant memories of earlier conversations with this user:\n- [user] I am allergic to peanuts" in \
        model.requests[0].system_instruction
    assert model.requests[0].tools == []  # nothing for the model to call




def test_sessions_added_to_memory_are_found_by_load_memory_in_later_sessions(host: Host) -> None:
    recall = host.runner("recall")
    recall.create_session("ann", "old")
    list(recall.run("ann", "old", "my favourite colour is teal"))
    assert recall.add_session_to_memory("ann", "old") == 2  # the user's message and the answer
    recall.create_session("ann", "new")
    answer = [e.content.text for e in recall.run("ann", "new", "favourite colour") if e.content][-1]
    assert "my favourite colour is teal" in answer
    recall.create_session("bob", "b1")
    other = [e.content.text for e in recall.run("bob", "b1", "favourite colour") if e.content][-1]
    assert other == "nothing remembered"  # another user's memories are never searched
    assert recall.search_memory("ann", "teal")[0].text == "my favourite colour is teal"
    assert host.runner("echo").search_memory("ann", "teal") == []  # memories are per app too
    assert host.root is not None
    kill_child(host.services(), "memory")
    again = [e.content.text for e in recall.run("ann", "new", "favourite colour") if e.content][-1]
    assert "teal" in again  # the index is on disk: nothing lost with the actor
