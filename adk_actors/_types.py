"""The data that flows one way: definition -> request -> model -> events -> session.

Pydantic v2 models. Their JSON form uses google-adk's camelCase names (snake_case
is accepted on input) and leaves out unset (None) fields, so the HTTP layer can be
wire-compatible with google-adk clients. The models are mutable, as google.genai's
and google-adk's are (fields are assigned without validation, an unknown field is
refused): callback code assigns ``part.text`` or ``function_response.response``. The
compiler puts a session's ``Content`` objects into requests without copying them; the
engine gives a request its own copies before any user code may see it (see
``engine/_flow.py``), where google-adk copies.
"""

from __future__ import annotations

import datetime
import enum
import json
import time
import uuid
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from ._cache_types import CacheMetadata, ContextCacheConfig
from ._genai_schema import json_schema_of
from ._grounding import GroundingMetadata
from ._schema import output_schema_json

__all__ = [
    "Behavior",
    "Blob",
    "CodeExecutionResult",
    "Compaction",
    "Content",
    "Event",
    "EventActions",
    "ExecutableCode",
    "FileData",
    "FunctionCall",
    "FunctionDeclaration",
    "FunctionResponse",
    "FunctionResponsePart",
    "FunctionResponseScheduling",
    "GroundingMetadata",
    "LiveRequest",
    "LlmRequest",
    "LlmResponse",
    "MemoryEntry",
    "ModalityTokenCount",
    "NodeInfo",
    "Part",
    "RunConfig",
    "SearchMemoryResponse",
    "State",
    "StreamingMode",
    "ToolThreadPoolConfig",
    "Transcription",
    "UsageMetadata",
    "apply_state_delta",
    "fields_of_foreign",
    "is_genai_content",
    "model_name",
    "new_event_id",
    "new_invocation_id",
]


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        ser_json_bytes="base64",
        val_json_bytes="base64",
    )

    def to_json(self) -> str:
        """google-adk's wire form: camelCase, no null fields."""
        return self.model_dump_json(by_alias=True, exclude_none=True)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def fields_of_foreign(cls: type[BaseModel], data: Any) -> Any:
    """Another library's object of the same shape (google.genai's Content or Part) as
    its fields, which are then validated as ours; anything else as it is."""
    if isinstance(data, BaseModel) and not isinstance(data, cls):
        return data.model_dump(exclude_none=True)
    return data


def is_genai_content(value: Any) -> bool:
    """Whether ``value`` is a google.genai ``Content``: its class is named ``Content``
    and comes from a ``google.genai`` module (told by name: google.genai, an optional
    extra, is not imported for it)."""
    kind = type(value)
    return kind.__name__ == "Content" and kind.__module__.startswith("google.genai")


class FunctionCall(_Model):
    id: str | None = None
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class Blob(_Model):
    """Inline binary data (an image, a file) with its MIME type."""

    mime_type: str
    data: bytes
    display_name: str | None = None


class FileData(_Model):
    """Data named by a URI instead of carried inline (google.genai's ``FileData``): a
    file a model can fetch (``gs://``, ``https://``), or an ``artifact://`` reference
    to another artifact (``adk_actors.artifacts.artifact_util``)."""

    file_uri: str | None = None
    mime_type: str | None = None
    display_name: str | None = None


class FunctionResponsePart(_Model):
    """Media a tool handed back with its response (google.genai's
    ``FunctionResponsePart``): inline bytes or a URI, each with its MIME type."""

    inline_data: Blob | None = None
    file_data: FileData | None = None

    @model_validator(mode="before")
    @classmethod
    def _foreign(cls, data: Any) -> Any:
        return fields_of_foreign(cls, data)

    @classmethod
    def from_bytes(cls, *, data: bytes, mime_type: str) -> FunctionResponsePart:
        return cls(inline_data=Blob(mime_type=mime_type, data=data))

    @classmethod
    def from_uri(cls, *, file_uri: str, mime_type: str) -> FunctionResponsePart:
        return cls(file_data=FileData(file_uri=file_uri, mime_type=mime_type))


class _AnyCase(enum.StrEnum):
    """A google.genai enum: its members compare equal to their names, and a member is
    found by its name in any case (``"non_blocking"``), as google.genai's are."""

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if isinstance(value, str):
            return cls.__members__.get(value.upper())
        return None


