"""A2A tasks run as our runs: a2a-sdk's request handler calls :class:`RunnerExecutor`,
which runs the task's message on an app's Runner and reports the run as the task.

In order, for each message of a task (``execute``):

1. a new task is published as a Task (submitted, with the user's message), then
   working (metadata: the app, the user and the session);
2. the task's context id is the session's id: the run of a context's first task
   creates its session (``create_session``), and later tasks of that context continue it;
3. the run's events (the user's own and partial ones left out) are published as
   working updates, each an agent message of the event's parts;
4. the run's last answer (its last event of text only) becomes the task's artifact,
   then the task is completed;
5. a run that fails ends the task failed, with the reason (``<reason>: <type>:
   <detail>``, e.g. a kill -9 of the session's partition: ``interrupted``), and a
   cancelled run canceled; an A2A client never waits on a task whose run ended.
   A run the host resumes on its own after a crash is followed by the Runner, so
   its task goes on; one whose resume stopped before calls that may have run
   (``needs_decision``) makes the task ``input-required``, and the client's
   decisions (``{"decisions": {call_id: {"action": ..., "result": ...}}}``) resume it.

``cancel`` (A2A ``CancelTask``): a2a-sdk cancels ``execute`` first, which cancels the
task's run on the host, then publishes canceled.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Part, Task, TaskState, TaskStatus
from pydantic import ValidationError

from .._decisions import CallDecision
from .._exceptions import AdkError, RunFailedError
from .._types import Content
from ..runtime import Credential
from ._parts import a2a_parts, agent_message, content_of, data_of, data_part
from ._task_run import TaskRun

__all__ = ["RunnerExecutor"]


@dataclass
class _Parked:
    """A task waiting for its A2A client: to decide ``approval`` (the run goes on
    meanwhile, in ``run``), or to give the credential its run asked for (``auth``:
    the run ended; ``message`` is sent again once it is given)."""

    run: TaskRun | None
    run_id: str
    message: Content
    approval: Any = None
    auth: dict[str, Any] = field(default_factory=dict)
    invocation_id: str = ""  # its run's (a run the host resumed after a crash continues it)
    pending_calls: list[dict[str, Any]] = field(default_factory=list)  # its run stopped before them
    resume: str = ""  # the run to resume (with ``decisions``) when the task goes on
    decisions: dict[str, CallDecision] = field(default_factory=dict)
    answer: list[Part] = field(default_factory=list)


class RunnerExecutor(AgentExecutor):
    """Runs A2A tasks on ``runner`` (an app's Runner). ``user_of(context)`` names the
    user a task's runs are made for (the HTTP front door: the request's token's user)."""

    def __init__(self, runner: Any, user_of: Callable[[RequestContext], str]) -> None:
        self._runner = runner
        self._user_of = user_of
        self._cancels: set[asyncio.Future[Any]] = set()
        self._parked: dict[str, _Parked] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = context.task_id or "", context.context_id or ""
        user = self._user_of(context)
        updater = TaskUpdater(event_queue, task_id, context_id)
        if context.current_task is None:
            history = [context.message] if context.message is not None else []
            await event_queue.enqueue_event(Task(id=task_id, context_id=context_id, history=history,
                                                 status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)))
        metadata = {"adk_app_name": self._runner.app_name, "adk_user_id": user, "adk_session_id": context_id}
        parked = self._parked.pop(task_id, None)
        try:
            if parked is None:
                message = content_of(context.message) if context.message is not None else None
                if message is None or not message.parts:
                    raise _Refused("the message has no part a run can take")
                parked = _Parked(None, f"a2a-{uuid.uuid4().hex}", message)
            elif not await self._resumed(parked, context, user, updater, metadata):
                self._parked[task_id] = parked  # the answer was not one: asked again
                return
            await updater.update_status(TaskState.TASK_STATE_WORKING, metadata=metadata)
            if parked.run is None:
                parked.run = self._start(user, context_id, parked)
            await self._follow(parked, task_id, context_id, updater, metadata)
        except asyncio.CancelledError:  # CancelTask: the run on the host ends too, and the task's stream
            if parked is not None:
                self._stop(parked, user, context_id)
            await updater.cancel()
            raise
        except RunFailedError as failure:
            if failure.pending_calls and parked is not None:
                parked.run, parked.pending_calls, parked.resume = None, failure.pending_calls, failure.run_id
                self._parked[task_id] = parked
                await updater.update_status(TaskState.TASK_STATE_INPUT_REQUIRED, _asking_decisions(
                    parked.pending_calls, task_id, context_id), metadata={**metadata, "adk_run_id": failure.run_id})
                return
            state = TaskState.TASK_STATE_CANCELED if failure.reason == "cancelled" else TaskState.TASK_STATE_FAILED
            why = ": ".join(x for x in (failure.reason, failure.error_type, failure.detail) if x)
            await updater.update_status(state, _text(why, task_id, context_id), metadata=metadata)
        except (AdkError, _Refused) as error:
            await updater.failed(_text(f"{type(error).__name__}: {error}", task_id, context_id))

    async def _follow(self, parked: _Parked, task_id: str, context_id: str, updater: TaskUpdater,
                      metadata: dict[str, Any]) -> None:
        """Publish the run's events until it ends (completed, or ``auth-required`` when
        it asked for a credential) or asks for an approval (``input-required``: the
        task is parked, its run goes on)."""
        assert parked.run is not None
        while True:
            kind, item = await parked.run.items.get()
            if kind == "failed":
                raise item
            if kind == "approval":
                parked.approval = item
                self._parked[task_id] = parked
                await updater.update_status(TaskState.TASK_STATE_INPUT_REQUIRED, _asking_approval(
                    item, task_id, context_id), metadata={**metadata, "adk_approval_id": item.id})
                return
            if kind == "done":
                break
            parked.invocation_id = parked.invocation_id or item.invocation_id
            self._publishing(item)
            parts = a2a_parts(item.content)
            if item.actions.requested_auth_configs:
                parked.auth = dict(item.actions.requested_auth_configs)
            if item.partial or item.author == "user" or not parts:
                continue
            await updater.update_status(
                TaskState.TASK_STATE_WORKING, agent_message(parts, task_id, context_id, item.id),
                metadata={**metadata, "adk_event_id": item.id, "adk_author": item.author,
                          "adk_invocation_id": item.invocation_id})
            if all(part.WhichOneof("content") == "text" for part in parts):
                parked.answer = parts
        if parked.auth:
            parked.run = None
            self._parked[task_id] = parked
            await updater.update_status(TaskState.TASK_STATE_AUTH_REQUIRED, _asking_credential(
                parked.auth, task_id, context_id), metadata=metadata)
            return
        if parked.answer:
            await updater.add_artifact(parked.answer, name="answer", last_chunk=True, metadata=metadata)
        await updater.update_status(TaskState.TASK_STATE_COMPLETED, metadata=metadata)

    def _publishing(self, event: Any) -> None:
        """Called with each event of a task's run, before what it makes is published
        (google-adk's ``A2aAgentExecutor`` hands it to its interceptors); nothing here."""

    async def _resumed(self, parked: _Parked, context: RequestContext, user: str, updater: TaskUpdater,
                       metadata: dict[str, Any]) -> bool:
        """Take the client's answer to a parked task: a decision on its approval
        (``{"approved": true|false, "reason": ...}``, or text: yes/approve, no/deny),
        or the credential its run asked for (``{"credential_key": ..., "credential":
        {...}}``: stored for the user, then the task's message runs again). False,
        with the question asked again, when the message is neither."""
        message = context.message
        data = data_of(message) if message is not None else {}
        text = content_of(message).text.strip().lower() if message is not None else ""
        task_id, context_id = context.task_id or "", context.context_id or ""
        if parked.pending_calls:
            decisions = _decisions(data.get("decisions"), parked.pending_calls)
            if decisions is None:
                await updater.update_status(TaskState.TASK_STATE_INPUT_REQUIRED, _asking_decisions(
                    parked.pending_calls, task_id, context_id, again=True),
                    metadata={**metadata, "adk_run_id": parked.resume})
                return False
            parked.pending_calls, parked.decisions, parked.run_id = [], decisions, f"a2a-{uuid.uuid4().hex}"
            return True
        if parked.approval is not None:
            approved = data.get("approved") if isinstance(data.get("approved"), bool) else _yes_or_no(text)
            if approved is None:
                await updater.update_status(TaskState.TASK_STATE_INPUT_REQUIRED, _asking_approval(
                    parked.approval, task_id, context_id, again=True),
                    metadata={**metadata, "adk_approval_id": parked.approval.id})
                return False
            reason = str(data.get("reason") or "denied by the A2A client")
            decide = (lambda: self._runner.approve(parked.approval.id)) if approved else (
                lambda: self._runner.deny(parked.approval.id, reason))
            try:
                await asyncio.to_thread(decide)
            except AdkError:
                pass  # decided already (it expired, or in the console): the run goes on as decided
            parked.approval = None
            return True
        key, credential = data.get("credential_key"), data.get("credential")
        wanted = {str(config.get("credential_key")) for config in parked.auth.values()}
        if key not in wanted or not isinstance(credential, dict):
            await updater.update_status(TaskState.TASK_STATE_AUTH_REQUIRED, _asking_credential(
                parked.auth, task_id, context_id), metadata=metadata)
            return False
        try:
            stored = Credential.model_validate(credential)
        except ValidationError as error:
            raise _Refused(f"the credential is not one: {error.errors()[0]['msg']}") from None
        await asyncio.to_thread(self._runner.put_credential, user, key, stored)
        parked.auth, parked.run_id = {}, f"a2a-{uuid.uuid4().hex}"
        return True

    def _start(self, user: str, session_id: str, parked: _Parked) -> TaskRun:
        async def pending() -> list[Any]:
            """The pending approvals of the task's run: the run it started or, when the
            host resumed that one after a crash (the Runner follows it), the run that
            continues its invocation."""
            found = await asyncio.to_thread(self._runner.approvals, user, "pending")
            ours = {parked.run_id}
            if parked.invocation_id and any(a.session_id == session_id and a.run_id not in ours for a in found):
                last = await asyncio.to_thread(self._runner.last_run, user, session_id)
                if last is not None and last.invocation_id == parked.invocation_id:
                    ours.add(last.run_id)
            return [approval for approval in found if approval.run_id in ours]

        if parked.resume:
            events = self._runner.resume_async(user, session_id, parked.resume, decisions=parked.decisions,
                                               new_run_id=parked.run_id)
            parked.resume, parked.decisions = "", {}
        else:
            # the context's session is made by its first task's run: no round trip of its own
            events = self._runner.run_async(user, session_id, parked.message, run_id=parked.run_id,
                                            create_session=True)
        return TaskRun(events, pending)

    def _stop(self, parked: _Parked, user: str, session_id: str) -> None:
        if parked.run is not None:
            parked.run.cancel()
        self._cancel_run_soon(parked.run_id, user, session_id)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        parked = self._parked.pop(context.task_id or "", None)
        if parked is not None:  # a task waiting for its client: no execute to cancel
            self._stop(parked, self._user_of(context), context.context_id or "")
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()

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


