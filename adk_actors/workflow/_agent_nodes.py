"""How a graph runs its agent nodes: :class:`AgentNodes`, which the graph run
(``_run``) inherits, and the :class:`Frame` a nested workflow is run in.

An agent node (an agent, or a nested workflow) runs through the engine with its
events stamped with the node's path. A nested workflow is given a :class:`Frame`
(its input, its path, the paths its output also stands for) in a context variable
that its own run takes (:func:`take_frame`); an LlmAgent sees its input as the user's
message and its own events of the node run (``NodeSession``); one of ``mode="chat"``
talks over the session's history and gives no output; one of ``mode="task"`` runs
with the ``finish_task`` tool until a call of it is accepted (:meth:`AgentNodes.run_task_node`).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from .._types import Event, NodeInfo
from ._graph_record import Outcome, recorded_output
from ._node_session import NodeSession, TaskSession, as_user_content
from ._task import FinishTaskTool, finish_call_args, finished, task_output

__all__ = ["FRAME", "AgentNodes", "Frame", "is_chat_agent", "is_task_agent", "take_frame"]


@dataclass
class Frame:
    """How a workflow is run as a node: its input, its node path, the node paths its
    output also stands for; its output, once it has one."""

    workflow: Any
    node_input: Any
    path: str
    output_for: list[str]
    output: Any = None
    outputs: int = 0
    root: bool = False
    waiting: bool = False  # a node of it (or of a graph inside it) waits for input


FRAME: contextvars.ContextVar[Frame | None] = contextvars.ContextVar("adk_workflow_frame", default=None)


def take_frame(workflow: Any, ctx: Any) -> Frame:
    """The frame a parent workflow set for ``workflow``; a root workflow's own (its
    input the user's message, its path ``<name>@1``) when none did."""
    frame = FRAME.get()
    if frame is not None and frame.workflow is workflow:
        FRAME.set(None)
        return frame
    path = f"{workflow.name}@1"
    return Frame(workflow=workflow, node_input=ctx.user_content, path=path, output_for=[path], root=True)


def is_chat_agent(agent: Any) -> bool:
    """Is ``agent`` an LlmAgent node of ``mode="chat"`` (see ``run_agent_node``)?"""
    return not getattr(agent, "_is_workflow", False) and str(getattr(agent, "mode", None) or "") == "chat"


def is_task_agent(agent: Any) -> bool:
    """Is ``agent`` an LlmAgent node of ``mode="task"`` (see ``run_task_node``)?"""
    return not getattr(agent, "_is_workflow", False) and str(getattr(agent, "mode", None) or "") == "task"


