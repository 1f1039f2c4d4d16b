"""Results invented from a tool's declaration (google-adk's ``ToolSpecMockStrategy``).

:meth:`ToolSpecMockStrategy.mock`, in order:

1. a tool that declares nothing gets an error result, and no model is asked;
2. one prompt goes to the simulator's model, holding the environment data and the
   tracing text when the config has them, the connection map, the state store, the
   tool's name, description and declaration, and the call's arguments (each JSON
   part as ``json.dumps(..., indent=2)``);
3. the answer is read as JSON (a Markdown fence around it dropped). Not JSON, or
   JSON that is not an object with string keys, is an error result that quotes the
   model's text under ``llm_output``;
4. when the connection map lists the tool among a parameter's ``creating_tools``,
   that parameter's value is looked for in the result (the first key of that name,
   depth first); when found, the whole result is kept in the state store under
   ``state_store[parameter][value]``, for later calls to be told of it;
5. the result is returned.
"""

from __future__ import annotations

import json
from typing import Any, cast

from ....types import GenerateContentConfig
from .._model_call import ask, declaration_json, parsed_json, simulator_model
from ..tool_connection_map import ToolConnectionMap
from .base import MockStrategy

__all__ = ["ToolSpecMockStrategy"]

_TASK = """\
Play the part of a tool with memory: answer the tool call at the end with the JSON
result the real tool would return, consistent with everything it returned before.
{environment}{tracing}
Parameters that tie the tools together, and which tools make or read them:
{connections}

What the earlier calls made, by parameter and value:
{state}

The call to answer:
- tool: {name}
- what it does: {description}
- declaration: {declaration}
- arguments: {arguments}

How to answer:
- A tool that only reads by an id: when the id is not among what the earlier calls
  made, answer with a plausible error (a not-found error, for instance); otherwise
  answer from what was made, the environment data and the recorded run.
- A tool that makes or changes something: make up a fresh, unique id for it and put
  that id in the result.
- Use the environment data and the recorded run, when given, to keep the result
  realistic and in line with how the tools behaved before.
- Answer with a single JSON object and nothing else: no prose, no Markdown.
"""

_ENVIRONMENT = """
The environment the tools work in (data to stay consistent with):
<environment_data>
{}
</environment_data>
"""

_TRACING = """
A recorded earlier run of the agent, with its tool calls and their results:
<tracing>
{}
</tracing>
"""


def _first_value(data: object, key: str) -> object | None:
    """The value of the first ``key`` in ``data``, depth first (a dict's own key before
    its values'; lists item by item), or None."""
    if isinstance(data, dict):
        if key in data:
            found: object = data[key]
            return found
        children: list[object] = list(data.values())
    elif isinstance(data, list):
        children = list(data)
    else:
        return None
    for child in children:
        value = _first_value(child, key)
        if value is not None:
            return value
    return None


def _remember(tool_name: str, result: dict[str, Any], connections: ToolConnectionMap | None,
              state_store: dict[str, Any]) -> None:
    """Keep ``result`` in ``state_store`` for each parameter ``tool_name`` creates (step 4)."""
    for parameter in connections.stateful_parameters if connections is not None else ():
        if tool_name not in parameter.creating_tools:
            continue
        value = _first_value(result, parameter.parameter_name)
        if value is not None:
            state_store.setdefault(parameter.parameter_name, {})[value] = result


class ToolSpecMockStrategy(MockStrategy):
    """Asks the model named ``llm_name`` (made now, through the model registry), with
    ``llm_config``'s generation settings, for each result (see the module)."""

    def __init__(self, llm_name: str, llm_config: GenerateContentConfig) -> None:
        self._llm_name = llm_name
        self._llm_config = llm_config
        self._llm: Any = simulator_model(llm_name)

    async def mock(self, tool: Any, args: dict[str, Any], tool_context: Any,
                   tool_connection_map: ToolConnectionMap | None, state_store: dict[str, Any],
                   environment_data: str | None = None, tracing: str | None = None) -> dict[str, Any]:
        """The invented result of calling ``tool`` with ``args`` (see the module)."""
        declared = declaration_json(tool)
        if declared is None:
            return {"status": "error", "error_message": f"tool {tool.name!r} has no declaration to simulate it from"}
        connections = ("none found" if tool_connection_map is None
                       else json.dumps(tool_connection_map.model_dump(exclude_none=True), indent=2))
        prompt = _TASK.format(
            environment=_ENVIRONMENT.format(environment_data) if environment_data else "",
            tracing=_TRACING.format(tracing) if tracing else "",
            connections=connections, state=json.dumps(state_store, indent=2), name=tool.name,
            description=tool.description, declaration=json.dumps(declared, indent=2),
            arguments=json.dumps(args, indent=2))
        text = await ask(self._llm, self._llm_name, self._llm_config, prompt)
        try:
            answer = parsed_json(text)
        except json.JSONDecodeError:
            return {"status": "error", "error_message": "the simulated result is not valid JSON", "llm_output": text}
        if not isinstance(answer, dict) or not all(isinstance(key, str) for key in answer):
            return {"status": "error", "error_message": "the simulated result is not a JSON object",
                    "llm_output": text}
        result = cast(dict[str, Any], answer)
        _remember(tool.name, result, tool_connection_map, state_store)
        return result
