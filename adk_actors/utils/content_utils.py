"""google-adk's ``google.adk.utils.content_utils``: small readers and makers of
``Content``. Parts may be ours or google.genai's (only their fields are read)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from .._types import Content, Part, is_genai_content

__all__ = ["extract_text_from_content", "filter_audio_parts", "is_audio_part", "to_user_content"]


def _audio(blob: Any) -> bool:
    mime = getattr(blob, "mime_type", None) if blob is not None else None
    return mime is not None and mime.startswith("audio/")


def is_audio_part(part: Any) -> bool:
    """Whether ``part``'s inline data or file data has an ``audio/...`` MIME type."""
    return _audio(part.inline_data) or _audio(part.file_data)


def filter_audio_parts(content: Any) -> Content | None:
    """A new content with ``content``'s role and its parts other than audio ones;
    None when it has no parts or none is left."""
    if not content.parts:
        return None
    kept = [part for part in content.parts if not is_audio_part(part)]
    if not kept:
        return None
    return Content(role=content.role, parts=kept)


def extract_text_from_content(content: Any | None, splitter: str = "") -> str:
    """The non-empty texts of ``content``'s parts that are not thoughts, joined by
    ``splitter``; "" for no content or no such part."""
    if not content or not content.parts:
        return ""
    return splitter.join(part.text for part in content.parts if part.text and not part.thought)


def to_user_content(value: Any) -> Content:
    """``value`` as a user message: a Content's parts under the ``user`` role; a
    string as one text part; a pydantic model as its JSON; a dict or list as JSON
    (non-ASCII kept); anything else as its ``str()``."""
    if isinstance(value, Content):
        return Content(role="user", parts=value.parts)
    if is_genai_content(value):
        return Content(role="user", parts=[Part.model_validate(p.model_dump(exclude_none=True)) for p in value.parts or []])
    if isinstance(value, str):
        text = value
    elif isinstance(value, BaseModel):
        text = value.model_dump_json()
    elif isinstance(value, dict | list):
        text = json.dumps(value, ensure_ascii=False)
    else:
        text = str(value)
    return Content(role="user", parts=[Part(text=text)])
