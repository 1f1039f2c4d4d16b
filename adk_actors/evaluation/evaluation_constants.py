"""google-adk's ``google.adk.evaluation.evaluation_constants`` path: the keys of the
older test file format (a list of turns: ``query``, ``expected_tool_use`` of
``tool_name`` and ``tool_input``, ``reference``), as google-adk names them."""

from __future__ import annotations

__all__ = ["EvalConstants"]


class EvalConstants:
    """The JSON keys of an older-format test file's turn."""

    QUERY = "query"
    EXPECTED_TOOL_USE = "expected_tool_use"
    RESPONSE = "response"
    REFERENCE = "reference"
    TOOL_NAME = "tool_name"
    TOOL_INPUT = "tool_input"
    MOCK_TOOL_OUTPUT = "mock_tool_output"
