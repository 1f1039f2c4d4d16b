"""google-adk's ``ContextFilterPlugin`` (``google.adk.plugins.context_filter_plugin``):
fewer contents in each model request, so long sessions stay within the model's context.

An *invocation* here is what one user turn started: it begins at a user content that
is not a tool's result (a content with a ``function_response`` part is one, though
its role is ``user``; several user contents in a row begin one invocation) and runs
to the next such start, the model's calls and the tools' results included.

Before each model call (``before_model_callback``), in order:

1. with ``num_invocations_to_keep`` set (above 0), once the request holds at least
   ``num_invocations_to_keep + remove_amount`` invocations, only the last
   ``num_invocations_to_keep`` are kept; the cut moves earlier as far as needed so that
   no tool result is kept without the call it answers (at worst, nothing is cut).
   With ``remove_amount`` above 1 the request grows back by that many invocations
   before the next cut (fewer, larger cuts);
2. ``custom_filter`` (a function of the list of contents, giving the list to send), when
   given, is applied to what step 1 left;
3. the result becomes the request's contents.

If any step raises, the error is logged and the request is left as it was: a filter
never fails a turn. The plugin never answers for the model. ``remove_amount`` below 1 is
a ``ValueError``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from .._types import Content, LlmRequest, LlmResponse
from .base_plugin import BasePlugin

__all__ = ["ContextFilterPlugin"]

logger = logging.getLogger("adk_actors.plugins.context_filter")


def _is_tool_result(content: Content) -> bool:
    return any(part.function_response is not None for part in content.parts or ())


def _invocation_starts(contents: Sequence[Content]) -> list[int]:
    """The indices where an invocation begins (see the module)."""
    starts: list[int] = []
    after_user = False
    for index, content in enumerate(contents):
        is_user = content.role == "user" and not _is_tool_result(content)
        if is_user and not after_user:
            starts.append(index)
        after_user = is_user
    return starts


def _cut_keeping_calls(contents: Sequence[Content], cut: int) -> int:
    """The latest index at or before ``cut`` from which every kept tool result has its
    call kept too (0 when there is none)."""
    unanswered: set[str] = set()  # ids of results kept whose call is not (yet) kept
    for index in range(len(contents) - 1, -1, -1):
        for part in reversed(contents[index].parts or ()):
            if part.function_response is not None and part.function_response.id:
                unanswered.add(part.function_response.id)
            if part.function_call is not None and part.function_call.id:
                unanswered.discard(part.function_call.id)
        if index <= cut and not unanswered:
            return index
    return 0


class ContextFilterPlugin(BasePlugin):
    """Keeps model requests short: the last invocations and/or a filter of the user's
    (see the module)."""

    def __init__(self, num_invocations_to_keep: int | None = None,
                 custom_filter: Callable[[list[Content]], list[Content]] | None = None,
                 name: str = "context_filter_plugin", remove_amount: int = 1) -> None:
        if remove_amount < 1:
            raise ValueError("remove_amount must be at least 1")
        super().__init__(name)
        self._num_invocations_to_keep = num_invocations_to_keep
        self._custom_filter = custom_filter
        self._remove_amount = remove_amount

    async def before_model_callback(self, *, callback_context: Any, llm_request: LlmRequest) -> LlmResponse | None:
        """The request's contents, filtered (see the module)."""
        try:
            contents: list[Content] = list(llm_request.contents)
            keep = self._num_invocations_to_keep
            if keep is not None and keep > 0:
                starts = _invocation_starts(contents)
                if len(starts) >= keep + self._remove_amount:
                    contents = contents[_cut_keeping_calls(contents, starts[-keep]):]
            if self._custom_filter is not None:
                contents = self._custom_filter(contents)
            llm_request.contents = contents
        except Exception:
            logger.exception("%s could not filter the request's contents; they are sent unfiltered", self.name)
        return None
