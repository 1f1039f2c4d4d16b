"""google-adk's ``ReadonlyContext``: what an instruction provider (a callable
``instruction``) is given. Here it is the compiler's context; this protocol names what
google-adk's agent files read of it, for their type hints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

__all__ = ["ReadonlyContext"]


class ReadonlyContext(Protocol):
    @property
    def state(self) -> Mapping[str, Any]: ...
