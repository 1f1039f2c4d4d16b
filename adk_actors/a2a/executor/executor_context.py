"""google-adk's ``ExecutorContext``: what an interceptor of an A2A task is told of
its run (the app, the user and the session it runs in, and the runner)."""

from __future__ import annotations

from typing import Any

__all__ = ["ExecutorContext"]


class ExecutorContext:
    """The app, user and session of a task's run, and the runner running it."""

    def __init__(self, app_name: str, user_id: str, session_id: str, runner: Any) -> None:
        self._app_name = app_name
        self._user_id = user_id
        self._session_id = session_id
        self._runner = runner

    @property
    def app_name(self) -> str:
        return self._app_name

    @property
    def user_id(self) -> str:
        return self._user_id

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def runner(self) -> Any:
        return self._runner
