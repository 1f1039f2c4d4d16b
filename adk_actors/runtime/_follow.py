"""Following a run the host resumes on its own: one run to its caller, whatever the crashes.

A run whose partition or worker died may be resumed by the host itself
(``App.resume_interrupted``): its caller gets ``RunFailed`` naming the run that
resumes it (``resumed_as``). :func:`followed` then, in order: yields the run's events,
each committed event once (:class:`~._run_stream.Seen`); at such a failure, joins the
resuming run (``FollowRun``, asking for the committed events after the last one given)
and goes on yielding, up to ``MAX_FOLLOWS`` times; a follow the host refuses
(``invalid_request``: the run was not resumed after all, its session used meanwhile,
or the resume failed) raises the failure that named it. A ``HostGone`` failure
that names no run (the restarted partition resumed the run but its report was not
seen within the orphan grace) is first checked with ``resumed_by(run_id)``: the
session's last run when it resumes the run (``RunInfo.resumes``), which is then
followed as if the failure had named it. Any other failure, or one when resumes are
not followed, is raised as it came.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from .._exceptions import InvalidRequestError, RunFailedError
from .._types import Event
from ..messages import FollowRun, RunRequest
from ._run_stream import Seen

__all__ = ["MAX_FOLLOWS", "follow_request", "followed", "named_resume"]

#: The most resumes of one run a Runner follows (the host bounds them itself: ``App.resume_interrupted``).
MAX_FOLLOWS = 100


def follow_request(request: RunRequest, error: RunFailedError, seen: Seen) -> FollowRun:
    """The request that joins the run ``error`` names, after the events ``seen`` gave."""
    return FollowRun(request.app_name, request.user_id, request.session_id, run_id=error.resumed_as,
                     after=seen.last)


def named_resume(error: RunFailedError, resumed_by: Callable[[str], str] | None) -> RunFailedError:
    """``error``, naming the run that resumes its run when it is a ``HostGone`` failure
    naming none and ``resumed_by`` finds one; else ``error`` as it is."""
    if error.resumed_as or error.error_type != "HostGone" or resumed_by is None:
        return error
    resumed = resumed_by(error.run_id)
    if not resumed:
        return error
    return RunFailedError(error.run_id, error.reason, error.error_type, error.detail, resumed)


def followed(run: Callable[[RunRequest, bool], Iterator[Event]], request: RunRequest, *, follows: bool,
             direct: bool = True, seen: Seen | None = None,
             failure: RunFailedError | None = None,
             resumed_by: Callable[[str], str] | None = None) -> Iterator[Event]:
    """``run(request, direct)``'s events, following resumes (see the module) when
    ``follows``. ``failure``: ``request`` follows the run that failure named already;
    ``direct``: whether the first run may be sent straight to its partition (the
    follows always may)."""
    seen = seen if seen is not None else Seen()
    for _ in range(MAX_FOLLOWS + 1):
        try:
            for event in run(request, direct):
                if seen.first_time(event):
                    yield event
            return
        except InvalidRequestError:
            if failure is None:
                raise
            raise failure from None
        except RunFailedError as raised:
            error = named_resume(raised, resumed_by) if follows else raised
            if not (follows and error.resumed_as):
                raise
            failure, request, direct = error, follow_request(request, error, seen), True
    assert failure is not None
    raise failure
