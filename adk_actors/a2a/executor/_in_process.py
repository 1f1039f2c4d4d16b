"""An in-process Runner (:class:`adk_actors.runners.Runner`, e.g. ``InMemoryRunner``)
seen as the host Runner that :class:`adk_actors.a2a.RunnerExecutor` drives, so that an
A2A task runs as a turn of the agent in this process (google-adk's ``to_a2a`` and
``A2aAgentExecutor`` run their agent so, on an in-memory runner by default).

What a host has and a process does not: approvals by a human over the API, runs
resumed after a crash, a credential store the A2A client writes to. Here a run has
none of them: there is nothing to approve or resume, and a client's credential is
refused (the task ends failed, saying so).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ..._exceptions import AdkError, RunFailedError
from ..._types import Content, Event
from ...runners import Runner

__all__ = ["InProcessRuns", "as_task_runner"]


class InProcessRuns:
    """The host Runner's calls that :class:`RunnerExecutor` makes, on ``runner``."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    @property
    def app_name(self) -> str:
        return self.runner.app_name

    async def run_async(self, user_id: str, session_id: str, message: Content, *, run_id: str,
                        create_session: bool = False) -> AsyncIterator[Event]:
        """One turn of the agent, in order: the session is read from the runner's
        session service, and made (with that id, empty state) when missing and
        ``create_session``; then the runner's events are yielded as they come. What
        the turn raises other than an :class:`AdkError` (a model's or a tool's error)
        is raised as :class:`RunFailedError` (reason ``error``, its type and words)."""
        service = self.runner.session_service
        try:
            found = await service.get_session(app_name=self.app_name, user_id=user_id, session_id=session_id)
            if found is None and create_session:
                await service.create_session(app_name=self.app_name, user_id=user_id, state={},
                                             session_id=session_id)
            async for event in self.runner.run_async(user_id=user_id, session_id=session_id,
                                                     new_message=message):
                yield event
        except AdkError:
            raise
        except Exception as error:
            raise RunFailedError(run_id, "error", type(error).__name__, str(error)) from error

    def approvals(self, user_id: str, status: str) -> list[Any]:
        """None: a run in this process waits for no approval given over the API."""
        return []

    def last_run(self, user_id: str, session_id: str) -> None:
        """None: no run here is resumed after a crash."""
        return None

    def cancel(self, run_id: str, *, user_id: str | None = None, session_id: str | None = None) -> None:
        """Nothing to do: the run is the reading of its events, which the task's
        cancel stopped already."""

    def resume_async(self, user_id: str, session_id: str, run_id: str, **_: Any) -> AsyncIterator[Event]:
        raise AdkError("a run in this process is not resumed")

    def put_credential(self, user_id: str, key: str, credential: Any) -> None:
        raise AdkError("an agent run in this process takes no credential from its A2A client")

    def approve(self, approval_id: str) -> None:
        raise AdkError("a run in this process waits for no approval")

    def deny(self, approval_id: str, reason: str = "") -> None:
        raise AdkError("a run in this process waits for no approval")


def as_task_runner(runner: Any) -> Any:
    """What :class:`RunnerExecutor` runs tasks on: an in-process Runner adapted
    (:class:`InProcessRuns`); a host's Runner (:class:`adk_actors.runtime.Runner`) as
    it is."""
    return InProcessRuns(runner) if isinstance(runner, Runner) else runner
