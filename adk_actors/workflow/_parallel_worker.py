"""google-adk 2.x's parallel worker: a node that runs the node it wraps once per item
of its input list, concurrently, and gives the list of their outputs, in input order
(``node(fn, parallel_worker=True, max_parallel_workers=N)``, see ``_node``).

In order, for one run: a Content input (the user's message, right after START) is
unwrapped as google-adk does for a fan-out (its text; parsed as JSON when it is JSON,
kept as text when the wrapped function's ``node_input`` is a ``str`` and the JSON is
not a list; kept whole when that annotation takes Content, or when a part has no
text); an input that is not a list becomes a list of that one input; an empty list
gives ``[]`` at once. Then each item runs as a child node run (``ctx.run_node``, on a
branch of its own: path ``<worker path>/<name>@<i>``, branch ``<branch>.<name>@<i>``),
at most ``max_parallel_workers`` at once (None: all), started in input order, each
committing its own events (its output, the state it wrote, or its error). The first
item that fails (in input order among those that end together) stops the others
(they are cancelled and awaited) and fails the worker with its error, without an
error event of the worker's own (the item made one). Once all have given an output,
the worker's output is their list.

The wrapped node's function may run in processes (``processes=True``, see
``_processes``): then the items run on several cores.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from pydantic import Field, PrivateAttr

from .._types import Content
from ._errors import WorkflowConfigurationError
from ._nodes import START, BaseNode, FunctionNode, as_node

__all__ = ["REPORTED", "_ParallelWorker"]

#: Set on an exception whose error event a child node run already committed: the node
#: that fails with it makes no error event of its own.
REPORTED = "_adk_actors_reported"


def _text(content: Content) -> str:
    return "".join(part.text or "" for part in content.parts)


def _takes(annotation: Any, kind: type) -> bool:
    if annotation is kind:
        return True
    return any(_takes(arg, kind) for arg in getattr(annotation, "__args__", ()) or ())


def _expects_str(annotation: Any) -> bool:
    """Is ``annotation`` str (or a union of str, None and Content only)?"""
    if annotation is str:
        return True
    args = getattr(annotation, "__args__", None)
    if not args:
        return False
    return any(a is str for a in args) and all(
        a is str or a is type(None) or (isinstance(a, type) and issubclass(a, Content)) for a in args)


def unwrap_content(content: Content, annotation: Any) -> Any:
    """A Content input of a parallel worker as its list of items (see the module)."""
    if annotation not in (None, Any, object) and _takes(annotation, Content):
        return content
    if not content.parts or any(part.text is None for part in content.parts):
        return content
    text = _text(content)
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    if not isinstance(parsed, list) and _expects_str(annotation):
        return text
    return parsed


class _ParallelWorker(BaseNode):
    """Runs ``node`` once per item of its input list (see the module). Its name is the
    wrapped node's; it runs again on resume (``rerun_on_resume`` True, as google-adk's),
    its items that had given an output not run again (see ``_run``)."""

    max_parallel_workers: int | None = Field(default=None)

    _node: BaseNode = PrivateAttr()

    def __init__(self, *, node: Any, max_parallel_workers: int | None = None, retry_config: Any = None,
                 timeout: float | None = None) -> None:
        """Raises :class:`WorkflowConfigurationError` for START, an agent, or
        ``max_parallel_workers`` < 1."""
        if node == "START" or node is START:
            raise WorkflowConfigurationError("a parallel worker cannot wrap START")
        built = as_node(node)
        if not isinstance(built, BaseNode):
            raise WorkflowConfigurationError(
                f"a parallel worker here wraps function nodes (BaseNodes); {getattr(built, 'name', built)!r} is an "
                f"agent")
        if max_parallel_workers is not None and max_parallel_workers < 1:
            raise WorkflowConfigurationError("max_parallel_workers must be greater than or equal to 1.")
        super().__init__(name=built.name, rerun_on_resume=True, retry_config=retry_config, timeout=timeout)
        self.max_parallel_workers = max_parallel_workers
        self._node = built

    @property
    def node(self) -> BaseNode:
        """The node run once per item."""
        return self._node

    def _annotation(self) -> Any:
        inner = self._node
        return inner._hints.get("node_input") if isinstance(inner, FunctionNode) else None

    async def _run_impl(self, *, ctx: Any, node_input: Any) -> AsyncIterator[Any]:
        if isinstance(node_input, Content):
            node_input = unwrap_content(node_input, self._annotation())
        items = node_input if isinstance(node_input, list) else [node_input]
        if not items:
            yield []
            return
        limit = self.max_parallel_workers or len(items)
        results: list[Any] = [None] * len(items)
        pending: dict[asyncio.Task[Any], int] = {}
        next_item = 0
        try:
            while next_item < len(items) or pending:
                while next_item < len(items) and len(pending) < limit:
                    task = asyncio.create_task(ctx.run_node(self._node, node_input=items[next_item],
                                                            use_sub_branch=True))
                    pending[task] = next_item
                    next_item += 1
                done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                failure: BaseException | None = None
                for task in sorted(done, key=pending.__getitem__):
                    index = pending.pop(task)
                    error = task.exception()
                    if error is not None:
                        failure = failure or error
                    else:
                        results[index] = task.result()
                if failure is not None:
                    raise failure
        finally:
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        yield results
