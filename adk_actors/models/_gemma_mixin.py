"""google-adk's ``gemma_llm.GemmaFunctionCallingMixin``: Gemma 3's function-calling
shim (see :mod:`._gemma`) as two in-place steps a user's own model class can mix in,
on our :class:`LlmRequest` and :class:`LlmResponse`.

``_move_function_calls_into_system_instruction(llm_request)`` rewrites the request in
place: each function call in the history becomes a model turn holding the call as
JSON text (its id kept), each function response a user turn ``Invoking tool `name`
produced: `{...}`.``; the tools' declarations, with the answer format, are added to
the system instruction (after a blank line) and the tools taken out. The system
instruction stays one (``Gemma`` itself then makes it the first user turn).

``_extract_function_calls_from_response(llm_response)`` reads, in place, a response
that is neither partial nor marked ``turn_complete`` and holds one text part: a JSON
object ``{"name": ..., "parameters": {...}}`` (``function`` / ``args`` too) in a
```json / ```tool_code block, else the last JSON object in the text, becomes that
function call; any other text is left as it is.
"""

from __future__ import annotations

from .._types import LlmRequest, LlmResponse
from ._gemma import function_call_from, shimmed

__all__ = ["GemmaFunctionCallingMixin"]


class GemmaFunctionCallingMixin:
    """Gemma 3's function-calling shim for a model class (see the module)."""

    def _move_function_calls_into_system_instruction(self, llm_request: LlmRequest) -> None:
        shaped = shimmed(llm_request, instruction_as_user_turn=False, framework_ids=True)
        llm_request.contents = shaped.contents
        llm_request.system_instruction = shaped.system_instruction
        llm_request.tools = []

    def _extract_function_calls_from_response(self, llm_response: LlmResponse) -> None:
        if llm_response.turn_complete is True:
            return
        read = function_call_from(llm_response)
        if read is not llm_response:
            llm_response.content = read.content
