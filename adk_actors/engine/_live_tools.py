"""The tool calls of a live conversation, run as google-adk 2.13's live flow runs them.

A :class:`LiveTools` belongs to one conversation (``engine._live``). When the model
calls tools, :meth:`LiveTools.answer` is given the calls (already committed as the
agent's event) and, in order:

1. starts each call to a *non-blocking* tool (one whose ``behavior`` is
   ``NON_BLOCKING``, or with no ``behavior`` but a ``response_scheduling``; not a
   streaming tool) on a task of its own: the call runs as in a turn (policy, hooks,
   tool); its result, once there, is committed as an event of its own (``emit``) and
   sent back to the model (``send``). Meanwhile the conversation goes on: the model's
   next words are not held up by the tool;
2. runs every other call side by side, as in a turn, and gives back the one event of
   their results (None when there is none: long-running tools only). The receiving
   loop waits for these, as google-adk's does; a synchronous function runs on a thread
   (``RunConfig.tool_thread_pool_config``'s pool when set), so the caller's inputs keep
   reaching the model meanwhile. Among them:

   * a *streaming* tool (a function tool whose function is an async generator): its
     hooks run as for any tool, but the tool only starts its generator on a task of its
     own and answers at once ``{"status": "The function is running asynchronously and
     the results are pending."}``. Each value the generator then yields goes to the
     model as a further function response of that call (not an event); an ``Event`` it
     yields is shown to the user instead: an event of the agent carrying its content
     only (as a user's content), on the branch ``<tool>@<call id>``, committed. A value
     returned in place of a generator (an error result) is sent the same way; if the
     generator raises, the model is told ``Invoking `<tool>()` failed with an internal
     error.`` and the error is logged. When its function takes an ``input_stream``
     annotated ``LiveRequestQueue`` (ours, google-adk's, or the name as a string), a
     queue of its own is made for the call before the tool runs and passed as that
     argument: from then until the stream ends (or is stopped), it gets a copy of every
     request the conversation reads from the caller (:meth:`LiveTools.feed`: content,
     blobs, activity signals, state changes, ``close``), and of every function response
     sent to the model (:meth:`LiveTools.reply`: ``content`` of the user's role holding
     them, ``partial`` for a stream's values), its own "pending" answer first, as
     google-adk routes them through the caller's queue;
   * a call to the agent's own tool named ``stop_streaming`` with a ``function_name``:
     the tool itself does not run; the streams of that function still running are
     cancelled (each given up to a second to stop) and the call answers whether they
     stopped (``Successfully stopped streaming function <name>``), did not stop yet
     (``The task is not cancelled yet for <name>.``), or there was none (``No active
     streaming function named <name> found``), under ``status``. An error a stopped
     stream had raised is raised here, as the tool's failure.

Every function response a call or a stream sends carries the tool's
``response_scheduling`` when it has one (a ``FunctionResponse`` a stream yields: its
own ``scheduling`` first), as google-adk's.

:meth:`LiveTools.close` cancels what still runs (background calls, streams) when the
conversation ends; their results are then dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from .._types import (
    Content,
    Event,
    FunctionCall,
    FunctionResponse,
    FunctionResponseScheduling,
    LiveRequest,
    Part,
)
from ..agents.active_streaming_tool import ActiveStreamingTool
from ..agents.live_request_queue import LiveRequestQueue
from ..tools._function import INPUT_STREAM
from ..types import ours
from ._context import InvocationContext
from ._flow import run_tool, tool_response_event
from ._flow_tools import as_dict, take_media

__all__ = ["PENDING", "STOP_STREAMING", "LiveTools", "is_non_blocking", "is_streaming", "takes_input_stream"]

_log = logging.getLogger("adk_actors.live")

#: a streaming tool's first answer (google-adk's words: the model reads them)
PENDING = "The function is running asynchronously and the results are pending."
#: the name of the tool that stops a streaming tool (the agent gives it; google-adk's)
STOP_STREAMING = "stop_streaming"
#: how long a cancelled stream is given to stop
_STOP_WAIT = 1.0


def is_streaming(tool: Any) -> bool:
    """A function tool whose function is an async generator (google-adk's streaming tool)."""
    func = getattr(tool, "func", None)
    if not callable(func):
        return False
    return inspect.isasyncgenfunction(func) or inspect.isasyncgenfunction(type(func).__call__)


def takes_input_stream(tool: Any) -> bool:
    """A streaming tool whose function takes an ``input_stream`` annotated
    ``LiveRequestQueue``: ours, google-adk's, or the name as a string (an annotation
    under ``from __future__ import annotations``), as google-adk tells one."""
    if not is_streaming(tool):
        return False
    try:
        parameter = inspect.signature(tool.func).parameters.get(INPUT_STREAM)
    except (TypeError, ValueError):
        return False
    annotation = None if parameter is None else parameter.annotation
    if annotation is LiveRequestQueue or annotation == "LiveRequestQueue":
        return True
    return (isinstance(annotation, type) and annotation.__name__ == "LiveRequestQueue"
            and annotation.__module__.startswith("google.adk."))


def _named(value: Any) -> str:
    """An enum member's (ours, google.genai's) or a string's name."""
    return str(getattr(value, "value", value) or "").upper()


def is_non_blocking(tool: Any) -> bool:
    """A tool whose calls run in the background of a live conversation (see the module)."""
    if tool is None or is_streaming(tool):
        return False
    behavior = getattr(tool, "behavior", None)
    if behavior is not None:
        return _named(behavior) == "NON_BLOCKING"
    return getattr(tool, "response_scheduling", None) is not None


def _scheduling(tool: Any) -> FunctionResponseScheduling | None:
    """A tool's ``response_scheduling`` as our enum (None: it has none)."""
    scheduling = getattr(tool, "response_scheduling", None)
    return None if scheduling is None else FunctionResponseScheduling(scheduling)


class LiveTools:
    """What one conversation's tool calls need (see the module). ``emit`` commits an
    event of the conversation; ``send`` sends function responses to the model."""

    def __init__(self, agent: Any, ctx: InvocationContext, tools: dict[str, Any], emit: Callable[[Event], None],
                 send: Callable[[Sequence[FunctionResponse]], Awaitable[None]]) -> None:
        self.agent, self.ctx, self.emit, self.send = agent, ctx, emit, send
        self.streams: dict[str, tuple[str, ActiveStreamingTool]] = {}  # call id -> (tool name, its task, input)
        self.background: set[asyncio.Task[None]] = set()
        self.tools = dict(tools)
        for name, tool in tools.items():
            if is_streaming(tool):
                self.tools[name] = self._streaming(tool)
        stopper = self.tools.get(STOP_STREAMING)
        if stopper is not None:
            self.tools[STOP_STREAMING] = self._stopper(stopper)

    async def answer(self, calls: list[FunctionCall]) -> Event | None:
        """Start the non-blocking calls, run the others; the event of the others' results."""
        blocking = []
        for call in calls:
            if is_non_blocking(self.tools.get(call.name)):
                task = asyncio.create_task(self._in_background(call))
                self.background.add(task)
                task.add_done_callback(self.background.discard)
            else:
                blocking.append(call)
        if not blocking:
            return None
        results = await asyncio.gather(*(run_tool(self.agent, self.ctx, call, self.tools) for call in blocking))
        return self._scheduled(tool_response_event(self.ctx, blocking, list(results)))

    def feed(self, request: LiveRequest) -> None:
        """Put a copy of ``request`` on the input queue of every stream that takes one
        and still runs (see the module)."""
        for _, active in list(self.streams.values()):
            if active.stream is not None and (active.task is None or not active.task.done()):
                active.stream.send(request)

    async def reply(self, responses: Sequence[FunctionResponse], *, partial: bool = False) -> None:
        """Send function responses to the model, a copy of them first to the streams'
        input queues (:meth:`feed`), then letting those streams run."""
        if not responses:
            return
        self.feed(LiveRequest(content=Content(role="user", parts=tuple(Part(function_response=r) for r in responses)),
                              partial=partial))
        await asyncio.sleep(0)
        await self.send(responses)

    async def close(self) -> None:
        """Cancel the background calls and the streams still running, and wait for them."""
        tasks = [*self.background, *(a.task for _, a in self.streams.values() if a.task is not None)]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _in_background(self, call: FunctionCall) -> None:
        """A non-blocking call: run it, commit its result, send it to the model."""
        try:
            result = await run_tool(self.agent, self.ctx, call, self.tools)
            event = self._scheduled(tool_response_event(self.ctx, [call], [result]))
            if event is None:
                return
            self.emit(event)
            if event.content is not None:
                await self.reply(event.content.function_responses)
        except Exception:
            _log.exception("the non-blocking tool %s failed", call.name)

    def _scheduled(self, event: Event | None) -> Event | None:
        """``event`` with each function response of a tool that has a
        ``response_scheduling`` (and none of its own) carrying it (google-adk's)."""
        if event is None or event.content is None:
            return event
        parts = []
        for part in event.content.parts:
            response = part.function_response
            scheduling = _scheduling(self.tools.get(response.name or "")) if response is not None else None
            if response is not None and response.scheduling is None and scheduling is not None:
                part = part.model_copy(update={"function_response": response.model_copy(
                    update={"scheduling": scheduling})})
            parts.append(part)
        return event.model_copy(update={"content": event.content.model_copy(update={"parts": tuple(parts)})})

    def _streaming(self, tool: Any) -> Any:
        """A copy of a streaming ``tool`` whose run starts its stream (see the module)."""
        live = copy.copy(tool)

        async def run(tool_context: Any, args: dict[str, Any]) -> Any:
            call_id = tool_context.function_call_id or ""
            active = ActiveStreamingTool(stream=LiveRequestQueue() if takes_input_stream(tool) else None)
            if active.stream is not None:  # fed from now on, the tool is given it as its input_stream
                tool_context._input_stream = active.stream
                self.streams[call_id] = (tool.name, active)
            try:
                made = await tool.run(tool_context, args)  # the arguments checked, the generator made
            except BaseException:
                self._forget(call_id, None)
                raise
            task = asyncio.create_task(self._stream(tool, call_id, made))
            active.task = task
            self.streams[call_id] = (tool.name, active)
            task.add_done_callback(lambda done: self._forget(call_id, done))
            return {"status": PENDING}

        live.run = run
        return live

    def _forget(self, call_id: str, task: asyncio.Task[None] | None) -> None:
        """Drop the stream of ``call_id`` whose task is ``task`` (None: not started)."""
        entry = self.streams.get(call_id)
        if entry is not None and entry[1].task is task:
            del self.streams[call_id]

    async def _stream(self, tool: Any, call_id: str, made: Any) -> None:
        """Relay what a streaming tool yields (see the module)."""
        try:
            if not inspect.isasyncgen(made):
                await self.reply([self._response(tool, call_id, made)])
                return
            async with contextlib.aclosing(made) as chunks:
                async for chunk in chunks:
                    if isinstance(chunk, Event) or type(chunk).__name__ == "Event":
                        self._show(tool, call_id, chunk)
                    else:
                        await self.reply([self._response(tool, call_id, chunk)], partial=True)
        except asyncio.CancelledError:
            raise
        except Exception:
            _log.exception("the streaming tool %s failed", tool.name)
            failed = {"error": f"Invoking `{tool.name}()` failed with an internal error."}
            with contextlib.suppress(Exception):  # the conversation may be over
                await self.reply([self._response(tool, call_id, failed)])

    def _show(self, tool: Any, call_id: str, yielded: Any) -> None:
        """An event a streaming tool yielded, shown to the user: its content only."""
        content = getattr(yielded, "content", None)
        if content is None:
            _log.warning("the streaming tool %s yielded an event with no content: nothing is shown", tool.name)
            return
        shown = ours(content, Content).model_copy(update={"role": "user"})
        self.emit(self.ctx.event(content=shown, branch=f"{tool.name}@{call_id}" if call_id else tool.name))

    def _response(self, tool: Any, call_id: str, value: Any) -> FunctionResponse:
        """One value of a stream as a function response of its call, with the tool's
        ``response_scheduling`` (a FunctionResponse given by the tool: its ``response``,
        and its own ``scheduling`` when it has one, as google-adk's)."""
        scheduling = _scheduling(tool)
        if type(value).__name__ == "FunctionResponse" and hasattr(value, "response"):
            own = getattr(value, "scheduling", None)
            scheduling = FunctionResponseScheduling(own) if own is not None else scheduling
            value = value.response
        rest, media = take_media(value)
        return FunctionResponse(id=call_id or None, name=tool.name, response=as_dict(rest), parts=media,
                                scheduling=scheduling)

    def _stopper(self, tool: Any) -> Any:
        """A copy of the agent's ``stop_streaming`` tool that stops streams (see the module)."""
        live = copy.copy(tool)

        async def run(tool_context: Any, args: dict[str, Any]) -> Any:
            name = args.get("function_name")
            if "function_name" not in args:
                return await tool.run(tool_context, args)
            if not isinstance(name, str):
                raise ValueError("stop_streaming takes the name of a function (a string)")
            return await self._stop(name)

        live.run = run
        return live

    async def _stop(self, name: str) -> dict[str, Any]:
        running = {call_id: active.task for call_id, (tool, active) in self.streams.items()
                   if tool == name and active.task is not None and not active.task.done()}
        if not running:
            return {"status": f"No active streaming function named {name} found"}
        for task in running.values():
            task.cancel()
        await asyncio.wait(running.values(), timeout=_STOP_WAIT)
        for task in running.values():
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        if all(task.done() for task in running.values()):
            return {"status": f"Successfully stopped streaming function {name}"}
        return {"status": f"The task is not cancelled yet for {name}."}
