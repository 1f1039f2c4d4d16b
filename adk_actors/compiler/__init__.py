"""The request compiler: agent definition + read-only context -> ``LlmRequest``.

A pure module: no actors, no I/O, no globals; the same input always gives the same
request. Every actor that needs a request calls it. Names follow seed 003.
"""

from ._compressors import (
    Compressor,
    SlidingWindow,
    Summarize,
    SummaryPlan,
    TokenBudget,
    Truncate,
    estimate_tokens,
)
from ._contents import INTERRUPTED_RESULT, branch_visible, build_contents, live_events
from ._context import CompileContext
from ._instructions import compile, compile_split
from ._providers import InstructionProvider, Verbatim, resolve_provider
from ._request import build_request, history
from ._targets import transfer_targets
from ._templating import referenced_artifacts, substitute_vars
from ._tools import (
    declaration_of,
    effective_tools,
    is_toolset,
    model_combines_schema_and_tools,
    transfer_declaration,
)

__all__ = [
    "INTERRUPTED_RESULT",
    "CompileContext",
    "Compressor",
    "InstructionProvider",
    "SlidingWindow",
    "Summarize",
    "SummaryPlan",
    "TokenBudget",
    "Truncate",
    "Verbatim",
    "branch_visible",
    "build_contents",
    "build_request",
    "compile",
    "compile_split",
    "declaration_of",
    "effective_tools",
    "estimate_tokens",
    "history",
    "is_toolset",
    "live_events",
    "model_combines_schema_and_tools",
    "referenced_artifacts",
    "resolve_provider",
    "substitute_vars",
    "transfer_declaration",
    "transfer_targets",
]
