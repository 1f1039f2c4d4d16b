"""A live run: one conversation with a live model (voice, video, text), for as long
as its caller keeps it open.

``run_live_invocation(root_agent, session, inputs, ...)`` does, in order:

1. runs the ``before_run`` plugins (content from one ends the run with that reply);
   chooses the agent that answers as a turn does (``select_agent``), resolves its
   tools and compiles its request from the session (system instruction, tools,
   history), with ``RunConfig.response_modalities``; with a planner that plans in the
   request, its planning instruction joins the system instruction and the history's
   thought marks are cleared, as in a turn (``planners._apply``);
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
     same. Tool calls are committed (``long_running_tool_ids``), run as in a turn
     (policy, hooks, tool), their results committed as one event and sent back to the
     model. With a planner that rewrites answers (``planners._apply``), each piece the
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
Transfers are committed but the conversation stays with its agent. ``after_run``
plugins always run.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncGenerator
from typing import Any

from .._tree import inherited_model
from .._types import (
    Content,
    Event,
    EventActions,
    LiveRequest,
    LlmRequest,
    LlmResponse,
    Transcription,
    new_event_id,
)
from ..compiler import CompileContext, build_request
from ..compiler._instructions import output_schema_instruction
from ..compiler._tools import SET_MODEL_RESPONSE
from ..models import is_live_model
from ..models._llm_registry import BaseLlm
from ..planners._apply import answer_planner, planned_content, planning_call
from ..tools._base import ToolContext
from ..tools._classes import BaseToolset, process_request
from ._context import CallbackContext, InvocationContext, SessionView
from ._flow import (
    long_running_ids,
    preload_memories,
    resolve_tools,
    run_tool,
    template_artifacts,
    tool_response_event,
)
from ._invocation import (
    after_run,
    checked_message,
    deliver,
    early_reply,
    new_invocation_context,
    select_agent,
)
from ._policy import StreamFilter

__all__ = ["LIVE_UNSUPPORTED", "run_live_invocation"]

#: the error code of a live run whose agent's model cannot take audio or video
LIVE_UNSUPPORTED = "live_unsupported"
#: how often a live run waiting for the caller or the model looks at its cancel token
_CANCEL_POLL = 0.25


class _End:
    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


class _Saved:
    """An event the receiving loop waits on (``done``) until it is committed: what a
    planner wrote to state, which its next call reads, as in google-adk's flow."""

    def __init__(self, event: Event) -> None:
        self.event = event
        self.done = asyncio.Event()


async def run_live_invocation(root_agent: Any, session: SessionView, inputs: asyncio.Queue[LiveRequest],
                              **context: Any) -> AsyncGenerator[Event, None]:
    """Run the live conversation (see the module); yields every event, partial or not,
    the committed ones committed to ``session`` first. ``context``: the keyword
    arguments of :func:`new_invocation_context`."""
    ctx = new_invocation_context(root_agent, session, **context)
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


async def _next_input(ctx: InvocationContext, inputs: asyncio.Queue[LiveRequest]) -> LiveRequest:
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
                        inputs: asyncio.Queue[LiveRequest]) -> AsyncGenerator[Event, None]:
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


def _without_response_tool(agent: Any, tools: dict[str, Any], request: LlmRequest) -> LlmRequest:
    """A live conversation has no ``set_model_response`` (as google-adk, which skips its
    output-schema step when live): the tool is taken out of ``tools`` (so a call of it
    is an unknown tool's), its declaration out of the request's, and the sentence the
    compiler adds about it out of the system instruction (the schema's own stays). A
    request without it is returned as is."""
    if tools.pop(SET_MODEL_RESPONSE, None) is None and all(d.name != SET_MODEL_RESPONSE for d in request.tools):
        return request
    instruction = request.system_instruction.replace(
        output_schema_instruction(agent, True), output_schema_instruction(agent, False))
    return request.model_copy(update={
        "tools": [d for d in request.tools if d.name != SET_MODEL_RESPONSE], "system_instruction": instruction})


