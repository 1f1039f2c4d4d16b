"""google-adk 2.x's per-node settings that every agent has (``BaseNode``'s fields on
``BaseAgent``), as plain data the agent definitions, the workflow and the engine
share: :class:`RetryConfig`, :class:`AgentMode`, and the state-schema check
(:func:`check_state_entry`, :class:`StateSchemaError`).

This module imports nothing of the package but the error base, so agent definitions
(``agents``) and the layers above it can all use it.
"""

from __future__ import annotations

import enum
import functools
import random
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, TypeAdapter, ValidationError, field_validator

from ._exceptions import AgentDefinitionError

__all__ = ["AgentMode", "LlmAgentMode", "RetryConfig", "StateSchemaError", "as_retry_config", "check_state_delta",
           "check_state_entry", "retry_allowed", "retry_delay", "retry_delays"]


class RetryConfig(BaseModel):
    """How a failed node is tried again (google-adk's fields and defaults): at most
    ``max_attempts`` attempts in all (None: 5; 0 or 1: no retry), the first retry after
    ``initial_delay`` s (None: 1.0), each next one ``backoff_factor`` times longer (None:
    2.0) up to ``max_delay`` s (None: 60.0), each delay spread by up to ``jitter`` of
    itself (None: 1.0); only on the exceptions named in ``exceptions`` (classes or
    class names, kept as names; None: any exception)."""

    max_attempts: int | None = None
    initial_delay: float | None = None
    max_delay: float | None = None
    backoff_factor: float | None = None
    jitter: float | None = None
    exceptions: list[str] | None = None

    @field_validator("exceptions", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        """Each exception class as its name; anything but a class or a name:
        :class:`AgentDefinitionError` (a ValueError, as google-adk's)."""
        if value is None:
            return None
        names = []
        for item in value:
            if isinstance(item, str):
                names.append(item)
            elif isinstance(item, type) and issubclass(item, BaseException):
                names.append(item.__name__)
            else:
                raise AgentDefinitionError(
                    f"RetryConfig.exceptions takes exception classes or their names, got {item!r}")
        return names


_RETRY_FIELDS = frozenset(RetryConfig.model_fields)


def as_retry_config(value: Any, target: type[BaseModel]) -> Any:
    """``value`` as an instance of ``target`` (a RetryConfig class) when it is another
    RetryConfig class's instance (the workflow's, google-adk's: a pydantic model with
    the same fields); anything else as it is, for the field's own validation."""
    if isinstance(value, BaseModel) and not isinstance(value, target) and set(type(value).model_fields) == _RETRY_FIELDS:
        return target.model_validate(value.model_dump())
    return value


class AgentMode(enum.StrEnum):
    """How an LlmAgent is delegated to (google-adk's values): ``chat`` (reached by
    ``transfer_to_agent``, talks with the user), ``task`` (a multi-turn task finished
    by a tool call), ``single_turn`` (does its task from its input alone). A member
    compares and prints as its string."""

    CHAT = "chat"
    TASK = "task"
    SINGLE_TURN = "single_turn"


#: What ``LlmAgent.mode`` takes: one of the three strings or an :class:`AgentMode`.
LlmAgentMode: TypeAlias = Literal["chat", "task", "single_turn"] | AgentMode


class StateSchemaError(TypeError):
    """A state write that the declared ``state_schema`` does not allow: a key it does
    not declare, or a value its field refuses (google-adk's error, a TypeError)."""


@functools.lru_cache(maxsize=256)
def _adapter(schema: type[BaseModel], key: str) -> TypeAdapter[Any]:
    return TypeAdapter(schema.model_fields[key].rebuild_annotation())


def check_state_entry(schema: type[BaseModel] | None, key: str, value: Any) -> None:
    """Nothing when ``schema`` is None or ``key`` is scoped (it holds ``:``: ``app:``,
    ``user:``, ``temp:`` and the framework's own keys pass); else, in order: a key the
    schema does not declare, then a value its field refuses, raise
    :class:`StateSchemaError` naming the key, the schema and what it declares."""
    if schema is None or ":" in key:
        return
    fields = schema.model_fields
    if key not in fields:
        raise StateSchemaError(f"Key '{key}' is not declared in state schema '{schema.__name__}'. "
                               f"Declared fields: {sorted(fields)}")
    try:
        _adapter(schema, key).validate_python(value)
    except ValidationError as exc:
        raise StateSchemaError(f"Value for '{key}' does not satisfy field '{key}' "
                               f"({fields[key].rebuild_annotation()}) in '{schema.__name__}': {exc}") from exc


def check_state_delta(schema: type[BaseModel] | None, delta: dict[str, Any]) -> None:
    """Every entry of ``delta`` checked in order (see :func:`check_state_entry`)."""
    if schema is None:
        return
    for key, value in delta.items():
        check_state_entry(schema, key, value)


def retry_delays(config: Any) -> tuple[int, float, float, float, float]:
    """(attempts in all, initial delay, max delay, backoff factor, jitter), google-adk's
    defaults filled in; no config: one attempt."""
    if config is None:
        return 1, 0.0, 0.0, 0.0, 0.0
    attempts = 5 if config.max_attempts is None else max(1, config.max_attempts)
    return (attempts, 1.0 if config.initial_delay is None else config.initial_delay,
            60.0 if config.max_delay is None else config.max_delay,
            2.0 if config.backoff_factor is None else config.backoff_factor,
            1.0 if config.jitter is None else config.jitter)


def retry_allowed(config: Any, error: BaseException) -> bool:
    """Whether ``error`` is one ``config`` retries (its class or a base class named)."""
    names = None if config is None else config.exceptions
    return names is None or any(cls.__name__ in names for cls in type(error).__mro__ if cls is not object)


def retry_delay(config: Any, attempt: int) -> float:
    """The wait after failed attempt number ``attempt`` (from 1), google-adk's rule:
    exponential from the initial delay; with jitter, capped so the spread stays under
    the max delay, then spread at random."""
    _, initial, max_delay, factor, jitter = retry_delays(config)
    delay = initial * factor ** (attempt - 1)
    if jitter > 0:
        delay = min(delay, max_delay / (1.0 + jitter))
        delay = max(0.0, delay + random.uniform(-jitter * delay, jitter * delay))
    return min(delay, max_delay)
