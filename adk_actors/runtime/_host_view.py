"""What a Runner needs of its host: :class:`HostView`, the methods it calls and nothing more.

``Host`` implements it (its routing section); a test implements it in process (a fake
whose ``system.private()`` yields endpoints answering from Python) to exercise a
Runner's routing and retries without starting actor processes. In the order a request
uses them: the session's home on another member of a cluster (``session_home``, and
``forget_home`` when nobody answered there), else the host's partition for the session
(``partition_for``; ``listed_partition_for`` without asking anyone), whether that
partition's process runs (``partition_alive``), the services found under ``root``
(``tree_process_alive`` for theirs), and Thespian endpoints from ``system``.
"""

from __future__ import annotations

from typing import Any, Protocol

from supervision import SupervisorClient

__all__ = ["HostView"]


class HostView(Protocol):
    @property
    def system(self) -> Any:
        """The Thespian actor system: ``system.private()`` is a context manager yielding
        an endpoint of its own (``ask``, ``listen``, ``tell``)."""

    @property
    def root(self) -> SupervisorClient | None:
        """The host's root supervisor, or None when the host is not running."""

    def partitions(self, refresh: bool = False) -> list[Any]:
        """The session partitions' addresses; :class:`HostError` while they restart,
        :class:`HostStopped` (a HostError) once the host has stopped."""

    def partition_for(self, app_name: str, user_id: str, session_id: str, refresh: bool = False) -> Any:
        """The session's partition (the list asked again with ``refresh``)."""

    def listed_partition_for(self, app_name: str, user_id: str, session_id: str) -> Any:
        """The session's partition as last listed, asking nobody; None when not known."""

    def partition_alive(self, address: Any) -> bool | None:
        """Whether the partition at ``address`` runs, from its process; None: cannot tell."""

    def tree_process_alive(self, pid: int | None) -> bool | None:
        """Whether process ``pid`` of the host's tree runs; None: cannot tell."""

    def session_home(self, app_name: str, user_id: str, session_id: str) -> Any | None:
        """Another cluster member's ``sessions`` supervisor when the session lives there."""

    def forget_home(self, address: Any) -> None:
        """A request sent to ``address`` (a ``session_home``) found nobody there."""

    def is_member_sessions(self, address: Any) -> bool:
        """Whether ``address`` is another member's ``sessions`` supervisor."""
