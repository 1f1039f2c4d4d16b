"""google-adk's ``MultimodalToolResultsPlugin``
(``google.adk.plugins.multimodal_tool_results_plugin``): a function tool may return
parts (a ``Part``, or a list whose first item is one: text, images, files), and the
model sees them, as parts of its next request, beside the tool's response.

When a tool returns (``after_tool_callback``), a result that is not parts is left
alone. Otherwise, by ``retention``:

* ``"next_model_call"`` (the default): the parts wait in the invocation's state
  (``temp:PARTS_RETURNED_BY_TOOLS_ID``, after those other tools of the turn left);
  the next model request (``before_model_callback``) gets them at the end of its last
  content, and the key is emptied;
* ``"session"``: every part waits for the next request as above
  (``temp:multimodal_tool_results_plugin:current_turn_parts``), and the parts that are
  not inline data are also kept, as JSON, under
  ``multimodal_tool_results_plugin:PARTS_RETURNED_BY_TOOLS_ID`` (session state, kept
  across turns; the first tool of an invocation replaces what was kept, later ones
  add to it): every later request gets them again, before the turn's own parts
  (without repeating one of those).

Any other ``retention`` is a ``ValueError``.

Where this engine differs (the tool's response itself): google-adk 2.13's flow moves
media parts (inline data, file data with a URI and a MIME type) out of a tool's
result into the function response's own ``parts``, and serialises what is left
(``{"result": [<the other parts as JSON>]}``). This engine's flow does neither (a
tool's result that holds parts cannot be sent to a model as it is), so this plugin
does the serialising: its ``after_tool_callback`` answers with the result as google-
adk's response carries it (the non-media parts as JSON, under ``result``; ``{}``
when none is left), which ends the after-tool chain there (later plugins' after-tool
hooks do not see that call). The media parts, which google-adk's flow carries in the
function response, are attached here to the next request like the others (in
``"next_model_call"`` retention too), so the model sees them, in another place.
"""

from __future__ import annotations

import threading
from typing import Any, Literal

from .._types import Part
from .base_plugin import BasePlugin

__all__ = ["PARTS_RETURNED_BY_TOOLS_ID", "SESSION_PARTS_RETURNED_BY_TOOLS_ID", "MultimodalToolResultsPlugin"]

#: the parts waiting for the next request (an invocation's state)
PARTS_RETURNED_BY_TOOLS_ID = "temp:PARTS_RETURNED_BY_TOOLS_ID"
#: the parts kept for every later request (the session's state, not ``temp:``: they
#: outlive the invocation)
SESSION_PARTS_RETURNED_BY_TOOLS_ID = "multimodal_tool_results_plugin:PARTS_RETURNED_BY_TOOLS_ID"
_CURRENT_TURN_PARTS_ID = "temp:multimodal_tool_results_plugin:current_turn_parts"
_SESSION_UPDATED_KEY = "temp:multimodal_tool_results_plugin:updated_in_invocation"


def _is_part(value: Any) -> bool:
    """Ours, or google.genai's (anything shaped so, by its class's name)."""
    return isinstance(value, Part) or type(value).__name__ == "Part"


def _is_media(part: Any) -> bool:
    """What google-adk's flow carries in the function response's ``parts``."""
    blob = getattr(part, "inline_data", None)
    if blob is not None and blob.data is not None and blob.mime_type:
        return True
    file = getattr(part, "file_data", None)
    return file is not None and bool(file.file_uri) and bool(file.mime_type)


def _as_response(result: Any) -> dict[str, Any]:
    """The function response google-adk's flow makes of ``result`` (a part, or a list
    of them): the media left out, the rest as JSON under ``result`` (a part's, or the
    list of theirs); ``{}`` when none is left."""
    if _is_part(result):
        return {} if _is_media(result) else {"result": result.model_dump(mode="json", exclude_none=True)}
    rest = [part.model_dump(mode="json", exclude_none=True) if _is_part(part) else part
            for part in result if not _is_media(part)]
    return {"result": rest} if rest else {}


class MultimodalToolResultsPlugin(BasePlugin):
    """Lets function tools return parts the model then sees (see the module).

    The parts of a model step's tool calls are gathered here, per invocation, as
    well as written to the state keys: this engine runs a step's calls each with its
    own view of the state as it was before the step (their changes are merged into
    the step's one event), so a call does not read what another call of the same step
    wrote, where google-adk's calls do."""

    def __init__(self, name: str = "multimodal_tool_results_plugin", *,
                 retention: Literal["next_model_call", "session"] = "next_model_call") -> None:
        if retention not in ("next_model_call", "session"):
            raise ValueError(f"retention must be 'next_model_call' or 'session', got {retention}")
        super().__init__(name)
        self._retention = retention
        self._lock = threading.Lock()
        #: invocation id -> the parts waiting for its next request
        self._waiting: dict[str, list[Any]] = {}
        #: invocation id -> the parts (as JSON) it keeps for the session
        self._kept: dict[str, list[Any]] = {}

    async def after_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                  result: Any) -> dict[str, Any] | None:
        """Keeps returned parts for the next request(s); answers with the response
        google-adk's flow makes of them (see the module); None for any other result."""
        if not (_is_part(result) or (isinstance(result, list) and result and _is_part(result[0]))):
            return None
        parts = [result] if _is_part(result) else list(result)
        state, invocation = tool_context.state, str(tool_context.invocation_id)
        with self._lock:
            waiting = self._waiting.setdefault(invocation, [])
            waiting.extend(parts)
            waiting_now = list(waiting)
            kept_now: list[Any] = []
            if self._retention == "session":
                kept = self._kept.setdefault(invocation, [])
                kept.extend(part.model_dump(mode="json", exclude_none=True) if _is_part(part) else part
                            for part in parts if not (_is_part(part) and part.inline_data is not None))
                kept_now = list(kept)
        if self._retention == "session":
            if kept_now:
                state[_SESSION_UPDATED_KEY] = True
                state[SESSION_PARTS_RETURNED_BY_TOOLS_ID] = kept_now
            state[_CURRENT_TURN_PARTS_ID] = waiting_now
        else:
            state[PARTS_RETURNED_BY_TOOLS_ID] = waiting_now
        return _as_response(result)

    async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
        """Adds the waiting parts (and, kept for the session, the earlier ones) to the
        end of the request's last content (see the module)."""
        if not llm_request.contents:
            return None
        state, invocation = callback_context.state, str(callback_context.invocation_id)
        with self._lock:
            current = self._waiting.pop(invocation, [])
        if self._retention == "session":
            kept = [Part.model_validate(p) if isinstance(p, dict) else p
                    for p in (state.get(SESSION_PARTS_RETURNED_BY_TOOLS_ID) or [])]
            attach = [part for part in kept if part not in current] + current
            if current:
                state[_CURRENT_TURN_PARTS_ID] = []
        else:
            attach = current
            if attach:
                state[PARTS_RETURNED_BY_TOOLS_ID] = []
        if attach:
            last = llm_request.contents[-1]
            last.parts = [*last.parts, *attach]
        return None

    async def after_run_callback(self, *, invocation_context: Any) -> None:
        """The invocation ended: what it gathered is dropped."""
        self._forget(invocation_context)

    async def on_run_error_callback(self, *, invocation_context: Any, error: Exception) -> None:
        self._forget(invocation_context)

    def _forget(self, invocation_context: Any) -> None:
        invocation = str(getattr(invocation_context, "invocation_id", ""))
        with self._lock:
            self._waiting.pop(invocation, None)
            self._kept.pop(invocation, None)
