"""Fencing of untrusted text put into a model request (google-adk 2.13's markers and
sentences, byte for byte): the compiler's and the engine's name for
:mod:`adk_actors.agents._fencing`, where it is defined once. It is defined in the
agents layer because an agent (``RemoteA2aAgent``) relays other agents' turns too, and
the agents layer may not import the compiler (tests/test_layers.py)."""

from __future__ import annotations

from ..agents._fencing import (
    OTHER_AGENT_CONTEXT_PREAMBLE,
    QUOTED_CONTENT_BEGIN,
    QUOTED_CONTENT_ELIDED,
    QUOTED_CONTENT_END,
    SYSTEM_INSTRUCTION_BEGIN,
    SYSTEM_INSTRUCTION_END,
    TOOL_DESCRIPTION_PREAMBLE,
    UNTRUSTED_TOOL_DESCRIPTION_BEGIN,
    UNTRUSTED_TOOL_DESCRIPTION_END,
    elide_quote_markers,
    elide_system_instruction_markers,
    elide_tool_description_markers,
    fence_schema_descriptions,
    fence_tool_description,
    other_agent_message,
    quote_untrusted,
)

__all__ = [
    "OTHER_AGENT_CONTEXT_PREAMBLE",
    "QUOTED_CONTENT_BEGIN",
    "QUOTED_CONTENT_ELIDED",
    "QUOTED_CONTENT_END",
    "SYSTEM_INSTRUCTION_BEGIN",
    "SYSTEM_INSTRUCTION_END",
    "TOOL_DESCRIPTION_PREAMBLE",
    "UNTRUSTED_TOOL_DESCRIPTION_BEGIN",
    "UNTRUSTED_TOOL_DESCRIPTION_END",
    "elide_quote_markers",
    "elide_system_instruction_markers",
    "elide_tool_description_markers",
    "fence_schema_descriptions",
    "fence_tool_description",
    "other_agent_message",
    "quote_untrusted",
]