class Behavior(_AnyCase):
    """google.genai's ``Behavior`` of a function in a live conversation (Live API only):
    ``BLOCKING``, the model waits for its result; ``NON_BLOCKING``, the conversation
    goes on while it runs (see ``engine._live_tools``)."""

    UNSPECIFIED = "UNSPECIFIED"
    BLOCKING = "BLOCKING"
    NON_BLOCKING = "NON_BLOCKING"


class FunctionResponseScheduling(_AnyCase):
    """google.genai's ``FunctionResponseScheduling``: when the live model reacts to a
    non-blocking function's result: ``SILENT`` (not at all, it only knows it),
    ``WHEN_IDLE`` (once it is done speaking), ``INTERRUPT`` (at once)."""

    SCHEDULING_UNSPECIFIED = "SCHEDULING_UNSPECIFIED"
    SILENT = "SILENT"
    WHEN_IDLE = "WHEN_IDLE"
    INTERRUPT = "INTERRUPT"


class FunctionResponse(_Model):
    """A tool's result for the model (google.genai's ``FunctionResponse``); ``scheduling``:
    when a live model reacts to it (sent as google-genai sends it, ``scheduling``).
    ``name`` may be left out, as google.genai's may: a client answering a call by its
    ``id`` only (the response is then stored and sent without a name, as google-adk's)."""

    id: str | None = None
    name: str | None = None
    response: dict[str, Any] = Field(default_factory=dict)
    #: media the tool returned, taken out of ``response`` (google.genai's ``parts``)
    parts: list[FunctionResponsePart] | None = None
    scheduling: FunctionResponseScheduling | None = None


class ExecutableCode(_Model):
    """Code the model wrote to be run (google.genai's ``ExecutableCode``): its text and
    language (``PYTHON``)."""

    code: str
    language: str = "PYTHON"
    id: str | None = None


class CodeExecutionResult(_Model):
    """What running an ``ExecutableCode`` gave (google.genai's ``CodeExecutionResult``):
    ``outcome`` is ``OUTCOME_OK``, ``OUTCOME_FAILED`` or ``OUTCOME_DEADLINE_EXCEEDED``;
    ``output`` its stdout, or its error when it failed."""

    outcome: str = "OUTCOME_OK"
    output: str | None = None
    id: str | None = None


class Part(_Model):
    """Exactly one of text, function_call, function_response, inline_data, file_data,
    executable_code, code_execution_result."""

    text: str | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None
    inline_data: Blob | None = None
    file_data: FileData | None = None
    executable_code: ExecutableCode | None = None
    code_execution_result: CodeExecutionResult | None = None
    thought: bool | None = None
    #: the model's opaque signature of its reasoning (Gemini's ``thoughtSignature``),
    #: sent back with the part it came with
    thought_signature: bytes | None = None

    @model_validator(mode="before")
    @classmethod
    def _foreign(cls, data: Any) -> Any:
        return fields_of_foreign(cls, data)

    @classmethod
    def from_text(cls, *, text: str) -> Part:
        return cls(text=text)

    @classmethod
    def from_bytes(cls, *, data: bytes, mime_type: str) -> Part:
        return cls(inline_data=Blob(mime_type=mime_type, data=data))

    @classmethod
    def from_function_response(cls, *, name: str, response: dict[str, Any],
                               parts: list[FunctionResponsePart] | None = None) -> Part:
        return cls(function_response=FunctionResponse(name=name, response=response, parts=parts))

    @classmethod
    def from_executable_code(cls, *, code: str, language: Any = "PYTHON") -> Part:
        return cls(executable_code=ExecutableCode(code=code, language=getattr(language, "value", language)))

    @classmethod
    def from_code_execution_result(cls, *, outcome: Any, output: str | None = None) -> Part:
        return cls(code_execution_result=CodeExecutionResult(outcome=getattr(outcome, "value", outcome), output=output))


