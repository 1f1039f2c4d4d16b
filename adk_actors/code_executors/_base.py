"""``BaseCodeExecutor``: what every code executor is (google-adk's names and defaults)."""

from __future__ import annotations

import abc
from typing import Any

from pydantic import BaseModel

from ._utils import CodeExecutionInput, CodeExecutionResult

__all__ = ["BaseCodeExecutor"]


class BaseCodeExecutor(BaseModel, abc.ABC):
    """Runs the code blocks of a model's answers for an ``LlmAgent(code_executor=...)``.

    The agent's loop finds the first code block of an answer (between one of
    ``code_block_delimiters``), runs it with :meth:`execute_code`, shows the model the
    result and asks again; after ``error_retry_attempts`` failed runs in a row in one
    invocation it stops running code and the answer stands as it is.

    Attributes, with google-adk's defaults:
      optimize_data_file: take CSV files out of the request and give them to the code
        (not done here: the flag is kept, and ignored).
      stateful: runs of one execution id share their variables.
      error_retry_attempts: failed runs in a row before the loop stops running code (2).
      code_block_delimiters: the (start, end) pairs that enclose a code block;
        the first pair also writes code back as text for the model.
      execution_result_delimiters: the (start, end) pair that encloses a result shown
        to the model as text.
      timeout_seconds: the wall-clock limit of one run (None: none).
    """

    optimize_data_file: bool = False
    stateful: bool = False
    error_retry_attempts: int = 2
    code_block_delimiters: list[tuple[str, str]] = [
        ("```tool_code\n", "\n```"),
        ("```python\n", "\n```"),
    ]
    execution_result_delimiters: tuple[str, str] = ("```tool_output\n", "\n```")
    timeout_seconds: int | None = None

    @abc.abstractmethod
    def execute_code(self, invocation_context: Any, code_execution_input: CodeExecutionInput) -> CodeExecutionResult:
        """Run ``code_execution_input.code`` and return what it gave. Called on a worker
        thread (it may block); a failure of the code is a result with ``stderr``, never
        an exception."""
