"""google-adk's ``DebugLoggingPlugin`` (``google.adk.plugins.debug_logging_plugin``):
every step of each invocation recorded, and written to a YAML file when it ends.

From ``before_run_callback`` on, each hook adds an entry (``timestamp``,
``entry_type``, ``invocation_id``, ``agent_name``, ``data``) to the invocation's
record: ``invocation_start``, ``agent_start`` / ``agent_end``, ``llm_request`` (model,
contents, tool names, the system instruction, or only its length with
``include_system_instruction=False``, and the generation settings), ``llm_response``,
``llm_error``, ``tool_call``, ``tool_response``, ``tool_error`` (a tool that raised, or
a result that reports a failure: a ``ReflectAndRetryToolPlugin`` answer, an MCP result
with ``isError``, or what ``tool_result_classifier`` calls one; an error recorded when
raised is not recorded again when another plugin's answer to it comes back as the
result) and ``event`` (each event yielded, with its actions, usage, error and workflow
node). The user's message reaches ``on_user_message_callback`` before the record
exists, so, as in google-adk, it is not recorded. Inline data is written as its MIME
type and name only.

When the invocation ends without an exception (``after_run_callback``): a
``session_state_snapshot`` (with ``include_session_state``) and ``invocation_end``
are added and the record (``invocation_id``, ``session_id``, ``app_name``,
``user_id``, ``start_time``, ``entries``) is appended to ``output_path`` as one YAML
document after a ``---`` line; the file is made readable by its owner only (a file
already there keeps its mode, with one warning when others can read it). A write that
fails is logged. The record is then dropped, as it is when an exception ends the run
(not written then, as in google-adk).

Credentials are never written: a credential model (``AuthCredential``, ``HttpAuth``,
``HttpCredentials``, ``OAuth2Auth``, ``ServiceAccount``, ``ServiceAccountCredential``,
by class name, anywhere in a value), a value under a key that names a secret (``token``,
``password``, ``api_key``, ``client_secret``... in any case or spelling, ``app:`` /
``user:`` stripped first, and every ``temp:`` key), and an armored private key block
inside any string each become ``[REDACTED]``. The file still holds whole prompts and
answers.
"""

from __future__ import annotations

import datetime
import enum
import logging
import os
import re
import weakref
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from .._types import Content, Event, LlmRequest, LlmResponse
from ._callback_helpers import (
    ToolResultClassifier,
    classify_tool_result_error,
    validate_tool_result_classifier,
)
from .base_plugin import BasePlugin

__all__ = ["DebugLoggingPlugin"]

logger = logging.getLogger("adk_actors.plugins.debug_logging")

_REDACTED = "[REDACTED]"
_CREDENTIAL_CLASSES = frozenset({"AuthCredential", "HttpAuth", "HttpCredentials", "OAuth2Auth", "ServiceAccount",
                                 "ServiceAccountCredential"})
_SECRET_KEYS = frozenset({
    "access_token", "api_key", "auth_code", "auth_response_uri", "authorization", "client_secret", "code_verifier",
    "google_access_id", "id_token", "password", "private_key", "private_key_id", "proxy_authorization",
    "refresh_token", "secret", "sig", "signature", "token", "x_amz_credential", "x_amz_signature", "x_api_key",
    "x_goog_credential", "x_goog_security_token", "x_goog_signature"})
_SECRET_PARTS = ("api_key", "credentials", "passwd", "password", "private_key", "secret")
_WORD_BREAK = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?"
                          r"(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)", re.DOTALL)
_FILE_MODE = 0o600
_DEPTH = 20  # how deep a value is walked (a value that holds itself ends there)


def _secret_key(key: Any) -> bool:
    """Whether a mapping key names a secret (see the module)."""
    if not isinstance(key, str):
        return False
    name = _WORD_BREAK.sub("_", str.__str__(key)).lower().replace("-", "_")
    if name.startswith("temp:"):
        return True
    for scope in ("app:", "user:"):
        if name.startswith(scope):
            name = name[len(scope):]
            break
    return name in _SECRET_KEYS or name.endswith("_token") or any(part in name for part in _SECRET_PARTS)


