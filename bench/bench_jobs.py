"""The function bench/jobs.py enqueues: a job that does nothing."""


def noop() -> None:
    return None
