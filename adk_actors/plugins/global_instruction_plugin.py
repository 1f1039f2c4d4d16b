"""google-adk's ``GlobalInstructionPlugin``
(``google.adk.plugins.global_instruction_plugin``): one instruction for every agent of
an app, given once to the App's plugins (google-adk's replacement for an LlmAgent's
``global_instruction`` field).

Before each model call (``before_model_callback``), in order:

1. no ``global_instruction`` (""): nothing changes;
2. it is resolved: a string has its ``{key}`` / ``{key?}`` / ``{artifact.NAME}``
   placeholders filled from the session's state and artifacts, by the rules an
   agent's own instruction follows here (adk_actors.compiler's ``substitute_vars``:
   a missing required key, or an artifact that is not there or cannot be loaded, is
   left as written, where google-adk raises ``KeyError``);
   a callable (an InstructionProvider) is called with the callback context (a
   ReadonlyContext: ``state``, ``agent_name``, ``invocation_id``, ``session``) and
   awaited when it returns an awaitable; its text is used as it is;
3. an empty result changes nothing; otherwise it becomes the start of the request's
   system instruction: the whole of it when there was none, else followed by a blank
   line and the instruction the request already had.

It never answers for the model (it returns None), so the call goes on. An exception
from a provider ends the run with :class:`adk_actors.plugins.PluginError` (as every
plugin hook's does).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from .._exceptions import AdkError
from .._types import LlmRequest, LlmResponse
from ..compiler import referenced_artifacts, substitute_vars
from .base_plugin import BasePlugin

__all__ = ["GlobalInstructionPlugin", "InstructionProvider"]

#: what google-adk calls an InstructionProvider: the context in, the text (or an awaitable of it) out
InstructionProvider = Callable[[Any], str | Awaitable[str]]


class GlobalInstructionPlugin(BasePlugin):
    """Puts ``global_instruction`` (a string or an InstructionProvider) at the start of
    every model request's system instruction (see the module)."""

    def __init__(self, global_instruction: str | InstructionProvider = "",
                 name: str = "global_instruction") -> None:
        super().__init__(name=name)
        self.global_instruction = global_instruction

    async def before_model_callback(self, *, callback_context: Any, llm_request: LlmRequest) -> LlmResponse | None:
        """The request's system instruction, the global one first (see the module)."""
        if not self.global_instruction:
            return None
        text = await self._resolve_global_instruction(callback_context)
        if not text:
            return None
        config: Any = llm_request.config  # its RequestConfig view: system_instruction as text
        existing = config.system_instruction
        config.system_instruction = f"{text}\n\n{existing}" if existing else text
        return None

    async def _resolve_global_instruction(self, readonly_context: Any) -> str:
        """The instruction's text for this call (step 2 of the module)."""
        if isinstance(self.global_instruction, str):
            template = self.global_instruction
            artifacts: dict[str, Any] = {}
            for name in sorted(referenced_artifacts(template)):
                try:
                    part = await readonly_context.load_artifact(name)
                except AdkError:  # one that cannot be loaded: its placeholder stays
                    continue
                if part is not None:
                    artifacts[name] = part
            return substitute_vars(template, readonly_context.state, artifacts)
        text = self.global_instruction(readonly_context)
        if inspect.isawaitable(text):
            text = await text
        return "" if text is None else str(text)
