"""google-adk's ``SaveFilesAsArtifactsPlugin``
(``google.adk.plugins.save_files_as_artifacts_plugin``): files a user sends inline in
a message are saved as artifacts of the session, and the message keeps, in each one's
place, a text that names it, so the model knows the file is there to be loaded (with
``load_artifacts``, or a tool of the user's).

When the user's message arrives (``on_user_message_callback``), before it is stored,
each part with ``inline_data``, in order:

1. is named by its ``display_name``, or ``artifact_<invocation id>_<index of the
   part>`` without one (a name starting ``user:`` is the user's, across sessions, as
   for any artifact);
2. over 20 MB (Gemini's limit for inline data): it is not saved; an
   ``[Upload Error: ...]`` text that names it and its size takes its place;
3. otherwise it is saved (a copy of the part) as the next version of that name and
   ``[Uploaded Artifact: "<name>"]`` takes its place. ``attach_file_reference``: in
   google-adk, a ``file_data`` part with the artifact's URI follows when that URI is
   one a model can fetch (``gs://``, ``https://``, ``http://``); this project's
   ``Part`` has no ``file_data``, so none is attached (the in-memory and file artifact
   services give ``memory://`` and ``file://`` URIs, which google-adk does not attach
   either);
4. a part whose saving raised is kept as it was (logged).

Other parts stay as they are. When a part was replaced, the message with the
placeholders replaces the user's (it is what is stored and what the model sees), and
the names and versions saved wait in the session's state under
``<plugin name>:pending_delta``; the first agent that starts (``before_agent_callback``)
puts them in its event's ``artifact_delta`` and empties that key. A message with no
inline data is left alone. No artifact service (an invocation without one): a warning,
and the message is left alone.
"""

from __future__ import annotations

import logging
from typing import Any

from .._types import Content, Part
from .base_plugin import BasePlugin

__all__ = ["SaveFilesAsArtifactsPlugin"]

logger = logging.getLogger("adk_actors.plugins.save_files_as_artifacts")

#: the largest file kept (Gemini's limit for inline data: 20 MB)
_MAX_INLINE_DATA_SIZE_BYTES = 20 * 1024 * 1024


class SaveFilesAsArtifactsPlugin(BasePlugin):
    """Saves the files in users' messages as artifacts (see the module)."""

    def __init__(self, name: str = "save_files_as_artifacts_plugin", *, attach_file_reference: bool = True) -> None:
        super().__init__(name)
        self._attach_file_reference = attach_file_reference

    @property
    def _pending_key(self) -> str:
        return f"{self.name}:pending_delta"

    async def on_user_message_callback(self, *, invocation_context: Any, user_message: Content) -> Content | None:
        """The message with each inline file saved and named by a placeholder, or None
        when nothing was replaced (see the module)."""
        artifacts = getattr(invocation_context, "artifacts", None)
        if artifacts is None:
            logger.warning("no artifact service: %s saves no file", self.name)
            return user_message
        if not user_message.parts:
            return None
        session = invocation_context.session
        parts: list[Part] = []
        saved: dict[str, int] = {}
        replaced = False
        for index, part in enumerate(user_message.parts):
            blob = part.inline_data
            if blob is None:
                parts.append(part)
                continue
            name = blob.display_name or f"artifact_{invocation_context.invocation_id}_{index}"
            size = len(blob.data or b"")
            if size > _MAX_INLINE_DATA_SIZE_BYTES:
                limit = _MAX_INLINE_DATA_SIZE_BYTES // (1024 * 1024)
                message = (f"File {name} is {size / (1024 * 1024):.2f} MB, larger than the {limit}MB a file "
                           "may be: please send a smaller one.")
                logger.warning("%s", message)
                parts.append(Part(text=f"[Upload Error: {message}]"))
                replaced = True
                continue
            try:
                version = artifacts.save(session.app_name, session.user_id, session.id, name, part.model_copy())
            except Exception:
                logger.exception("%s could not save part %d of the user's message as %r", self.name, index, name)
                parts.append(part)
                continue
            parts.append(Part(text=f'[Uploaded Artifact: "{name}"]'))
            saved[name] = int(version)
            replaced = True
        if not replaced:
            return None
        pending = session.state.get(self._pending_key)
        session.state[self._pending_key] = {**(pending if isinstance(pending, dict) else {}), **saved}
        return Content(role=user_message.role, parts=parts)

    async def before_agent_callback(self, *, agent: Any, callback_context: Any) -> Content | None:
        """The artifacts saved from the user's message, into this agent's event's
        ``artifact_delta``; the pending key emptied."""
        pending = callback_context.state.get(self._pending_key)
        if pending:
            if isinstance(pending, dict):
                callback_context.actions.artifact_delta.update(pending)
            else:
                logger.warning("%s: %s holds %r, not a dict of versions", self.name, self._pending_key, pending)
            callback_context.state[self._pending_key] = {}
        return None
