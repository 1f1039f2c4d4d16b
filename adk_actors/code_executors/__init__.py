"""Code executors: what runs the code blocks of a model's answers for
``LlmAgent(code_executor=...)`` (google-adk's ``google.adk.code_executors``).

``UnsafeLocalCodeExecutor`` runs code in a plain child interpreter with the agent's
rights, as google-adk's does; :class:`SandboxedCodeExecutor` runs it in a separate
process with CPU-time, memory, file-size and wall-time limits, a working folder of its
own and no network, the one to use for code nobody has read.
"""

from ._base import BaseCodeExecutor
from ._sandboxed import SandboxedCodeExecutor, network_isolation
from ._unsafe_local import UnsafeLocalCodeExecutor
from ._utils import CodeExecutionInput, CodeExecutionResult, CodeExecutionUtils, File
from .built_in_code_executor import BuiltInCodeExecutor
from .code_executor_context import CodeExecutorContext

__all__ = [
    "BaseCodeExecutor",
    "BuiltInCodeExecutor",
    "CodeExecutionInput",
    "CodeExecutionResult",
    "CodeExecutionUtils",
    "CodeExecutorContext",
    "File",
    "SandboxedCodeExecutor",
    "UnsafeLocalCodeExecutor",
    "network_isolation",
]