def _yes_or_no(text: str) -> bool | None:
    first = text.split()[0].strip(".,!") if text.split() else ""
    if first in ("yes", "y", "approve", "approved", "ok", "allow"):
        return True
    if first in ("no", "n", "deny", "denied", "reject", "refuse"):
        return False
    return None


def _asking_approval(approval: Any, task_id: str, context_id: str, again: bool = False) -> Any:
    """The question an approval puts to the A2A client: its hint in words, and the
    call as data (``adk_type`` ``approval_request``)."""
    words = (f"The call to {approval.tool} needs your approval"
             + (f" ({approval.hint})" if approval.hint else "") + ". Answer yes or no"
             + (", or send {\"approved\": true|false}." if again else "."))
    request = {"approval_id": approval.id, "tool": approval.tool, "args": approval.args, "hint": approval.hint}
    return agent_message([Part(text=words), data_part(request, "approval_request")], task_id, context_id,
                         uuid.uuid4().hex)


def _asking_decisions(pending: list[dict[str, Any]], task_id: str, context_id: str, again: bool = False) -> Any:
    """The question a run stopped before calls that may have run puts to the A2A
    client: the calls in words, and as data (``adk_type`` ``decision_request``)."""
    calls = ", ".join(f"{call.get('name')} ({call.get('call_id')})" for call in pending)
    words = (f"The run stopped before calls that may have run already: {calls}. For each, decide: run it "
             "again, give its result, or end the run"
             + (": send {\"decisions\": {call_id: {\"action\": \"rerun\" | \"result\" | \"end\", "
                "\"result\": {...}}}}, one for every call." if again else "."))
    return agent_message([Part(text=words), data_part({"pending_calls": pending}, "decision_request")],
                         task_id, context_id, uuid.uuid4().hex)