class Content(_Model):
    """A message: its ``role`` and ``parts``. The role is any string, as google.genai's
    (``user`` and ``model`` in a conversation; ``system`` and others are kept as
    given: a session's content keeps its role in the requests made from it)."""

    role: str | None = None
    #: a list, as google.genai's (``content.parts.append(...)``); a tuple given is taken
    #: as a list (the type checker is told "any sequence", which the engine's own code
    #: builds contents from)
    if TYPE_CHECKING:
        parts: Sequence[Part] = Field(default_factory=list)
    else:
        parts: list[Part] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _foreign(cls, data: Any) -> Any:
        return fields_of_foreign(cls, data)

    @classmethod
    def user(cls, text: str) -> Content:
        return cls(role="user", parts=(Part(text=text),))

    @classmethod
    def model(cls, text: str) -> Content:
        return cls(role="model", parts=(Part(text=text),))

    @property
    def text(self) -> str:
        """The concatenated text parts (thoughts excluded)."""
        return "".join(p.text for p in self.parts if p.text and not p.thought)

    @property
    def function_calls(self) -> list[FunctionCall]:
        return [p.function_call for p in self.parts if p.function_call is not None]

    @property
    def function_responses(self) -> list[FunctionResponse]:
        return [p.function_response for p in self.parts if p.function_response is not None]

    @cached_property
    def chars(self) -> int:
        """Characters a model reads (text, and the JSON of calls and results), computed once.

        Cached on the object (the token budget reads a session's contents at every
        step): a Content whose parts are changed in place after it was read keeps the
        first figure, as does a ``model_copy`` of it; build a new Content instead.
        """
        total = 0
        for part in self.parts:
            if part.text:
                total += len(part.text)
            elif part.function_call is not None:
                total += len(part.function_call.name) + len(json.dumps(part.function_call.args, default=str))
            elif part.function_response is not None:
                total += len(part.function_response.name or "") + len(
                    json.dumps(part.function_response.response, default=str)
                )
            elif part.inline_data is not None:
                total += 1032  # an image or file counts as ~258 tokens
            elif part.executable_code is not None:
                total += len(part.executable_code.code)
            elif part.code_execution_result is not None:
                total += len(part.code_execution_result.output or "")
        return total


class Compaction(_Model):
    """A summary that replaces the first ``message_count`` history messages."""

    message_count: int = Field(ge=0)
    summary: str


class EventCompaction(Compaction):
    """google-adk's compaction (``actions.compaction`` of a summary event, its import
    path ``adk_actors.events.event_actions``): the events whose timestamps lie from
    ``start_timestamp`` to ``end_timestamp`` (seconds) are replaced in later model
    requests by ``compacted_content``, placed where the range ends
    (``engine._compaction_adk``). A :class:`Compaction` whose own fields
    (``message_count``, ``summary``) are unused and left out of its dump; read back
    from JSON by its fields (see ``EventActions.compaction``)."""

    start_timestamp: float
    end_timestamp: float
    compacted_content: Content
    message_count: int = Field(default=0, ge=0, exclude=True)
    summary: str = Field(default="", exclude=True)


class Transcription(_Model):
    """Speech as text (a live run's ``input_transcription`` / ``output_transcription``);
    ``finished`` marks the last piece of one utterance."""

    text: str | None = None
    finished: bool | None = None


class EventActions(_Model):
    state_delta: dict[str, Any] = Field(default_factory=dict)
    artifact_delta: dict[str, int] = Field(default_factory=dict)
    transfer_to_agent: str | None = None
    escalate: bool | None = None
    skip_summarization: bool | None = None
    requested_auth_configs: dict[str, Any] = Field(default_factory=dict)
    requested_tool_confirmations: dict[str, Any] = Field(default_factory=dict)
    #: our ``Summarize`` compressor's ``Compaction`` or google-adk's ``EventCompaction``;
    #: JSON is read back as the one whose fields it has
    compaction: EventCompaction | Compaction | None = None
    #: the route(s) a workflow graph's node chose (google-adk 2.x), matched against its edges
    route: bool | int | str | list[bool | int | str] | None = None
    #: set on a rewind event only (``Runner.rewind_async``): the invocation whose events,
    #: and every later one's, the request compiler no longer sends
    rewind_before_invocation_id: str | None = None
    #: the structured answer a ``set_model_response`` call gave (an agent with both an
    #: ``output_schema`` and tools); its tool-response event carries it
    set_model_response: Any = None


class NodeInfo(_Model):
    """Where in a workflow graph an event was made (google-adk 2.x's ``NodeInfo``):
    ``path`` (``wf@1/node@2``: each node's name and run number), ``output_for`` (the
    node paths whose output this event's ``output`` is), ``message_as_output`` (the
    event's content is the node's output)."""

    path: str = ""
    output_for: list[str] | None = None
    message_as_output: bool | None = None


