"""A live run: one conversation with a live model (voice, video, text), for as long
as its caller keeps it open.

``run_live_invocation(root_agent, session, inputs, ...)`` does, in order:

1. runs the ``before_run`` plugins (content from one ends the run with that reply);
   chooses the agent that answers as a turn does (``select_agent``), resolves its
   tools and compiles its request from the session (``engine._live_setup``: system
   instruction, tools, history, a built-in code executor's tool), with
   ``RunConfig.response_modalities``; with a planner that plans in the request, its
   planning instruction joins the system instruction and the history's thought marks
   are cleared, as in a turn (``planners._apply``);
2. if that agent's model cannot hold a live conversation (no ``connect``: Anthropic,
   OpenAI-compatible), serves the caller turn by turn: each ``content`` input is an
   ordinary turn (its user event, then the agent's flow, streamed); any other input
   ends the run with an error event ``live_unsupported``;
3. otherwise opens the conversation and, until the caller sends ``close``, the run is
   cancelled, or the model ends the conversation, runs two loops side by side:

   * the caller's inputs (one kind per input, in google-adk's order of priority; a
     ``state_delta`` is committed on a user event first): ``content`` is checked by
     the input policy and the ``on_user_message`` plugins, committed as the user's
     event and sent (``partial``: the model waits for more); ``blob`` (audio, video
     frames), ``activity_start`` / ``activity_end`` and ``audio_stream_end`` are sent
     as they come, and stored nowhere;
   * the model's answers, as events of the agent, in google-adk's shapes: text and
     audio pieces, transcription pieces (``finished: false``) and ``interrupted`` are
     partial (streamed, not stored); at each ``turn_complete`` (or interruption) the
     turn's usage is committed as an event of its own, then what was said, once, as
     text (``partial: false``): the user's speech as a user event with
     ``input_transcription`` (finished) and a user content, the agent's as its event
     with ``output_transcription`` and a model content (or the text answer,
     ``interrupted: false``), so later turns, live or not, see the whole conversation
     in the history (google-adk keeps only the transcriptions); then a committed
     ``turn_complete`` event. Events from the model carry its ``model_version``. The
     words of a turn cut short by the end of the conversation are committed all the
     same (as the model sent them, code left unrun). With a ``code_executor``
     (``engine._live_code``), code in a whole text answer runs and its events stand in
     for the answer's; code the model ran itself and its result are committed as they
     come (after the text before them). Tool calls are committed
     (``long_running_tool_ids``) after the words said before them, and run as in a turn
     (policy, hooks, tool; ``engine._live_tools``: non-blocking tools in the
     background, streaming tools answering "pending" and streaming their values to the
     model, one that takes an ``input_stream`` fed a copy of each of the caller's
     inputs as it is read, before it is handled, and of each function response sent),
     the others' results committed as one event and sent back to the model;
     the receiving loop waits for those, the caller's inputs still go through. With a
     planner that rewrites answers (``planners._apply``), each piece the
     model sends (text, audio, tool calls) goes through it before anything else is
     done with it, and so does a text answer as a whole when it is committed (its
     words as the model sent them); what the planner writes to state is committed in
     an event of its own, just before; spoken words (transcriptions) are not planned,
     as google-adk's.

A model error ends the run by raising it. Every event goes through ``deliver`` as a
turn's do (``on_event`` plugins; the output policy for the committed ones); an
answer's streamed text is filtered as a whole, as in a turn (its pieces share the id
of its committed event). Audio cannot be filtered: when an output policy rewrites
text, the agent's audio and transcription pieces are not streamed at all; only its
filtered, committed words are sent.
Transfers are committed but the conversation stays with its agent. When the
conversation ends, the tools still running in its background are cancelled.
``after_run`` plugins always run.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncGenerator
from typing import Any, Protocol

from .._tree import inherited_model
from .._types import (
    Content,
    Event,
    EventActions,
    LiveRequest,
    LlmResponse,
    Transcription,
    new_event_id,
)
from ..models import is_live_model
from ..models._llm_registry import BaseLlm
from ..planners._apply import answer_planner, planned_content
from ._context import CallbackContext, InvocationContext, SessionView
from ._flow import long_running_ids
from ._invocation import (
    after_run,
    checked_message,
    deliver,
    early_reply,
    new_invocation_context,
    select_agent,
)
from ._live_code import answer_events, code_events, has_code, step_event
from ._live_setup import live_setup
from ._live_tools import LiveTools
from ._policy import StreamFilter

__all__ = ["LIVE_UNSUPPORTED", "LiveInputs", "run_live_invocation"]

#: the error code of a live run whose agent's model cannot take audio or video
LIVE_UNSUPPORTED = "live_unsupported"
#: how often a live run waiting for the caller or the model looks at its cancel token
_CANCEL_POLL = 0.25


class LiveInputs(Protocol):
    """Where a live run reads its caller's inputs, one at a time (an ``asyncio.Queue``
    of them, or google-adk's ``LiveRequestQueue``)."""

    async def get(self) -> LiveRequest: ...


