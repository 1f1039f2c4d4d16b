"""google.genai's ``types`` names that agent files use, on our own data classes.

A google-adk agent file moves over by changing ``from google.genai import types`` to
``from adk_actors import types``: ``types.Content``, ``types.Part``, ``types.Blob``,
``types.FunctionCall`` / ``FunctionResponse`` / ``FunctionDeclaration`` are ours
(with google.genai's live enums ``Behavior`` and ``FunctionResponseScheduling``);
``types.ModelContent(...)`` and ``types.UserContent(...)`` build a Content with its
role; :class:`GenerateContentConfig` (with :class:`SafetySetting`, the harm enums and
:class:`ThinkingConfig`) is what ``generate_content_config=`` takes.

An agent file may also keep ``google.genai.types`` when google-genai is installed:
:func:`ours` turns google.genai's objects (anything with pydantic's ``model_dump``)
into ours where the engine receives them (callback results, tool results, messages,
``generate_content_config``). :class:`Schema` and :class:`Type` (a custom tool's
declared parameters, an agent's ``output_schema``) are ours too (``_genai_schema``).

Every other name google.genai's ``types`` has (``types.SpeechConfig``,
``types.Modality``, ``types.GenerateContentResponse``, ...) is google.genai's own
class, looked up on first use (module ``__getattr__``): an agent file keeps working
after its imports are rewritten, and nothing is imported until such a name is used.
When google-genai is not installed, such a name raises AttributeError saying which
package gives it (``pip install 'adk-actors[genai]'``).
"""

from __future__ import annotations

import enum
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ._exceptions import InvalidRequestError
from ._extras import extra_hint
from ._genai_schema import Schema, Type
from ._types import (
    Behavior,
    Blob,
    CodeExecutionResult,
    Content,
    ExecutableCode,
    FileData,
    FunctionCall,
    FunctionDeclaration,
    FunctionResponse,
    FunctionResponsePart,
    FunctionResponseScheduling,
    GroundingMetadata,
    Part,
    fields_of_foreign,
)

__all__ = [
    "Behavior",
    "Blob",
    "CodeExecutionResult",
    "Content",
    "ExecutableCode",
    "FileData",
    "FinishReason",
    "FunctionCall",
    "FunctionCallingConfig",
    "FunctionCallingConfigMode",
    "FunctionDeclaration",
    "FunctionResponse",
    "FunctionResponsePart",
    "FunctionResponseScheduling",
    "GenerateContentConfig",
    "GroundingMetadata",
    "HarmBlockThreshold",
    "HarmCategory",
    "HttpRetryOptions",
    "ModelContent",
    "Part",
    "SafetySetting",
    "Schema",
    "ThinkingConfig",
    "ToolConfig",
    "Type",
    "UserContent",
    "generate_config_of",
    "ours",
]

T = TypeVar("T", bound=BaseModel)


def _parts(parts: Any) -> tuple[Part, ...]:
    items = parts if isinstance(parts, (list, tuple)) else [parts]
    return tuple(Part(text=item) if isinstance(item, str) else ours(item, Part) for item in items)


def ModelContent(parts: Any) -> Content:
    """A Content of the model: ``parts`` is a string, a Part, or a list of them."""
    return Content(role="model", parts=_parts(parts))


def UserContent(parts: Any) -> Content:
    """A Content of the user: ``parts`` is a string, a Part, or a list of them."""
    return Content(role="user", parts=_parts(parts))


class FinishReason(enum.StrEnum):
    """Why a model stopped (google.genai's ``FinishReason``, its members); an
    ``LlmResponse.finish_reason`` compares equal to its member."""

    FINISH_REASON_UNSPECIFIED = "FINISH_REASON_UNSPECIFIED"
    STOP = "STOP"
    MAX_TOKENS = "MAX_TOKENS"
    SAFETY = "SAFETY"
    RECITATION = "RECITATION"
    LANGUAGE = "LANGUAGE"
    OTHER = "OTHER"
    BLOCKLIST = "BLOCKLIST"
    PROHIBITED_CONTENT = "PROHIBITED_CONTENT"
    SPII = "SPII"
    MALFORMED_FUNCTION_CALL = "MALFORMED_FUNCTION_CALL"
    IMAGE_SAFETY = "IMAGE_SAFETY"
    UNEXPECTED_TOOL_CALL = "UNEXPECTED_TOOL_CALL"
    TOO_MANY_TOOL_CALLS = "TOO_MANY_TOOL_CALLS"
    IMAGE_PROHIBITED_CONTENT = "IMAGE_PROHIBITED_CONTENT"
    NO_IMAGE = "NO_IMAGE"
    IMAGE_RECITATION = "IMAGE_RECITATION"
    IMAGE_OTHER = "IMAGE_OTHER"
    CONTINUATION = "CONTINUATION"


class FunctionCallingConfigMode(enum.StrEnum):
    """How the model may call functions (google.genai's ``FunctionCallingConfigMode``)."""

    MODE_UNSPECIFIED = "MODE_UNSPECIFIED"
    AUTO = "AUTO"
    ANY = "ANY"
    NONE = "NONE"
    VALIDATED = "VALIDATED"