def new_event_id() -> str:
    return str(uuid.uuid4())


def new_invocation_id() -> str:
    return f"e-{uuid.uuid4()}"


class _CallsAndResponses:
    """google-adk's ``LlmResponse`` readers of the function calls and responses in
    ``content``, shared by :class:`LlmResponse` and :class:`Event`."""

    content: Content | None

    def get_function_calls(self) -> list[FunctionCall]:
        """The function calls among the content's parts, in order (empty without content)."""
        return [] if self.content is None else self.content.function_calls

    def get_function_responses(self) -> list[FunctionResponse]:
        """The function responses among the content's parts, in order (empty without content)."""
        return [] if self.content is None else self.content.function_responses


class Event(_CallsAndResponses, _Model):
    """One thing that happened in a session (google-adk's Event).

    Its readers are google-adk's: :meth:`is_final_response` (the event a UI shows as
    an agent's answer), :meth:`get_function_calls` / :meth:`get_function_responses`,
    :meth:`has_trailing_code_execution_result`, ``message`` (the content) and
    :meth:`new_id`.
    """

    id: str = Field(default_factory=new_event_id)
    invocation_id: str = ""
    author: str = ""  # google-adk 2.x: a node's event may name none; its workflow fills it in
    content: Content | None = None
    branch: str | None = None
    partial: bool | None = None
    turn_complete: bool | None = None
    timestamp: float = Field(default_factory=time.time)
    error_code: str | None = None
    error_message: str | None = None
    actions: EventActions = Field(default_factory=EventActions)
    long_running_tool_ids: tuple[str, ...] | None = None
    finish_reason: str | None = None
    usage_metadata: UsageMetadata | None = None
    model_version: str | None = None
    grounding_metadata: GroundingMetadata | None = None  # Gemini's own tools: how the answer was grounded
    cache_metadata: CacheMetadata | None = None  # the context cache the model call used (App.context_cache_config)
    custom_metadata: dict[str, Any] | None = None
    input_transcription: Transcription | None = None  # live runs: what the user said
    output_transcription: Transcription | None = None  # live runs: what the agent said
    interrupted: bool | None = None  # live runs: the user spoke over the agent's answer
    output: Any = None  # a workflow graph's node output (google-adk 2.x)
    node_info: NodeInfo | None = None  # a workflow graph's node (None outside one)

    @model_validator(mode="before")
    @classmethod
    def _convenience(cls, data: Any) -> Any:
        """google-adk 2.x's shorthands: ``message=`` (the content, as :func:`message_content`
        makes it; with ``content`` too, a ``ValueError``), ``state=`` (the actions'
        state delta), ``route=`` (the actions' route), ``node_path=`` (``node_info.path``)."""
        if not isinstance(data, dict) or not ({"message", "state", "route", "node_path"} & data.keys()):
            return data
        data = dict(data)
        message = data.pop("message", None)
        if message is not None:
            if data.get("content") is not None:
                raise ValueError("'message' and 'content' are mutually exclusive. Use one or the other.")
            data["content"] = message_content(message)
        state, route, path = data.pop("state", None), data.pop("route", None), data.pop("node_path", None)
        if state is not None or route is not None:
            actions = data.get("actions")
            fields = actions.model_dump() if isinstance(actions, BaseModel) else dict(actions or {})
            if state is not None:
                fields["state_delta"] = {**fields.get("state_delta", {}), **state}
            if route is not None:
                fields["route"] = route
            data["actions"] = fields
        if path is not None:
            info = data.get("node_info")
            fields = info.model_dump() if isinstance(info, BaseModel) else dict(info or {})
            data["node_info"] = {**fields, "path": path}
        return data

    def is_final_response(self) -> bool:
        """Whether this event is an agent's answer to show, by google-adk's rules, in
        order: an event whose tool asked to skip summarization, or that names
        long-running tool calls, is final; an error event that is not partial and
        calls no function is final; otherwise an event is final when it is not partial
        and holds no function call, no function response and no trailing code
        execution result. Several agents of one invocation may each give a final one."""
        if self.actions.skip_summarization or self.long_running_tool_ids:
            return True
        calls = self.get_function_calls()
        if self.error_code and not self.partial and not calls:
            return True
        return (not calls and not self.get_function_responses() and not self.partial
                and not self.has_trailing_code_execution_result())

    def has_trailing_code_execution_result(self) -> bool:
        """Whether the content's last part is a code execution result."""
        if self.content is None or not self.content.parts:
            return False
        return getattr(self.content.parts[-1], "code_execution_result", None) is not None

    @property
    def message(self) -> Content | None:
        """google-adk's other name for ``content``."""
        return self.content

    @message.setter
    def message(self, value: Any) -> None:
        """Set the content: ``value`` as :func:`message_content` makes it (None: no content)."""
        self.content = None if value is None else message_content(value)

    @staticmethod
    def new_id() -> str:
        """A fresh event id (a random UUID), as events get by default."""
        return new_event_id()


