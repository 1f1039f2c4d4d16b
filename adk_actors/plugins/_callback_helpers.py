"""What google-adk's recording plugins share (its ``plugins._callback_helpers``): the
``tool_result_classifier`` a user gives them, and the rules that tell a tool result
reporting a failure from one that completed.

A tool result reports a failure, checked in this order, when:

1. it is a ``ReflectAndRetryToolPlugin`` answer (``response_type``
   ``ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN``): the tool raised; the message is its
   ``error_details``, else its ``error_type``, else a fixed text;
2. the classifier (when given) says so: a :class:`ToolResultClassification` with status
   ``"ERROR"`` (its ``error_message``, or a fixed text); status ``"OK"`` says it
   completed, whatever rule 3 would say; None leaves it to rule 3. A classifier that
   raises, returns an awaitable (closed or cancelled, never awaited) or anything else is
   skipped with a warning that names only the tool;
3. it is a dict (or an MCP ``CallToolResult``) whose ``isError`` or ``is_error`` is
   exactly True: a fixed text.

Only those entries of a result are read, and none of the result's own methods run.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import sys
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ._reflect_retry_utils import REFLECT_AND_RETRY_RESPONSE_TYPE

__all__ = ["ToolResultClassification", "ToolResultClassifier", "classify_tool_result_error",
           "validate_tool_result_classifier"]

logger = logging.getLogger("adk_actors.plugins")

_RETRY_ANSWER = "Tool raised an error that ReflectAndRetryToolPlugin handled."
_MCP_ERROR = "Tool returned an MCP result with isError=true."
_CLASSIFIED_ERROR = "tool_result_classifier classified the tool result as an error."
_READ = frozenset({"response_type", "error_details", "error_type", "isError", "is_error"})


def _plain_str(value: Any) -> str | None:
    """``value`` as an exact ``str`` (none of a subclass's methods run), or None."""
    return str.__str__(value) if type.__subclasscheck__(str, type(value)) else None


@dataclass(frozen=True)
class ToolResultClassification:
    """A classifier's verdict on one tool result: ``status`` ``"ERROR"`` (recorded as a
    tool error, with ``error_message``) or ``"OK"`` (recorded as completed). Anything
    else, or an ``error_message`` that is not a str or None, is a ``ValueError``."""

    status: Literal["OK", "ERROR"]
    error_message: str | None = None

    def __post_init__(self) -> None:
        if _plain_str(self.status) not in ("OK", "ERROR"):
            raise ValueError("status must be 'OK' or 'ERROR'.")
        if self.error_message is not None and _plain_str(self.error_message) is None:
            raise ValueError("error_message must be a str or None.")


class ToolResultClassifier(Protocol):
    """A sync function given ``after_tool_callback``'s keywords (``tool``,
    ``tool_args``, ``tool_context``, ``result``) that returns a
    :class:`ToolResultClassification`, or None to leave the result to the built-in rule."""

    def __call__(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                 result: Any) -> ToolResultClassification | None: ...


def validate_tool_result_classifier(classifier: Any) -> None:
    """A ``ValueError`` unless ``classifier`` is None or a sync callable whose signature
    takes the four keywords (an async one, or one whose signature cannot be read, is
    refused: it is called without being awaited)."""
    if classifier is None:
        return
    if not callable(classifier):
        raise ValueError(f"tool_result_classifier must be callable, got {type(classifier).__name__}.")
    inner = classifier
    while isinstance(inner, functools.partial):
        inner = inner.func
    # a callable object's own method, and a partial's wrapped one, count too
    candidates = (classifier, inner, *(inspect.getattr_static(type(c), "__call__", None) for c in (classifier, inner)))
    if any(inspect.iscoroutinefunction(f) or inspect.isasyncgenfunction(f) for f in candidates if f is not None):
        raise ValueError("tool_result_classifier must be synchronous: it is called, never awaited.")
    try:
        signature = inspect.signature(classifier)
    except (TypeError, ValueError) as exc:
        raise ValueError("tool_result_classifier must have a signature inspect can read (wrap it in a function "
                         "that takes tool, tool_args, tool_context and result).") from exc
    try:
        signature.bind(tool=None, tool_args=None, tool_context=None, result=None)
    except TypeError as exc:
        raise ValueError("tool_result_classifier must accept the keyword arguments tool, tool_args, tool_context "
                         "and result.") from exc


def _fields(result: Any) -> dict[str, Any]:
    """The entries of ``result`` the rules read (see the module)."""
    entries: Any = result if type.__subclasscheck__(dict, type(result)) else None
    if entries is None:
        for module_name in ("mcp.types", "mcp_types"):
            model = getattr(sys.modules.get(module_name), "CallToolResult", None)
            if isinstance(model, type) and type.__subclasscheck__(model, type(result)):
                entries = object.__getattribute__(result, "__dict__")
                break
    if type(entries) is not dict:
        return {}
    return {key: value for key, value in dict.items(entries) if type(key) is str and key in _READ}


def _retry_answer(fields: dict[str, Any]) -> str | None:
    if _plain_str(fields.get("response_type")) != REFLECT_AND_RETRY_RESPONSE_TYPE:
        return None
    for key in ("error_details", "error_type"):
        text = _plain_str(fields.get(key))
        if text:
            return text
    return _RETRY_ANSWER


def _mcp_flag(fields: dict[str, Any]) -> str | None:
    return _MCP_ERROR if fields.get("isError") is True or fields.get("is_error") is True else None


def _verdict(classification: Any) -> str | None:
    """The message a verdict asks to record, None for "OK"; a TypeError/ValueError for
    anything unreadable."""
    if not isinstance(classification, ToolResultClassification):
        raise TypeError("not a ToolResultClassification")
    status = _plain_str(classification.status)
    if status == "OK":
        return None
    if status != "ERROR":
        raise ValueError("status is not OK or ERROR")
    if classification.error_message is None:
        return _CLASSIFIED_ERROR
    text = _plain_str(classification.error_message)
    if text is None:
        raise TypeError("error_message is not a str")
    return text or _CLASSIFIED_ERROR


def _release(awaitable: Any) -> None:
    """An awaitable a classifier returned, let go without running it."""
    if inspect.iscoroutine(awaitable) or inspect.isgenerator(awaitable):
        awaitable.close()
    elif asyncio.isfuture(awaitable):
        def retrieved(future: Any) -> None:
            if not future.cancelled():
                future.exception()

        awaitable.add_done_callback(retrieved)
        awaitable.cancel()


def classify_tool_result_error(*, tool: Any, tool_args: dict[str, Any], tool_context: Any, result: Any,
                               tool_result_classifier: ToolResultClassifier | None = None,
                               log: logging.Logger = logger) -> str | None:
    """The error message to record for ``result``, or None when the call completed
    (the rules of the module, in order)."""
    fields = _fields(result)
    try:
        message = _retry_answer(fields)
    except Exception:
        message = None
    if message is not None:
        return message
    if tool_result_classifier is not None:
        skipped = False
        try:
            classification: Any = tool_result_classifier(tool=tool, tool_args=tool_args, tool_context=tool_context,
                                                          result=result)
            if inspect.isawaitable(classification):
                _release(classification)
                skipped = True
            elif classification is not None:
                return _verdict(classification)
        except Exception:
            skipped = True
        if skipped:
            log.warning("tool_result_classifier gave no usable verdict for tool %s; the built-in rule applies.",
                        getattr(tool, "name", "?"))
    try:
        return _mcp_flag(fields)
    except Exception:
        return None
