"""The evals' typed error."""

from __future__ import annotations

from .._exceptions import InvalidRequestError

__all__ = ["EvalError"]


class EvalError(InvalidRequestError):
    """An eval request that cannot be carried out as asked (an unknown metric, a bad id,
    a criterion or config that is not valid)."""