def message_content(value: Any) -> Content:
    """What google-adk's ``Event(message=...)`` takes, as a Content (google.genai's
    rules): a Content (ours, google.genai's, or a dict of one) as it is; a string, a
    Part or a list of them as the user's, except a Part that calls a function (the
    model's). Anything else is a ``ValueError``."""
    if isinstance(value, Content):
        return value
    if isinstance(value, BaseModel) and hasattr(value, "parts"):
        return Content.model_validate(fields_of_foreign(Content, value))
    if isinstance(value, dict):
        try:
            return Content.model_validate(value)
        except ValueError:
            value = Part.model_validate(value)
    if isinstance(value, (str, Part)) or (isinstance(value, BaseModel) and hasattr(value, "function_call")):
        part = _message_part(value)
        return Content(role="model" if part.function_call is not None else "user", parts=(part,))
    if isinstance(value, (list, tuple)):
        return Content(role="user", parts=tuple(_message_part(item) for item in value))
    raise ValueError(f"Unsupported content part type: {type(value)}")


def _message_part(value: Any) -> Part:
    if isinstance(value, str):
        return Part(text=value)
    if isinstance(value, Part):
        return value
    if isinstance(value, BaseModel) and hasattr(value, "function_call"):
        return Part.model_validate(fields_of_foreign(Part, value))
    raise ValueError(f"Unsupported content part type: {type(value)}")


class ModalityTokenCount(_Model):
    """Tokens of one modality (google-genai's ``ModalityTokenCount``)."""

    model_config = ConfigDict(extra="ignore")

    modality: str | None = None
    token_count: int | None = None


class UsageMetadata(_Model):
    """What a model call cost in tokens (google-genai's
    ``GenerateContentResponseUsageMetadata``, same fields). Every provider fills what it
    reports; the wire form is camelCase (``promptTokenCount``...), as google-adk's.
    Fields a provider adds beyond these are dropped."""

    model_config = ConfigDict(extra="ignore")

    prompt_token_count: int | None = None
    candidates_token_count: int | None = None
    total_token_count: int | None = None
    cached_content_token_count: int | None = None
    thoughts_token_count: int | None = None
    tool_use_prompt_token_count: int | None = None
    prompt_tokens_details: tuple[ModalityTokenCount, ...] | None = None
    candidates_tokens_details: tuple[ModalityTokenCount, ...] | None = None
    cache_tokens_details: tuple[ModalityTokenCount, ...] | None = None
    tool_use_prompt_tokens_details: tuple[ModalityTokenCount, ...] | None = None
    traffic_type: str | None = None

    @classmethod
    def counted(cls, prompt: Any, candidates: Any, total: Any = None) -> UsageMetadata:
        """From a provider's counts (ints, or None where it gave none); the total is
        their sum when the provider gives none."""
        counts = [c if isinstance(c, int) else None for c in (prompt, candidates, total)]
        if counts[2] is None and counts[0] is not None and counts[1] is not None:
            counts[2] = counts[0] + counts[1]
        return cls(prompt_token_count=counts[0], candidates_token_count=counts[1], total_token_count=counts[2])

    def counts(self) -> dict[str, Any]:
        """The counts set, by their Python names (for traces and telemetry)."""
        return self.model_dump(mode="json", exclude_none=True)


