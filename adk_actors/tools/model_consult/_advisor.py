"""One call of the advisor model for :class:`ModelConsultTool`: a request with no
tools (the advisor answers in text and cannot call any), sent without streaming, its
visible text, usage and model version kept.

:func:`call_advisor`, in order: builds the request (the base config copied, the
system instruction, no tools nor tool config, ``max_output_tokens``, the thinking
level as ``thinking_config``); asks the model, within what is left of
``timeout_seconds``; when the model refuses the thinking settings (its error speaks of
thinking), asks once more without them. A timeout, an error response (other than
the output cap), an exception, or no visible text is an :class:`AdvisorError`; text
cut by the output cap ends with a line saying so. After each attempt (the one without
thinking settings too), whether it answered or failed, the telemetry event
``("adk", "consult", "stop")`` is emitted: its ``duration`` in seconds, and the agent
name google-adk labels its metrics with (the tool's name), the model asked, the
version it reported, the newest usage it reported and the error's type when the
attempt failed. The OpenTelemetry bridge (:mod:`adk_actors.otel`) records it as
google-adk records its advisor call: ``gen_ai.client.operation.duration`` and
``gen_ai.client.token.usage``.
"""

from __future__ import annotations

import asyncio
import enum
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ... import telemetry
from ..._types import Content, LlmRequest, LlmResponse
from ...models._llm_registry import BaseLlm, LLMRegistry
from ...types import generate_config_of

__all__ = ["AdvisorError", "AdvisorResult", "AdvisorUsage", "call_advisor", "model_label", "resolve_advisor_llm",
           "resolve_thinking_level"]

_LEVELS = ("minimal", "low", "medium", "high")
_OFF = ("", "none", "off")
_CAPPED = "\n\n[the advisor's guidance was cut at max_output_tokens]"


class AdvisorError(RuntimeError):
    """The advisor could not give guidance (see :func:`call_advisor`)."""


