"""``A``: adk-fluent's artifact steps, between the state and the session's artifacts,
used as steps of a pipeline (``writer.writes("report") >> A.publish("report.md",
from_key="report")``).

* ``A.publish(filename, from_key=, mime=None, metadata=None, scope="session")``: the
  value at ``state[from_key]`` saved as the next version of ``filename`` (text as a
  text part; bytes as inline data of ``mime``, guessed from the name; any other value
  as its JSON text).
* ``A.snapshot(filename, into_key=, version=None, decode=False, scope="session")``:
  the artifact (its latest version, or ``version``) copied into ``state[into_key]``:
  a text part's text; inline data as text when its type is text (or ``decode``),
  else as base64 (the state holds JSON only); nothing there: None.
* ``A.save(filename, content=, mime=None, scope="session")``: literal content saved.
* ``A.list(into_key=)``: the session's artifact names into the state.
* ``A.as_json(key)``, ``A.as_text(key)``, ``A.from_json(key, indent=None)``: state
  transforms that parse JSON text, decode base64 bytes, write JSON text.

``scope="user"`` names the artifact ``user:<filename>``: the user's sessions share it.
``metadata`` is taken and not kept (our artifacts are parts, without metadata).
Not built: adk-fluent's ``load``, ``version``, ``delete``, ``watch`` and the CSV and
Markdown converters.
Each step is one event: its ``artifact_delta`` (publish, save) or ``state_delta``
(snapshot, list), so the change is committed with the run."""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
from collections.abc import AsyncIterator, Mapping
from typing import Any, Literal

from .._types import Blob, Event, EventActions, Part
from ..agents import AgentBase
from ._builders import Builder
from ._state import StateDelta, STransform

__all__ = ["A", "ArtifactStep", "ArtifactStepAgent"]

Scope = Literal["session", "user"]
_TEXT_TYPES = ("application/json", "application/xml", "application/yaml", "application/csv")


def _mime_of(filename: str) -> str:
    guessed, _ = mimetypes.guess_type(filename)
    return guessed or ("text/markdown" if filename.endswith(".md") else "application/octet-stream")


def _text_like(mime: str) -> bool:
    return mime.startswith("text/") or mime in _TEXT_TYPES


class ArtifactStepAgent(AgentBase):
    """Runs one artifact step (see the module)."""

    op: str
    filename: str | None = None
    key: str | None = None
    mime: str | None = None
    content: Any = None
    version: int | None = None
    decode: bool = False

    async def _run_impl(self, ctx: Any) -> AsyncIterator[Event]:
        session = ctx.session
        where = (session.app_name, session.user_id, session.session_id)
        if self.op in ("publish", "save"):
            assert self.filename is not None
            value = ctx.session.state.get(self.key) if self.op == "publish" else self.content
            saved = ctx.artifacts.save(*where, self.filename, self._part(value))
            yield ctx.event(actions=EventActions(artifact_delta={self.filename: saved}))
        elif self.op == "snapshot":
            assert self.filename is not None and self.key is not None
            part = ctx.artifacts.load(*where, self.filename, self.version)
            yield ctx.event(actions=EventActions(state_delta={self.key: self._value(part)}))
        elif self.op == "list":
            assert self.key is not None
            yield ctx.event(actions=EventActions(state_delta={self.key: sorted(ctx.artifacts.list(*where))}))

    def _part(self, value: Any) -> Part:
        mime = self.mime or _mime_of(self.filename or "")
        if isinstance(value, bytes):
            return Part(inline_data=Blob(mime_type=mime, data=value))
        return Part(text=value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))

    def _value(self, part: Part | None) -> Any:
        if part is None:
            return None
        if part.inline_data is None:
            return part.text
        blob = part.inline_data
        if self.decode or _text_like(blob.mime_type):
            return blob.data.decode("utf-8", errors="replace")
        return base64.b64encode(blob.data).decode("ascii")


class ArtifactStep(Builder):
    """An artifact step of a pipeline (see the module)."""

    kind = "artifact"

    def __init__(self, name: str, op: str, *, filename: str | None = None, key: str | None = None,
                 reads: frozenset[str] = frozenset(), writes: frozenset[str] = frozenset(), **fields: Any) -> None:
        super().__init__(name)
        self.op, self.filename, self.key = op, filename, key
        self.reads_keys, self.writes_keys = reads, writes
        self._fields = fields

    def _build(self) -> ArtifactStepAgent:
        return ArtifactStepAgent(name=self.name, op=self.op, filename=self.filename, key=self.key, **self._fields)


def _scoped(filename: str, scope: Scope) -> str:
    return f"user:{filename}" if scope == "user" and not filename.startswith("user:") else filename


def _step_name(op: str, filename: str) -> str:
    return f"{op}_{filename.removeprefix('user:').replace('.', '_')}"


class A:
    """The artifact steps (see the module)."""

    @staticmethod
    def publish(filename: str, *, from_key: str, mime: str | None = None, metadata: dict[str, Any] | None = None,
                scope: Scope = "session") -> ArtifactStep:
        name = _scoped(filename, scope)
        return ArtifactStep(_step_name("publish", name), "publish", filename=name, key=from_key,
                            reads=frozenset({from_key}), mime=mime)

    @staticmethod
    def snapshot(filename: str, *, into_key: str, version: int | None = None, decode: bool = False,
                 scope: Scope = "session") -> ArtifactStep:
        name = _scoped(filename, scope)
        return ArtifactStep(_step_name("snapshot", name), "snapshot", filename=name, key=into_key,
                            writes=frozenset({into_key}), version=version, decode=decode)

    @staticmethod
    def save(filename: str, *, content: str | bytes, mime: str | None = None,
             metadata: dict[str, Any] | None = None, scope: Scope = "session") -> ArtifactStep:
        name = _scoped(filename, scope)
        return ArtifactStep(_step_name("save", name), "save", filename=name, content=content, mime=mime)

    @staticmethod
    def list(*, into_key: str) -> ArtifactStep:
        return ArtifactStep("list_artifacts", "list", key=into_key, writes=frozenset({into_key}))

    @staticmethod
    def as_json(key: str) -> STransform:
        def parse(state: Mapping[str, Any]) -> StateDelta:
            value = state.get(key)
            return StateDelta({key: json.loads(value)}) if isinstance(value, str | bytes) else StateDelta()

        return STransform(f"as_json_{key}", parse, frozenset({key}), frozenset({key}))

    @staticmethod
    def as_text(key: str, *, encoding: str = "utf-8") -> STransform:
        """A base64 snapshot (binary inline data) decoded as text."""

        def decode(state: Mapping[str, Any]) -> StateDelta:
            value = state.get(key)
            if not isinstance(value, str):
                return StateDelta()
            try:
                return StateDelta({key: base64.b64decode(value, validate=True).decode(encoding)})
            except (binascii.Error, UnicodeDecodeError):
                return StateDelta()  # text already

        return STransform(f"as_text_{key}", decode, frozenset({key}), frozenset({key}))

    @staticmethod
    def from_json(key: str, *, indent: int | None = None) -> STransform:
        def dump(state: Mapping[str, Any]) -> StateDelta:
            return StateDelta({key: json.dumps(state.get(key), indent=indent, ensure_ascii=False)})

        return STransform(f"from_json_{key}", dump, frozenset({key}), frozenset({key}))
