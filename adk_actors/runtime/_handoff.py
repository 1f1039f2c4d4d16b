"""Handing a session's history to a run actor through fork, not through a socket.

Every Thespian actor is forked from its parent. A session actor stores its current
history here just before it creates a run actor; the child, forked at that moment,
finds it in its own (copy-on-write) memory. So a run never pickles thousands of
events, and a spare run actor forked after a turn already holds that turn.
"""

from __future__ import annotations

from typing import Any

SNAPSHOT: dict[str, Any] = {}
