"""google-adk's conformance runner (``adk conformance record|test``), served by this kit.

google-adk's conformance runner records a case with a real model
(``generated-recordings.yaml``: each model request and its responses, each tool call
and its result, per agent and user message) and later replays it: it sends each user
message with ``stateDelta._adk_recordings_config = {dir, user_message_index}`` (record)
or ``stateDelta._adk_replay_config = {dir, user_message_index, streaming_mode}``
(replay) and compares the session the server made with the recorded one. The
server's half is a plugin for the turn, made by :func:`conformance_plugin` when the
turn's state holds one of these configs.

:class:`ConformanceRecorder` writes google-adk's recordings file: this kit's model
requests in google-adk's ``LlmRequest`` shape (model, contents, system instruction,
tool declarations; not the generation config), its responses and tool calls.

:class:`ConformanceReplay`:

* ``before_model``: the agent's next recorded model call (by agent and user message)
  must have the same conversation (roles, texts, function calls and results; call
  ids aside); its recorded final response is the model's answer. No model is called.
* ``before_tool``: the agent's next recorded tool call must have the same name and
  arguments; the tool then runs (its side effects, such as state, happen) and
  ``after_tool`` answers the recorded result instead of the tool's.

Any mismatch, a missing recording or one call too many fails the turn with
:class:`ReplayVerificationError`. What google-adk checks and this does not: the
system instruction and the tool declarations, word for word (this kit's compiler
words them as seed 000 says, not as google-adk does).

Recordings are read and written only under the host's ``conformance_dir``: the path
comes from a client, and without that setting a turn asking for either fails
(:class:`ConformanceConfigError`) rather than touch a file or call a real model.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from .._exceptions import AdkError
from .._types import Content, LlmRequest, LlmResponse, UsageMetadata
from ..engine import Plugin, read_yaml
from ..store import write_private

__all__ = ["RECORD_CONFIG", "REPLAY_CONFIG", "ConformanceConfigError", "ConformanceRecorder", "ConformanceReplay",
           "ReplayVerificationError", "conformance_plugin"]

#: the state keys google-adk's conformance client sets on every message it replays / records
REPLAY_CONFIG = "_adk_replay_config"
RECORD_CONFIG = "_adk_recordings_config"
_FILES = {"none": "generated-recordings.yaml", "sse": "generated-recordings-sse.yaml"}


class ConformanceConfigError(AdkError):
    """A turn asked for a replay or a recording this host cannot serve (off, or a bad
    config)."""


class ReplayVerificationError(AdkError):
    """The turn did not do what the recording did."""


def _conversation(contents: Any) -> list[tuple[str, list[Any]]]:
    """Contents as both kits can be compared: role, then per part its text, its
    function call (name, args) or its function result (name, response)."""
    summary = []
    for content in contents or []:
        parts: list[Any] = []
        for part in content.get("parts") or []:
            if part.get("text") is not None and not part.get("thought"):
                parts.append(("text", part["text"]))
            elif call := part.get("function_call"):
                parts.append(("call", call.get("name"), call.get("args") or {}))
            elif response := part.get("function_response"):
                parts.append(("result", response.get("name"), response.get("response")))
        summary.append((content.get("role") or "user", parts))
    return summary


def _response(recorded: Mapping[str, Any]) -> LlmResponse:
    """A recorded LlmResponse (google-adk's, snake_case) as this kit's."""
    usage = recorded.get("usage_metadata")
    return LlmResponse(
        content=Content.model_validate(recorded["content"]) if recorded.get("content") else None,
        finish_reason=recorded.get("finish_reason"), model_version=recorded.get("model_version"),
        error_code=recorded.get("error_code"), error_message=recorded.get("error_message"),
        usage_metadata=UsageMetadata.model_validate(usage) if isinstance(usage, dict) else None)


class ConformanceReplay(Plugin):
    """Replays one user message of a recorded case (see the module)."""

    name = "adk_conformance_replay"

    def __init__(self, recordings: list[dict[str, Any]], user_message_index: int) -> None:
        mine = [r for r in recordings if r.get("user_message_index") == user_message_index]
        self.models: dict[str, list[dict[str, Any]]] = {}
        self.tools: dict[str, list[dict[str, Any]]] = {}
        for recording in mine:
            if recording.get("llm_recording"):
                self.models.setdefault(recording.get("agent_name", ""), []).append(recording["llm_recording"])
            elif recording.get("tool_recording"):
                self.tools.setdefault(recording.get("agent_name", ""), []).append(recording["tool_recording"])
        self.index = user_message_index

    def initial_state(self) -> dict[str, dict[str, int]]:
        return {"model": {}, "tool": {}, "pending": {}}

    def _next(self, state: dict[str, Any], kind: str, agent: str) -> tuple[dict[str, Any], dict[str, Any]]:
        recorded = (self.models if kind == "model" else self.tools).get(agent, [])
        position = state[kind].get(agent, 0)
        if position >= len(recorded):
            raise ReplayVerificationError(
                f"agent {agent!r} made more {kind} calls than recorded for user message {self.index} "
                f"(recorded {len(recorded)}, this is call {position + 1})")
        return {**state, kind: {**state[kind], agent: position + 1}}, recorded[position]

    def before_model(self, state: dict[str, Any], cb: Any, request: Any) -> tuple[Any, Any]:
        state, recording = self._next(state, "model", cb.agent_name)
        ours = _conversation(request.model_dump(mode="json", exclude_none=True)["contents"])
        theirs = _conversation((recording.get("llm_request") or {}).get("contents"))
        if ours != theirs:
            raise ReplayVerificationError(f"agent {cb.agent_name!r}: the conversation sent to the model differs "
                                          f"from the recording:\nrecorded: {theirs}\nthis run: {ours}")
        finals = [r for r in recording.get("llm_responses") or [] if not r.get("partial")]
        if not finals:
            raise ReplayVerificationError(f"agent {cb.agent_name!r}: the recording has no final model response")
        return state, _response(finals[-1])

    def before_tool(self, state: dict[str, Any], tool: Any, args: dict[str, Any], tool_context: Any) -> tuple[Any, Any]:
        agent = tool_context.agent_name
        state, recording = self._next(state, "tool", agent)
        call = recording.get("tool_call") or {}
        if call.get("name") != tool.name or (call.get("args") or {}) != args:
            raise ReplayVerificationError(f"agent {agent!r}: tool call {tool.name}({args}) differs from the "
                                          f"recorded {call.get('name')}({call.get('args')})")
        result = (recording.get("tool_response") or {}).get("response")
        return {**state, "pending": {**state["pending"], agent: result}}, None

    def after_tool(self, state: dict[str, Any], tool: Any, args: dict[str, Any], tool_context: Any,
                   result: Any) -> tuple[Any, Any]:
        pending = dict(state["pending"])
        recorded = pending.pop(tool_context.agent_name, None)
        return {**state, "pending": pending}, recorded


def _request_json(request: LlmRequest) -> dict[str, Any]:
    """This kit's request in google-adk's ``LlmRequest`` shape (snake_case, as dumped)."""
    config: dict[str, Any] = {}
    if request.system_instruction:
        config["system_instruction"] = request.system_instruction
    if request.tools:
        config["tools"] = [{"function_declarations": [
            {"name": t.name, "description": t.description, **({"parameters_json_schema": t.parameters_schema}
                                                             if t.parameters_schema else {})} for t in request.tools]}]
    return {"model": request.model, "contents": [c.model_dump(mode="json", exclude_none=True) for c in request.contents],
            **({"config": config} if config else {})}


def _response_json(response: LlmResponse) -> dict[str, Any]:
    """This kit's response in google-adk's ``LlmResponse`` shape."""
    return response.model_dump(mode="json", exclude_none=True)


class ConformanceRecorder(Plugin):
    """Records one user message of a case into ``path`` (see the module): what is
    there already (the earlier messages') is kept, this turn's recordings follow."""

    name = "adk_conformance_recorder"

    def __init__(self, path: Path, user_message_index: int) -> None:
        self.path = path
        self.index = user_message_index

    def initial_state(self) -> dict[str, Any]:
        return {"recordings": [], "open_model": {}, "open_tool": {}}

    def before_model(self, state: dict[str, Any], cb: Any, request: Any) -> tuple[Any, Any]:
        recording = {"user_message_index": self.index, "agent_name": cb.agent_name,
                     "llm_recording": {"llm_request": _request_json(request), "llm_responses": []}}
        return {**state, "recordings": [*state["recordings"], recording],
                "open_model": {**state["open_model"], cb.agent_name: recording}}, None

    def after_model(self, state: dict[str, Any], cb: Any, response: Any) -> tuple[Any, Any]:
        open_model = dict(state["open_model"])
        recording = open_model.pop(cb.agent_name, None)
        if recording is not None:
            recording["llm_recording"]["llm_responses"].append(_response_json(response))
        return {**state, "open_model": open_model}, None

    def before_tool(self, state: dict[str, Any], tool: Any, args: dict[str, Any], tool_context: Any) -> tuple[Any, Any]:
        call_id = tool_context.function_call_id
        recording = {"user_message_index": self.index, "agent_name": tool_context.agent_name,
                     "tool_recording": {"tool_call": {"id": call_id, "name": tool.name, "args": dict(args)}}}
        return {**state, "recordings": [*state["recordings"], recording],
                "open_tool": {**state["open_tool"], call_id: recording}}, None

    def after_tool(self, state: dict[str, Any], tool: Any, args: dict[str, Any], tool_context: Any,
                   result: Any) -> tuple[Any, Any]:
        open_tool = dict(state["open_tool"])
        recording = open_tool.pop(tool_context.function_call_id, None)
        if recording is not None:
            recording["tool_recording"]["tool_response"] = {
                "id": tool_context.function_call_id, "name": tool.name,
                "response": result if isinstance(result, dict) else {"result": result}}
        return {**state, "open_tool": open_tool}, None

    def after_run(self, state: dict[str, Any], ctx: Any, error: BaseException | None) -> Any:
        """Append this turn's recordings to the file (written whole, at once)."""
        earlier: list[Any] = []
        if self.path.exists():
            data = yaml.safe_load(self.path.read_text(encoding="utf-8")) or {}
            earlier = [r for r in data.get("recordings") or [] if r.get("user_message_index") != self.index]
        text = yaml.safe_dump({"recordings": [*earlier, *state["recordings"]]}, sort_keys=False, allow_unicode=True)
        write_private(self.path, text.encode())
        return state


def _case_file(config: Any, key: str, conformance_dir: str | None, mode: Any) -> Path:
    """The recordings file a config names, checked to be under ``conformance_dir``."""
    if conformance_dir is None:
        raise ConformanceConfigError("this turn asks for google-adk's conformance replay or recording, which is off "
                                     "on this host: set [host] conformance_dir to the folder of the cases")
    if not isinstance(config, dict) or not isinstance(config.get("dir"), str) \
            or not isinstance(config.get("user_message_index"), int):
        raise ConformanceConfigError(f"{key} needs dir and user_message_index")
    if mode not in _FILES:
        raise ConformanceConfigError(f"{key}: streaming_mode is none or sse, not {mode!r}")
    path = (Path(config["dir"]) / _FILES[mode]).resolve()
    if not path.is_relative_to(Path(conformance_dir).resolve()):
        raise ConformanceConfigError(f"{key}: {config['dir']!r} is not under the host's conformance_dir")
    return path


def conformance_plugin(state: Mapping[str, Any], streaming: str,
                       conformance_dir: str | None) -> ConformanceReplay | ConformanceRecorder | None:
    """The plugin a turn whose state is ``state`` needs to replay or record a
    conformance case (None: neither), reading and writing only under
    ``conformance_dir`` (None: off). ``streaming`` is the turn's mode (none or sse),
    which names a recording's file."""
    if config := state.get(RECORD_CONFIG):
        path = _case_file(config, RECORD_CONFIG, conformance_dir, streaming)
        return ConformanceRecorder(path, config["user_message_index"])
    config = state.get(REPLAY_CONFIG)
    if not config:
        return None
    path = _case_file(config, REPLAY_CONFIG, conformance_dir,
                      config.get("streaming_mode", "none") if isinstance(config, dict) else None)
    data = read_yaml(path, ConformanceConfigError, f"the recordings {path.name}")
    recordings = data.get("recordings") if isinstance(data, dict) else None
    if not isinstance(recordings, list):
        raise ConformanceConfigError(f"{path.name} holds no recordings")
    return ConformanceReplay(recordings, config["user_message_index"])
