"""``BuiltInCodeExecutor``: the model runs the code itself, with Gemini's code
execution tool (google-adk's ``google.adk.code_executors.built_in_code_executor``).

Nothing runs here. Before each model call of an ``LlmAgent(code_executor=
BuiltInCodeExecutor())`` the engine calls :meth:`BuiltInCodeExecutor.process_llm_request`,
which adds Gemini's ``{"codeExecution": {}}`` entry to the request's tools; the code
the model wrote and what it printed come back as the answer's ``executable_code`` and
``code_execution_result`` parts. After each answer, as google-adk does, the engine
gives an event of the agent with no content before the answer's event.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .._model_names import gemini_check_disabled, is_gemini_model
from ._base import BaseCodeExecutor
from ._utils import CodeExecutionInput, CodeExecutionResult

__all__ = ["BuiltInCodeExecutor"]


class BuiltInCodeExecutor(BaseCodeExecutor):
    """Code execution by the model (Gemini models only)."""

    #: the model runs the code: the engine asks no executor to run a block of the answer
    runs_in_model: ClassVar[bool] = True

    def execute_code(self, invocation_context: Any,  # type: ignore[override]
                     code_execution_input: CodeExecutionInput) -> CodeExecutionResult | None:
        """Nothing to run: the model ran the code. Returns None, as google-adk's does."""
        return None

    def process_llm_request(self, llm_request: Any) -> None:
        """Add ``{"codeExecution": {}}`` to ``llm_request.builtin_tools`` when the
        request's model is a Gemini model (or ``ADK_DISABLE_GEMINI_MODEL_ID_CHECK`` is
        set); otherwise raise ValueError naming the model."""
        if not (is_gemini_model(llm_request.model) or gemini_check_disabled()):
            raise ValueError(f"Gemini's code execution tool is not available to model {llm_request.model!r}")
        llm_request.builtin_tools.append({"codeExecution": {}})