class FunctionDeclaration(_Model):
    """A tool as the model sees it: name, description, and its parameters as google-genai's
    declaration has them, in one of two fields: ``parameters`` (a JSON schema in Gemini's
    OpenAPI subset, adapted for each provider) or ``parameters_json_schema`` (a full JSON
    schema, kept as given and sent as given: Gemini's ``parametersJsonSchema``, the
    other providers' tool schema). Both are kept when both are given (google-genai does
    not refuse it either; Gemini does). ``response_json_schema``: a JSON schema of the
    tool's result where it is known (an MCP tool's ``outputSchema``), sent to Gemini as
    given, as google-adk sends it; other providers have no place for it. ``behavior``
    (``NON_BLOCKING``: a live conversation goes on while the function runs) is sent to
    Gemini as given, as google-genai sends it."""

    name: str
    description: str = ""
    parameters: dict[str, Any] | None = None
    parameters_json_schema: Any = None
    response_json_schema: Any = None
    #: google.genai's ``behavior``: how a live model waits for the function (sent as given)
    behavior: Behavior | None = None

    @field_validator("parameters", mode="before")
    @classmethod
    def _schema_as_json(cls, value: Any) -> Any:
        """``parameters`` given as a ``types.Schema`` (ours or google.genai's) is kept as
        its JSON schema (``_genai_schema.json_schema_of``)."""
        return json_schema_of(value) if isinstance(value, BaseModel) else value

    @property
    def parameters_schema(self) -> dict[str, Any] | None:
        """The parameters' JSON schema, whichever field holds it (``parameters_json_schema``
        first), for a provider with a single schema of a tool's parameters."""
        if isinstance(self.parameters_json_schema, dict):
            return self.parameters_json_schema
        return self.parameters


def _instruction_text(value: Any) -> str:
    """A system instruction as text: a string as is; a Content's (ours or
    google.genai's) or a list of parts' texts joined by a newline."""
    if value is None or isinstance(value, str):
        return value or ""
    parts = getattr(value, "parts", value)
    if isinstance(parts, list | tuple):
        return "\n".join(text for text in (getattr(p, "text", p) for p in parts) if isinstance(text, str))
    raise TypeError(f"a system instruction is a str or a Content, not {type(value).__name__}")


