"""The values a server's handlers return and receive: the sentinels ``handle_call``
and ``init`` may return (:data:`NO_REPLY`, :data:`FORWARDED`, :data:`IGNORE`), the
:class:`CallerRef` a deferred reply is sent with, :func:`checked_deadline` (a call's
deadline as it came, or :class:`BadRequest`), and :func:`describe`, the one-line form
of an exception that crash reasons and refused starts carry.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

from ._exceptions import BadRequest

__all__ = ["FORWARDED", "IGNORE", "NO_REPLY", "CallerRef", "checked_deadline", "describe"]


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
    caller stops waiting (``Call.deadline``: epoch seconds of its wall clock, a number
    once the server took the call: :func:`checked_deadline`), or None."""

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


def checked_deadline(deadline: object) -> float | None:
    """A call's deadline as it came (``Call.deadline``), once it is one: None, or a
    number of epoch seconds (an int or a float, an infinity too: never, or already
    passed). :class:`BadRequest` for anything else, which no comparison with a clock
    can read: a bool, a string, NaN (neither before nor after any time), any other type."""
    if deadline is None:
        return None
    if isinstance(deadline, bool) or not isinstance(deadline, int | float):
        raise BadRequest(f"a call's deadline is epoch seconds (a number) or None, not a {type(deadline).__name__}")
    if isinstance(deadline, float) and math.isnan(deadline):
        raise BadRequest("a call's deadline is epoch seconds (a number) or None, not NaN")
    return deadline


def describe(exc: BaseException) -> str:
    """``exc`` in one line: its type's name, then its text if it has any."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