class _End:
    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


class _Saved:
    """An event the receiving loop waits on (``done``) until it is committed: what a
    planner wrote to state, which its next call reads, as in google-adk's flow."""

    def __init__(self, event: Event) -> None:
        self.event = event
        self.done = asyncio.Event()


async def run_live_invocation(root_agent: Any, session: SessionView, inputs: LiveInputs,
                              **context: Any) -> AsyncGenerator[Event, None]:
    """Run the live conversation (see the module); yields every event, partial or not,
    the committed ones committed to ``session`` first. ``context``: the keyword
    arguments of :func:`new_invocation_context`."""
    ctx = new_invocation_context(root_agent, session, **context)
    ctx.live = True
    async with after_run(ctx):
        early = await early_reply(ctx)
        if early is not None:
            yield await deliver(ctx, early)
            return
        agent = select_agent(root_agent, session.events)
        ctx = ctx.for_agent(agent)
        model = inherited_model(agent, root_agent) or None
        if isinstance(model, str):
            model = ctx.resolve_model(model) if ctx.resolve_model is not None and model else None
        if isinstance(model, BaseLlm):  # google-adk's model classes: Gemini gives its connector
            model = model.connector()
        flow = (_converse(agent, model, ctx, inputs) if is_live_model(model)
                else _turn_by_turn(agent, ctx, inputs))
        streams = StreamFilter(ctx.policies, ctx)
        filtering = ctx.policies.stream_holdback() != 0
        async with contextlib.aclosing(flow) as events:
            async for event in events:
                if event.partial and _is_speech(event):
                    if filtering:
                        continue  # a policy rewrites what the agent says: it cannot unsay audio
                elif event.partial:
                    partial = streams.partial(event)  # the answer's text filtered as a whole
                    if partial is None:
                        continue
                    event = partial
                elif event.output_transcription is not None:
                    yield await deliver(ctx, _spoken(ctx, event), filtered=True)
                    continue
                yield await deliver(ctx, event)


def _spoken(ctx: InvocationContext, event: Event) -> Event:
    """A committed answer that was spoken, through the output policy: its transcription
    says what its filtered text says (the policy sees the content only)."""
    filtered: Event = ctx.policies.filter_output(ctx, event.model_copy(update={"output_transcription": None}))
    text = filtered.content.text if filtered.content is not None else ""
    return filtered.model_copy(update={"output_transcription": Transcription(text=text, finished=True)})


def _piece(transcription: Transcription) -> Transcription:
    """A streamed piece of a transcription: not finished unless it says so (google-adk's)."""
    return transcription if transcription.finished is not None else transcription.model_copy(update={"finished": False})


def _is_speech(event: Event) -> bool:
    """A piece of the agent's speech: its transcription or a chunk of its audio."""
    return event.output_transcription is not None or (
        event.content is not None and any(p.inline_data is not None for p in event.content.parts))


def _state_change(ctx: InvocationContext, delta: dict[str, Any]) -> Event:
    """The user's event that commits a ``state_delta`` the caller sent."""
    return ctx.event(author="user", actions=EventActions(state_delta=dict(delta)))


async def _next_input(ctx: InvocationContext, inputs: LiveInputs) -> LiveRequest:
    while True:
        ctx.check_cancelled()
        try:
            return await asyncio.wait_for(inputs.get(), _CANCEL_POLL)
        except TimeoutError:
            continue


async def _user_event(ctx: InvocationContext, content: Content) -> tuple[Content | None, Event]:
    """The caller's content as the model will get it (None when the input policy
    refuses it) and the event to commit: the user's, or the refusal."""
    message = await checked_message(ctx, content, refused_by=ctx.agent.name)
    if isinstance(message, Event):
        return None, message
    return message, ctx.event(author="user", content=message)


async def _turn_by_turn(agent: Any, ctx: InvocationContext,
                        inputs: LiveInputs) -> AsyncGenerator[Event, None]:
    """A model without live conversations: each content input is a turn (see the module, 2)."""
    while True:
        request = await _next_input(ctx, inputs)
        if request.close:
            return
        if request.state_delta:
            yield _state_change(ctx, request.state_delta)
        if request.blob is not None or request.activity_start is not None or request.activity_end is not None \
                or request.audio_stream_end:
            yield ctx.event(error_code=LIVE_UNSUPPORTED,
                            error_message=f"the model of agent {agent.name!r} takes no audio or video: "
                                          "send text content, or use a live model (gemini-*)")
            return
        if request.content is None:
            continue  # a state change only
        message, event = await _user_event(ctx, request.content)
        yield event
        if message is not None:
            async for answer in agent.run(ctx):
                yield answer


