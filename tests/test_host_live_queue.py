"""A host's live runs in google-adk's shape: ``runner.run_live(user_id=..., session_id=...,
live_request_queue=queue, run_config=...)`` iterated with ``async for``, the caller
feeding the queue while it iterates (google-adk's ``Runner.run_live``), on a real host's
processes with the scripted live model of the ``echo`` app.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from adk_actors._exceptions import SessionNotFoundError
from adk_actors._types import Blob, Content, Event, RunConfig
from adk_actors.agents import LiveRequestQueue
from adk_actors.runtime import Runner

SECOND_OF_AUDIO = b"\x01\x00" * 16_000  # 1 s of 16 kHz 16-bit PCM
DEADLINE = 60.0


async def converse(runner: Runner, session_id: str, feed: list[Any],
                   run_config: RunConfig | None = None) -> list[Event]:
    """Iterate the run as google-adk's users do: each item of ``feed`` (a Content or a
    Blob) is put on the queue once the answer before it is complete; the queue is closed
    after the last answer."""
    queue = LiveRequestQueue()
    pending = list(feed)
    seen: list[Event] = []

    def put_next() -> None:
        item = pending.pop(0)
        if isinstance(item, Content):
            queue.send_content(item)
        else:
            queue.send_realtime(item)
            queue.send_realtime(item)  # two halves of a second: the scripted model's end of speech

    async def drive() -> None:
        put_next()
        async for event in runner.run_live(user_id="lia", session_id=session_id, live_request_queue=queue,
                                           run_config=run_config):
            seen.append(event)
            if event.turn_complete:
                if pending:
                    put_next()
                else:
                    queue.close()

    await asyncio.wait_for(drive(), DEADLINE)
    return seen


def test_a_queue_fed_live_run_on_the_host_answers_each_turn_and_stores_the_conversation(host: Any) -> None:
    runner = Runner(host, "echo")
    runner.create_session("lia", "q1")
    half = Blob(mime_type="audio/pcm;rate=16000", data=SECOND_OF_AUDIO[:16_000])
    seen = asyncio.run(converse(runner, "q1", [half, Content.user("and in text?")]))

    # what the user said by voice comes back transcribed; what they typed is not echoed back
    assert any(e.input_transcription and e.input_transcription.text == "(1.0 s of audio)" for e in seen)
    assert not any(e.author == "user" and e.input_transcription is None for e in seen)
    # google-adk's default for a live run: answers in speech (no response_modalities given)
    assert any(e.partial and e.content and e.content.parts[0].inline_data for e in seen)
    answers = [e.content.text for e in seen if not e.partial and e.author == "echo" and e.content and e.content.text]
    assert answers == ["echo: (1.0 s of audio) (turn 1)", "echo: and in text? (turn 2)"]
    stored = [(e.author, e.content.text) for e in runner.get_session("lia", "q1").events if e.content]
    assert stored == [("user", "(1.0 s of audio)"), ("echo", "echo: (1.0 s of audio) (turn 1)"),
                      ("user", "and in text?"), ("echo", "echo: and in text? (turn 2)")]
    # the run ended with the queue's close: the session takes a new turn at once
    assert list(runner.run("lia", "q1", "after"))[-1].content.text == "echo: after (turn 3)"


def test_a_caller_that_stops_iterating_ends_the_run_and_a_missing_session_is_a_typed_error(host: Any) -> None:
    runner = Runner(host, "echo")
    runner.create_session("lia", "q2")

    async def leave_early() -> None:
        queue = LiveRequestQueue()
        queue.send_content(Content.user("first"))
        async for event in runner.run_live(user_id="lia", session_id="q2", live_request_queue=queue,
                                           run_config=RunConfig(response_modalities=("TEXT",))):
            if event.turn_complete:
                break  # no close put on the queue: leaving the loop must end the run

    asyncio.run(asyncio.wait_for(leave_early(), DEADLINE))
    # had the live run gone on, this turn would wait for it (a session runs one run at a time)
    assert list(runner.run("lia", "q2", "next"))[-1].content.text == "echo: next (turn 2)"

    async def missing() -> None:
        async for _ in runner.run_live(user_id="lia", session_id="nobody", live_request_queue=LiveRequestQueue()):
            pass

    with pytest.raises(SessionNotFoundError):
        asyncio.run(asyncio.wait_for(missing(), DEADLINE))
