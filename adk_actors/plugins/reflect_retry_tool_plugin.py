"""google-adk's ``ReflectAndRetryToolPlugin``
(``google.adk.plugins.reflect_retry_tool_plugin``): a tool's failure becomes, for the
model, a structured result that tells it what went wrong and asks it to reflect and try
again; after ``max_retries`` consecutive failures of one tool the error stands.

In order, when a tool raises (``on_tool_error_callback``):

1. a cancelled call (``asyncio.CancelledError``) is not answered;
2. with ``max_retries=0`` nothing is retried: the error is raised again
   (``throw_exception_if_retry_exceeded=True``, the default; the run then ends with
   google-adk's ``RuntimeError``, :class:`adk_actors.plugins.PluginError`, whose
   cause is the tool's exception), or the "retry limit exceeded" result is given;
3. otherwise the tool's failures are counted, per tool name, under the scope's key
   (the invocation's id by default: each user turn starts from 0;
   ``TrackingScope.GLOBAL``: one count for the plugin's life, across turns, users and
   sessions): up to ``max_retries`` the answer is a :class:`ToolFailureResponse`
   (``response_type`` ``ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN``, ``error_type``,
   ``error_details``, ``retry_count``, ``reflection_guidance``) as the tool's result;
   beyond it, as in 2.

When a tool returns (``after_tool_callback``): a result this plugin made passes
untouched; a result :meth:`ReflectAndRetryToolPlugin.extract_error_from_result` calls
an error (none, unless a subclass says so) is handled as in 2-3; any other result
resets that tool's count in its scope. The ``reflection_guidance`` is this project's
wording (it says what google-adk's says: the tool, the error, the arguments, the
attempt out of the limit, what to reconsider); every other field is google-adk's.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pydantic import BaseModel

from ._reflect_retry_utils import (
    GLOBAL_SCOPE_KEY,
    REFLECT_AND_RETRY_RESPONSE_TYPE,
    ScopedFailureTracker,
    TrackingScope,
    resolve_scope_key,
)
from .base_plugin import BasePlugin

__all__ = ["GLOBAL_SCOPE_KEY", "REFLECT_AND_RETRY_RESPONSE_TYPE", "PerToolFailuresCounter",
           "ReflectAndRetryToolPlugin", "ToolFailureResponse", "TrackingScope"]

#: a tool's name -> its consecutive failures (google-adk's alias)
PerToolFailuresCounter = dict[str, int]


class ToolFailureResponse(BaseModel):
    """The result the model is given for a failed tool call (google-adk's fields)."""

    response_type: str = REFLECT_AND_RETRY_RESPONSE_TYPE
    error_type: str = ""
    error_details: str = ""
    retry_count: int = 0
    reflection_guidance: str = ""


def _error_type(error: Any) -> str:
    return type(error).__name__ if isinstance(error, Exception) else "ToolError"


class ReflectAndRetryToolPlugin(BasePlugin):
    """Turns tool failures into reflection guidance for the model, retried up to
    ``max_retries`` consecutive failures per tool in the scope (see the module).

    ``max_retries``: a negative number is a ``ValueError``. ``tracking_scope``: a
    :class:`TrackingScope`. Subclasses may override :meth:`extract_error_from_result`
    (errors in results that did not raise) and ``_get_scope_key`` (their own scope,
    per user or per session)."""

    def __init__(self, name: str = "reflect_retry_tool_plugin", max_retries: int = 3,
                 throw_exception_if_retry_exceeded: bool = True,
                 tracking_scope: TrackingScope = TrackingScope.INVOCATION) -> None:
        super().__init__(name)
        if max_retries < 0:
            raise ValueError("max_retries must be a non-negative integer.")
        self.max_retries = max_retries
        self.throw_exception_if_retry_exceeded = throw_exception_if_retry_exceeded
        self.scope = tracking_scope
        self._tracker = ScopedFailureTracker()
        self._scoped_failure_counters = self._tracker._scoped_failure_counters
        self._lock = self._tracker._lock

    # -- google-adk's hooks -------------------------------------------------------------

    async def after_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                  result: Any) -> dict[str, Any] | None:
        """A result of this plugin passes; an error found in ``result`` is handled as a
        failure; any other result resets the tool's count."""
        if isinstance(result, dict) and result.get("response_type") == REFLECT_AND_RETRY_RESPONSE_TYPE:
            return None
        error = await self.extract_error_from_result(tool=tool, tool_args=tool_args, tool_context=tool_context,
                                                     result=result)
        if error:
            return await self._handle_tool_error(tool, tool_args, tool_context, error)
        await self._reset_failures_for_tool(tool_context, tool.name)
        return None

    async def extract_error_from_result(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                        result: Any) -> Any:
        """The error a successful call's ``result`` carries (``{"status": "error"}``,
        say), to be handled as a failure, or None: override it; by default None."""
        return None

    async def on_tool_error_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                     error: Exception) -> dict[str, Any] | None:
        """A tool raised: guidance for the model, or the error raised again (see the module)."""
        if isinstance(error, asyncio.CancelledError):
            return None
        return await self._handle_tool_error(tool, tool_args, tool_context, error)

    async def after_run_callback(self, *, invocation_context: Any) -> None:
        """The invocation ended: its per-invocation counts are dropped (they can never
        be read again), so a long-lived plugin does not grow with every turn."""
        await self._forget_invocation(invocation_context)

    async def on_run_error_callback(self, *, invocation_context: Any, error: Exception) -> None:
        await self._forget_invocation(invocation_context)

    # -- google-adk's overridable steps ------------------------------------------------------

    def _get_scope_key(self, tool_context: Any) -> str:
        """The key a failure of this call is counted under (see :class:`TrackingScope`)."""
        return resolve_scope_key(self.scope, tool_context.invocation_id)

    async def _handle_tool_error(self, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                 error: Any) -> dict[str, Any] | None:
        if self.max_retries == 0:
            return self._give_up(tool, tool_args, error)
        failures = await self._tracker.increment(self._get_scope_key(tool_context), tool.name)
        if failures <= self.max_retries:
            return self._create_tool_reflection_response(tool, tool_args, error, failures)
        return self._give_up(tool, tool_args, error)

    async def _reset_failures_for_tool(self, tool_context: Any, tool_name: str) -> None:
        await self._tracker.reset(self._get_scope_key(tool_context), tool_name)

    def _ensure_exception(self, error: Any) -> Exception:
        return error if isinstance(error, Exception) else Exception(str(error))

    def _format_error_details(self, error: Any) -> str:
        return f"{type(error).__name__}: {error}" if isinstance(error, Exception) else str(error)

    def _create_tool_reflection_response(self, tool: Any, tool_args: dict[str, Any], error: Any,
                                         retry_count: int) -> dict[str, Any]:
        """The result the model gets for failure ``retry_count`` (of ``max_retries``)."""
        guidance = "\n".join([
            f"Calling the tool `{tool.name}` failed (attempt {retry_count} of {self.max_retries} allowed retries).",
            "",
            "Error:",
            "```",
            self._format_error_details(error),
            "```",
            "",
            "Arguments of that call:",
            "```json",
            json.dumps(tool_args, indent=2, default=str),
            "```",
            "",
            "Before you try again, work out why it failed; do not make the same call unchanged. Check:",
            "- the arguments: a wrong, malformed or missing one, against the tool's schema;",
            "- what the call needs first: a step before it that failed or did not run;",
            "- the tool: whether another tool, or another order of steps, does the job;",
            "- the task: whether smaller steps would get there;",
            "- the name: when the error says there is no such tool, call only the tools you have.",
            "",
            "Then make a corrected call, or take another way.",
        ])
        return ToolFailureResponse(error_type=_error_type(error), error_details=str(error), retry_count=retry_count,
                                   reflection_guidance=guidance).model_dump(mode="json")

    def _get_tool_retry_exceed_msg(self, tool: Any, tool_args: dict[str, Any], error: Any) -> dict[str, Any]:
        """The result the model gets once the tool has failed beyond the limit."""
        guidance = "\n".join([
            f"The tool `{tool.name}` has failed {self.max_retries} times in a row: no more retries are allowed.",
            "",
            "Last error:",
            "```",
            self._format_error_details(error),
            "```",
            "",
            "Last arguments:",
            "```json",
            json.dumps(tool_args, indent=2, default=str),
            "```",
            "",
            f"Do not call `{tool.name}` again for this task. Take another way: other tools, or tell the user "
            "that the task cannot be done.",
        ])
        return ToolFailureResponse(error_type=_error_type(error), error_details=str(error),
                                   retry_count=self.max_retries, reflection_guidance=guidance).model_dump(mode="json")

    # -- helpers ---------------------------------------------------------------------------

    def _give_up(self, tool: Any, tool_args: dict[str, Any], error: Any) -> dict[str, Any]:
        """No more retries: the error raised again, or the "limit exceeded" result."""
        if self.throw_exception_if_retry_exceeded:
            raise self._ensure_exception(error)
        return self._get_tool_retry_exceed_msg(tool, tool_args, error)

    async def _forget_invocation(self, invocation_context: Any) -> None:
        if self.scope is not TrackingScope.INVOCATION:
            return
        invocation_id = getattr(invocation_context, "invocation_id", None)
        with self._lock:
            self._scoped_failure_counters.pop(str(invocation_id), None)