async def _converse(agent: Any, model: Any, ctx: InvocationContext,
                    inputs: LiveInputs) -> AsyncGenerator[Event, None]:
    """The conversation with a live model (see the module, 3)."""
    request, tools, problems = await live_setup(agent, ctx)
    for problem in problems:
        yield problem
    out: asyncio.Queue[Event | _End | _Saved] = asyncio.Queue()
    async with model.connect(request) as connection:
        conversation = _Conversation(agent, ctx, connection, tools, out)
        tasks = [asyncio.create_task(conversation.send_inputs(inputs)),
                 asyncio.create_task(conversation.receive())]
        try:
            while True:
                try:
                    item = await asyncio.wait_for(out.get(), _CANCEL_POLL)
                except TimeoutError:
                    ctx.check_cancelled()
                    continue
                if isinstance(item, _End):
                    if item.error is not None:
                        raise item.error
                    conversation.commit_pending()  # the words of a turn cut short by the end
                    while not out.empty():
                        if isinstance(left := out.get_nowait(), Event):
                            yield left
                        elif isinstance(left, _Saved):
                            yield left.event
                    return
                if isinstance(item, _Saved):
                    yield item.event  # committed once the caller asks for the next one
                    item.done.set()
                    continue
                yield item
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await conversation.tools.close()


