"""A2A tasks run as our runs: a2a-sdk's request handler calls :class:`RunnerExecutor`,
which runs the task's message on an app's Runner and reports the run as the task.

In order, for each message of a task (``execute``):

1. a new task is published as a Task (submitted, with the user's message), then
   working (metadata: the app, the user and the session);
2. the task's context id is the session's id: the session is created when the first
   message of a context finds none, and later tasks of that context continue it;
3. the run's events (the user's own and partial ones left out) are published as
   working updates, each an agent message of the event's parts;
4. the run's last answer (its last event of text only) becomes the task's artifact,
   then the task is completed;
5. a run that fails ends the task failed, with the reason (``<reason>: <type>:
   <detail>``, e.g. a kill -9 of the session's partition: ``interrupted``), and a
   cancelled run canceled; an A2A client never waits on a task whose run ended.

``cancel`` (A2A ``CancelTask``): a2a-sdk cancels ``execute`` first, which cancels the
task's run on the host, then publishes canceled.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Part, Task, TaskState, TaskStatus

from .._exceptions import AdkError, RunFailedError, SessionExistsError, SessionNotFoundError
from ._parts import a2a_parts, agent_message, content_of

__all__ = ["RunnerExecutor"]


class RunnerExecutor(AgentExecutor):
    """Runs A2A tasks on ``runner`` (an app's Runner). ``user_of(context)`` names the
    user a task's runs are made for (the HTTP front door: the request's token's user)."""

    def __init__(self, runner: Any, user_of: Callable[[RequestContext], str]) -> None:
        self._runner = runner
        self._user_of = user_of
        self._cancels: set[asyncio.Future[Any]] = set()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = context.task_id or "", context.context_id or ""
        user = self._user_of(context)
        updater = TaskUpdater(event_queue, task_id, context_id)
        if context.current_task is None:
            history = [context.message] if context.message is not None else []
            await event_queue.enqueue_event(Task(id=task_id, context_id=context_id, history=history,
                                                 status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)))
        metadata = {"adk_app_name": self._runner.app_name, "adk_user_id": user, "adk_session_id": context_id}
        await updater.update_status(TaskState.TASK_STATE_WORKING, metadata=metadata)
        run_id = f"a2a-{uuid.uuid4().hex}"
        answer: list[Part] = []
        try:
            message = content_of(context.message) if context.message is not None else None
            if message is None or not message.parts:
                raise _Refused("the message has no part a run can take")
            async for event in self._events(user, context_id, message, run_id):
                parts = a2a_parts(event.content)
                if event.partial or event.author == "user" or not parts:
                    continue
                await updater.update_status(
                    TaskState.TASK_STATE_WORKING, agent_message(parts, task_id, context_id, event.id),
                    metadata={**metadata, "adk_event_id": event.id, "adk_author": event.author,
                              "adk_invocation_id": event.invocation_id})
                if all(part.WhichOneof("content") == "text" for part in parts):
                    answer = parts
        except asyncio.CancelledError:  # CancelTask: the run on the host ends too
            self._cancel_run_soon(run_id, user, context_id)
            raise
        except RunFailedError as failure:
            state = TaskState.TASK_STATE_CANCELED if failure.reason == "cancelled" else TaskState.TASK_STATE_FAILED
            why = ": ".join(x for x in (failure.reason, failure.error_type, failure.detail) if x)
            await updater.update_status(state, _text(why, task_id, context_id), metadata=metadata)
            return
        except (AdkError, _Refused) as error:
            await updater.failed(_text(f"{type(error).__name__}: {error}", task_id, context_id))
            return
        if answer:
            await updater.add_artifact(answer, name="answer", last_chunk=True, metadata=metadata)
        await updater.update_status(TaskState.TASK_STATE_COMPLETED, metadata=metadata)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()

    async def _events(self, user: str, session_id: str, message: Any, run_id: str) -> AsyncIterator[Any]:
        """The run's events; the context's session is created when its first task
        finds none (one round trip less for every later task)."""
        events = self._runner.run_async(user, session_id, message, run_id=run_id)
        try:
            first = await anext(events)
        except SessionNotFoundError:
            await asyncio.to_thread(self._create_session, user, session_id)
            events = self._runner.run_async(user, session_id, message, run_id=run_id)
            first = await anext(events)
        yield first
        async for event in events:
            yield event

    def _create_session(self, user: str, session_id: str) -> None:
        """The context's session, made now; one that another task of the same new
        context made meanwhile is as good."""
        try:
            self._runner.create_session(user, session_id)
        except SessionExistsError:
            pass

    def _cancel_run_soon(self, run_id: str, user: str, session_id: str) -> None:
        """Cancel the run on a thread (the cancelled ``execute`` cannot wait); a run
        that already ended is left alone."""

        def cancel() -> None:
            try:
                self._runner.cancel(run_id, user_id=user, session_id=session_id)
            except AdkError:
                pass

        future = asyncio.get_running_loop().run_in_executor(None, cancel)
        self._cancels.add(future)
        future.add_done_callback(self._cancels.discard)


class _Refused(Exception):
    """A task this executor cannot run (said in its failed status)."""


def _text(text: str, task_id: str, context_id: str) -> Any:
    return agent_message([Part(text=text)], task_id, context_id, uuid.uuid4().hex)
