"""When a run actor's worker lets go of the events it holds (``_run.release_due``), on
a made-up CPU clock: a fast turn's answer waits for its end, a worker that computes
on does not keep its events."""

from adk_actors.runtime._run import FINAL_WINDOW, HOLD_LIMIT, release_due


def test_a_loop_about_to_wait_releases_at_once() -> None:
    assert release_due(None, 1.0, first=1.0, last=1.0)
    assert release_due(0.01, 1.0, first=1.0, last=1.0)


def test_a_loop_that_goes_on_keeps_the_events_until_the_window_since_the_last_one_is_used() -> None:
    assert not release_due(0, 1.0 + FINAL_WINDOW * 0.9, first=1.0, last=1.0)
    assert release_due(0, 1.0 + FINAL_WINDOW, first=1.0, last=1.0)


def test_cpu_used_before_the_last_event_does_not_count() -> None:
    # The user's message at 1.0, the answer 5 ms of CPU later: the answer still waits.
    answer = 1.0 + 0.005
    assert not release_due(0, answer + FINAL_WINDOW / 2, first=1.0, last=answer)


def test_events_that_keep_coming_are_held_at_most_the_hold_limit() -> None:
    last = 1.0 + HOLD_LIMIT - FINAL_WINDOW / 2
    assert not release_due(0, 1.0 + HOLD_LIMIT * 0.99, first=1.0, last=last)
    assert release_due(0, 1.0 + HOLD_LIMIT, first=1.0, last=last)