class AgentNodes:
    """The agent-node side of a graph run (see the module): it reads the run's
    ``frame`` and hands events on with its ``emit``, stamped for ``output_for``."""

    frame: Frame

    async def emit(self, event: Event) -> None:
        raise NotImplementedError

    def output_for(self, path: str, terminal: bool) -> list[str]:
        raise NotImplementedError

    async def run_agent_node(self, agent: Any, ctx: Any, path: str, node_input: Any, terminal: bool,
                             record: Any = None) -> Outcome:
        """An agent (or a nested workflow) run through the engine; its events stamped
        with the node's path, its answer its output. ``record``: on resume, the replay of
        this node run's committed events, which the engine meets first. An LlmAgent of
        ``mode="chat"`` runs as a chat agent does, over the session's history (its
        input is the user's message: it follows START only, see ``_graph``), and its
        answer is no output: it waits for one (``waits_for_output``), so nothing after it
        runs, as in google-adk."""
        if is_task_agent(agent):
            return await self.run_task_node(agent, ctx, path, node_input, terminal, record)
        outcome = Outcome()
        is_workflow = getattr(agent, "_is_workflow", False)
        chat = is_chat_agent(agent)
        if is_workflow:
            child = Frame(workflow=agent, node_input=node_input, path=path,
                          output_for=[path, *self.frame.output_for] if terminal else [path])
            FRAME.set(child)
            agent_ctx = ctx
        elif chat:
            agent_ctx = ctx  # a chat agent talks over the session's history, its own input the user's message
        else:
            message = as_user_content(node_input)
            first = Event(author="user", invocation_id=ctx.invocation_id, content=message, branch=ctx.branch)
            history = "include_contents" in getattr(agent, "model_fields_set", ()) and str(
                getattr(agent, "include_contents", "")) == "default"
            agent_ctx = dataclasses.replace(
                ctx, session=NodeSession(ctx.session, path, first, ctx.invocation_id, history), user_content=message)
        if record is not None:
            agent_ctx = dataclasses.replace(agent_ctx, replay=record)  # the engine replays its committed steps
        try:
            async for event in agent.run(agent_ctx):
                if event.node_info is None:
                    info = NodeInfo(path=path)
                    update: dict[str, Any] = {}
                    if not is_workflow and not chat and self._answer(agent, event):
                        outcome.output, outcome.has_output = self._agent_output(agent, event), True
                        info = info.model_copy(update={"output_for": self.output_for(path, terminal)})
                        if getattr(agent, "output_schema", None) is not None:
                            update["output"] = outcome.output  # the structured answer as the event's output
                        else:
                            info = info.model_copy(update={"message_as_output": True})
                    event = event.model_copy(update={**update, "node_info": info})
                elif not is_workflow and path in (event.node_info.output_for or []):
                    outcome.output, outcome.has_output = recorded_output(event), True  # a replayed answer
                await self.emit(event)
        finally:
            if is_workflow:
                FRAME.set(None)
        if is_workflow and child.outputs:
            outcome.output, outcome.has_output = child.output, True
        if is_workflow and child.waiting:
            outcome.waiting = True
        return outcome

    async def run_task_node(self, agent: Any, ctx: Any, path: str, node_input: Any, terminal: bool,
                            record: Any = None) -> Outcome:
        """An LlmAgent of ``mode="task"`` (google-adk's task agent as a node), in order:
        it runs with the ``finish_task`` tool added to its tools (``_task``), its
        ``output_schema`` and ``output_key`` kept for that tool and this node (a task
        agent's text answers are neither parsed nor stored), over its task scope
        (:class:`TaskSession`: its input, then its own events and the user's answers).
        Its events are stamped with the node's path. A ``finish_task`` call is
        remembered; the response that accepts it becomes the node's output
        (:func:`task_output`, on that event, with ``output_key`` set in its state
        delta), and the agent's run is closed there: the model is not asked again. An
        answer in text (a question to the user) gives no output: the node waits
        (``waits_for_output``) and the user's next message runs it again. On resume,
        ``record`` is this node run's committed events, which the engine meets first."""
        outcome = Outcome()
        tool = FinishTaskTool(getattr(agent, "output_schema", None), agent.name)
        output_key = getattr(agent, "output_key", None)
        runner = agent.model_copy(update={"tools": [*agent.tools, tool], "output_schema": None, "output_key": None})
        message = as_user_content(node_input)
        first = Event(author="user", invocation_id=ctx.invocation_id, content=message, branch=ctx.branch)
        agent_ctx = dataclasses.replace(ctx, session=TaskSession(ctx.session, path, first, ctx.invocation_id),
                                        user_content=message)
        if record is not None:
            agent_ctx = dataclasses.replace(agent_ctx, replay=record)
        pending: dict[str, Any] | None = None
        async with contextlib.aclosing(runner.run(agent_ctx)) as events:
            async for event in events:
                if event.node_info is not None and path in (event.node_info.output_for or []):
                    outcome.output, outcome.has_output = recorded_output(event), True  # a replayed end
                    await self.emit(event)
                    break
                called = finish_call_args(event)  # live, or replayed from the record
                if called is not None:
                    pending = called
                if event.node_info is None:
                    update: dict[str, Any] = {"node_info": NodeInfo(path=path)}
                    if called is None and pending is not None and finished(event):
                        output = task_output(tool, pending)
                        outcome.output, outcome.has_output = output, True
                        update["node_info"] = NodeInfo(path=path, output_for=self.output_for(path, terminal))
                        update["output"] = output
                        if output_key:
                            update["actions"] = event.actions.model_copy(update={
                                "state_delta": {**event.actions.state_delta, output_key: output}})
                    event = event.model_copy(update=update)
                await self.emit(event)
                if outcome.has_output:
                    break
        return outcome

    @staticmethod
    def _answer(agent: Any, event: Event) -> bool:
        return (event.author == agent.name and not event.partial and event.content is not None
                and any(p.text for p in event.content.parts) and event.is_final_response())

    @staticmethod
    def _agent_output(agent: Any, event: Event) -> Any:
        text = "".join(p.text or "" for p in event.content.parts if not p.thought) if event.content else ""
        if getattr(agent, "output_schema", None) is not None:
            try:
                return json.loads(text)
            except ValueError:
                return text
        return text