class _Conversation:
    """The two loops of a live conversation and what they have heard so far."""

    def __init__(self, agent: Any, ctx: InvocationContext, connection: Any, tools: dict[str, Any],
                 out: asyncio.Queue[Event | _End | _Saved]) -> None:
        self.agent, self.ctx, self.connection, self.out = agent, ctx, connection, out
        self.tools = LiveTools(agent, ctx, tools, out.put_nowait, connection.send_tool_results)
        self.heard: list[str] = []  # the user's speech since it was last committed
        self.said: list[str] = []  # the agent's speech (or text) since it was last committed
        self.spoken = False  # the agent answers with speech (transcriptions) rather than text
        self.answer_id = new_event_id()  # the pieces of one answer share its committed event's id
        self.saving: list[_Saved] = []  # the planner's state events not yet committed

    async def send_inputs(self, inputs: LiveInputs) -> None:
        try:
            while True:
                request = await _next_input(self.ctx, inputs)
                self.tools.feed(request)  # the streams that read the input get it first
                await asyncio.sleep(0)
                if request.close:
                    break
                if request.state_delta:
                    self.out.put_nowait(_state_change(self.ctx, request.state_delta))
                if request.activity_start is not None or request.activity_end is not None:
                    await self.connection.send_activity(start=request.activity_start is not None)
                elif request.audio_stream_end:
                    await self.connection.send_audio_stream_end()
                elif request.blob is not None:
                    await self.connection.send_realtime(request.blob)
                elif request.content is not None:
                    message, event = await _user_event(self.ctx, request.content)
                    self.out.put_nowait(event)
                    if message is not None:
                        await self.connection.send_content(message, complete=not request.partial)
        except BaseException as exc:
            self.out.put_nowait(_End(exc))
            raise
        self.out.put_nowait(_End())

    async def receive(self) -> None:
        try:
            async for response in self.connection.receive():
                await self._answer(response)
                await self._settled()
        except BaseException as exc:
            self.out.put_nowait(_End(exc))
            raise
        self.out.put_nowait(_End())  # the model ended the conversation

    async def _answer(self, response: LlmResponse) -> None:
        ctx, out, version = self.ctx, self.out, response.model_version
        if response.input_transcription is not None:
            self._hear(response.input_transcription)
            return
        self._commit_heard()
        raw = response.content
        content = self._planned(raw)
        if response.output_transcription is not None:
            self.spoken = True
            self.said.append(response.output_transcription.text or "")
            out.put_nowait(ctx.event(id=self.answer_id, output_transcription=_piece(response.output_transcription),
                                     partial=True))
        if content is not None and content.function_calls:
            await self._run_tools(content, version)
        elif content is not None and has_code(content):
            await self._commit_code(content, version)
        elif content is not None and content.parts:
            if not self.spoken and raw is not None:
                self.said.append(raw.text)  # the whole answer goes through the planner once more
            out.put_nowait(ctx.event(id=self.answer_id, content=content, partial=True, model_version=version))
        if response.interrupted:
            await self._commit_answer()
            out.put_nowait(ctx.event(interrupted=True, partial=True))
        if response.turn_complete:
            if response.usage_metadata is not None:
                out.put_nowait(ctx.event(usage_metadata=response.usage_metadata, model_version=version))
            await self._commit_answer()
            out.put_nowait(ctx.event(turn_complete=True, model_version=version))

    def _planned(self, content: Content | None) -> Content | None:
        """``content`` as the agent's planner keeps it (``planners._apply``: as it is
        without a planner that rewrites answers, or without parts); when the planner
        wrote state through its context, the event of its actions goes out first (the
        receiving loop waits for its commit: :meth:`_settled`). What the planner raises
        is raised: it ends the conversation as a model error does."""
        planner = answer_planner(self.agent)
        if planner is None or content is None or not content.parts:
            return content
        cb = CallbackContext(self.ctx)
        content = planned_content(planner, cb, content)
        if cb.actions.state_delta:
            self.saving.append(saved := _Saved(self.ctx.event(actions=cb.actions.event_actions())))
            self.out.put_nowait(saved)
        return content

    async def _settled(self) -> None:
        """Wait until the planner's state events are committed (its next call, and the
        tools, read that state)."""
        while self.saving:
            await self.saving.pop(0).done.wait()

    def commit_pending(self) -> None:
        """Commit what was heard and said since the last end of turn (the conversation
        ends in the middle of one)."""
        self._commit_heard()
        self._commit_said()

    def _hear(self, transcription: Transcription) -> None:
        if transcription.text:
            self.heard.append(transcription.text)
            self.out.put_nowait(self.ctx.event(author="user", input_transcription=_piece(transcription), partial=True))
        if transcription.finished:
            self._commit_heard()

    def _commit_heard(self) -> None:
        text = "".join(self.heard).strip()
        self.heard.clear()
        if text:
            self.out.put_nowait(self.ctx.event(author="user", content=Content.user(text), partial=False,
                                               input_transcription=Transcription(text=text, finished=True)))

    def _said(self) -> tuple[Event | None, bool]:
        """The event that commits what the agent said since the last one (None: nothing),
        and whether it was spoken; the next answer starts."""
        text = "".join(self.said)
        self.said.clear()
        event, spoken = None, self.spoken
        text = text.strip() if spoken else text  # a text answer as the model sent it (google-adk's)
        if text.strip():  # google-adk marks a live answer not partial, a text one not interrupted
            content = Content.model(text) if spoken else self._planned(Content.model(text))
            event = self.ctx.event(id=self.answer_id, content=content, partial=False,
                                   output_transcription=Transcription(text=text, finished=True) if spoken else None,
                                   interrupted=None if spoken else False)
        self.spoken = False
        self.answer_id = new_event_id()
        return event, spoken

    def _commit_said(self) -> None:
        """Commit what the agent said as it is (the conversation has ended)."""
        event, _ = self._said()
        if event is not None:
            self.out.put_nowait(event)

    async def _commit_answer(self) -> None:
        """Commit what the agent said; a text answer with code the agent's executor runs
        is committed as that code and its result instead, one the model ran itself after
        the executor's step event (``_live_code``)."""
        event, spoken = self._said()
        for committed in [] if event is None else [event] if spoken else await answer_events(
                self.agent, self.ctx, event):
            self.out.put_nowait(committed)

    async def _commit_code(self, content: Content, model_version: str | None) -> None:
        """Code the model ran itself, or its result: its text so far streamed and
        committed first, then these parts committed as they are (``_live_code``)."""
        words = tuple(p for p in content.parts if p.executable_code is None and p.code_execution_result is None)
        if words:
            self.said.append("".join(p.text or "" for p in words))
            self.out.put_nowait(self.ctx.event(id=self.answer_id, content=Content(role=content.role, parts=words),
                                               partial=True, model_version=model_version))
        await self._commit_answer()
        code = Content(role=content.role, parts=tuple(p for p in content.parts if all(p is not w for w in words)))
        for committed in await code_events(self.agent, self.ctx, code, model_version):
            self.out.put_nowait(committed)

    async def _run_tools(self, content: Content, model_version: str | None) -> None:
        """Commit the calls, run them (as a turn does), commit their results, send them back."""
        ctx = self.ctx
        await self._commit_answer()
        await self._settled()
        calls = [c if c.id else c.model_copy(update={"id": f"adk-{uuid.uuid4()}"})
                 for c in content.function_calls]
        called = Content(role="model", parts=tuple(p.model_copy(update={"function_call": c}) for p, c in zip(
            [p for p in content.parts if p.function_call is not None], calls, strict=True)))
        step, called = await step_event(self.agent, ctx, called)
        if step is not None:
            self.out.put_nowait(step)
        self.out.put_nowait(ctx.event(content=called, actions=EventActions(), model_version=model_version,
                                      long_running_tool_ids=long_running_ids(calls, self.tools.tools)))
        event = await self.tools.answer(calls)  # non-blocking tools answer later, on their own
        if event is None:
            return  # long-running or non-blocking calls only: their results come later
        self.out.put_nowait(event)
        if event.content is not None:
            await self.tools.reply(event.content.function_responses)