async def _converse(agent: Any, model: Any, ctx: InvocationContext,
                    inputs: asyncio.Queue[LiveRequest]) -> AsyncGenerator[Event, None]:
    """The conversation with a live model (see the module, 3)."""
    tools, extra_tools, problems = await resolve_tools(agent, ctx)
    for problem in problems:
        yield problem
    memories = await preload_memories(agent, ctx)
    request = build_request(agent, CompileContext(
        state=ctx.session.state, events=ctx.session.events, run_config=ctx.run_config,
        root_agent=ctx.root_agent, branch=ctx.branch, invocation_id=ctx.invocation_id, extra_tools=extra_tools,
        memories=memories, artifacts=template_artifacts(agent, ctx)),
        planning=planning_call(agent, lambda: CallbackContext(ctx)))
    request = _without_response_tool(agent, tools, request)
    # Gemini's own tools (google_search...) and google-adk tools' hooks shape the setup, as in a turn
    await process_request([*(t for t in agent.tools if isinstance(t, BaseToolset)), *tools.values()],
                          lambda: ToolContext(ctx, None), request)
    modalities = ctx.run_config.response_modalities
    if modalities:
        request = request.model_copy(update={"config": {**request.config, "response_modalities": list(modalities)}})
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


class _Conversation:
    """The two loops of a live conversation and what they have heard so far."""

    def __init__(self, agent: Any, ctx: InvocationContext, connection: Any, tools: dict[str, Any],
                 out: asyncio.Queue[Event | _End | _Saved]) -> None:
        self.agent, self.ctx, self.connection, self.tools, self.out = agent, ctx, connection, tools, out
        self.heard: list[str] = []  # the user's speech since it was last committed
        self.said: list[str] = []  # the agent's speech (or text) since it was last committed
        self.spoken = False  # the agent answers with speech (transcriptions) rather than text
        self.answer_id = new_event_id()  # the pieces of one answer share its committed event's id
        self.saving: list[_Saved] = []  # the planner's state events not yet committed

    async def send_inputs(self, inputs: asyncio.Queue[LiveRequest]) -> None:
        try:
            while True:
                request = await _next_input(self.ctx, inputs)
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
        elif content is not None and content.parts:
            if not self.spoken and raw is not None:
                self.said.append(raw.text)  # the whole answer goes through the planner once more
            out.put_nowait(ctx.event(id=self.answer_id, content=content, partial=True, model_version=version))
        if response.interrupted:
            self._commit_said()
            out.put_nowait(ctx.event(interrupted=True, partial=True))
        if response.turn_complete:
            if response.usage_metadata is not None:
                out.put_nowait(ctx.event(usage_metadata=response.usage_metadata, model_version=version))
            self._commit_said()
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

    def _commit_said(self) -> None:
        text = "".join(self.said).strip()
        self.said.clear()
        if text:  # google-adk marks a live answer not partial, a text one not interrupted
            spoken = Transcription(text=text, finished=True) if self.spoken else None
            content = Content.model(text) if self.spoken else self._planned(Content.model(text))
            self.out.put_nowait(self.ctx.event(id=self.answer_id, content=content, output_transcription=spoken,
                                               partial=False, interrupted=None if self.spoken else False))
        self.spoken = False
        self.answer_id = new_event_id()

    async def _run_tools(self, content: Content, model_version: str | None) -> None:
        """Commit the calls, run them (as a turn does), commit their results, send them back."""
        ctx = self.ctx
        self._commit_said()
        await self._settled()
        calls = [c if c.id else c.model_copy(update={"id": f"adk-{uuid.uuid4()}"})
                 for c in content.function_calls]
        self.out.put_nowait(ctx.event(content=Content(role="model", parts=tuple(
            p.model_copy(update={"function_call": c}) for p, c in zip(
                [p for p in content.parts if p.function_call is not None], calls, strict=True))),
            actions=EventActions(), model_version=model_version, long_running_tool_ids=long_running_ids(calls, self.tools)))
        results = await asyncio.gather(*(run_tool(self.agent, ctx, call, self.tools) for call in calls))
        event = tool_response_event(ctx, calls, results)
        if event is None:
            return  # long-running calls only: their results come later
        self.out.put_nowait(event)
        if event.content is not None:
            await self.connection.send_tool_results(event.content.function_responses)
