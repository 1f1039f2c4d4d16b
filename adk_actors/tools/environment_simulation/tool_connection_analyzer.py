"""Asks the simulator's model how an agent's tools share state (google-adk's
``tool_connection_analyzer``): which parameters identify things (``order_id``), which
tools make or change them and which only read them.

:meth:`ToolConnectionAnalyzer.analyze`, in order: takes each tool's declaration (a
tool that declares nothing is left out) as JSON; sends one prompt holding that list
(``json.dumps(..., indent=2)``) to the model; reads the answer as JSON (a Markdown
fence around it is dropped). An answer that is not JSON is logged as a warning and
gives an empty map; JSON that is not a map's shape is pydantic's ``ValidationError``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from ...types import GenerateContentConfig
from ._model_call import ask, declaration_json, parsed_json, simulator_model
from .tool_connection_map import ToolConnectionMap

__all__ = ["ToolConnectionAnalyzer"]

_log = logging.getLogger(__name__)

_QUESTION = """\
Below are the declarations of the tools one assistant can call. Some parameters
carry an identifier that ties the tools together: one tool makes a thing and returns
its id, other tools take that id to look the thing up.

Find every such shared, identifier-like parameter (for instance `invoice_id` or
`account_id`). For each one, sort the tools that use it into two lists:
- "creating_tools": tools that make a new thing, or change, cancel or remove an
  existing one (names like `open_invoice`, `close_account`, `set_limit`);
- "consuming_tools": tools that only read by it and change nothing (names like
  `read_invoice`, `list_payments`, `lookup_account`).

Tool declarations:
{schemas}

Answer with JSON only, one object of this shape and nothing around it:
{{"stateful_parameters": [{{"parameter_name": "...", "creating_tools": ["..."], "consuming_tools": ["..."]}}]}}
"""


class ToolConnectionAnalyzer:
    """Finds the shared-state parameters of a set of tools with the model named
    ``llm_name`` (made now, through the model registry; an unknown name is its
    ``ValueError``), asked with ``llm_config``'s generation settings."""

    def __init__(self, llm_name: str, llm_config: GenerateContentConfig) -> None:
        self._llm_name = llm_name
        self._llm_config = llm_config
        self._llm: Any = simulator_model(llm_name)

    async def analyze(self, tools: Sequence[Any]) -> ToolConnectionMap:
        """The map the model gives for ``tools`` (see the module)."""
        schemas = [declared for tool in tools if (declared := declaration_json(tool)) is not None]
        prompt = _QUESTION.format(schemas=json.dumps(schemas, indent=2))
        text = await ask(self._llm, self._llm_name, self._llm_config, prompt)
        try:
            answer = parsed_json(text)
        except json.JSONDecodeError as exc:
            _log.warning("the tool connection analysis is not JSON (%s); simulating without a connection map. "
                         "The model said:\n%s", exc, text)
            return ToolConnectionMap(stateful_parameters=[])
        return ToolConnectionMap.model_validate(answer)