def _count(meta: Any, name: str) -> int:
    value = getattr(meta, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass(frozen=True, kw_only=True)
class AdvisorUsage:
    """The tokens of one advisor call (or of several added up with ``+``)."""

    prompt_tokens: int = 0
    output_tokens: int = 0
    thoughts_tokens: int = 0
    cached_tokens: int = 0
    total_tokens: int = 0

    @classmethod
    def from_metadata(cls, meta: Any) -> AdvisorUsage:
        """From a response's usage metadata (ours or google.genai's; None: all zero):
        prompt = prompt + tool-use prompt tokens, output = candidate tokens, thoughts,
        cached; the total as reported, else the sum of the first three."""
        if meta is None:
            return cls()
        prompt = _count(meta, "prompt_token_count") + _count(meta, "tool_use_prompt_token_count")
        output = _count(meta, "candidates_token_count")
        thoughts = _count(meta, "thoughts_token_count")
        total = _count(meta, "total_token_count") or prompt + output + thoughts
        return cls(prompt_tokens=prompt, output_tokens=output, thoughts_tokens=thoughts,
                   cached_tokens=_count(meta, "cached_content_token_count"), total_tokens=total)

    def __add__(self, other: AdvisorUsage) -> AdvisorUsage:
        if not isinstance(other, AdvisorUsage):
            return NotImplemented
        return AdvisorUsage(**{k: v + other.to_dict()[k] for k, v in self.to_dict().items()})

    def to_dict(self) -> dict[str, int]:
        """The counts by name, JSON-ready."""
        return {"prompt_tokens": self.prompt_tokens, "output_tokens": self.output_tokens,
                "thoughts_tokens": self.thoughts_tokens, "cached_tokens": self.cached_tokens,
                "total_tokens": self.total_tokens}


@dataclass(frozen=True, kw_only=True)
class AdvisorResult:
    """One consult's outcome: the visible text, the model's configured name and the
    version it reported, the usage, and the whole call's duration in milliseconds."""

    text: str
    model: str
    model_version: str | None
    usage: AdvisorUsage
    latency_ms: float


def resolve_thinking_level(level: Any) -> str | None:
    """``level`` as a thinking level's wire name (``"MINIMAL"`` ... ``"HIGH"``), or
    None for none: None, ``""``, ``"none"``, ``"off"`` or an unspecified enum member.
    Strings are read case-insensitively; an enum member (google.genai's
    ``ThinkingLevel``) by its value. Anything else is a ValueError."""
    if level is None:
        return None
    if isinstance(level, enum.Enum):
        value = str(level.value).upper()
        if value == "THINKING_LEVEL_UNSPECIFIED":
            return None
        if value.lower() in _LEVELS:
            return value
        raise ValueError(f"advisor thinking_level {level!r} is not a thinking level")
    if not isinstance(level, str):
        raise ValueError(f"advisor thinking_level {level!r} must be a string or a ThinkingLevel")
    key = level.strip().lower()
    if key in _OFF:
        return None
    if key not in _LEVELS:
        raise ValueError(f"advisor thinking_level {level!r} is none of {sorted([*_LEVELS, 'off'])}")
    return key.upper()


def resolve_advisor_llm(model: Any) -> Any:
    """The advisor for ``model``: a ``BaseLlm`` (or a model of ours, with ``generate``)
    as it is; a non-empty name as ``LLMRegistry.new_llm`` makes it (a name no class
    serves is its ValueError). Anything else is a ValueError."""
    if isinstance(model, BaseLlm) or (not isinstance(model, str) and callable(getattr(model, "generate", None))):
        return model
    if isinstance(model, str) and model.strip():
        return LLMRegistry.new_llm(model.strip())
    raise ValueError(f"advisor model {model!r} must be a model name or a BaseLlm")


def model_label(model: Any) -> str:
    """A model's name: a BaseLlm's ``model``, else ours' ``name``."""
    return str(getattr(model, "model", None) or getattr(model, "name", "") or "")


def _capped(reason: Any) -> bool:
    return reason is not None and str(reason).upper().endswith("MAX_TOKENS")


def _about_thinking(error: BaseException) -> bool:
    text = str(error).lower()
    if any(w in text for w in ("thinking_config", "thinkingconfig", "thinking_level", "thinking level",
                               "thinking_budget", "thinking budget", "thinkinglevel")):
        return True
    return "thinking" in text and any(w in text for w in ("unsupported", "not support", "unknown", "unexpected",
                                                          "only available", "not allowed", "cannot"))


def _request(model: Any, contents: Sequence[Content], system_instruction: str, level: str | None,
             max_output_tokens: int | None, base: Any, keep_thinking: bool) -> LlmRequest:
    fields: dict[str, Any] = {}
    if base is not None:
        fields = base.model_dump(exclude_none=True) if hasattr(base, "model_dump") else dict(base)
    thinking = fields.pop("thinking_config", None)
    for name in ("system_instruction", "tools", "tool_config"):  # the advisor's own, set below
        fields.pop(name, None)
    config = generate_config_of(fields)
    if max_output_tokens is not None:
        config["max_output_tokens"] = max_output_tokens
    if keep_thinking:
        existing = dict(thinking or {})
        if level is not None:
            thinking = {"thinking_level": level, **({"include_thoughts": existing["include_thoughts"]}
                                                    if existing.get("include_thoughts") is not None else {})}
        if thinking:
            config["thinking_config"] = thinking
    return LlmRequest(model=model_label(model), contents=list(contents), system_instruction=system_instruction,
                      config=config)


@dataclass
class _Seen:
    """What an attempt's responses reported so far (kept when it fails midway)."""

    version: str | None = None
    usage: Any = None


def _report(agent_name: str, began: float, request: LlmRequest, seen: _Seen, error: BaseException | None) -> None:
    """The attempt's ``("adk", "consult", "stop")`` telemetry event (see the module)."""
    usage = seen.usage
    counts = usage.counts() if callable(getattr(usage, "counts", None)) else (
        usage.model_dump(mode="json", exclude_none=True) if hasattr(usage, "model_dump") else None)
    telemetry.execute(("adk", "consult", "stop"), {"duration": time.perf_counter() - began}, {
        "agent": agent_name, "model": request.model, "model_version": seen.version, "usage": counts,
        "error": None if error is None else (getattr(error, "error_type", None) or type(error).__name__)})


async def _answer(model: Any, request: LlmRequest, seen: _Seen) -> tuple[str, str | None, str | None, AdvisorUsage]:
    """The model's visible text, version, finish reason and usage for ``request``
    (the version and usage also in ``seen`` as they come)."""
    texts: list[str] = []
    version: str | None = None
    reason: str | None = None
    usage: Any = None
    responses: AsyncIterator[LlmResponse] = model.generate(request, stream=False)
    try:
        async for response in responses:
            version = seen.version = response.model_version or version
            if response.finish_reason:
                reason = response.finish_reason
            elif _capped(response.error_code):
                reason = "MAX_TOKENS"
            if response.usage_metadata is not None:
                usage = seen.usage = response.usage_metadata  # the newest: adapters report running totals
            if response.error_code and not _capped(response.error_code) and not _capped(response.finish_reason):
                raise AdvisorError(f"the advisor {model_label(model)} answered with error {response.error_code}: "
                                   f"{response.error_message or 'no message'}")
            if response.partial or response.content is None:
                continue
            texts.extend(p.text for p in response.content.parts if p.text and not p.thought)
    finally:
        close: Callable[[], Any] | None = getattr(responses, "aclose", None)
        if close is not None:
            await close()
    return "".join(texts).strip(), version, reason, AdvisorUsage.from_metadata(usage)


async def call_advisor(model: Any, contents: Sequence[Content], *, system_instruction: str,
                       thinking_level: str | None = None, max_output_tokens: int | None = None,
                       timeout_seconds: float | None = None, generate_content_config: Any = None,
                       agent_name: str = "model_consult") -> AdvisorResult:
    """Ask ``model`` (a ``BaseLlm`` or a model of ours) once (see the module). Raises
    ValueError for a ``timeout_seconds`` not above zero, AdvisorError when no guidance
    comes. ``agent_name`` labels the attempts' telemetry events, as google-adk's metrics."""
    if timeout_seconds is not None and timeout_seconds <= 0:
        raise ValueError(f"timeout_seconds must be above zero, not {timeout_seconds!r}")
    started = time.perf_counter()
    deadline = None if timeout_seconds is None else started + timeout_seconds
    keep_thinking = True
    while True:
        request = _request(model, contents, system_instruction, thinking_level, max_output_tokens,
                           generate_content_config, keep_thinking)
        retry_possible = keep_thinking and "thinking_config" in request.config
        seen, attempt_began = _Seen(), time.perf_counter()
        try:
            asked = _answer(model, request, seen)
            if deadline is None:
                text, version, reason, usage = await asked
            else:
                text, version, reason, usage = await asyncio.wait_for(asked, max(0.0, deadline - time.perf_counter()))
            if not text:
                if _capped(reason):
                    raise AdvisorError(f"the advisor {model_label(model)} reached max_output_tokens="
                                       f"{request.config.get('max_output_tokens')} before any visible text (thoughts "
                                       f"took {usage.thoughts_tokens} tokens): raise max_output_tokens or lower "
                                       "thinking_level")
                raise AdvisorError(f"the advisor {model_label(model)} gave no text (finish_reason={reason})")
        except TimeoutError as exc:
            _report(agent_name, attempt_began, request, seen, exc)
            limit = f" after {timeout_seconds}s" if timeout_seconds is not None else f": {exc}"
            raise AdvisorError(f"the advisor {model_label(model)} did not answer{limit}") from exc
        except AdvisorError as exc:
            _report(agent_name, attempt_began, request, seen, exc)
            raise
        except Exception as exc:
            _report(agent_name, attempt_began, request, seen, exc)
            if retry_possible and _about_thinking(exc):
                keep_thinking = False
                continue
            raise AdvisorError(f"the advisor {model_label(model)} failed: {exc}") from exc
        _report(agent_name, attempt_began, request, seen, None)
        break
    if _capped(reason):
        text += _CAPPED
    return AdvisorResult(text=text, model=model_label(model), model_version=version, usage=usage,
                         latency_ms=(time.perf_counter() - started) * 1000.0)