def _decisions(given: Any, pending: list[dict[str, Any]]) -> dict[str, CallDecision] | None:
    """The client's decisions, one valid ``CallDecision`` per pending call, or None."""
    if not isinstance(given, dict):
        return None
    decisions: dict[str, CallDecision] = {}
    for call in pending:
        decision = given.get(str(call.get("call_id")))
        if not isinstance(decision, dict):
            return None
        fields = {key: decision[key] for key in ("action", "result") if key in decision}
        try:
            decisions[str(call.get("call_id"))] = CallDecision(**fields)
        except (TypeError, ValueError):  # no action, or not one of the three
            return None
    return decisions


def _asking_credential(auth: dict[str, Any], task_id: str, context_id: str) -> Any:
    """What a run asked for: each credential's key and auth config (``adk_type``
    ``credential_request``); the client answers ``{"credential_key", "credential"}``."""
    configs = [{"function_call_id": call_id, **config} for call_id, config in auth.items()]
    keys = ", ".join(sorted({str(config.get("credential_key")) for config in auth.values()}))
    return agent_message([Part(text=f"This needs your credential {keys}."),
                          data_part({"credentials": configs}, "credential_request")],
                         task_id, context_id, uuid.uuid4().hex)


class _Refused(Exception):
    """A task this executor cannot run (said in its failed status)."""


def _text(text: str, task_id: str, context_id: str) -> Any:
    return agent_message([Part(text=text)], task_id, context_id, uuid.uuid4().hex)
