"""``load_artifacts``: google-adk's ``LoadArtifactsTool``, on our engine.

Declared with one optional parameter, ``artifact_names`` (a list of strings). Before
each model call of an agent that has it (:meth:`LoadArtifactsTool.process_llm_request`,
which the flow calls after the request is compiled): lists the session's artifacts and,
when there are some, tells the model their names in the system instruction; then, when
the request's last message answers a ``load_artifacts`` call, appends one user message
per artifact it named that the session has: ``Artifact <name> is:`` and the artifact as
a part the model can read (an image, audio, video or PDF as it is; a text-like one as
its text; any other binary as a line saying what it is). The artifacts are in that one
request only, never in the session. A name the session does not list (the model's
choice, so untrusted) is skipped; a ``user:`` prefix the model dropped or added is
matched as google-adk matches it. Running the call answers the names it asked for and
a status line; bad arguments get an error result (``error_code: INVALID_ARGUMENTS``).
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from .._types import Blob, Content, FunctionDeclaration, LlmRequest, Part
from ._base import ToolContext
from ._classes import BaseTool

__all__ = ["LoadArtifactsTool", "load_artifacts_tool"]

_log = logging.getLogger("adk_actors.tools")

_USER = "user:"
_INLINE_PREFIXES = ("image/", "audio/", "video/")
_INLINE_TYPES = frozenset({"application/pdf"})
_NOT_INLINE = frozenset({"image/svg", "image/svg+xml", "image/xml"})
_TEXT_TYPES = frozenset({"application/json", "application/csv", "application/xml", "application/svg+xml",
                         "image/svg", "image/svg+xml", "image/xml"})
_TEXT_SUFFIXES = (".txt", ".csv", ".json", ".xml")

ProcessArtifact = Callable[[Part, str], "Part | Awaitable[Part | None] | None"]


def _names_or_none(value: Any) -> list[str] | None:
    """``value`` as a list of names, or None when it is not a sequence of strings."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        return None
    if not all(isinstance(v, str) for v in value):
        return None
    return list(value)


def _readable(part: Part, name: str) -> Part:
    """``part`` as a model can take it inline: text and supported media as they are; a
    text-like file as its text; any other binary as a line naming it."""
    blob: Blob | None = part.inline_data
    if blob is None:
        return part
    mime = (blob.mime_type or "").split(";", 1)[0].strip().lower() or "application/octet-stream"
    if mime not in _NOT_INLINE and (mime.startswith(_INLINE_PREFIXES) or mime in _INLINE_TYPES):
        return part
    if mime.startswith("text/") or mime in _TEXT_TYPES or name.lower().endswith(_TEXT_SUFFIXES):
        return Part(text=blob.data.decode("utf-8", errors="replace"))
    return Part(text=f"[{name}: {len(blob.data) / 1024:.1f} KB of {mime}, which cannot be shown here]")


def _resolve(requested: str, listed: set[str]) -> str | None:
    """The listed artifact the model meant by ``requested`` (its ``user:`` prefix
    dropped or added), or None."""
    if requested in listed:
        return requested
    if requested.startswith(_USER):
        return requested if requested.removeprefix(_USER) in listed else None
    return f"{_USER}{requested}" if f"{_USER}{requested}" in listed else None


async def _value(result: Any) -> Any:
    return await result if inspect.isawaitable(result) else result


class LoadArtifactsTool(BaseTool):
    """google-adk's ``LoadArtifactsTool``. ``process_artifact(part, name)`` (sync or
    async) replaces the built-in conversion of an artifact before it is put in the
    request; returning None leaves it out; one that raises is logged and the artifact
    left out. ``enable_spreadsheet_parsing`` is accepted; spreadsheets are described,
    not parsed, here."""

    def __init__(self, *, process_artifact: ProcessArtifact | None = None,
                 enable_spreadsheet_parsing: bool = False) -> None:
        super().__init__(name="load_artifacts",
                         description="Load the named artifacts of this session (files saved by tools or uploaded) "
                                     "so that the next answer can read them.")
        self._process_artifact = process_artifact
        self._enable_spreadsheet_parsing = enable_spreadsheet_parsing

    def _get_declaration(self) -> FunctionDeclaration:
        return FunctionDeclaration(name=self.name, description=self.description, parameters_json_schema={
            "type": "object", "properties": {"artifact_names": {"type": "array", "items": {"type": "string"}}}})

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        names = _names_or_none(args.get("artifact_names", []))
        if names is None:
            return {"error": "'artifact_names' must be a list of strings.", "error_code": "INVALID_ARGUMENTS"}
        return {"artifact_names": names,
                "status": "the artifacts' contents follow in this request only; call load_artifacts again "
                          "to read them later."}

    async def process_llm_request(self, *, tool_context: ToolContext, llm_request: LlmRequest) -> None:
        listed = list(await _value(tool_context.list_artifacts()))
        if not listed:
            return
        llm_request.append_instructions([
            f"These artifacts are available: {json.dumps(listed)}. To answer about one of them, call "
            f"load_artifacts with its name first, every time: do not rely on an earlier answer about it."])
        last = llm_request.contents[-1] if llm_request.contents else None
        if last is None:
            return
        for part in last.parts:
            answered = part.function_response
            if answered is None or answered.name != self.name:
                continue
            requested = _names_or_none((answered.response or {}).get("artifact_names", []))
            if requested is None:
                _log.warning("load_artifacts answered names that are not a list of strings: ignored")
                continue
            for name in requested:
                await self._append(name, set(listed), tool_context, llm_request)

    async def _append(self, requested: str, listed: set[str], tool_context: ToolContext,
                      llm_request: LlmRequest) -> None:
        name = _resolve(requested, listed)
        if name is None:
            _log.warning("artifact %r is not in this session: skipped", requested)
            return
        artifact = await _value(tool_context.load_artifact(name))
        if artifact is None and not name.startswith(_USER):
            name = f"{_USER}{name}"
            artifact = await _value(tool_context.load_artifact(name))
        if artifact is None:
            _log.warning("artifact %r was not found: skipped", name)
            return
        if self._process_artifact is None:
            shown: Part | None = _readable(artifact, requested)
        else:
            try:
                shown = await _value(self._process_artifact(artifact, name))
            except Exception:
                _log.exception("processing artifact %r failed: skipped", name)
                return
        if shown is not None:
            llm_request.contents.append(Content(role="user", parts=(Part(text=f"Artifact {requested} is:"), shown)))


load_artifacts_tool = LoadArtifactsTool()