class HarmCategory(enum.StrEnum):
    HARM_CATEGORY_UNSPECIFIED = "HARM_CATEGORY_UNSPECIFIED"
    HARM_CATEGORY_HATE_SPEECH = "HARM_CATEGORY_HATE_SPEECH"
    HARM_CATEGORY_DANGEROUS_CONTENT = "HARM_CATEGORY_DANGEROUS_CONTENT"
    HARM_CATEGORY_HARASSMENT = "HARM_CATEGORY_HARASSMENT"
    HARM_CATEGORY_SEXUALLY_EXPLICIT = "HARM_CATEGORY_SEXUALLY_EXPLICIT"
    HARM_CATEGORY_CIVIC_INTEGRITY = "HARM_CATEGORY_CIVIC_INTEGRITY"


class HarmBlockThreshold(enum.StrEnum):
    HARM_BLOCK_THRESHOLD_UNSPECIFIED = "HARM_BLOCK_THRESHOLD_UNSPECIFIED"
    BLOCK_LOW_AND_ABOVE = "BLOCK_LOW_AND_ABOVE"
    BLOCK_MEDIUM_AND_ABOVE = "BLOCK_MEDIUM_AND_ABOVE"
    BLOCK_ONLY_HIGH = "BLOCK_ONLY_HIGH"
    BLOCK_NONE = "BLOCK_NONE"
    OFF = "OFF"


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", use_enum_values=True)


class SafetySetting(_Config):
    category: HarmCategory
    threshold: HarmBlockThreshold


class ThinkingConfig(_Config):
    include_thoughts: bool | None = None
    thinking_budget: int | None = None


class HttpRetryOptions(_Config):
    """google.genai's retry settings of a model (``Gemini(retry_options=...)``): how
    many attempts in all and the backoff's first and longest wait, in seconds. Unset
    fields take google.genai's defaults (5 attempts, 1 s, 60 s) where they are read.
    google.genai's ``exp_base``, ``jitter`` and ``http_status_codes`` are not taken
    (the backoff here is full-jitter, doubling, on the retryable statuses): setting
    one is refused by name."""

    attempts: int | None = None
    initial_delay: float | None = None
    max_delay: float | None = None


class FunctionCallingConfig(_Config):
    """google.genai's ``FunctionCallingConfig``: the mode, and the only functions the
    model may call in modes ``ANY`` and ``VALIDATED``."""

    mode: FunctionCallingConfigMode | None = None
    allowed_function_names: list[str] | None = None


class ToolConfig(_Config):
    """google.genai's ``ToolConfig`` (its function-calling part): set on a request's
    config as ``llm_request.config.tool_config``, it is sent to Gemini as ``toolConfig``."""

    function_calling_config: FunctionCallingConfig | None = None


class GenerateContentConfig(_Config):
    """The sampling settings of google.genai's config that a model request carries.
    Fields google.genai has and we do not are refused by name (a typo is not a
    setting quietly dropped). ``system_instruction``, ``tools``, ``response_schema``
    and ``http_options`` are taken, as google.genai's config takes them, so that an
    agent given such a config refuses it as google-adk's does (they belong on the
    agent or the model): :func:`generate_config_of` refuses them."""

    temperature: float | None = None
    top_p: float | None = None
    top_k: float | None = None
    candidate_count: int | None = None
    max_output_tokens: int | None = None
    stop_sequences: list[str] | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    seed: int | None = None
    response_mime_type: str | None = None
    safety_settings: list[SafetySetting] | None = None
    thinking_config: ThinkingConfig | None = None
    system_instruction: Any = None
    tools: Any = None
    response_schema: Any = None
    http_options: Any = None


#: What a GenerateContentConfig carries that is set elsewhere, and where.
_NOT_SAMPLING = {"system_instruction": "the agent's instruction", "tools": "the agent's tools",
                "response_schema": "the agent's output_schema", "http_options": "the model"}


def ours(value: Any, cls: type[T]) -> T:
    """``value`` as our ``cls``: returned as is when it already is one; a google.genai
    object (or any pydantic model) or a dict is validated field by field. Raises
    :class:`InvalidRequestError` naming the class when it does not fit."""
    if isinstance(value, cls):
        return value
    try:
        return cls.model_validate(fields_of_foreign(cls, value))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(step) for step in first["loc"]) or "value"
        raise InvalidRequestError(f"{type(value).__name__} is not a {cls.__name__}: {where}: {first['msg']}") from exc


def generate_config_of(config: Any) -> dict[str, Any]:
    """A ``generate_content_config`` (ours, google.genai's or a dict of its fields)
    as the ``generate_config`` dict our model connectors read: unset fields left out,
    ``stop_sequences`` as ``stop``. A config that sets what belongs elsewhere
    (a system instruction, tools, a response schema, HTTP options) raises :class:`InvalidRequestError` naming the place."""
    settings = ours(config, GenerateContentConfig).model_dump(exclude_none=True)
    for name, place in _NOT_SAMPLING.items():
        if settings.pop(name, None):
            raise InvalidRequestError(f"a GenerateContentConfig's {name} is not a sampling setting: set it on {place}")
    if "stop_sequences" in settings:
        settings["stop"] = settings.pop("stop_sequences")
    return settings


def __getattr__(name: str) -> Any:
    """A google.genai ``types`` name this module does not define: google.genai's own,
    imported on first use (see the module's docstring). AttributeError when google-genai
    is not installed (saying what to install) or has no such name."""
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        from google.genai import types as genai_types
    except ImportError:
        raise AttributeError(f"adk_actors.types.{name} is google-genai's, and {extra_hint('genai')}") from None
    try:
        return getattr(genai_types, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r} (nor has google.genai.types)") from None