class RequestConfig(dict[str, Any]):
    """One request's generation settings (``temperature``, ``max_tokens`` ...): a dict,
    which google-adk callback code may also use as its ``GenerateContentConfig``:
    ``config.temperature`` reads a setting (None when unset), ``config.temperature =
    0.2`` sets it, and ``config.system_instruction`` reads and sets the request's
    system instruction (a str, or a Content whose texts are joined)."""

    __slots__ = ("_request",)

    def __init__(self, settings: Mapping[str, Any], request: LlmRequest) -> None:
        super().__init__(settings)
        object.__setattr__(self, "_request", request)

    def __getattr__(self, name: str) -> Any:
        if name == "system_instruction":
            return self._request.system_instruction
        if name.startswith("__"):
            raise AttributeError(name)
        return self.get(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "system_instruction":
            self._request.system_instruction = _instruction_text(value)
        elif value is None:
            self.pop(name, None)
        else:
            self[name] = value

    def __reduce__(self) -> Any:
        return dict, (dict(self),)


class ToolsDict(dict[str, Any]):
    """A request's tools by name (``LlmRequest.tools_dict``): the tool objects are
    shared, never copied (a deep copy of the request copies the map only), and they
    stay in their process (pickled, the map is empty: tools travel by import path)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> ToolsDict:
        return ToolsDict(self)

    def __reduce__(self) -> Any:
        return ToolsDict, ()


class LlmRequest(_Model):
    """One call to a model. A ``before_model`` callback may change it in place, as in
    google-adk: ``contents`` is a list, ``config`` a :class:`RequestConfig`,
    ``append_instructions`` adds to the system instruction, ``tools_dict`` is the step's
    tools by name, ``append_tools`` declares and adds more (callable by the model in
    this step), ``set_output_schema`` asks for JSON. The flow then :meth:`settles` it
    before the model gets it."""

    model: str = ""
    system_instruction: str = ""
    contents: list[Content] = Field(default_factory=list)
    tools: list[FunctionDeclaration] = Field(default_factory=list)
    #: Gemini's own tools (google_search, url_context, code execution...), each as its
    #: entry of Gemini's ``tools`` list in Gemini's JSON (``{"googleSearch": {}}``), in
    #: the order they were added; only a Gemini model reads them
    builtin_tools: list[dict[str, Any]] = Field(default_factory=list)
    config: dict[str, Any] = Field(default_factory=dict)
    #: context caching (google-adk's): the App's config, the cache the last call used,
    #: and that call's prompt tokens (a cache is made only once these are known)
    cache_config: ContextCacheConfig | None = None
    cache_metadata: CacheMetadata | None = None
    cacheable_contents_token_count: int | None = None
    #: the step's tools by name, as google-adk's (never dumped; see :class:`ToolsDict`)
    tools_dict: dict[str, Any] = Field(default_factory=ToolsDict, exclude=True)

    @model_validator(mode="after")
    def _config_view(self) -> LlmRequest:
        self.__dict__["config"] = RequestConfig(self.config, self)
        return self

    def append_instructions(self, instructions: list[str] | Any) -> None:
        """Add texts (or a Content's texts) to the system instruction, each after a
        blank line (google-adk's ``LlmRequest.append_instructions``)."""
        texts = instructions if isinstance(instructions, list) else [_instruction_text(instructions)]
        self.system_instruction = "\n\n".join(t for t in [self.system_instruction, *texts] if t)

    def append_tools(self, tools: Sequence[Any]) -> None:
        """Declare each of ``tools`` (its ``declaration()``, else google-adk's
        ``_get_declaration()``; a tool that declares nothing is skipped) after the
        request's tools, and put it in ``tools_dict`` under its name (a tool already
        there of that name is replaced, as in google-adk). A declaration that is not
        FunctionDeclaration-shaped raises pydantic's ValidationError."""
        for tool in tools or ():
            declare = getattr(tool, "declaration", None)
            declared = declare() if callable(declare) else tool._get_declaration()
            if declared is None:
                continue
            if not isinstance(declared, FunctionDeclaration):
                declared = FunctionDeclaration.model_validate(
                    declared.model_dump(exclude_none=True) if isinstance(declared, BaseModel) else declared)
            self.tools.append(declared)
            self.tools_dict[tool.name] = tool

    def set_output_schema(self, output_schema: Any = None, *, base_model: Any = None) -> None:
        """Ask the model for JSON of ``output_schema`` (a pydantic model class or a JSON
        schema dict; ``base_model`` is google-adk's older name): the config's
        ``response_schema`` and ``response_mime_type``. Neither given: a ValueError, as
        google-adk's; another kind of schema: :class:`AgentDefinitionError`."""
        schema = output_schema or base_model
        if schema is None:
            raise ValueError("Either output_schema or base_model must be provided.")
        self.config["response_schema"] = output_schema_json(schema)
        self.config["response_mime_type"] = "application/json"

    def settle(self) -> LlmRequest:
        """After callback code changed it: ``contents`` it added as google.genai objects
        become ours, a system instruction given as a Content becomes its text. A
        content that is not Content-shaped raises pydantic's ValidationError."""
        self.contents = [c if isinstance(c, Content) else Content.model_validate(c) for c in self.contents]
        self.system_instruction = _instruction_text(self.system_instruction)
        return self


class LlmResponse(_CallsAndResponses, _Model):
    content: Content | None = None
    partial: bool | None = None
    turn_complete: bool | None = None
    finish_reason: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    usage_metadata: UsageMetadata | None = None
    model_version: str | None = None
    grounding_metadata: GroundingMetadata | None = None
    input_transcription: Transcription | None = None
    output_transcription: Transcription | None = None
    interrupted: bool | None = None
    cache_metadata: CacheMetadata | None = None  # the context cache a Gemini call used


class LiveRequest(_Model):
    """One message of a live run's caller (google-adk's ``LiveRequest``, same fields).

    ``content``: a turn (text, or a tool's result; with ``partial`` the model waits for
    more before it answers); ``blob``: a chunk of audio or a video frame, sent to the
    model as it comes; ``activity_start`` / ``activity_end``: the user starts / stops
    speaking (when the client detects it); ``audio_stream_end``: the microphone is off;
    ``close``: the run ends; ``state_delta``: committed on a user event. When several
    are set, as in google-adk: ``close`` first, ``state_delta`` always, then only the
    first of activity_start, activity_end, audio_stream_end, blob, content."""

    content: Content | None = None
    blob: Blob | None = None
    activity_start: dict[str, Any] | None = None
    activity_end: dict[str, Any] | None = None
    audio_stream_end: bool | None = None
    close: bool | None = None
    partial: bool | None = None
    state_delta: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _says_something(self) -> LiveRequest:
        if not (self.close or self.state_delta or self.audio_stream_end or any(
                getattr(self, name) is not None for name in ("content", "blob", "activity_start", "activity_end"))):
            raise ValueError("a LiveRequest carries content, blob, activity_start, activity_end, "
                             "audio_stream_end, close or state_delta")
        return self


class StreamingMode(enum.StrEnum):
    NONE = "none"
    SSE = "sse"


class ToolThreadPoolConfig(_Model):
    """google-adk's bound on the threads that run synchronous tool functions
    (``RunConfig.tool_thread_pool_config``): at most ``max_workers`` (at least 1,
    default 4) such calls of the runs on one event loop run at once, the others wait
    for a free worker (see ``tools._tool_pool``). An unknown key is refused."""

    max_workers: int = Field(default=4, ge=1)


class RunConfig(_Model):
    """Per-run settings; ``generate_config`` overrides the agent's key by key.
    ``tool_thread_pool_config``: None (the default), each synchronous tool call runs
    on a daemon thread of its own, every call of a step at once; set, those calls
    (and synchronous ``require_confirmation`` predicates) share the bounded pool of
    daemon workers it names (see ``tools._tool_pool``)."""

    streaming_mode: StreamingMode = StreamingMode.NONE
    max_llm_calls: int = Field(default=500, ge=1)
    generate_config: dict[str, Any] = Field(default_factory=dict)
    timeout: float | None = Field(default=None, gt=0)  # seconds; None: the host's run_timeout
    custom_metadata: dict[str, Any] | None = None
    #: live runs: "TEXT" or "AUDIO" answers (None: the model's default, audio for a
    #: live model); ignored by turns
    response_modalities: tuple[Literal["TEXT", "AUDIO"], ...] | None = None
    tool_thread_pool_config: ToolThreadPoolConfig | None = None
    #: google-adk's: other agents' thoughts relayed to the model as quoted context
    #: (``[agent] thought:``) instead of left out
    include_thoughts_from_other_agents: bool = False


def apply_state_delta(state: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """Apply an event's ``state_delta`` to ``state`` in place and return it: a key set
    to None is deleted, any other value replaces the key's. The one rule the store,
    the session partition's view and the engine's share."""
    for key, value in delta.items():
        if value is None:
            state.pop(key, None)
        else:
            state[key] = value
    return state


def model_name(model: object) -> str:
    """An agent's model as a name: the string itself, or the model object's ``name``."""
    if isinstance(model, str):
        return model
    return str(getattr(model, "name", "") or "")


class State(MutableMapping[str, Any]):
    """Session state seen through a pending delta: reads see writes at once, writes are recorded."""

    def __init__(self, base: Mapping[str, Any], delta: dict[str, Any]) -> None:
        self._base = base
        self.delta = delta

    def __getitem__(self, key: str) -> Any:
        if key in self.delta:
            return self.delta[key]
        return self._base[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.delta[key] = value

    def __delitem__(self, key: str) -> None:
        self.delta[key] = None

    def __iter__(self) -> Iterator[str]:
        return iter({**self._base, **self.delta})

    def __len__(self) -> int:
        return len({**self._base, **self.delta})

    def to_dict(self) -> dict[str, Any]:
        return {**self._base, **self.delta}


@dataclass(frozen=True)
class MemoryEntry:
    """One remembered message of an earlier session: its text, who said it, when
    (seconds since the epoch), its event's id."""

    text: str
    author: str
    timestamp: float
    id: str | None = None

    @property
    def content(self) -> Content:
        """The text as google-adk's ``MemoryEntry.content`` (role user when the user said it)."""
        return Content(role="user" if self.author == "user" else "model", parts=(Part(text=self.text),))

    @property
    def iso_timestamp(self) -> str:
        """When, in ISO 8601 with its UTC offset."""
        return datetime.datetime.fromtimestamp(self.timestamp, datetime.UTC).isoformat()

    def to_dict(self) -> dict[str, Any]:
        """google-adk's JSON form of a memory entry (its ``model_dump``, None left out)."""
        found = {"content": self.content.model_dump(mode="json", exclude_none=True), "custom_metadata": {},
                 "id": self.id, "author": self.author, "timestamp": self.iso_timestamp}
        return {key: value for key, value in found.items() if value is not None}


@dataclass(frozen=True)
class SearchMemoryResponse:
    """What ``search_memory`` finds (google-adk's shape): ``memories``, best first."""

    memories: list[MemoryEntry] = field(default_factory=list)
