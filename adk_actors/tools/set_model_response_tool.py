"""google-adk's import path of ``SetModelResponseTool``: the same class the flow gives
an agent with both an ``output_schema`` and tools (``adk_actors.tools._set_model_response``)."""

from ._set_model_response import SetModelResponseTool

__all__ = ["SetModelResponseTool"]
