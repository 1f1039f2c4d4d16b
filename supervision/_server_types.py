"""The values a server's handlers return and receive: the sentinels ``handle_call``
and ``init`` may return (:data:`NO_REPLY`, :data:`FORWARDED`, :data:`IGNORE`), the
:class:`CallerRef` a deferred reply is sent with, and :func:`describe`, the one-line
form of an exception that crash reasons and refused starts carry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

__all__ = ["FORWARDED", "IGNORE", "NO_REPLY", "CallerRef", "describe"]


class _Sentinel:
    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


#: Return from ``handle_call`` to reply later with :meth:`GenServer.reply`.
NO_REPLY: Final = _Sentinel("NO_REPLY")
#: Return from ``handle_call`` when the call was forwarded to another server that replies.
FORWARDED: Final = _Sentinel("FORWARDED")
#: Return from ``init`` to not start (the supervisor keeps the spec, OTP's ``ignore``).
IGNORE: Final = _Sentinel("IGNORE")


@dataclass(frozen=True)
class CallerRef:
    """Where (and under which ref) to send the reply of one call; ``watch``: the caller
    watches whoever has the call (:meth:`GenServer.hand_over`); ``deadline``: when the
    caller stops waiting (``Call.deadline``: epoch seconds of its wall clock), or None."""

    address: Any
    ref: str
    watch: bool = False
    deadline: float | None = None

    def gave_up(self, now: float, margin: float = 0.0) -> bool:
        """Has the caller stopped waiting, or will it within ``margin`` seconds? ``now``
        is this process's wall clock (``time.time()``): the caller's deadline is its
        own wall time, so a clock behind the caller's by more than ``margin`` can take
        a call its caller gave up on (on one machine the clocks are one). False for a
        call with no deadline."""
        return self.deadline is not None and now + margin >= self.deadline


def describe(exc: BaseException) -> str:
    """``exc`` in one line: its type's name, then its text if it has any."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