def _is_credential(value: Any) -> bool:
    return any(cls.__name__ in _CREDENTIAL_CLASSES for cls in type(value).__mro__)


def _model_fields(model: BaseModel) -> list[tuple[str, Any]]:
    return [*model.__dict__.items(), *(model.__pydantic_extra__ or {}).items()]


def _holds_credential(value: Any, depth: int = 0) -> bool:
    if depth > _DEPTH:
        return False
    if _is_credential(value):
        return True
    if isinstance(value, BaseModel):
        return any(_holds_credential(v, depth + 1) for _, v in _model_fields(value))
    if isinstance(value, dict):
        return any(_holds_credential(v, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_holds_credential(v, depth + 1) for v in value)
    return False


def _safe(value: Any, depth: int = 0) -> Any:
    """``value`` as plain YAML-able data, credentials redacted (see the module)."""
    if value is None:
        return None
    if _is_credential(value):
        return _REDACTED
    if depth > _DEPTH:
        return f"<{type(value).__name__} ...>"
    if isinstance(value, enum.Enum):
        return _safe(value.value, depth + 1)
    if isinstance(value, str):
        return _PRIVATE_KEY.sub(_REDACTED, str.__str__(value))
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_safe(item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {key: _REDACTED if _secret_key(key) else _safe(item, depth + 1) for key, item in value.items()}
    if isinstance(value, BaseModel):
        if _holds_credential(value):
            return _safe({k: v for k, v in _model_fields(value) if v is not None}, depth)
        try:
            dumped = value.model_dump(mode="json", exclude_none=True)
        except Exception:
            return str(value)
        return _safe(dumped, depth)
    if isinstance(value, bytes):
        return f"<bytes: {len(value)} bytes>"
    try:
        return str(value)
    except Exception:
        return "<unserializable>"


def _enum_text(kind: str, value: Any) -> str:
    """A code part's outcome or language as google-genai's enum prints (``Outcome.OUTCOME_OK``)."""
    text = str(getattr(value, "value", value))
    return text if "." in text else f"{kind}.{text}"


def _content(content: Content | None) -> dict[str, Any] | None:
    """A content, part by part; inline data by its MIME type and name only."""
    if content is None:
        return None
    parts: list[dict[str, Any]] = []
    for part in content.parts or ():
        shown: dict[str, Any] = {}
        if part.text:
            shown["text"] = part.text
        if part.function_call is not None:
            call = part.function_call
            shown["function_call"] = {"id": call.id, "name": call.name, "args": _safe(call.args)}
        if part.function_response is not None:
            response = part.function_response
            shown["function_response"] = {"id": response.id, "name": response.name,
                                          "response": _safe(response.response)}
        if part.inline_data is not None:
            shown["inline_data"] = {"mime_type": part.inline_data.mime_type,
                                    "display_name": part.inline_data.display_name, "_data_omitted": True}
        file_data = getattr(part, "file_data", None)
        if file_data is not None:
            shown["file_data"] = {"file_uri": file_data.file_uri, "mime_type": file_data.mime_type}
        if part.code_execution_result is not None:
            shown["code_execution_result"] = {"outcome": _enum_text("Outcome", part.code_execution_result.outcome),
                                              "output": part.code_execution_result.output}
        if part.executable_code is not None:
            shown["executable_code"] = {"language": _enum_text("Language", part.executable_code.language),
                                        "code": part.executable_code.code}
        if shown:
            parts.append(shown)
    return {"role": content.role, "parts": parts}


def _usage(usage: Any, *, cached: bool) -> dict[str, Any]:
    counts = {"prompt_token_count": usage.prompt_token_count,
              "candidates_token_count": usage.candidates_token_count,
              "total_token_count": usage.total_token_count}
    if cached:
        counts["cached_content_token_count"] = usage.cached_content_token_count
    return counts


#: google-genai's FinishReason and BlockedReason values: an event's error code that is
#: one of them says why a model stopped, not that a node failed
_STOP_REASONS = frozenset({
    "BLOCKED_REASON_UNSPECIFIED", "BLOCKLIST", "CONTINUATION", "FINISH_REASON_UNSPECIFIED", "IMAGE_OTHER",
    "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "IMAGE_SAFETY", "JAILBREAK", "LANGUAGE",
    "MALFORMED_FUNCTION_CALL", "MAX_TOKENS", "MODEL_ARMOR", "NO_IMAGE", "OTHER", "PROHIBITED_CONTENT", "RECITATION",
    "SAFETY", "SPII", "STOP", "TOO_MANY_TOOL_CALLS", "UNEXPECTED_TOOL_CALL"})


def _node_failed(event: Event) -> bool:
    """A workflow node's failure (an error code that is not why a model stopped)."""
    return event.partial is not True and bool(event.error_code) and event.error_code not in _STOP_REASONS


class _Entry(BaseModel):
    timestamp: str
    entry_type: str
    invocation_id: str | None = None
    agent_name: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)


class _Record(BaseModel):
    invocation_id: str
    session_id: str
    app_name: str
    user_id: str | None = None
    start_time: str
    entries: list[_Entry] = Field(default_factory=list)


class DebugLoggingPlugin(BasePlugin):
    """Writes every step of each invocation to ``output_path`` as YAML (see the module).

    ``tool_result_classifier``: see :class:`adk_actors.plugins.ToolResultClassifier`; one
    that is not a sync callable taking its four keywords is a ``ValueError`` here."""

    def __init__(self, *, name: str = "debug_logging_plugin", output_path: str = "adk_debug.yaml",
                 include_session_state: bool = True, include_system_instruction: bool = True,
                 tool_result_classifier: ToolResultClassifier | None = None) -> None:
        super().__init__(name)
        validate_tool_result_classifier(tool_result_classifier)
        self._output_path = Path(output_path)
        self._include_session_state = include_session_state
        self._include_system_instruction = include_system_instruction
        self._tool_result_classifier = tool_result_classifier
        self._invocation_states: dict[str, _Record] = {}
        self._warned_about_output_mode = False
        #: the tool calls whose failure on_tool_error_callback recorded (by their context)
        self._errors_recorded: weakref.WeakSet[Any] = weakref.WeakSet()

    @staticmethod
    def _now() -> str:
        return datetime.datetime.now().isoformat()

    def _add(self, invocation_id: str, entry_type: str, agent_name: str | None = None, **data: Any) -> None:
        record = self._invocation_states.get(invocation_id)
        if record is None:
            logger.warning("no debug record for invocation %s: entry %s not kept", invocation_id, entry_type)
            return
        record.entries.append(_Entry(timestamp=self._now(), entry_type=entry_type, invocation_id=invocation_id,
                                     agent_name=agent_name, data=_safe(data)))

    # -- the run ----------------------------------------------------------------------------

    async def on_user_message_callback(self, *, invocation_context: Any, user_message: Content) -> Content | None:
        self._add(invocation_context.invocation_id, "user_message", content=_content(user_message))
        return None

    async def before_run_callback(self, *, invocation_context: Any) -> Content | None:
        session = invocation_context.session
        invocation_id = invocation_context.invocation_id
        self._invocation_states[invocation_id] = _Record(
            invocation_id=invocation_id, session_id=session.id, app_name=session.app_name,
            user_id=invocation_context.user_id, start_time=self._now())
        self._add(invocation_id, "invocation_start", agent_name=getattr(invocation_context.agent, "name", None),
                  branch=invocation_context.branch)
        return None

    async def on_event_callback(self, *, invocation_context: Any, event: Event) -> Event | None:
        data: dict[str, Any] = {"event_id": event.id, "author": event.author, "content": _content(event.content),
                                "is_final_response": event.is_final_response(), "partial": event.partial,
                                "turn_complete": event.turn_complete, "branch": event.branch}
        actions = event.actions
        taken: dict[str, Any] = {}
        if actions.state_delta:
            taken["state_delta"] = _safe(actions.state_delta)
        if actions.artifact_delta:
            taken["artifact_delta"] = dict(actions.artifact_delta)
        if actions.transfer_to_agent:
            taken["transfer_to_agent"] = actions.transfer_to_agent
        if actions.escalate:
            taken["escalate"] = actions.escalate
        if actions.requested_auth_configs:
            taken["requested_auth_configs"] = len(actions.requested_auth_configs)
        if taken:
            data["actions"] = taken
        if event.grounding_metadata:
            data["has_grounding_metadata"] = True
        if event.usage_metadata:
            data["usage_metadata"] = _usage(event.usage_metadata, cached=False)
        if event.error_code:
            data["error_code"] = event.error_code
            data["error_message"] = event.error_message
        if event.long_running_tool_ids:
            data["long_running_tool_ids"] = list(event.long_running_tool_ids)
        node = event.node_info
        if node is not None and node.path:
            data["node_path"] = node.path
            if event.partial is not True:
                if event.output is not None and node.message_as_output is not True:
                    data["node_output"] = _safe(event.output)
                if _node_failed(event):
                    data["node_error"] = {"error_code": event.error_code, "error_message": event.error_message}
        self._add(invocation_context.invocation_id, "event", agent_name=event.author, **data)
        return None

    async def after_run_callback(self, *, invocation_context: Any) -> None:
        """The record completed and appended to the file (see the module)."""
        invocation_id = invocation_context.invocation_id
        record = self._invocation_states.get(invocation_id)
        if record is None:
            logger.warning("no debug record for invocation %s: nothing written", invocation_id)
            return
        try:
            if self._include_session_state:
                session = invocation_context.session
                self._add(invocation_id, "session_state_snapshot", state=_safe(dict(session.state)),
                          event_count=len(session.events))
            self._add(invocation_id, "invocation_end")
            self._write(record)
        except Exception as exc:
            logger.error("the debug record of invocation %s could not be written: %s", invocation_id, exc)
        finally:
            self._invocation_states.pop(invocation_id, None)

    async def on_run_error_callback(self, *, invocation_context: Any, error: Exception) -> None:
        """An exception ended the run: its record is dropped, unwritten (as in google-adk)."""
        self._invocation_states.pop(invocation_context.invocation_id, None)

    def _write(self, record: _Record) -> None:
        data = record.model_dump(mode="json", exclude_none=True)
        fd = os.open(self._output_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, _FILE_MODE)
        if not self._warned_about_output_mode and os.fstat(fd).st_mode & 0o077:
            self._warned_about_output_mode = True
            logger.warning("the debug file %s can be read by others than its owner, and holds whole prompts and "
                           "answers: make it mode 600", self._output_path)
        with os.fdopen(fd, "a", encoding="utf-8") as out:
            out.write("---\n")
            yaml.dump(data, out, default_flow_style=False, allow_unicode=True, sort_keys=False, width=120)

    # -- agents and models ------------------------------------------------------------------

    async def before_agent_callback(self, *, agent: Any, callback_context: Any) -> Content | None:
        self._add(callback_context.invocation_id, "agent_start", agent_name=callback_context.agent_name,
                  branch=callback_context._invocation_context.branch)
        return None

    async def after_agent_callback(self, *, agent: Any, callback_context: Any) -> Content | None:
        self._add(callback_context.invocation_id, "agent_end", agent_name=callback_context.agent_name)
        return None

    async def before_model_callback(self, *, callback_context: Any, llm_request: LlmRequest) -> LlmResponse | None:
        data: dict[str, Any] = {"model": llm_request.model, "content_count": len(llm_request.contents),
                                "contents": [_content(c) for c in llm_request.contents]}
        tools = [declaration.name for declaration in llm_request.tools]
        if tools:
            data["tools"] = tools
        config: Any = llm_request.config
        settings: dict[str, Any] = {}
        instruction = config.system_instruction
        if instruction and self._include_system_instruction:
            settings["system_instruction"] = instruction
        elif instruction:
            settings["system_instruction_length"] = len(instruction)
        for key in ("temperature", "top_p", "top_k", "max_output_tokens"):
            if config.get(key) is not None:
                settings[key] = config.get(key)
        if config.get("response_mime_type"):
            settings["response_mime_type"] = config.get("response_mime_type")
        if config.get("response_schema"):
            settings["has_response_schema"] = True
        if settings:
            data["config"] = settings
        self._add(callback_context.invocation_id, "llm_request", agent_name=callback_context.agent_name, **data)
        return None

    async def after_model_callback(self, *, callback_context: Any, llm_response: LlmResponse) -> LlmResponse | None:
        """The model's answer; why it stopped (finish reason, error) only on a final one."""
        data: dict[str, Any] = {"content": _content(llm_response.content), "partial": llm_response.partial,
                                "turn_complete": llm_response.turn_complete}
        final = llm_response.partial is not True
        if final and llm_response.error_code:
            data["error_code"] = llm_response.error_code
            data["error_message"] = llm_response.error_message
        if llm_response.usage_metadata:
            data["usage_metadata"] = _usage(llm_response.usage_metadata, cached=True)
        if llm_response.grounding_metadata:
            data["has_grounding_metadata"] = True
        if final and llm_response.finish_reason:
            data["finish_reason"] = _enum_text("FinishReason", llm_response.finish_reason)
        if llm_response.model_version:
            data["model_version"] = llm_response.model_version
        self._add(callback_context.invocation_id, "llm_response", agent_name=callback_context.agent_name, **data)
        return None

    async def on_model_error_callback(self, *, callback_context: Any, llm_request: LlmRequest,
                                      error: Exception) -> LlmResponse | None:
        self._add(callback_context.invocation_id, "llm_error", agent_name=callback_context.agent_name,
                  error_type=type(error).__name__, error_message=str(error), model=llm_request.model)
        return None

    # -- tools -------------------------------------------------------------------------------

    async def before_tool_callback(self, *, tool: Any, tool_args: dict[str, Any],
                                   tool_context: Any) -> dict[str, Any] | None:
        self._add(tool_context.invocation_id, "tool_call", agent_name=tool_context.agent_name, tool_name=tool.name,
                  function_call_id=tool_context.function_call_id, args=_safe(tool_args))
        return None

    async def after_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                  result: Any) -> dict[str, Any] | None:
        """The call's result, or the failure it reports (not again when the failure
        was recorded as it was raised)."""
        if tool_context in self._errors_recorded:
            self._errors_recorded.discard(tool_context)
            return None
        message = classify_tool_result_error(tool=tool, tool_args=tool_args, tool_context=tool_context,
                                             result=result, tool_result_classifier=self._tool_result_classifier,
                                             log=logger)
        if message is not None:
            self._add(tool_context.invocation_id, "tool_error", agent_name=tool_context.agent_name,
                      tool_name=tool.name, function_call_id=tool_context.function_call_id, args=_safe(tool_args),
                      result=_safe(result), error_message=message)
            return None
        self._add(tool_context.invocation_id, "tool_response", agent_name=tool_context.agent_name,
                  tool_name=tool.name, function_call_id=tool_context.function_call_id, result=_safe(result))
        return None

    async def on_tool_error_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                     error: Exception) -> dict[str, Any] | None:
        data = {"agent_name": tool_context.agent_name, "tool_name": tool.name,
                "function_call_id": tool_context.function_call_id, "args": _safe(tool_args),
                "error_type": type(error).__name__, "error_message": str(error)}
        try:
            self._errors_recorded.add(tool_context)
        except TypeError:  # a context that cannot be weakly referenced: its answer may be recorded again
            pass
        self._add(tool_context.invocation_id, "tool_error", **data)
        return None
